package inplace_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimecatalog "sigs.k8s.io/cluster-api/api/runtime/catalog"
	hooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/capi/inplace"
	"anvil.dev/anvil/test/envtest"
)

// One real API server per test binary with Anvil's CRDs and Cluster API's
// Machine (testdata/capi-crds), and the extension serving HTTPS on
// loopback with a self-signed certificate, called as Cluster API's runtime
// client calls it. No controller runs: tests write the objects and the
// Anvil Machine's status.upgrade as CAPI's and Anvil's controllers would.
var (
	env     *envtest.Env
	c       client.Client // knows Cluster API's types too
	baseURL string
	caPEM   []byte
	logs    = &logBuffer{} // everything the extension logged
	catalog = runtimecatalog.New()
)

func TestMain(m *testing.M) {
	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	env = e
	code := func() int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := setup(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "setup:", err)
			return 1
		}
		return m.Run()
	}()
	_ = e.Stop()
	os.Exit(code)
}

func setup(ctx context.Context) error {
	if err := hooksv1.AddToCatalog(catalog); err != nil {
		return err
	}
	s := envtest.Scheme()
	if err := clusterv1.AddToScheme(s); err != nil {
		return err
	}
	if err := runtimev1.AddToScheme(s); err != nil {
		return err
	}
	var err error
	if c, err = client.New(env.Config, client.Options{Scheme: s}); err != nil {
		return err
	}
	if err := installCAPICRDs(ctx); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "inplace-certs-")
	if err != nil {
		return err
	}
	if caPEM, err = writeCert(dir, time.Now().Add(time.Hour)); err != nil {
		return err
	}
	srv, err := inplace.New(inplace.Options{CertDir: dir, Reader: c, Client: c, Logger: logr.New(funcr.New(logs.add, funcr.Options{}).GetSink())})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	baseURL = "https://" + ln.Addr().String()
	go func() { _ = srv.Serve(ctx, ln) }()
	return nil
}

// installCAPICRDs creates the copied CRDs and waits until they are served.
func installCAPICRDs(ctx context.Context) error {
	return envtest.InstallCRDFiles(ctx, c, filepath.Join("testdata", "capi-crds", "*.yaml"))
}

// writeCert writes a self-signed serving certificate for 127.0.0.1 as
// tls.crt and tls.key into dir and returns it (it is its own CA).
func writeCert(dir string, notAfter time.Time) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "anvil-capi-extension"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), crt, 0o600); err != nil {
		return nil, err
	}
	return crt, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

// httpClient is what Cluster API's runtime client builds for an
// ExtensionConfig with a caBundle (internal/runtime/client:
// createHTTPClient): the CA pinned, HTTP/2, no redirects.
func httpClient(t testing.TB, tlsMax uint16) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("bad CA PEM")
	}
	tr := utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MaxVersion: tlsMax}})
	return &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// call posts req to the handler name of hook as Cluster API does
// (internal/runtime/client: httpCall) and decodes the answer into resp.
func call(t testing.TB, hook runtimecatalog.Hook, name string, req runtime.Object, resp any) {
	t.Helper()
	gvh, err := catalog.GroupVersionHook(hook)
	if err != nil {
		t.Fatal(err)
	}
	gvk, err := catalog.Request(gvh)
	if err != nil {
		t.Fatal(err)
	}
	req.GetObjectKind().SetGroupVersionKind(gvk)
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	code, out := post(t, runtimecatalog.GVHToPath(gvh, name)+"?timeout=10s", body)
	if code != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", gvh.Hook, code, out)
	}
	if err := json.Unmarshal(out, resp); err != nil {
		t.Fatalf("%s: response %s: %v", gvh.Hook, out, err)
	}
}

func post(t testing.TB, path string, body []byte) (int, []byte) {
	t.Helper()
	r, err := httpClient(t, 0).Post(baseURL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	out, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return r.StatusCode, out
}

// logBuffer collects the extension's log lines.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuffer) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
