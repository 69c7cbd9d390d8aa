package tftp

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/test/netnstest"
)

// TestRealClientIPv6 fetches a file over IPv6 (what firmware PXE over IPv6
// does with a tftp://[addr]/file URL) with tftp-hpa and atftp, from a
// server listening on [::]:69.
func TestRealClientIPv6(t *testing.T) {
	netnstest.RequireCommands(t, "atftp", "tftp", "ip")
	root, _ := testRoot(t)
	want := sha256File(t, filepath.Join(root, "boot.bin"))
	e := startInNetnsWith(t, root, func(o *Options) { o.ListenAddr = netip.MustParseAddrPort("[::]:69") })
	const srv, cli = "fd00:77::1", "fd00:77::2"
	e.pair.Srv.Exec(t, "ip", "-6", "addr", "add", srv+"/64", "dev", e.pair.SrvIf, "nodad")
	e.pair.Cli.Exec(t, "ip", "-6", "addr", "add", cli+"/64", "dev", e.pair.CliIf, "nodad")
	for _, c := range []struct {
		name string
		args func(local string) []string
	}{
		{"tftp-hpa", func(l string) []string {
			return []string{"tftp", "-6", "-m", "binary", srv, "-c", "get", "boot.bin", l}
		}},
		{"atftp blksize", func(l string) []string {
			return []string{"atftp", "--option", "blksize 1468", "-g", "-r", "boot.bin", "-l", l, srv}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			local := filepath.Join(e.dir, c.name)
			args := c.args(local)
			// Retried while the new addresses settle (no DAD, but the
			// veth's link may still be coming up).
			var out string
			var err error
			netnstest.WaitFor(20*time.Second, func() bool {
				out, err = e.pair.Cli.Output(30*time.Second, args[0], args[1:]...)
				_, serr := os.Stat(local)
				return err == nil && serr == nil
			})
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := sha256File(t, local); got != want {
				t.Fatalf("sha256 %s, want %s", got, want)
			}
		})
	}
	if got := testutil.ToFloat64(e.srv.metrics.transfers.WithLabelValues("ok")); got < 2 {
		t.Errorf("ok transfers = %v, want 2", got)
	}
}
