package netboot_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/pxe/dhcp6"
	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/test/netnstest"
)

// TestEndToEndIPv6 runs netboot.Run with --dhcp6-interface (besides DHCPv4,
// TFTP and HTTP boot) against a real API server: a Provisioning Host's MAC
// gets an IPv6 address and tftp://[server]/ipxe.efi from ISC dhclient -6
// posing as firmware PXE (arch 7), the file over TFTP on IPv6 is
// pxe/ipxebin's x86-64 iPXE, and its script answers over HTTP on IPv6.
func TestEndToEndIPv6(t *testing.T) {
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "dhclient", "curl", "tftp", "ip", "sysctl")
	ctx := context.Background()
	e := &e2e{pair: netnstest.NewPair(t, netnstest.PairOptions{}), ns: env.Namespace(t), dir: t.TempDir()}
	const srv6, cli6 = "fd00:67::1", "fd00:67::2"
	e.pair.Srv.Exec(t, "ip", "-6", "addr", "add", srv6+"/64", "dev", e.pair.SrvIf, "nodad")
	e.pair.Cli.Exec(t, "sysctl", "-qw", "net.ipv6.conf."+e.pair.CliIf+".accept_dad=0")
	must(t, os.MkdirAll(filepath.Join(e.dir, "tftp"), 0o755))

	mac := e.provisioningHost(t, ctx, "v6")

	o := e.options(t)
	o.HTTPAddr = ":80" // both families
	o.DHCP6Interface = e.pair.SrvIf
	r, err := dhcp6.ParseRange("fd00:67::100-fd00:67::1ff")
	must(t, err)
	o.DHCP6Range = r
	e.start(t, o)

	// dhclient -6 as firmware PXE: arch 7, asking for option 59.
	e.pair.SetCliMAC(t, mac)
	waitFor(t, "a link-local address", func() bool {
		out, _ := e.pair.Cli.Output(5*time.Second, "ip", "-6", "addr", "show", "dev", e.pair.CliIf, "scope", "link")
		return strings.Contains(out, "fe80") && !strings.Contains(out, "tentative")
	})
	out := filepath.Join(e.dir, "dhclient6.env")
	hook := filepath.Join(e.dir, "hook6.sh")
	must(t, os.WriteFile(hook, []byte(fmt.Sprintf("#!/bin/sh\ncase \"$reason\" in BOUND6) env > %q.tmp && mv %q.tmp %q;; esac\nexit 0\n", out, out, out)), 0o755))
	cf := filepath.Join(e.dir, "dhclient6.conf")
	must(t, os.WriteFile(cf, []byte("timeout 20;\ninitial-interval 1;\noption dhcp6.arch code 61 = unsigned integer 16;\nsend dhcp6.arch 7;\nalso request dhcp6.bootfile-url;\n"), 0o644))
	var so, se netnstest.SyncBuffer
	cmd := e.pair.Cli.Start(t, &so, &se, "dhclient", "-6", "-d", "-1", "-v", "-D", "LL", "-cf", cf, "-sf", hook,
		"-lf", filepath.Join(e.dir, "dhclient6.leases"), "-pf", filepath.Join(e.dir, "dhclient6.pid"), e.pair.CliIf)
	if !netnstest.WaitFor(30*time.Second, func() bool { _, err := os.Stat(out); return err == nil }) {
		t.Fatalf("dhclient -6 did not bind:\n%s%s", so.String(), se.String())
	}
	_ = cmd.Process.Kill()
	data, err := os.ReadFile(out)
	must(t, err)
	got := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = strings.Trim(v, "'")
		}
	}
	if a := got["new_ip6_address"]; !strings.HasPrefix(a, "fd00:67::1") || len(a) != len("fd00:67::1xx") {
		t.Errorf("address %q, want one of fd00:67::100-1ff", a)
	}
	if u, want := got["new_dhcp6_bootfile_url"], "tftp://["+srv6+"]/ipxe.efi"; u != want {
		t.Errorf("boot file URL %q, want %q", u, want)
	}

	e.pair.Cli.Exec(t, "ip", "-6", "addr", "add", cli6+"/64", "dev", e.pair.CliIf, "nodad")
	local := filepath.Join(e.dir, "ipxe.efi")
	if o, err := e.pair.Cli.Output(60*time.Second, "tftp", "-6", "-m", "binary", srv6, "-c", "get", "ipxe.efi", local); err != nil {
		t.Fatalf("tftp over IPv6: %v\n%s", err, o)
	}
	if b, err := os.ReadFile(local); err != nil || !bytes.Equal(b, ipxebin.EFI.Data) {
		t.Fatalf("TFTP over IPv6 served something else than pxe/ipxebin's ipxe.efi (%v)", err)
	}
	// UEFI HTTP boot over IPv6 gets /ipxe6/ipxe.efi (dhcp6's bootURL):
	// pxe/ipxebin's build, which has IPv6 (Debian's under /ipxe/ has not).
	httpEFI := filepath.Join(e.dir, "http-ipxe.efi")
	if o, err := e.pair.Cli.Output(30*time.Second, "curl", "-sS", "-f", "--max-time", "20", "-o", httpEFI, "http://["+srv6+"]/ipxe6/ipxe.efi"); err != nil {
		t.Fatalf("GET /ipxe6/ipxe.efi over IPv6: %v\n%s", err, o)
	}
	if b, err := os.ReadFile(httpEFI); err != nil || !bytes.Equal(b, ipxebin.EFI.Data) {
		t.Fatalf("/ipxe6/ipxe.efi is not pxe/ipxebin's ipxe.efi (%v)", err)
	}
	script, err := e.pair.Cli.Output(20*time.Second, "curl", "-sS", "-f", "--max-time", "10", "http://["+srv6+"]/boot/"+mac.String()+".ipxe")
	if err != nil || !strings.HasPrefix(script, "#!ipxe") || !strings.Contains(script, "/v6/kernel/vmlinuz") {
		t.Fatalf("script over IPv6: %v\n%s", err, script)
	}
}
