package bmctest

import (
	"context"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/need"
)

// LoopbackName returns a host name that resolves (IPv4) to 127.0.0.1 and
// nothing but loopback here, typically the machine's own name in
// /etc/hosts, and that is not localhost (which the guard refuses by name).
// With it a test shows that the request-forgery guard refuses at dial time
// what a name resolves to. It skips the test (fails it in CI) without one.
func LoopbackName(t testing.TB) string {
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
		if err != nil || !slices.Contains(addrs, netip.MustParseAddr("127.0.0.1")) {
			continue
		}
		if !slices.ContainsFunc(addrs, func(a netip.Addr) bool { return !a.IsLoopback() }) {
			return name
		}
	}
	need.OrSkip(t, "no host name resolves to 127.0.0.1 only (tried %v)", cands)
	return ""
}
