package lab_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/drivers"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/pxetest"
)

// requireQEMU skips unless ANVIL_QEMU_TEST=1 and everything a lab needs is
// installed (root, qemu, ipmi_sim, ...).
func requireQEMU(t *testing.T) {
	t.Helper()
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to boot QEMU VMs (about a minute)")
	}
	requireRoot(t)
	for _, c := range []string{"qemu-system-x86_64", "ipmi_sim", "busybox", "apt-get", "dpkg-deb"} {
		if _, err := execLookPath(c); err != nil {
			need.OrSkip(t, "program %q not found (install its Debian package)", c)
		}
	}
	if _, err := os.Stat("/usr/lib/ipxe/qemu/pxe-virtio.rom"); err != nil {
		need.OrSkip(t, "QEMU's iPXE ROM missing (Debian package ipxe-qemu)")
	}
}

// prepare downloads the kernel (cached) and builds the callback initramfs.
func prepare(t *testing.T) (vmlinuz, initramfs string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k, err := pxetest.PrepareKernel(ctx, pxetest.KernelOptions{CacheDir: need.CacheDir(t, "kernel")})
	must(t, err)
	initramfs = filepath.Join(t.TempDir(), "initramfs")
	must(t, pxetest.BuildInitramfs(ctx, pxetest.InitramfsOptions{Kernel: k, Output: initramfs}))
	return k.Vmlinuz, initramfs
}

// callbacks collects the initramfs's HTTP callbacks. A callback's response
// is held until the test releases that host, so the guest (which powers
// itself off after the callback) stays up while the test looks at it.
type callbacks struct {
	mu      sync.Mutex
	got     map[string]chan string // by MAC: guest IPs
	release map[string]chan struct{}
}

func newCallbacks(hosts []lab.Host) *callbacks {
	c := &callbacks{got: map[string]chan string{}, release: map[string]chan struct{}{}}
	for _, h := range hosts {
		c.got[h.MAC.String()] = make(chan string, 4)
		c.release[h.MAC.String()] = make(chan struct{})
	}
	return c
}

func (c *callbacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mac := r.PathValue("mac")
	c.mu.Lock()
	got, rel := c.got[mac], c.release[mac]
	c.mu.Unlock()
	if got == nil {
		http.NotFound(w, r)
		return
	}
	select {
	case got <- r.URL.Query().Get("ip"):
	default:
	}
	select {
	case <-rel:
	case <-r.Context().Done():
	case <-time.After(3 * time.Minute):
	}
	fmt.Fprintln(w, "ok")
}

// hold makes the next callbacks of mac wait again; let releases them.
func (c *callbacks) hold(mac string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.release[mac] = make(chan struct{})
}

func (c *callbacks) let(mac string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.release[mac]:
	default:
		close(c.release[mac])
	}
}

func (c *callbacks) letAll() {
	for mac := range c.got {
		c.let(mac)
	}
}

// serveBoot runs Anvil's DHCP (full mode, reservations .50+) and HTTP boot
// inside the lab's namespace, bound to its bridge, as `anvil serve` would.
func serveBoot(t *testing.T, l *lab.Lab, vmlinuz, initramfs string, cb *callbacks) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cb.letAll(); cancel(); wg.Wait() })
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 0})
	srv := l.BridgeIP()
	var records []pxe.HostRecord
	base := l.Subnet().Addr().As4()
	for i, h := range l.Hosts() {
		ip := netip.AddrFrom4([4]byte{base[0], base[1], base[2], byte(50 + i)})
		records = append(records, pxe.HostRecord{Name: h.Name, Namespace: "lab", MAC: h.MAC, Hostname: h.Name,
			IP: netip.PrefixFrom(ip, l.Subnet().Bits()), Arch: "x86_64", PXE: true, Accepted: true})
	}
	backend := pxe.NewStaticBackend(records...)
	artifacts := t.TempDir()
	must(t, copyFile(vmlinuz, filepath.Join(artifacts, "kernel")))
	must(t, copyFile(initramfs, filepath.Join(artifacts, "initramfs")))
	scripts, err := httpboot.NewScripts(httpboot.ScriptOptions{Backend: backend, BootSpecs: httpboot.BootSpecFunc(
		func(_ context.Context, h pxe.HostRecord) (httpboot.BootSpec, error) {
			return httpboot.BootSpec{KernelURL: "/artifacts/kernel", InitrdURLs: []string{"/artifacts/initramfs"},
				Args: []string{"console=ttyS0", "panic=-1",
					pxetest.CallbackArg + "=http://" + srv.String() + "/callback/" + h.MAC.String()}}, nil
		})})
	must(t, err)
	hs, err := httpboot.New(httpboot.Options{Scripts: scripts, ArtifactDir: artifacts, Logger: log, Registerer: prometheus.NewRegistry(),
		Artifacts: httpboot.ArtifactMap{"kernel": {SHA256: fileSHA(t, vmlinuz)}, "initramfs": {SHA256: fileSHA(t, initramfs)}}})
	must(t, err)
	must(t, hs.Handle("GET /callback/{mac}", cb))
	var ln net.Listener
	must(t, l.Do(func() (err error) { ln, err = net.Listen("tcp4", srv.String()+":80"); return err }))
	wg.Go(func() { _ = hs.Serve(ctx, ln) })
	var ds *dhcp.Server
	must(t, l.Do(func() (err error) {
		ds, err = dhcp.NewServer(dhcp.Options{Interface: l.Interface(), Backend: backend, Logger: log, Registerer: prometheus.NewRegistry(),
			Subnets: []dhcp.Subnet{{Prefix: l.Subnet(), Router: srv}}, Boot: dhcp.BootOptions{HTTPBaseURL: "http://" + srv.String()}})
		return err
	}))
	wg.Go(func() { _ = ds.Serve(ctx) })
}

// echoServer is a stand-in for the kube-apiserver on host loopback.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	must(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); _, _ = io.Copy(c, c) })
		}
	})
	return ln.Addr().String()
}

func openDriver(t *testing.T, h lab.Host) bmc.Driver {
	t.Helper()
	opts := bmc.Options{Address: h.BMCAddress, Credentials: h.Credentials, Timeout: time.Minute,
		Guard: netguard.Guard{AllowLoopback: true}} // the lab's BMC emulators are on loopback
	if h.CertPEM != nil {
		opts.RootCAs = x509.NewCertPool()
		opts.RootCAs.AppendCertsFromPEM(h.CertPEM)
	}
	d, err := bmc.Open(opts)
	must(t, err)
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

// TestLabBootsThroughBMCs starts a lab with an IPMI host (diskless) and a
// Redfish host (blank disk), serves Anvil's DHCP and HTTP boot in the lab
// namespace and drives both VMs through Anvil's own BMC drivers:
//
//   - round 1: SetBootOnce(PXE) + On; both network boot and call back; the
//     BMCs report On. The IPMI host is powered off through its BMC, the
//     Redfish host's guest powers itself off; both VMs go away and both BMCs
//     report Off.
//   - round 2: On without an override (consumed by round 1). The diskless
//     IPMI host still network boots; the Redfish host tries its blank disk
//     first and falls back to the network (SeaBIOS's log shows the order).
//     The off paths are swapped.
//
// Then the forwarder relays to a loopback echo server, and Close leaves no
// namespace, thread in it, or process.
func TestLabBootsThroughBMCs(t *testing.T) {
	requireQEMU(t)
	mockup := need.RedfishMockup(t)
	vmlinuz, initramfs := prepare(t)
	apiserver := echoServer(t)
	dir := t.TempDir()
	l, err := lab.Start(context.Background(), lab.Options{
		Dir: dir, Name: "anvil-lab-t" + randHex(3), Subnet: netip.MustParsePrefix("10.213.7.0/24"),
		Hosts: []lab.HostOptions{
			{Name: "vm-ipmi", BMC: lab.IPMI},
			{Name: "vm-redfish", BMC: lab.Redfish, DiskMiB: 64},
		},
		APIServer: apiserver, RedfishMockup: mockup, Logger: testr.New(t),
	})
	must(t, err)
	nsIno := inode(t, "/run/netns/"+l.Namespace())
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = l.Close()
		}
	})
	hosts := l.Hosts()
	cb := newCallbacks(hosts)
	serveBoot(t, l, vmlinuz, initramfs, cb)
	t.Cleanup(func() {
		if t.Failed() {
			for _, h := range hosts {
				serial, _ := os.ReadFile(l.SerialLog(h.Name))
				fw, _ := os.ReadFile(l.FirmwareLog(h.Name))
				t.Logf("%s serial (tail):\n%s\nfirmware log (tail):\n%s", h.Name, tail(string(serial), 3000), tail(string(fw), 1500))
			}
		}
	})
	drivers := map[string]bmc.Driver{}
	for _, h := range hosts {
		drivers[h.Name] = openDriver(t, h)
	}
	pids := map[int]string{}
	var pidsMu sync.Mutex

	type plan struct {
		pxeOnce  bool
		selfOff  bool // the guest powers itself off; else Off through the BMC
		diskTrue bool // expect SeaBIOS to try the disk before the NIC
	}
	rounds := []map[string]plan{
		{"vm-ipmi": {pxeOnce: true}, "vm-redfish": {pxeOnce: true, selfOff: true}},
		{"vm-ipmi": {selfOff: true}, "vm-redfish": {diskTrue: true}},
	}
	for r, round := range rounds {
		t.Run(fmt.Sprintf("round%d", r+1), func(t *testing.T) {
			for _, h := range hosts {
				p := round[h.Name]
				t.Run(h.Name, func(t *testing.T) {
					t.Parallel()
					ctx := context.Background()
					d := drivers[h.Name]
					mac := h.MAC.String()
					cb.hold(mac)
					fwBefore := fileSize(l.FirmwareLog(h.Name))
					t0 := time.Now()
					if st, err := d.PowerState(ctx); err != nil || st != bmc.PowerStateOff {
						t.Fatalf("before power on: BMC reports %s, %v; want Off", st, err)
					}
					if p.pxeOnce {
						must(t, d.SetBootOnce(ctx, bmc.BootPXE))
					}
					t.Logf("%s: power state and boot override took %v", h.Name, time.Since(t0).Round(10*time.Millisecond))
					start := time.Now()
					must(t, d.SetPower(ctx, bmc.PowerOn))
					var ip string
					select {
					case ip = <-cb.got[mac]:
					case <-time.After(4 * time.Minute):
						t.Fatalf("no callback within 4 minutes (running: %t)", l.Running(h.Name))
					}
					t.Logf("%s: BMC power on -> initramfs callback in %v (guest %s, BMC %s, pxe once %t)",
						h.Name, time.Since(start).Round(100*time.Millisecond), ip, h.BMC, p.pxeOnce)
					// The guest waits for our answer: it is up for sure.
					if !l.Running(h.Name) {
						t.Errorf("VM not running while its guest calls back")
					}
					pid := l.PID(h.Name)
					pidsMu.Lock()
					pids[pid] = h.Name
					pidsMu.Unlock()
					t1 := time.Now()
					if st, err := d.PowerState(ctx); err != nil || st != bmc.PowerStateOn {
						t.Errorf("during boot: BMC reports %s, %v; want On", st, err)
					}
					t.Logf("%s: reading the power state during boot took %v", h.Name, time.Since(t1).Round(10*time.Millisecond))
					offAt := time.Now()
					if p.selfOff {
						cb.let(mac) // the initramfs powers off after the callback
					} else {
						must(t, d.SetPower(ctx, bmc.PowerOff))
						t.Logf("%s: BMC power off accepted in %v", h.Name, time.Since(offAt).Round(10*time.Millisecond))
					}
					if !waitFor(60*time.Second, func() bool { return !l.Running(h.Name) && !alive(pid) }) {
						t.Fatalf("VM (pid %d) still running 60 s after power off (self: %t)", pid, p.selfOff)
					}
					goneAt := time.Now()
					var st bmc.PowerState
					if !waitFor(30*time.Second, func() bool { st, err = d.PowerState(ctx); return err == nil && st == bmc.PowerStateOff }) {
						t.Fatalf("VM gone but the BMC reports %s, %v; want Off", st, err)
					}
					t.Logf("%s: VM gone %v after the off (self: %t), BMC Off %v later", h.Name,
						goneAt.Sub(offAt).Round(10*time.Millisecond), p.selfOff, time.Since(goneAt).Round(10*time.Millisecond))
					cb.let(mac)
					if h.Name == "vm-redfish" {
						checkBootOrder(t, l.FirmwareLog(h.Name), fwBefore, p.diskTrue)
					}
				})
			}
		})
		if t.Failed() {
			return
		}
	}

	t.Run("forwarder", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 3 {
			var c net.Conn
			must(t, l.Do(func() (err error) {
				c, err = net.DialTimeout("tcp4", netip.AddrPortFrom(l.BridgeIP(), lab.APIServerPort).String(), 10*time.Second)
				return err
			}))
			wg.Go(func() {
				defer c.Close()
				msg := fmt.Sprintf("hello %d through the lab\n", i)
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := io.WriteString(c, msg); err != nil {
					t.Error(err)
					return
				}
				got, err := bufio.NewReader(c).ReadString('\n')
				if err != nil || got != msg {
					t.Errorf("echo through the forwarder: %q, %v; want %q", got, err, msg)
				}
			})
		}
		wg.Wait()
	})

	// Close leaves nothing behind.
	ipmiPID := readPID(t, filepath.Join(dir, "hosts", "vm-ipmi", "ipmi_sim.pid"))
	pids[ipmiPID] = "ipmi_sim"
	cb.letAll()
	must(t, l.Close())
	closed = true
	must(t, l.Close()) // idempotent
	if _, err := os.Stat("/run/netns/" + l.Namespace()); err == nil {
		t.Errorf("namespace %s still exists after Close", l.Namespace())
	}
	for pid, what := range pids {
		if alive(pid) {
			t.Errorf("%s (pid %d) still alive after Close", what, pid)
		}
	}
	if holders := netnsHolders(nsIno); len(holders) > 0 {
		t.Errorf("threads still in the lab's namespace after Close: %v", holders)
	}
}

// checkBootOrder reads what SeaBIOS logged for the latest boot (after
// offset) and checks whether it tried the hard disk before the NIC's ROM.
func checkBootOrder(t *testing.T, path string, offset int64, diskFirst bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	log := string(data[min(offset, int64(len(data))):])
	disk := strings.Index(log, "Booting from Hard Disk")
	rom := strings.Index(log, "Booting from ROM")
	switch {
	case rom < 0:
		t.Errorf("SeaBIOS never booted the NIC's ROM; log:\n%s", tail(log, 2000))
	case diskFirst && (disk < 0 || disk > rom):
		t.Errorf("boot without override: want the disk tried before the NIC; log:\n%s", tail(log, 2000))
	case !diskFirst && disk >= 0 && disk < rom:
		t.Errorf("one-time PXE boot: the disk was tried first; log:\n%s", tail(log, 2000))
	}
}

func fileSHA(t *testing.T, p string) string {
	data, err := os.ReadFile(p)
	must(t, err)
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
