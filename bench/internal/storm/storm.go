// Package storm is the boot storm benchmark (issue 9, part 4): a rack of N
// simulated hosts powers on at once and network-boots from the real Anvil,
// run as in production (the controllers in one `anvil serve`, DHCP, TFTP
// and HTTP boot in `anvil serve --controllers none` inside the server
// network namespace) against a real kube-apiserver and etcd.
//
// Each host is a Host object (manual://, no BMC) claimed by its own Machine
// of a MachineClass that renders (the lab's), so Anvil sets the boot
// request, mints the boot credential and renders the config exactly as in
// production. "Power on" is acknowledging the manual power action. Then the
// load generator (LoadMain, a process in the load namespace) does what each
// host's firmware, iPXE and OS do: DHCP as EDK2's PXE client (option 60
// PXEClient, option 93, its own MAC), TFTP of the iPXE binary named in the
// offer (with EDK2's size probe), DHCP again as iPXE (user class "iPXE"),
// the iPXE script over HTTP, the kernel and initrd it names, a simulated
// kernel boot, DHCP as the OS, and Ignition's fetch of the config with the
// boot credential from the script's kernel arguments, every request from
// the address DHCP leased to that MAC.
//
// The figure per host is the time from power-on to the last byte of its
// config; failures are counted by stage with their reasons, retransmissions
// by kind, and both Anvil processes' CPU and memory come from /proc.
package storm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"anvil.dev/anvil/bench/internal/netns"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/pxe/neigh"
	"anvil.dev/anvil/test/lab/image"
)

// Options configure Run.
type Options struct {
	// Sizes are the rack sizes; each is run Runs times (interleaved).
	Sizes []int
	Runs  int
	// Anvil is the anvil binary; empty: `go build ./cmd/anvil` into Dir.
	Anvil string
	// RepoRoot of anvil.dev/anvil (bin/ with kube-apiserver and etcd).
	RepoRoot string
	// Dir is scratch space (artifacts, logs, one directory per run).
	Dir string
	// LoadCommand starts the load generator (LoadMain); the arguments
	// --config and --out are appended. Env is added to its environment.
	LoadCommand []string
	LoadEnv     []string
	// TFTPRoot holds the iPXE binary DHCP names for x86-64 UEFI
	// (snponly.efi; Debian package ipxe).
	TFTPRoot string
	// KernelBytes and InitrdBytes are the artifact sizes (random content).
	KernelBytes, InitrdBytes int64
	// OSBoot is the simulated kernel boot before the OS asks DHCP and
	// Ignition fetches the config.
	OSBoot time.Duration
	// Spread powers the hosts on over this long (0: all at once).
	Spread time.Duration
	// HostTimeout bounds one host's boot.
	HostTimeout time.Duration
	// ServeArgs are extra flags for both anvil processes.
	ServeArgs []string
	// StaticAddresses gives every Host spec.network.address, so DHCP hands
	// out addresses without writing leases (an experiment: is the lease
	// write the DHCP server's cost?).
	StaticAddresses bool
	// Profile takes a CPU profile (perf) of the netboot process during the
	// first run of the largest size, when perf is installed.
	Profile bool
	Logf    func(format string, args ...any)
}

// Lab image sizes (test/lab/image: Debian's kernel, the initramfs with
// Ignition, anvil-agent and busybox), so the storm moves what a real
// Anvil-booted host fetches.
const (
	labKernelBytes = 8247232
	labInitrdBytes = 25636962
)

// DefaultOptions is the full storm: 100, 500 and 1,000 hosts. OSBoot is
// 10 s, a bare-metal kernel and initramfs reaching Ignition's fetch stage
// (udev, NetworkManager's DHCP); the QEMU lab needs about that under TCG.
func DefaultOptions() Options {
	return Options{
		Sizes: []int{100, 500, 1000, 2000}, Runs: 3, TFTPRoot: "/usr/lib/ipxe",
		KernelBytes: labKernelBytes, InitrdBytes: labInitrdBytes,
		OSBoot: 10 * time.Second, HostTimeout: 15 * time.Minute, Profile: true,
	}
}

// SmokeOptions is a tiny storm for CI: five hosts, small files.
func SmokeOptions() Options {
	o := DefaultOptions()
	o.Sizes, o.Runs = []int{5}, 1
	o.KernelBytes, o.InitrdBytes = 1<<20, 4<<20
	o.OSBoot = time.Second
	o.HostTimeout = 3 * time.Minute
	o.Profile = false
	return o
}

// bootFile is what Anvil's DHCP names for option 93 = 7 (x86-64 UEFI).
const (
	bootFile = "snponly.efi"
	archUEFI = 7
)

// DHCP range on the pair's /16, and the load side's local route for it:
// every leased address is local in the load namespace, so each simulated
// host can use (bind to) the address DHCP gave it.
const (
	dhcpRange   = "198.18.16.1-198.18.31.254"
	leaseRoute  = "198.18.16.0/20"
	staticRoute = "198.18.32.0/20" // StaticAddresses
)

// Run runs the storm at every size and returns the results; problems that
// stop a run are recorded in it, never panics.
func Run(ctx context.Context, o Options) *results.Storm {
	res := &results.Storm{Started: time.Now().UTC()}
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	res.Client = "EDK2 UEFI PXE (x86-64, option 93 = 7): DHCP collecting offers for its 4 s window, TFTP of " + bootFile +
		" (tsize probe, blksize 1468, windowsize 4, 4 s x 6 tries); iPXE DHCP (user class iPXE); HTTP script, kernel, initrd on one keep-alive " +
		"connection; " + o.OSBoot.String() + " simulated kernel boot; OS DHCP; Ignition config fetch (5xx retried, 4xx final); all from the leased address"
	res.ClientWaitSeconds = 4 + o.OSBoot.Seconds()
	defer func() { res.Finished = time.Now().UTC() }()
	if err := o.check(); err != nil {
		res.Error = err.Error()
		return res
	}
	bootFileBytes, err := fileSize(filepath.Join(o.TFTPRoot, bootFile))
	if err != nil {
		res.Error = fmt.Sprintf("%v (install the Debian package ipxe)", err)
		return res
	}
	res.Files = []results.StormFile{
		{Name: bootFile, Via: "tftp", Bytes: bootFileBytes},
		{Name: "vmlinuz", Via: "http", Bytes: o.KernelBytes},
		{Name: "initramfs.cpio.gz", Via: "http", Bytes: o.InitrdBytes},
	}
	if o.Anvil == "" {
		o.Logf("storm: building anvil")
		if o.Anvil, err = buildAnvil(ctx, o.RepoRoot, o.Dir); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	version := "anvil (version unknown)"
	if b, err := exec.CommandContext(ctx, o.Anvil, "version").Output(); err == nil {
		version = strings.TrimSpace(string(b))
	}
	artifacts := filepath.Join(o.Dir, "artifacts")
	class, err := writeArtifacts(artifacts, o.KernelBytes, o.InitrdBytes)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	pair, err := netns.NewPair(netns.DefaultPrefix)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer pair.Close()
	for _, route := range []string{leaseRoute, staticRoute} {
		if out, err := exec.Command("ip", "-n", pair.Load, "route", "add", "local", route, "dev", "lo").CombinedOutput(); err != nil {
			res.Error = fmt.Sprintf("local route for the hosts' addresses: %v: %s", err, out)
			return res
		}
	}
	res.Setup = fmt.Sprintf("%s; fresh kube-apiserver + etcd (test/envtest) per run; `anvil serve` controllers (host, csr, machineclass, machine, machineset) "+
		"in the host namespace; `anvil serve --controllers none --dhcp --dhcp-range %s --tftp --http-boot` in the server namespace "+
		"(API server reached through a TCP relay); defaults otherwise (kube-api-qps 50, burst 100); nothing pinned: API server, etcd, "+
		"both anvil processes and the load generator share the machine's %d cores", version, dhcpRange, runtime.NumCPU())
	if len(o.ServeArgs) > 0 {
		res.Setup += "; extra flags " + strings.Join(o.ServeArgs, " ")
	}
	if o.Spread > 0 {
		res.Setup += fmt.Sprintf("; hosts powered on evenly over %s, not all at once", o.Spread)
	}
	if o.StaticAddresses {
		res.Setup += "; EXPERIMENT: every Host has a static address (spec.network.address), so DHCP writes no leases"
	}
	largest := 0
	for _, n := range o.Sizes {
		largest = max(largest, n)
		res.Sizes = append(res.Sizes, results.StormSize{Hosts: n})
	}
	note, restore, err := fitNeighbourTable(largest)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer restore()
	res.Setup += "; " + note
	for run := range o.Runs {
		for i, n := range o.Sizes {
			if ctx.Err() != nil {
				return res
			}
			dir := filepath.Join(o.Dir, fmt.Sprintf("run%d-%d", run+1, n))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				res.Error = err.Error()
				return res
			}
			o.Logf("storm: %d hosts, run %d of %d", n, run+1, o.Runs)
			r := runOne(ctx, o, runSpec{dir: dir, hosts: n, pair: pair, artifacts: artifacts, class: class,
				bootFileBytes: bootFileBytes, profile: o.Profile && run == 0 && n == largest})
			o.Logf("storm: %d hosts: %d ok, p50 %.1fs p99 %.1fs max %.1fs, netboot %.1f CPU s, %s", n, r.Succeeded, r.P50, r.P99, r.Max,
				r.Netboot.CPUSeconds, failureLine(r))
			res.Sizes[i].Runs = append(res.Sizes[i].Runs, r)
		}
	}
	return res
}

func failureLine(r results.StormRun) string {
	if r.Error != "" {
		return "error: " + r.Error
	}
	if len(r.Failures) == 0 {
		return "no failures"
	}
	var s []string
	for _, f := range r.Failures {
		s = append(s, fmt.Sprintf("%d× %s: %s", f.Hosts, f.Stage, f.Reason))
	}
	return "failures: " + strings.Join(s, "; ")
}

func (o Options) check() error {
	if os.Geteuid() != 0 {
		return errors.New("the storm needs root (network namespaces, DHCP and TFTP ports)")
	}
	if len(o.LoadCommand) == 0 || o.Dir == "" || o.RepoRoot == "" {
		return errors.New("storm: LoadCommand, Dir and RepoRoot are required")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(o.RepoRoot, "bin", b)); err != nil {
			return fmt.Errorf("bin/%s missing: run `make tools`", b)
		}
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("ip (iproute2) missing")
	}
	return nil
}

func fileSize(p string) (int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// buildAnvil builds cmd/anvil as `make build` does.
func buildAnvil(ctx context.Context, root, dir string) (string, error) {
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	out := filepath.Join(dir, "anvil")
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-o", out, "./cmd/anvil")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/anvil: %v: %s", err, b)
	}
	return out, nil
}

// writeArtifacts writes the kernel, initrd and kubelet (random bytes, so
// nothing compresses) where the lab MachineClass's relative URLs point, and
// returns the class options with their digests.
func writeArtifacts(dir string, kernel, initrd int64) (image.ClassOptions, error) {
	co := image.ClassOptions{Namespace: namespace}
	img := &image.Image{}
	for _, f := range []struct {
		name string
		size int64
		sum  *string
	}{
		{"lab/vmlinuz", kernel, &img.KernelSHA256},
		{"lab/initramfs.cpio.gz", initrd, &img.InitrdSHA256},
		{"lab/kubelet-" + image.DefaultKubeletVersion, 1 << 20, &co.KubeletSHA256},
	} {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return co, err
		}
		sum, err := writeRandom(p, f.size)
		if err != nil {
			return co, fmt.Errorf("artifact %s: %w", f.name, err)
		}
		*f.sum = sum
	}
	co.Image = img
	return co, nil
}

func writeRandom(path string, size int64) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var seed [32]byte
	copy(seed[:], path)
	src := rand.NewChaCha8(seed)
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), src, size); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), f.Close()
}

// runSpec is one run's setting.
type runSpec struct {
	dir           string
	hosts         int
	pair          *netns.Pair
	artifacts     string
	class         image.ClassOptions
	bootFileBytes int64
	profile       bool
}

// runOne starts a fresh control plane and Anvil, sets the rack up, powers
// it on and measures.
func runOne(ctx context.Context, o Options, s runSpec) (r results.StormRun) {
	r.Hosts = s.hosts
	st, err := startStack(ctx, stackOptions{Dir: s.dir, Anvil: o.Anvil, Pair: s.pair, DHCPRange: dhcpRange,
		TFTPRoot: o.TFTPRoot, ArtifactDir: s.artifacts, ServeArgs: o.ServeArgs})
	defer st.stop()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	gen, err := startGenerator(ctx, o, s)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer gen.kill()

	setupStart := time.Now()
	rk, err := newRack(st.env, s.hosts, o.Logf)
	if err == nil {
		rk.static = o.StaticAddresses
		err = rk.setUp(ctx, s.class)
	}
	r.SetupSeconds = time.Since(setupStart).Seconds()
	if err != nil {
		r.Error = "setting up the rack: " + err.Error()
		return r
	}
	// The netboot process learns of the recorded boots through its
	// informers, within milliseconds; give it ample time.
	if err := sleep(ctx, 3*time.Second); err != nil {
		r.Error = err.Error()
		return r
	}

	nb0, ctl0 := st.netboot.mon.Now(), st.controllers.mon.Now()
	api0, apiRSS0 := st.apiserverUsage()
	st.netboot.mon.ResetPeak()
	st.controllers.mon.ResetPeak()
	apiBefore, _ := st.apiMetrics(ctx)
	var prof *profiler
	if s.profile {
		prof = startProfile(st.netboot.cmd.Process.Pid, s.dir, o.Logf)
	}
	srv0, load0 := udpCounters(s.pair.Srv), udpCounters(s.pair.Load)
	full0, _ := neigh.TableFulls(neigh.StatFile)
	stopLoad := sampleLoad(&r.LoadMax)
	t0 := time.Now()
	lr, err := gen.power(ctx, o.HostTimeout+2*time.Minute)
	stopLoad()
	srv1, load1 := udpCounters(s.pair.Srv), udpCounters(s.pair.Load)
	r.UDPDrops, r.LoadUDPDrops = srv1["RcvbufErrors"]-srv0["RcvbufErrors"], load1["RcvbufErrors"]-load0["RcvbufErrors"]
	r.UDPSendDrops, r.LoadUDPSendDrops = srv1["SndbufErrors"]-srv0["SndbufErrors"], load1["SndbufErrors"]-load0["SndbufErrors"]
	if full1, ferr := neigh.TableFulls(neigh.StatFile); ferr == nil {
		r.NeighbourOverflows = full1 - full0
	}
	wall := time.Since(t0).Seconds()
	nb1, ctl1 := st.netboot.mon.Now(), st.controllers.mon.Now()
	api1, _ := st.apiserverUsage()
	if apiAfter, aerr := st.apiMetrics(ctx); aerr == nil && apiBefore != "" {
		r.API = apiDelta(apiBefore, apiAfter)
	}
	if prof != nil {
		r.Profile = prof.stop()
	}
	r.Netboot = usage(nb0.CPU, nb1.CPU, wall, nb0.RSS, st.netboot.mon.Peak())
	r.Controllers = usage(ctl0.CPU, ctl1.CPU, wall, ctl0.RSS, st.controllers.mon.Peak())
	if lr.CPUSeconds > 0 {
		r.Load = &results.StormProc{CPUSeconds: lr.CPUSeconds, Cores: lr.CPUSeconds / wall, PeakRSS: lr.MaxRSS}
	}
	if len(st.apiserver) > 0 {
		a := usage(api0, api1, wall, apiRSS0, st.apiserverPeak())
		r.APIServer = &a
	}
	if m, merr := scrapeMetrics(ctx, s.pair.Srv); merr == nil {
		r.Metrics = m
	} else {
		o.Logf("storm: metrics of the netboot process: %v", merr)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	summarize(&r, lr)
	if st.netboot.exited() {
		r.Error = "anvil netboot exited during the storm:\n" + st.netboot.tail(2000)
	}
	return r
}

func usage(cpu0, cpu1, wall float64, idle, peak int64) results.StormProc {
	p := results.StormProc{CPUSeconds: cpu1 - cpu0, IdleRSS: idle, PeakRSS: peak}
	if wall > 0 {
		p.Cores = p.CPUSeconds / wall
	}
	return p
}

// sampleLoad records the highest 1-minute load average every 2 s until the
// returned function is called.
func sampleLoad(peak *float64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			var l float64
			if b, err := os.ReadFile("/proc/loadavg"); err == nil {
				fmt.Sscan(string(b), &l)
			}
			*peak = max(*peak, l)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// udpCounters are the namespace's UDP counters (/proc/net/snmp, Udp:):
// RcvbufErrors (dropped for a full receive buffer), SndbufErrors (dropped
// on the way out, the sender not told), and the others.
func udpCounters(ns string) map[string]uint64 {
	out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/proc/net/snmp").Output()
	if err != nil {
		return nil
	}
	return parseUDPCounters(string(out))
}

func parseUDPCounters(snmp string) map[string]uint64 {
	var names []string
	for _, l := range strings.Split(snmp, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		m := map[string]uint64{}
		for i, n := range names {
			if i+1 < len(f) {
				m[n], _ = strconv.ParseUint(f[i+1], 10, 64)
			}
		}
		return m
	}
	return nil
}
