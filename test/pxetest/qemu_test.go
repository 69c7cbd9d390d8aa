package pxetest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/tftp"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/pxetest"
	"anvil.dev/anvil/test/qemuaccel"
)

// prepare downloads the kernel (cached) and builds the initramfs.
func prepare(t *testing.T) (vmlinuz, initramfs string) {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k, err := pxetest.PrepareKernel(ctx, pxetest.KernelOptions{CacheDir: need.CacheDir(t, "kernel")})
	must(t, err)
	initramfs = filepath.Join(t.TempDir(), "initramfs")
	must(t, pxetest.BuildInitramfs(ctx, pxetest.InitramfsOptions{Kernel: k, Output: initramfs}))
	t.Logf("kernel %s and initramfs ready in %v", k.Release, time.Since(start).Round(time.Millisecond))
	return k.Vmlinuz, initramfs
}

func fileSHA(t *testing.T, p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// TestQEMUPXEBoot network-boots real firmware against dhcp, tftp and
// httpboot, each VM in its own namespace (bridge + tap) with the services
// bound to the bridge:
//
//   - bios-full: SeaBIOS + QEMU's iPXE ROM, our full DHCP, HTTP script.
//   - uefi-full: OVMF's PXE client: DHCP (arch 7) + TFTP snponly.efi, then
//     iPXE + HTTP.
//   - bios-proxy: addresses from dnsmasq, boot options from our ProxyDHCP.
//   - uefi-http-full: OVMF's UEFI HTTP boot client (option 60 HTTPClient,
//     arch 16) of a Host with spec.bootMethod HTTPBoot: our full DHCP
//     offers http://.../ipxe/snponly.efi with HTTPClient echoed, the
//     firmware fetches it from httpboot (no TFTP), then iPXE + HTTP.
//   - uefi-http-proxy: the same with addresses from dnsmasq and the URL
//     from our ProxyDHCP (EDK2 pairs a plain offer with an HTTPClient
//     offer without yiaddr).
//
// Each boots the Debian kernel + a busybox initramfs that DHCPs again and
// calls back over HTTP. Runs only with ANVIL_QEMU_TEST=1 (about a minute on
// two cores without KVM).
func TestQEMUPXEBoot(t *testing.T) {
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to boot QEMU VMs (about a minute)")
	}
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "qemu-system-x86_64", "ip", "busybox", "apt-get", "dpkg-deb", "dnsmasq")
	t.Log(qemuaccel.Choose())
	for _, f := range []string{"/usr/lib/ipxe/qemu/pxe-virtio.rom", "/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/lib/ipxe/snponly.efi"} {
		_, err := os.Stat(f)
		netnstest.Require(t, err == nil, "%s missing (packages ipxe-qemu, ovmf, ipxe)", f)
	}
	vmlinuz, initramfs := prepare(t)

	for i, sc := range []struct {
		name     string
		firmware pxetest.Firmware
		proxy    bool
	}{
		{"bios-full", pxetest.BIOS, false},
		{"uefi-full", pxetest.UEFI, false},
		{"bios-proxy", pxetest.BIOS, true},
		{"uefi-http-full", pxetest.UEFIHTTP, false},
		{"uefi-http-proxy", pxetest.UEFIHTTP, true},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			bootVM(t, vmlinuz, initramfs, sc.firmware, sc.proxy, byte(i+1))
		})
	}
}

func bootVM(t *testing.T, vmlinuz, initramfs string, fw pxetest.Firmware, proxy bool, n byte) {
	subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 210, n, 0}), 24)
	srvIP := netip.AddrFrom4([4]byte{10, 210, n, 1})
	proxyIP := netip.AddrFrom4([4]byte{10, 210, n, 2})
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0xa0, 0x00, n}
	seg := newVMSegment(t, srvIP, n)
	ns, dir, log, ctx, wg := seg.ns, seg.dir, seg.log, seg.ctx, seg.wg

	// HTTP: artifacts, default scripts, and the initramfs callback.
	artifacts, sums := seg.artifacts(t, vmlinuz, initramfs)
	rec := pxe.HostRecord{Name: "vm", Namespace: "test", MAC: mac, PXE: true, Accepted: true,
		IP: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 210, n, 50}), 24), Hostname: "vm"}
	if fw == pxetest.UEFIHTTP {
		rec.BootMethod = pxe.BootMethodHTTP // spec.bootMethod: HTTPBoot
	}
	backend := pxe.NewStaticBackend(rec)
	callbackURL := "http://" + srvIP.String() + "/callback/" + mac.String()
	scripts, err := httpboot.NewScripts(httpboot.ScriptOptions{Backend: backend, BootSpecs: httpboot.BootSpecFunc(
		func(context.Context, pxe.HostRecord) (httpboot.BootSpec, error) {
			return httpboot.BootSpec{KernelURL: "/artifacts/kernel", InitrdURLs: []string{"/artifacts/initramfs"},
				Args: []string{"console=ttyS0", "panic=-1", pxetest.CallbackArg + "=" + callbackURL}}, nil
		})})
	must(t, err)
	httpReg := prometheus.NewRegistry()
	hs, err := httpboot.New(httpboot.Options{
		Scripts: scripts, ArtifactDir: artifacts, Logger: log, Registerer: httpReg,
		IPXEDir:   "/usr/lib/ipxe", // the UEFI HTTP boot client's snponly.efi, the file TFTP serves
		Artifacts: sums,
	})
	must(t, err)
	type callback struct {
		mac, ip string
		at      time.Time
	}
	called := make(chan callback, 1)
	must(t, hs.Handle("GET /callback/{mac}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case called <- callback{r.PathValue("mac"), r.URL.Query().Get("ip"), time.Now()}:
		default:
		}
		fmt.Fprintln(w, "ok")
	})))
	var ln net.Listener
	must(t, ns.Do(func() (err error) { ln, err = net.Listen("tcp4", srvIP.String()+":80"); return err }))
	wg.Go(func() { _ = hs.Serve(ctx, ln) })

	// TFTP (UEFI only needs it; harmless otherwise).
	seg.serveTFTP(t, "")

	// DHCP: ours in full mode, or dnsmasq + our proxy.
	dopts := dhcp.Options{Interface: "br0", Backend: backend, Logger: log, Registerer: prometheus.NewRegistry(),
		Subnets: []dhcp.Subnet{{Prefix: subnet, Router: srvIP}}, Boot: dhcp.BootOptions{HTTPBaseURL: "http://" + srvIP.String()}}
	if proxy {
		ns.Exec(t, "ip", "addr", "add", netip.PrefixFrom(proxyIP, 24).String(), "dev", "br0")
		var out netnstest.SyncBuffer
		ns.Start(t, &out, &out, "dnsmasq", "--no-daemon", "--port=0", "--conf-file=/dev/null", "--no-ping",
			"--interface=br0", "--bind-interfaces", "--log-dhcp",
			"--pid-file="+filepath.Join(dir, "dnsmasq.pid"), "--dhcp-leasefile="+filepath.Join(dir, "dnsmasq.leases"),
			fmt.Sprintf("--dhcp-range=10.210.%d.150,10.210.%d.160,255.255.255.0,1h", n, n))
		if !netnstest.WaitFor(10*time.Second, func() bool { return strings.Contains(out.String(), "DHCP, IP range") }) {
			t.Fatalf("dnsmasq did not start:\n%s", out.String())
		}
		dopts.Mode, dopts.Subnets, dopts.ServerIP = dhcp.ModeProxy, nil, proxyIP
		dopts.Boot.NextServer = srvIP
	}
	var ds *dhcp.Server
	must(t, ns.Do(func() (err error) { ds, err = dhcp.NewServer(dopts); return err }))
	wg.Go(func() { _ = ds.Serve(ctx) })

	// The VM.
	serial := filepath.Join(dir, "serial.log")
	args, err := pxetest.QEMUArgs(pxetest.QEMUOptions{Firmware: fw, Tap: "tap0", MAC: mac, SerialLog: serial})
	must(t, err)
	var qout netnstest.SyncBuffer
	start := time.Now()
	qemu := ns.Start(t, &qout, &qout, "qemu-system-x86_64", args...)
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(serial)
			t.Logf("qemu output:\n%s\nserial console (last 6000 bytes):\n%s", qout.String(), tail(string(data), 6000))
		}
	})
	exited := make(chan struct{})
	go func() { _ = qemu.Wait(); close(exited) }()

	select {
	case cb := <-called:
		wantIP := "10.210." + fmt.Sprint(n) + ".50"
		if proxy {
			if a, err := netip.ParseAddr(cb.ip); err != nil || a.As4()[3] < 150 || a.As4()[3] > 160 {
				t.Errorf("guest address %q is not from dnsmasq's range", cb.ip)
			}
		} else if cb.ip != wantIP {
			t.Errorf("guest address %q, want the reservation %s", cb.ip, wantIP)
		}
		if cb.mac != mac.String() {
			t.Errorf("callback for %q, want %s", cb.mac, mac)
		}
		t.Logf("%s: qemu start -> initramfs HTTP callback in %v (guest %s)", t.Name(), cb.at.Sub(start).Round(100*time.Millisecond), cb.ip)
	case <-exited:
		t.Fatalf("qemu exited before the callback")
	case <-time.After(240 * time.Second):
		t.Fatalf("no callback within 240s")
	}
	if fw == pxetest.UEFIHTTP {
		checkHTTPBoot(t, httpReg, serial)
	}
	// The initramfs powers off after the callback.
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Logf("VM did not power off; killed")
	}
	data, _ := os.ReadFile(serial)
	if !strings.Contains(string(data), pxetest.CallbackDoneMarker) {
		t.Errorf("serial console lacks %q", pxetest.CallbackDoneMarker)
	}
}

// checkHTTPBoot asserts, from httpboot's request metrics, that the
// firmware fetched the whole iPXE EFI binary over HTTP (only an HTTPClient
// offer names that URL; TFTP serves the PXE client) and that iPXE then
// fetched its script.
func checkHTTPBoot(t *testing.T, reg *prometheus.Registry, serial string) {
	t.Helper()
	// HttpBootDxe's own banner: the firmware, not a PXE ROM, did the fetch.
	if data, _ := os.ReadFile(serial); !strings.Contains(string(data), "Start HTTP Boot over IPv4") ||
		strings.Contains(string(data), "Start PXE over IPv4") {
		t.Errorf("serial console: want OVMF's \"Start HTTP Boot over IPv4\" and no PXE boot")
	}
	fi, err := os.Stat("/usr/lib/ipxe/snponly.efi")
	must(t, err)
	mfs, err := reg.Gather()
	must(t, err)
	var efiOK, efiBytes, scripts float64
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			switch {
			case mf.GetName() == "anvil_http_requests_total" && l["endpoint"] == "GET /ipxe/{path...}" && l["code"] == "200":
				efiOK += m.GetCounter().GetValue()
			case mf.GetName() == "anvil_http_response_bytes_total" && l["endpoint"] == "GET /ipxe/{path...}":
				efiBytes += m.GetCounter().GetValue()
			case mf.GetName() == "anvil_http_requests_total" && l["endpoint"] == "GET /boot/{file}" && l["code"] == "200":
				scripts += m.GetCounter().GetValue()
			}
		}
	}
	if efiOK == 0 || efiBytes < float64(fi.Size()) {
		t.Errorf("the firmware did not fetch snponly.efi over HTTP: %v requests answered 200, %v of %d bytes sent", efiOK, efiBytes, fi.Size())
	}
	if scripts == 0 {
		t.Errorf("iPXE fetched no /boot/<mac>.ipxe script")
	}
	t.Logf("UEFI HTTP boot: /ipxe/ requests answered 200: %v (%v bytes; snponly.efi is %d), scripts: %v", efiOK, efiBytes, fi.Size(), scripts)
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// vmSegment is what every boot test here runs on: a VM's L2 segment (the
// server at srvIP/24 on br0, the VM on tap0) with IPv6 router
// advertisements, so iPXE does not wait for one, and a context whose
// cancellation (at cleanup) stops the servers the test starts in wg.
type vmSegment struct {
	ns  *netnstest.NS
	dir string
	log logr.Logger
	ctx context.Context
	wg  *sync.WaitGroup
}

func newVMSegment(t *testing.T, srvIP netip.Addr, n byte) *vmSegment {
	t.Helper()
	id := fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff^int64(n))
	s := &vmSegment{ns: netnstest.NewVMSegment(t, id, "vm", netip.PrefixFrom(srvIP, 24)), dir: t.TempDir(),
		log: testr.NewWithOptions(t, testr.Options{Verbosity: 0}), wg: &sync.WaitGroup{}}
	ctx, cancel := context.WithCancel(context.Background())
	s.ctx = ctx
	t.Cleanup(func() { cancel(); s.wg.Wait() })
	var ra *pxetest.RouterAdvertiser
	must(t, s.ns.Do(func() (err error) { ra, err = pxetest.NewRouterAdvertiser("br0"); return err }))
	s.wg.Go(func() { ra.Run(ctx) })
	return s
}

// serveTFTP serves root ("": Debian's /usr/lib/ipxe) on br0 until cleanup.
func (s *vmSegment) serveTFTP(t *testing.T, root string) {
	t.Helper()
	var ts *tftp.Server
	must(t, s.ns.Do(func() (err error) {
		ts, err = tftp.NewServer(tftp.Options{Root: root, Interface: "br0", Logger: s.log, Registerer: prometheus.NewRegistry()})
		return err
	}))
	s.wg.Add(1) // waited for at cleanup, after the cancel
	if err := s.ns.Go(func() { defer s.wg.Done(); _ = ts.Serve(s.ctx) }); err != nil {
		s.wg.Done() // fn never ran
		t.Fatal(err)
	}
}

// artifacts copies the kernel and initramfs into <dir>/artifacts for
// httpboot, and returns that directory and their sha256 map.
func (s *vmSegment) artifacts(t *testing.T, vmlinuz, initramfs string) (string, httpboot.ArtifactMap) {
	t.Helper()
	dir := filepath.Join(s.dir, "artifacts")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, copyFile(vmlinuz, filepath.Join(dir, "kernel")))
	must(t, copyFile(initramfs, filepath.Join(dir, "initramfs")))
	return dir, httpboot.ArtifactMap{"kernel": {SHA256: fileSHA(t, vmlinuz)}, "initramfs": {SHA256: fileSHA(t, initramfs)}}
}
