// busybox 1.35's TLS client (the test initramfs's wget) sends no
// signature_algorithms, which Go's server refuses unless it may assume
// SHA-1 (RFC 5246's default); iPXE and the OSes' real clients send it.

//go:debug tlssha1=1
package pxetest_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/pxetest"
)

// TestQEMUPXEBootHTTPS boots OVMF's PXE client into iPXE over HTTPS: TFTP
// serves pxe/ipxebin's x86-64 ipxe.efi patched to trust a test CA (as
// snponly.efi, the name DHCP gives; ipxebin.SNP is an arm64 build), DHCP hands out an https:// script URL, and
// httpboot serves HTTPS only, with the chain leaf + CA.
//
//   - trusted: the server's certificate is issued by that CA. iPXE fetches
//     its script, kernel and initrd over HTTPS, and the initramfs calls
//     back over HTTPS. Every connection the server accepted began with a
//     TLS handshake record, and the CA initrd put the CA into the booted
//     OS (the initramfs reports /etc/ssl/certs/anvil-boot-ca.pem).
//   - wrong-ca: the server's certificate is issued by another CA. iPXE
//     refuses it ("Permission denied" on the serial console), and no
//     script, artifact or callback is served.
//   - uefi-http-trusted: OVMF's own UEFI HTTP boot client (PXE off) of a
//     Host with bootMethod HTTPBoot gets https://.../ipxe/snponly.efi and
//     fetches it over HTTPS, trusting the CA QEMU hands it through fw_cfg
//     etc/edk2/https/cacerts (Debian 12's OVMF has TLS); then as trusted.
//   - uefi-http-wrong-ca: the same firmware against a certificate from
//     another CA refuses the handshake: no /ipxe/ file, no script.
//
// Runs with ANVIL_QEMU_TEST=1 (make pxe-vm-test).
func TestQEMUPXEBootHTTPS(t *testing.T) {
	pxetest.RequireOVMF(t, "busybox", "apt-get", "dpkg-deb")
	trusted, err := pxetest.NewCA("anvil test boot CA")
	must(t, err)
	other, err := pxetest.NewCA("some other CA")
	must(t, err)
	vmlinuz, initramfs := prepare(t)
	for i, sc := range []struct {
		name     string
		serverCA *pxetest.CA
		fw       pxetest.Firmware
	}{
		{"trusted", trusted, pxetest.UEFI},
		{"wrong-ca", other, pxetest.UEFI},
		{"uefi-http-trusted", trusted, pxetest.UEFIHTTP},
		{"uefi-http-wrong-ca", other, pxetest.UEFIHTTP},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			bootHTTPS(t, vmlinuz, initramfs, trusted, sc.serverCA, sc.fw, byte(20+i))
		})
	}
}

// bootHTTPS boots one VM whose iPXE trusts ipxeCA against a server whose
// certificate serverCA issued; it expects a boot when they are the same
// CA and iPXE's refusal otherwise.
func bootHTTPS(t *testing.T, vmlinuz, initramfs string, ipxeCA, serverCA *pxetest.CA, fw pxetest.Firmware, n byte) {
	wantBoot := ipxeCA == serverCA
	subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 210, n, 0}), 24)
	srvIP := netip.AddrFrom4([4]byte{10, 210, n, 1})
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0xa1, 0x00, n}
	seg := newVMSegment(t, srvIP, n)
	ns, dir, log, ctx, wg := seg.ns, seg.dir, seg.log, seg.ctx, seg.wg

	// TFTP: the trust-patched iPXE.
	tftpRoot := filepath.Join(dir, "tftp")
	must(t, os.MkdirAll(tftpRoot, 0o755))
	snp, err := ipxebin.Trust(ipxebin.EFI, ipxeCA.Cert.Raw)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(tftpRoot, "snponly.efi"), snp, 0o644))
	seg.serveTFTP(t, tftpRoot)

	// HTTPS: the chain leaf + CA, as netboot sends it.
	certPEM, keyPEM, err := serverCA.Issue(pxetest.ServerCert{IPs: []net.IP{srvIP.AsSlice()}})
	must(t, err)
	pair, err := tls.X509KeyPair(append(certPEM, serverCA.PEM...), keyPEM)
	must(t, err)
	artifacts, sums := seg.artifacts(t, vmlinuz, initramfs)
	rec := pxe.HostRecord{Name: "vm", Namespace: "test", MAC: mac, PXE: true, Accepted: true,
		IP: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 210, n, 50}), 24), Hostname: "vm"}
	ipxeDir := ""
	if fw == pxetest.UEFIHTTP {
		rec.BootMethod = pxe.BootMethodHTTP
		ipxeDir = tftpRoot
	}
	backend := pxe.NewStaticBackend(rec)
	base := "https://" + srvIP.String()
	scripts, err := httpboot.NewScripts(httpboot.ScriptOptions{Backend: backend, BootSpecs: httpboot.BootSpecFunc(
		func(context.Context, pxe.HostRecord) (httpboot.BootSpec, error) {
			return httpboot.BootSpec{KernelURL: "/artifacts/kernel", InitrdURLs: []string{"/artifacts/initramfs"},
				Args: []string{"console=ttyS0", "panic=-1", pxetest.CallbackArg + "=" + base + "/callback/" + mac.String()}}, nil
		})})
	must(t, err)
	httpReg := prometheus.NewRegistry()
	hs, err := httpboot.New(httpboot.Options{
		Scripts: scripts, ArtifactDir: artifacts, Logger: log, Registerer: httpReg, TLS: httpboot.TLSConfig(pair), IPXEDir: ipxeDir,
		CAInitrd: httpboot.CAInitrd(serverCA.PEM), Artifacts: sums,
	})
	must(t, err)
	type callback struct{ tls, ca bool }
	called := make(chan callback, 1)
	must(t, hs.Handle("GET /callback/{mac}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case called <- callback{tls: r.TLS != nil, ca: r.URL.Query().Get("ca") == "1"}:
		default:
		}
		fmt.Fprintln(w, "ok")
	})))
	var ln net.Listener
	must(t, ns.Do(func() (err error) { ln, err = net.Listen("tcp4", srvIP.String()+":443"); return err }))
	rl := &recordListener{Listener: ln}
	wg.Go(func() { _ = hs.Serve(ctx, rl) })

	dopts := dhcp.Options{Interface: "br0", Backend: backend, Logger: log, Registerer: prometheus.NewRegistry(),
		Subnets: []dhcp.Subnet{{Prefix: subnet, Router: srvIP}}, Boot: dhcp.BootOptions{HTTPBaseURL: base}}
	var ds *dhcp.Server
	must(t, ns.Do(func() (err error) { ds, err = dhcp.NewServer(dopts); return err }))
	wg.Go(func() { _ = ds.Serve(ctx) })

	serial := filepath.Join(dir, "serial.log")
	args, err := pxetest.QEMUArgs(pxetest.QEMUOptions{Firmware: fw, Tap: "tap0", MAC: mac, SerialLog: serial})
	must(t, err)
	if fw == pxetest.UEFIHTTP {
		// EDK2's HttpBootDxe trusts the certificates QEMU passes in
		// etc/edk2/https/cacerts (an EFI_SIGNATURE_LIST), where OVMF
		// was built with TLS.
		certs := filepath.Join(dir, "cacerts.esl")
		must(t, os.WriteFile(certs, pxetest.SignatureList(ipxeCA.Cert.Raw), 0o644))
		args = append(args, "-fw_cfg", "name=etc/edk2/https/cacerts,file="+certs)
	}
	var qout netnstest.SyncBuffer
	qemu := ns.Start(t, &qout, &qout, "qemu-system-x86_64", args...)
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(serial)
			t.Logf("qemu output:\n%s\nserial console (last 6000 bytes):\n%s", qout.String(), tail(string(data), 6000))
		}
	})
	exited := make(chan struct{})
	go func() { _ = qemu.Wait(); close(exited) }()

	if wantBoot {
		select {
		case cb := <-called:
			if !cb.tls {
				t.Errorf("the initramfs called back without TLS")
			}
			if !cb.ca {
				t.Errorf("the booted OS has no %s: the CA initrd did not reach it", httpboot.CAInitrdFile)
			}
		case <-exited:
			t.Fatalf("qemu exited before the callback")
		case <-time.After(240 * time.Second):
			t.Fatalf("no callback within 240s")
		}
	} else {
		// iPXE's x509 refuses the chain: its error for the script URL;
		// or OVMF's HTTP boot client refuses it for the iPXE binary.
		refusal := "Permission denied"
		if fw == pxetest.UEFIHTTP {
			refusal = "Error: Could not retrieve NBP file size from HTTP server."
		}
		if !netnstest.WaitFor(240*time.Second, func() bool {
			data, _ := os.ReadFile(serial)
			return strings.Contains(string(data), refusal)
		}) {
			t.Fatalf("serial console lacks iPXE's %q within 240s", refusal)
		}
		select {
		case <-called:
			t.Errorf("the VM booted and called back although its iPXE does not trust the server's CA")
		default:
		}
	}
	if fw == pxetest.UEFIHTTP {
		data, _ := os.ReadFile(serial)
		efi := requests(t, httpReg, "GET /ipxe/{path...}", "200")
		if !strings.Contains(string(data), "Start HTTP Boot over IPv4") || strings.Contains(string(data), "Start PXE over IPv4") {
			t.Errorf("serial console: want OVMF's \"Start HTTP Boot over IPv4\" and no PXE boot")
		}
		if wantBoot != (efi > 0) {
			t.Errorf("the firmware's HTTPS fetches of /ipxe/ answered 200: %v, want a fetch: %v", efi, wantBoot)
		}
	}
	tlsConns, plain := rl.tls.Load(), rl.plain.Load()
	scriptsOK := requests(t, httpReg, "GET /boot/{file}", "200")
	artifactsOK := requests(t, httpReg, "GET /artifacts/{path...}", "200")
	t.Logf("%s: connections with a TLS handshake: %d, without: %d; scripts served: %v, artifacts: %v", t.Name(), tlsConns, plain, scriptsOK, artifactsOK)
	if plain != 0 {
		t.Errorf("%d connections did not start with a TLS handshake", plain)
	}
	if tlsConns == 0 {
		t.Errorf("no TLS connection reached the server")
	}
	if caOK := requests(t, httpReg, "GET "+httpboot.CAInitrdPath, "200"); wantBoot && caOK == 0 {
		t.Errorf("iPXE did not fetch the CA initrd %s", httpboot.CAInitrdPath)
	}
	if wantBoot && (scriptsOK == 0 || artifactsOK < 2) {
		t.Errorf("want the script and both artifacts served over HTTPS, got %v scripts and %v artifacts", scriptsOK, artifactsOK)
	}
	if !wantBoot && scriptsOK+artifactsOK != 0 {
		t.Errorf("a refused certificate still got %v scripts and %v artifacts served", scriptsOK, artifactsOK)
	}
}

// requests is httpboot's anvil_http_requests_total for endpoint and code.
func requests(t *testing.T, reg *prometheus.Registry, endpoint, code string) float64 {
	mfs, err := reg.Gather()
	must(t, err)
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "anvil_http_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["endpoint"] == endpoint && l["code"] == code {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// recordListener counts accepted connections by their first byte: 0x16
// opens a TLS handshake record, anything else is plain HTTP.
type recordListener struct {
	net.Listener
	tls, plain atomic.Int64
}

func (l *recordListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordConn{Conn: c, l: l}, nil
}

type recordConn struct {
	net.Conn
	l    *recordListener
	seen bool
}

func (c *recordConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.seen {
		c.seen = true
		if p[0] == 0x16 {
			c.l.tls.Add(1)
		} else {
			c.l.plain.Add(1)
		}
	}
	return n, err
}
