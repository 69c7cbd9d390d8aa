package image

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
	"anvil.dev/anvil/agent/server/kube"
	"anvil.dev/anvil/controlplane"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/qemuaccel"
)

// lab is one test's world: a network namespace with a bridge and a tap, a
// control plane on loopback reachable from the bridge through a forwarder,
// Anvil's CSR approver, MachineClass validation and agent API, a DHCP
// server and an HTTP server (configs, artifacts, agent API) on the bridge.
type lab struct {
	t        *testing.T
	id       string
	dir      string
	ns       *netnstest.NS
	subnet   netip.Prefix
	bridgeIP netip.Addr
	log      logr.Logger

	cp     *controlplane.ControlPlane
	admin  client.Client // uncached
	cached client.Client // the manager's cache
	kube   kubernetes.Interface

	// mux serves HTTP on the bridge (port 80); "/" is serve.
	mux *http.ServeMux

	mu    sync.Mutex
	files map[string]string // URL path -> local file
	blobs map[string][]byte // URL path -> contents (rendered configs)
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newLab brings the lab up; t.Cleanup tears it down (VMs by PID, servers,
// control plane, namespace) in reverse order.
func newLab(t *testing.T, repo string) *lab {
	l := newLabNet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Dir: filepath.Join(l.dir, "cp"), BinDir: filepath.Join(repo, "bin"), RandomPorts: true,
		ExtraSANs:         []net.IP{net.IP(l.bridgeIP.AsSlice())},
		ControllerManager: &controlplane.ControllerManagerOptions{}, // signs approved CSRs
		Logger:            l.log.WithName("controlplane"),
	})
	must(t, err)
	t.Cleanup(cp.Stop)
	l.cp = cp
	t.Logf("control plane ready in %v (API server 127.0.0.1:%d)", time.Since(start).Round(time.Millisecond), cp.APIServerPort)
	scheme := envtest.Scheme()
	l.admin, err = client.New(cp.Config, client.Options{Scheme: scheme})
	must(t, err)
	l.kube, err = kubernetes.NewForConfig(cp.Config)
	must(t, err)
	must(t, deploy.InstallCRDs(ctx, l.admin))
	must(t, l.admin.Create(ctx, csr.BootstrapClusterRoleBinding()))

	// The API server as VMs see it: <bridge>:6443, forwarded to loopback.
	var apiLn net.Listener
	must(t, l.ns.Do(func() (err error) {
		apiLn, err = net.Listen("tcp4", netip.AddrPortFrom(l.bridgeIP, 6443).String())
		return err
	}))
	t.Cleanup(func() { apiLn.Close() })
	go forward(apiLn, "127.0.0.1:"+strconv.Itoa(cp.APIServerPort))

	// Anvil's controllers that take part: CSR approval, MachineClass
	// validation, and the cache behind the agent API.
	// Reflectors log through controller-runtime's global logger; it must
	// not be this test's (it outlives it), and unset it complains.
	ctrl.SetLogger(logr.Discard())
	mgrCtx, mgrCancel := context.WithCancel(context.Background())
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: l.log.WithName("manager")})
	must(t, err)
	must(t, (&csr.Approver{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Kube: l.kube,
		Recorder: mgr.GetEventRecorder("anvil-csr"), RetryInterval: 2 * time.Second}).SetupWithManager(mgrCtx, mgr))
	must(t, (&machine.ClassReconciler{Client: mgr.GetClient()}).SetupWithManager(mgrCtx, mgr))
	must(t, kube.AddIndexes(mgrCtx, mgr.GetFieldIndexer()))
	backend, err := kube.New(kube.Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Logger: l.log.WithName("agent-backend")})
	must(t, err)
	l.cached = mgr.GetClient()
	mgrDone := make(chan struct{})
	go func() {
		defer close(mgrDone)
		if err := mgr.Start(mgrCtx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { mgrCancel(); <-mgrDone })

	// The agent API next to the configs and artifacts.
	agentSrv, err := server.NewServer(server.ServerOptions{Backend: backend, Logger: l.log.WithName("agent-api")})
	must(t, err)
	l.mux.Handle(agent.PathPrefix, agentSrv)
	return l
}

// newLabNet is the lab's network alone: the namespace with its bridge and
// tap, and the HTTP server on the bridge (l.mux). startDHCP adds DHCP.
func newLabNet(t *testing.T) *lab {
	id := randomID(3)
	b, _ := hex.DecodeString(id[:2])
	l := &lab{
		t: t, id: id, dir: t.TempDir(),
		subnet:   netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, b[0], 0}), 24),
		bridgeIP: netip.AddrFrom4([4]byte{10, 213, b[0], 1}),
		log:      testr.NewWithOptions(t, testr.Options{Verbosity: 0}),
		files:    map[string]string{},
		blobs:    map[string][]byte{},
	}
	l.ns = netnstest.NewVMSegment(t, id, "lab", netip.PrefixFrom(l.bridgeIP, 24))

	// HTTP on the bridge: configs and artifacts (and what tests add).
	l.mux = http.NewServeMux()
	l.mux.HandleFunc("/", l.serve)
	var httpLn net.Listener
	must(t, l.ns.Do(func() (err error) {
		httpLn, err = net.Listen("tcp4", netip.AddrPortFrom(l.bridgeIP, 80).String())
		return err
	}))
	hs := &http.Server{Handler: l.mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(httpLn) }()
	t.Cleanup(func() { _ = hs.Close() })
	return l
}

// serve answers GET for rendered configs and artifact files.
func (l *lab) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	l.mu.Lock()
	blob, isBlob := l.blobs[r.URL.Path]
	file, isFile := l.files[r.URL.Path]
	l.mu.Unlock()
	switch {
	case isBlob:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(blob)
	case isFile:
		http.ServeFile(w, r, file)
	default:
		http.NotFound(w, r)
		return
	}
	l.t.Logf("http: %s %s (%s)", r.Method, r.URL.Path, r.RemoteAddr)
}

func (l *lab) url(path string) string { return "http://" + l.bridgeIP.String() + path }

// startDHCP answers each host's MAC with its reservation, the bridge as
// router.
func (l *lab) startDHCP(hosts []*labHost) {
	var recs []pxe.HostRecord
	for _, h := range hosts {
		hostname := h.name
		if h.machine != nil {
			hostname = h.machine.Name
		}
		recs = append(recs, pxe.HostRecord{Name: h.name, Namespace: "lab", MAC: h.mac, Accepted: true,
			IP: netip.PrefixFrom(h.ip, l.subnet.Bits()), Hostname: hostname})
	}
	backend := pxe.NewStaticBackend(recs...)
	var ds *dhcp.Server
	must(l.t, l.ns.Do(func() (err error) {
		ds, err = dhcp.NewServer(dhcp.Options{Interface: "br0", Backend: backend, Logger: l.log.WithName("dhcp"),
			Registerer: prometheus.NewRegistry(), Subnets: []dhcp.Subnet{{Prefix: l.subnet, Router: l.bridgeIP}}})
		return err
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ds.Serve(ctx) }()
	l.t.Cleanup(func() { cancel(); <-done })
}

// namespace creates a namespace for the lab's objects.
func (l *lab) namespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lab-" + l.id}}
	must(l.t, l.admin.Create(context.Background(), ns))
	return ns.Name
}

// forward copies connections accepted on ln (in the lab namespace) to
// target (on the host's loopback) until ln is closed.
func forward(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			d, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil {
				return
			}
			defer d.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(d, c); d.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, d); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

// vm is one QEMU process in the lab namespace, booted directly from the
// image's kernel and initrd (no firmware, no PXE).
type vm struct {
	t      *testing.T
	name   string
	pid    int
	serial string
	out    *netnstest.SyncBuffer
	start  time.Time
	exited chan struct{}
}

type vmOptions struct {
	name     string
	img      *Image
	mac      net.HardwareAddr
	disk     string // raw image, as virtio disk (vda)
	args     []string
	memoryMB int
}

// bootVM starts the VM; t.Cleanup kills it (by PID), logs its console
// when t failed, and copies it to $ANVIL_LAB_SERIAL_DIR when set.
func (l *lab) bootVM(t *testing.T, o vmOptions) *vm {
	accel := qemuaccel.Choose()
	t.Logf("%s: %s", o.name, accel)
	v := &vm{t: t, name: o.name, serial: filepath.Join(l.dir, o.name+".serial.log"), out: &netnstest.SyncBuffer{}, exited: make(chan struct{})}
	args := []string{
		"-nodefaults", "-display", "none", "-monitor", "none", "-no-reboot",
		"-m", strconv.Itoa(o.memoryMB), "-smp", "1", "-accel", accel.Accel,
		"-serial", "file:" + v.serial,
		"-kernel", o.img.Kernel, "-initrd", o.img.Initrd, "-append", strings.Join(o.args, " "),
		"-netdev", "tap,id=n0,ifname=tap0,script=no,downscript=no",
		"-device", "virtio-net-pci,netdev=n0,mac=" + o.mac.String(),
	}
	if o.disk != "" {
		args = append(args, "-drive", "file="+o.disk+",format=raw,if=virtio")
	}
	v.start = time.Now()
	// One Wait only (netnstest's Start waits too): v.exited is the truth.
	cmd := l.ns.Command(context.Background(), "qemu-system-x86_64", args...)
	cmd.Stdout, cmd.Stderr = v.out, v.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting qemu: %v", err)
	}
	v.pid = cmd.Process.Pid
	go func() { _ = cmd.Wait(); close(v.exited) }()
	stopWatch := make(chan struct{})
	watched := v.watchMarkers(stopWatch)
	t.Cleanup(func() {
		close(stopWatch)
		<-watched
		v.stop()
		if t.Failed() {
			t.Logf("%s: qemu output:\n%s\nserial console (last 12000 bytes):\n%s", v.name, v.out.String(), tail(v.serialLog(), 12000))
		}
		if dir := os.Getenv("ANVIL_LAB_SERIAL_DIR"); dir != "" {
			if err := os.WriteFile(filepath.Join(dir, l.id+"-"+v.name+".serial.log"), []byte(v.serialLog()), 0o644); err != nil {
				t.Logf("copying the serial log: %v", err)
			}
		}
	})
	return v
}

func (v *vm) serialLog() string {
	b, _ := os.ReadFile(v.serial)
	return string(b)
}

// stop kills the VM by PID and waits for it.
func (v *vm) stop() {
	select {
	case <-v.exited:
		return
	default:
	}
	_ = syscall.Kill(v.pid, syscall.SIGKILL)
	select {
	case <-v.exited:
	case <-time.After(10 * time.Second):
		v.t.Errorf("%s: qemu pid %d did not exit", v.name, v.pid)
	}
}

// peakRSS is QEMU's peak resident memory (VmHWM), in MiB.
func (v *vm) peakRSS() string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(v.pid) + "/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.Atoi(f[1])
			return fmt.Sprintf("%d MiB", kb/1024)
		}
	}
	return "?"
}

// watchMarkers logs every console marker line as it appears, with the time
// since the VM started, until stop is closed.
func (v *vm) watchMarkers(stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := 0
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			lines := strings.Split(v.serialLog(), "\n")
			for ; seen < len(lines)-1; seen++ { // the last line may be partial
				if i := strings.Index(lines[seen], "ANVIL-LAB"); i >= 0 {
					v.t.Logf("%s +%5.1fs %s", v.name, time.Since(v.start).Seconds(), strings.TrimSpace(lines[seen][i:]))
				}
			}
			select {
			case <-stop:
				return
			case <-v.exited:
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
