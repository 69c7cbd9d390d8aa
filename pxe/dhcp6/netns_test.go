package dhcp6

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/test/netnstest"
)

// TestDhclient6 runs ISC dhclient -6 (a real DHCPv6 client: Solicit,
// Advertise, Request, Reply, with a DUID-LLT or DUID-LL from its MAC)
// against the server in a namespace pair.
func TestDhclient6(t *testing.T) {
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "dhclient", "ip", "sysctl")
	const known, unknown = "52:54:00:a6:10:01", "52:54:00:a6:10:99"
	p := netnstest.NewPair(t, netnstest.PairOptions{})
	dir := t.TempDir()
	srv := netip.MustParseAddr("fd00:66::1")
	p.Srv.Exec(t, "ip", "-6", "addr", "add", srv.String()+"/64", "dev", p.SrvIf, "nodad")
	// No DAD on the client: dhclient cannot bind to a tentative link-local address.
	p.Cli.Exec(t, "sysctl", "-qw", "net.ipv6.conf."+p.CliIf+".accept_dad=0")
	mustMAC := func(s string) net.HardwareAddr { m, _ := net.ParseMAC(s); return m }
	reg := prometheus.NewRegistry()
	opts := Options{Interface: p.SrvIf, Backend: pxe.NewStaticBackend(pxe.HostRecord{Name: "h", MAC: mustMAC(known), PXE: true, Accepted: true}),
		Range:      Range{Start: netip.MustParseAddr("fd00:66::100"), End: netip.MustParseAddr("fd00:66::1ff")},
		Registerer: reg, Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 1})}
	var s *Server
	if err := p.Srv.Do(func() (err error) { s, err = NewServer(opts); return err }); err != nil {
		t.Fatal(err)
	}
	if s.opts.ServerAddr != srv {
		t.Errorf("ServerAddr %v, want the interface's %v", s.opts.ServerAddr, srv)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	// arch 7 is what firmware PXE sends; user class iPXE what iPXE sends
	// (RFC 8415 form: a 2-byte length, then the class).
	archConf := "option dhcp6.arch code 61 = unsigned integer 16;\nsend dhcp6.arch 7;\nalso request dhcp6.bootfile-url;\n"
	ipxeConf := "option dhcp6.uc code 15 = string;\nsend dhcp6.uc 00:04:69:50:58:45;\nalso request dhcp6.bootfile-url;\n"
	run := 0
	dhclient := func(t *testing.T, mac, duid, conf string, wantBound bool) map[string]string {
		t.Helper()
		p.SetCliMAC(t, mustMAC(mac))
		if !netnstest.WaitFor(10*time.Second, func() bool {
			o, _ := p.Cli.Output(5*time.Second, "ip", "-6", "addr", "show", "dev", p.CliIf, "scope", "link")
			return strings.Contains(o, "fe80") && !strings.Contains(o, "tentative")
		}) {
			t.Fatalf("no link-local address on %s", p.CliIf)
		}
		run++
		out := filepath.Join(dir, fmt.Sprintf("env-%d", run))
		hook := filepath.Join(dir, fmt.Sprintf("hook-%d.sh", run))
		// The hook only records; it never configures the interface.
		must(t, os.WriteFile(hook, []byte(fmt.Sprintf("#!/bin/sh\ncase \"$reason\" in BOUND6|REBOOT6) env > %q.tmp && mv %q.tmp %q;; esac\nexit 0\n", out, out, out)), 0o755))
		cf := filepath.Join(dir, fmt.Sprintf("conf-%d", run))
		must(t, os.WriteFile(cf, []byte("timeout 20;\ninitial-interval 1;\n"+conf), 0o644))
		var so, se netnstest.SyncBuffer
		cmd := p.Cli.Start(t, &so, &se, "dhclient", "-6", "-d", "-1", "-v", "-D", duid, "-cf", cf, "-sf", hook,
			"-lf", filepath.Join(dir, fmt.Sprintf("leases-%d", run)), "-pf", filepath.Join(dir, fmt.Sprintf("pid-%d", run)), p.CliIf)
		defer func() { _ = cmd.Process.Kill() }()
		if !wantBound {
			// Observed, not waited out: the server counts the drop.
			before := testutil.ToFloat64(s.packets.WithLabelValues("solicit", "unknown_host"))
			if !netnstest.WaitFor(20*time.Second, func() bool {
				return testutil.ToFloat64(s.packets.WithLabelValues("solicit", "unknown_host")) > before
			}) {
				t.Fatalf("the server saw no Solicit from %s:\n%s%s", mac, so.String(), se.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("dhclient bound for an unknown MAC")
			}
			return nil
		}
		if !netnstest.WaitFor(30*time.Second, func() bool { _, err := os.Stat(out); return err == nil }) {
			t.Fatalf("dhclient %s did not bind:\n%s%s", mac, so.String(), se.String())
		}
		data, err := os.ReadFile(out)
		must(t, err)
		env := map[string]string{}
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				env[k] = strings.Trim(v, "'")
			}
		}
		return env
	}
	inRange := func(t *testing.T, env map[string]string) netip.Addr {
		t.Helper()
		a, err := netip.ParseAddr(env["new_ip6_address"])
		if err != nil || !opts.Range.Contains(a) {
			t.Fatalf("address %q is not from the range (env %v)", env["new_ip6_address"], env)
		}
		return a
	}

	var first netip.Addr
	t.Run("OS client, DUID-LLT: address only", func(t *testing.T) {
		env := dhclient(t, known, "LLT", "", true)
		first = inRange(t, env)
		if u := env["new_dhcp6_bootfile_url"]; u != "" {
			t.Errorf("boot file URL %q for an OS client", u)
		}
	})
	t.Run("firmware PXE (arch 7), DUID-LL", func(t *testing.T) {
		env := dhclient(t, known, "LL", archConf, true)
		if a := inRange(t, env); a != first {
			t.Errorf("address %v, want the MAC's lease %v", a, first)
		}
		if u, want := env["new_dhcp6_bootfile_url"], "tftp://[fd00:66::1]/ipxe.efi"; u != want {
			t.Errorf("boot file URL %q, want %q", u, want)
		}
	})
	t.Run("iPXE: the script", func(t *testing.T) {
		env := dhclient(t, known, "LL", ipxeConf, true)
		if u, want := env["new_dhcp6_bootfile_url"], "http://[fd00:66::1]/boot/"+known+".ipxe"; u != want {
			t.Errorf("boot file URL %q, want %q", u, want)
		}
	})
	t.Run("unknown MAC: no answer", func(t *testing.T) {
		dhclient(t, unknown, "LL", archConf, false)
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
