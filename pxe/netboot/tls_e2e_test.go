package netboot_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/pxetest"
)

// TestEndToEndHTTPS runs netboot.Run with the HTTPS flags: DHCP hands iPXE
// an https:// script URL, TFTP serves the iPXE EFI build patched to trust
// the CA as snponly.efi, the boot server answers HTTPS (verified against
// the CA by curl) and nothing else, and the script loads the CA initrd.
func TestEndToEndHTTPS(t *testing.T) {
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "busybox", "curl", "ip")
	ctx := context.Background()
	e := &e2e{pair: netnstest.NewPair(t, netnstest.PairOptions{}), ns: env.Namespace(t), dir: t.TempDir()}
	srv := e.pair.SrvIP.String()
	ca, err := pxetest.NewCA("boot CA")
	must(t, err)
	other, err := pxetest.NewCA("other CA")
	must(t, err)
	cert, key, err := ca.Issue(pxetest.ServerCert{IPs: []net.IP{e.pair.SrvIP.AsSlice()}})
	must(t, err)
	files := map[string][]byte{"ca.crt": ca.PEM, "other.crt": other.PEM, "server.crt": cert, "server.key": key}
	for n, b := range files {
		must(t, os.WriteFile(filepath.Join(e.dir, n), b, 0o600))
	}
	must(t, os.MkdirAll(filepath.Join(e.dir, "tftp"), 0o755))
	must(t, os.MkdirAll(filepath.Join(e.dir, "artifacts"), 0o755))

	mac := e.provisioningHost(t, ctx, "tls")
	o := e.options(t)
	o.Discovery = false
	o.HTTPAddr = net.JoinHostPort(srv, "443")
	o.HTTPTLSCertFile, o.HTTPTLSKeyFile, o.HTTPTLSCAFile = filepath.Join(e.dir, "server.crt"), filepath.Join(e.dir, "server.key"), filepath.Join(e.dir, "ca.crt")
	e.start(t, o)

	got, err := e.udhcpc(t, mac, ipxe...)
	must(t, err)
	scriptURL := "https://" + srv + "/boot/" + mac.String() + ".ipxe"
	if got["boot_file"] != scriptURL {
		t.Fatalf("iPXE's boot_file = %q, want %q", got["boot_file"], scriptURL)
	}
	e.bindClient(t, got["ip"])

	local := filepath.Join(e.dir, "snponly.efi")
	if out, err := e.pair.Cli.Output(20*time.Second, "busybox", "tftp", "-g", "-r", "snponly.efi", "-l", local, srv); err != nil {
		t.Fatalf("tftp snponly.efi: %v\n%s", err, out)
	}
	want, err := ipxebin.Trust(ipxebin.EFI, ca.Cert.Raw)
	must(t, err)
	if data, _ := os.ReadFile(local); !bytes.Equal(data, want) {
		t.Errorf("TFTP's snponly.efi (%d bytes) is not ipxe.efi patched to trust the CA (%d bytes)", len(data), len(want))
	}

	curl := func(args ...string) (string, error) {
		return e.pair.Cli.Output(20*time.Second, "curl", append([]string{"-sS", "-f", "--max-time", "10"}, args...)...)
	}
	body, err := curl("--cacert", filepath.Join(e.dir, "ca.crt"), scriptURL)
	if err != nil || !strings.Contains(body, "kernel /artifacts/") {
		t.Errorf("HTTPS script with the CA: %v\n%s", err, body)
	}
	if !strings.Contains(body, httpboot.CAInitrdPath) {
		t.Errorf("the script does not load the CA initrd %s:\n%s", httpboot.CAInitrdPath, body)
	}
	initrd, err := curl("--cacert", filepath.Join(e.dir, "ca.crt"), "https://"+srv+httpboot.CAInitrdPath)
	if err == nil {
		var z *gzip.Reader
		if z, err = gzip.NewReader(strings.NewReader(initrd)); err == nil {
			var b []byte
			b, err = io.ReadAll(z)
			initrd = string(b)
		}
	}
	if err != nil || !strings.Contains(initrd, httpboot.CAInitrdFile) || !strings.Contains(initrd, string(ca.PEM)) {
		t.Errorf("CA initrd over HTTPS: %v; want a cpio with %s holding the CA", err, httpboot.CAInitrdFile)
	}
	if out, err := curl("--cacert", filepath.Join(e.dir, "other.crt"), scriptURL); err == nil {
		t.Errorf("curl trusting another CA got the script:\n%s", out)
	}
	if out, err := curl("http://" + srv + ":443/boot/" + mac.String() + ".ipxe"); err == nil {
		t.Errorf("plain HTTP got an answer:\n%s", out)
	}
}
