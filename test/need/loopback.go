package need

import (
	"context"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"anvil.dev/anvil/internal/netguard"
)

// LoopbackName returns a host name that resolves (IPv4) to loopback
// addresses only, typically the machine's own name in /etc/hosts (127.0.0.1,
// or 127.0.1.1 on Debian), and that is not localhost (which the guard
// refuses by name), with the first address it resolves to: listen there.
// With it a test shows that the request-forgery guard refuses at dial time
// what a name resolves to. It skips the test (fails it in CI) without one.
func LoopbackName(t testing.TB) (name, ip string) {
	t.Helper()
	cands := []string{"ip6-localhost", "localhost.localdomain"}
	if h, err := os.Hostname(); err == nil {
		cands = append([]string{h}, cands...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, name := range cands {
		if (netguard.Guard{}).CheckHost(name) != nil {
			continue
		}
		addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", name)
		for i := range addrs {
			addrs[i] = addrs[i].Unmap()
		}
		if err != nil || len(addrs) == 0 {
			continue
		}
		if !slices.ContainsFunc(addrs, func(a netip.Addr) bool { return !a.IsLoopback() }) {
			return name, addrs[0].String()
		}
	}
	OrSkip(t, "no host name resolves to loopback only (tried %v)", cands)
	return "", ""
}
