package httpboot

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"anvil.dev/anvil/test/pxetest"
)

// TestTLSHandshakeErrorsAreLogged: a client that refuses the server's
// certificate (a host whose iPXE trusts another CA) shows in the server's
// log, where an admin looks, not only on net/http's stderr.
func TestTLSHandshakeErrorsAreLogged(t *testing.T) {
	ca, err := pxetest.NewCA("boot CA")
	noErr(t, err)
	certPEM, keyPEM, err := ca.Issue(pxetest.ServerCert{IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	noErr(t, err)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	noErr(t, err)

	var mu sync.Mutex
	var lines []string
	logged := make(chan struct{}, 1)
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		lines = append(lines, prefix+" "+args)
		mu.Unlock()
		if strings.Contains(args, "TLS handshake error") {
			select {
			case logged <- struct{}{}:
			default:
			}
		}
	}, funcr.Options{})
	s, err := New(Options{TLS: TLSConfig(pair), Logger: log})
	noErr(t, err)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	noErr(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	// A client with the system roots: it does not know the boot CA.
	c, err := tls.Dial("tcp4", ln.Addr().String(), &tls.Config{ServerName: "127.0.0.1"})
	if err == nil {
		c.Close()
		t.Fatal("a client without the boot CA completed the handshake")
	}
	select {
	case <-logged:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("no TLS handshake error in the server's log; it has:\n%s", strings.Join(lines, "\n"))
	}
}
