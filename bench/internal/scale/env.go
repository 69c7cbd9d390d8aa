// Package scale measures Anvil's controllers at scale against the real
// kube-apiserver (test/envtest): the controller scale benchmark of issue 9
// (Hosts behind a latency-injecting Redfish emulator, a MachineSet scaled
// from 0) and the in-place rollout benchmark of issue 7 (a MachineSet
// changing its kubelet version with maxUnavailable). Hosts, agents and
// kubelets are simulated by test/simhost over the real protocols; the
// controllers and the network services run as two `anvil serve` processes,
// so their CPU, memory (/proc) and API requests (their own /metrics) are
// theirs alone.
package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bench/internal/proc"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/redfishsim"
	"anvil.dev/anvil/test/simhost"
)

// Namespace of every object the benchmarks create.
const Namespace = "scale"

// BMCOptions model the BMCs (issue 9: median 300 ms, p99 3 s, 1% errors).
type BMCOptions struct {
	Median, P99 time.Duration
	// ErrorRate of 503 answers and TimeoutRate of requests never answered
	// (held TimeoutHold, then the connection is dropped).
	ErrorRate, TimeoutRate float64
	TimeoutHold            time.Duration
	PowerDelay             time.Duration
}

// DefaultBMC is issue 9's BMC: half of the 1% errors are 503s, half hang.
func DefaultBMC() BMCOptions {
	return BMCOptions{Median: 300 * time.Millisecond, P99: 3 * time.Second, ErrorRate: 0.005, TimeoutRate: 0.005,
		TimeoutHold: 30 * time.Second, PowerDelay: time.Second}
}

func (b BMCOptions) String() string {
	return fmt.Sprintf("Redfish emulator over TLS, one system per Host, log-normal latency median %s p99 %s, %.1f%% 503s, %.1f%% requests hung %s then dropped",
		b.Median, b.P99, b.ErrorRate*100, b.TimeoutRate*100, b.TimeoutHold)
}

// SimOptions are the simulated hosts' timings (test/simhost.Options).
type SimOptions struct {
	POSTDelay, KernelBootDelay, AgentStartDelay, KubeletStartDelay time.Duration
	NodeStatusInterval, PollInterval                               time.Duration
	IgnorePollHint                                                 bool
	ApplyDelay                                                     time.Duration
	Concurrency                                                    int
}

func (s SimOptions) String() string {
	hint := ""
	if s.IgnorePollHint {
		hint = " (server hint ignored)"
	}
	// The agents long-poll with test/simhost's default wait (5m), on a
	// keep-alive connection each, as anvil-agent does.
	return fmt.Sprintf("simulated POST %s, kernel boot %s, agent start %s and kubelet start %s after the config, node status every %s, agent action long poll of up to 5m0s on a keep-alive connection (every %s%s against a server that does not hold), upgrade apply %s",
		s.POSTDelay, s.KernelBootDelay, s.AgentStartDelay, s.KubeletStartDelay, s.NodeStatusInterval, s.PollInterval, hint, s.ApplyDelay)
}

// EnvOptions set up one measured environment.
type EnvOptions struct {
	// Dir for logs, kubeconfig and artifacts (created).
	Dir string
	// Anvil binary (BuildAnvil); required.
	Anvil    string
	Hosts    int
	Versions []string
	BMC      BMCOptions
	Sim      SimOptions
	// ServeArgs are extra flags of the controllers' `anvil serve`.
	ServeArgs []string
	// Pprof serves net/http/pprof from both processes (simhost).
	Pprof bool
	Seed  int64
	// NoAudit turns off the API server's audit log of the anvil
	// processes' requests (the per-resource breakdown).
	NoAudit bool
	// AuditBodies logs each request's body too (what every write changed).
	AuditBodies bool
	Logf        func(string, ...any)
	// OnEvent receives the simulated hosts' steps.
	OnEvent func(simhost.Event)
}

// env is a running environment: API server, BMC emulator, both anvil
// processes, the fleet, and monitors.
type env struct {
	o      EnvOptions
	api    *apiServer
	c      client.Client
	bmc    *redfishsim.Server
	anvil  *simhost.Anvil
	fleet  *simhost.Fleet
	cache  cache.Cache // Machines and Hosts, for the benchmark's watches
	stopFn []func()

	ctrlMon, netMon *proc.Monitor
	apiPIDs         []int
}

var buildOnce sync.Map // output path -> error

// BuildAnvil builds ./cmd/anvil into out once per process.
func BuildAnvil(ctx context.Context, root, out string, logf func(string, ...any)) error {
	v, _ := buildOnce.LoadOrStore(out, &sync.Once{})
	var err error
	v.(*sync.Once).Do(func() {
		logf("building ./cmd/anvil")
		err = simhost.BuildAnvil(ctx, root, out)
	})
	if err != nil {
		buildOnce.Delete(out)
	}
	return err
}

func startEnv(ctx context.Context, o EnvOptions) (e *env, err error) {
	e = &env{o: o}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return e, err
	}
	raiseNoFile(o.Logf)
	o.Logf("starting kube-apiserver and etcd")
	if e.api, err = startAPIServer(o.Dir, !o.NoAudit, o.AuditBodies); err != nil {
		return e, err
	}
	e.stopFn = append(e.stopFn, e.api.stop)
	e.apiPIDs = descendants("kube-apiserver", "etcd")
	cfg := rest.CopyConfig(e.api.cfg)
	cfg.QPS, cfg.Burst = -1, 0
	scheme := envtest.Scheme()
	if e.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return e, err
	}
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); err != nil {
		return e, err
	}

	systems := make([]redfishsim.SystemOptions, o.Hosts)
	for i := range systems {
		systems[i] = redfishsim.SystemOptions{ID: "sys-" + strconv.Itoa(i), PowerState: "Off", MACs: []string{simhost.MAC(i)}}
	}
	if e.bmc, err = redfishsim.New(redfishsim.Options{MockupDir: mockupDir(), TLS: true, MaxSessions: -1, Systems: systems,
		LatencyMedian: o.BMC.Median, LatencyP99: o.BMC.P99, ErrorRate: o.BMC.ErrorRate, TimeoutRate: o.BMC.TimeoutRate,
		TimeoutHold: o.BMC.TimeoutHold, PowerDelay: o.BMC.PowerDelay, RetryAfter: 2 * time.Second, Seed: o.Seed,
		// Current BMCs push power events; anvil serve subscribes by default.
		EventStream: true}); err != nil {
		return e, err
	}
	e.stopFn = append(e.stopFn, func() { _ = e.bmc.Close() })
	if err := e.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bmc", Namespace: Namespace},
		StringData: map[string]string{metalv1.CredentialsUsernameKey: e.bmc.Username(), metalv1.CredentialsPasswordKey: e.bmc.Password()}}); err != nil {
		return e, err
	}
	artifacts := filepath.Join(o.Dir, "artifacts")
	class, err := simhost.Class(simhost.ClassOptions{Namespace: Namespace, ArtifactDir: artifacts, Versions: o.Versions})
	if err != nil {
		return e, err
	}
	if err := e.c.Create(ctx, class); err != nil {
		return e, err
	}

	o.Logf("starting anvil serve: controllers and network services (%s)", strings.Join(o.ServeArgs, " "))
	if e.anvil, err = simhost.StartAnvil(ctx, simhost.AnvilOptions{Binary: o.Anvil, Kubeconfig: e.api.kubeconfig[userControllers],
		NetbootKubeconfig: e.api.kubeconfig[userNetboot], Dir: o.Dir, ArtifactDir: artifacts, ControllerArgs: o.ServeArgs, Pprof: o.Pprof}); err != nil {
		return e, err
	}
	e.stopFn = append(e.stopFn, e.anvil.Stop)
	e.ctrlMon = proc.Watch(e.anvil.Controllers.PID(), 500*time.Millisecond)
	e.netMon = proc.Watch(e.anvil.Netboot.PID(), 500*time.Millisecond)
	e.stopFn = append(e.stopFn, e.ctrlMon.Stop, e.netMon.Stop)

	if e.cache, err = cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{Namespace: {}}}); err != nil {
		return e, err
	}
	for _, obj := range []client.Object{&metalv1.Machine{}, &metalv1.Host{}} {
		if _, err := e.cache.GetInformer(ctx, obj); err != nil {
			return e, err
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { _ = e.cache.Start(cctx) }()
	e.stopFn = append(e.stopFn, cancel)
	if !e.cache.WaitForCacheSync(ctx) {
		return e, fmt.Errorf("the benchmark's cache did not sync")
	}

	s := o.Sim
	if e.fleet, err = simhost.New(simhost.Options{Config: cfg, Namespace: Namespace, BootURL: e.anvil.BootURL,
		POSTDelay: s.POSTDelay, KernelBootDelay: s.KernelBootDelay, AgentStartDelay: s.AgentStartDelay, KubeletStartDelay: s.KubeletStartDelay,
		NodeStatusInterval: s.NodeStatusInterval, PollInterval: s.PollInterval, IgnorePollHint: s.IgnorePollHint,
		ApplyDelay: s.ApplyDelay, Concurrency: s.Concurrency, Seed: uint64(o.Seed), OnEvent: o.OnEvent}); err != nil {
		return e, err
	}
	fctx, fcancel := context.WithCancel(ctx)
	fdone := make(chan struct{})
	go func() {
		defer close(fdone)
		if err := e.fleet.Run(fctx); err != nil {
			o.Logf("simulated hosts: %v", err)
		}
	}()
	e.stopFn = append(e.stopFn, func() { fcancel(); <-fdone })
	select {
	case <-e.fleet.Started():
	case <-fdone:
		return e, fmt.Errorf("the simulated hosts did not start")
	}
	return e, nil
}

// stop tears everything down, last started first.
func (e *env) stop() {
	for i := len(e.stopFn) - 1; i >= 0; i-- {
		e.stopFn[i]()
	}
	e.stopFn = nil
}

// registerHosts creates the Hosts and waits until all are Available.
func (e *env) registerHosts(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	hosts := simhost.Hosts(simhost.HostsOptions{Namespace: Namespace, Count: e.o.Hosts, BMCAddress: func(i int) string {
		return "redfish+" + e.bmc.URL() + e.bmc.SystemPath("sys-"+strconv.Itoa(i))
	}})
	work := make(chan *metalv1.Host)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range work {
				h.Spec.BMC.DisableCertificateVerification = true
				if err := e.c.Create(ctx, h); err != nil {
					select {
					case errs <- fmt.Errorf("creating Host %s: %w", h.Name, err):
					default:
					}
				}
			}
		}()
	}
	for _, h := range hosts {
		work <- h
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	err := e.waitHosts(ctx, timeout, func(h *metalv1.Host) bool { return h.Status.State == metalv1.HostAvailable })
	return time.Since(start), err
}

// waitHosts waits until every Host satisfies ok (polling the cache).
func (e *env) waitHosts(ctx context.Context, timeout time.Duration, ok func(*metalv1.Host) bool) error {
	deadline := time.Now().Add(timeout)
	last := time.Now()
	for {
		var l metalv1.HostList
		if err := e.cache.List(ctx, &l); err != nil {
			return err
		}
		n := 0
		states := map[metalv1.HostState]int{}
		for i := range l.Items {
			if ok(&l.Items[i]) {
				n++
			}
			states[l.Items[i].Status.State]++
		}
		if n == e.o.Hosts {
			return nil
		}
		if time.Since(last) > 30*time.Second {
			e.o.Logf("  hosts: %d of %d ready %v", n, e.o.Hosts, states)
			last = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Hosts ready after %s: %v", n, e.o.Hosts, timeout, states)
		}
		if !sleepCtx(ctx, time.Second) {
			return ctx.Err()
		}
	}
}

// usage is one reading of every process's CPU time and memory.
type usage struct {
	at                   time.Time
	ctrl, net, api       proc.Usage
	bench                float64
	ctrlPeak, netPeak    int64
	ctrlMetrics, netMets metrics
}

func (e *env) read(ctx context.Context) (usage, error) {
	u := usage{at: time.Now(), ctrl: e.ctrlMon.Now(), net: e.netMon.Now(), ctrlPeak: e.ctrlMon.Peak(), netPeak: e.netMon.Peak()}
	for _, pid := range e.apiPIDs {
		if s, err := proc.Sample(pid); err == nil {
			u.api.CPU += s.CPU
			u.api.RSS += s.RSS
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.bench = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	var err error
	if u.ctrlMetrics, err = scrape(ctx, e.anvil.Controllers.MetricsURL); err != nil {
		return u, err
	}
	if u.netMets, err = scrape(ctx, e.anvil.Netboot.MetricsURL); err != nil {
		return u, err
	}
	return u, nil
}

// descendants lists the PIDs of this process's descendants with one of
// the command names (kube-apiserver and etcd started by envtest).
func descendants(names ...string) []int {
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	comm := map[int]string{}
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		l, r := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if l < 0 || r < l {
			continue
		}
		comm[pid] = s[l+1 : r]
		f := strings.Fields(s[r+1:])
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for pid, c := range comm {
		match := false
		for _, n := range names {
			match = match || c == n
		}
		if !match {
			continue
		}
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == self {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func mockupDir() string {
	if d := os.Getenv("ANVIL_REDFISH_MOCKUP"); d != "" {
		return d
	}
	return "" // the emulator's embedded public-rackmount1
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// work is work() plus the audit log's per-resource counts of the window.
func (e *env) work(ctx context.Context, a, b usage, per int) results.Work {
	w := work(a, b, per)
	if e.api.auditLog == "" {
		return w
	}
	sleepCtx(ctx, 2*time.Second) // the audit log is written in batches (max wait 1 s)
	au, err := e.api.auditCounts(a.at, b.at)
	if err != nil {
		e.o.Logf("reading the audit log: %v", err)
		return w
	}
	w.APIByResource, w.NetbootAPIByResource = au.counts[userControllers], au.counts[userNetboot]
	w.APIPeakPerSecond = au.peak[userControllers]
	w.APILatencyMs, w.APIServerSeconds = au.latency, au.seconds
	return w
}
