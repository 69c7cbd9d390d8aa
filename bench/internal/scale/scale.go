package scale

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bench/internal/machine"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/test/simhost"
)

// Options of the controller scale benchmark.
type Options struct {
	// Sizes: Hosts = Machines of each measured size, smallest first; a
	// size that does not complete within Timeout ends the series.
	Sizes []int
	// Timeout bounds one size's scale-up (registration has its own).
	Timeout time.Duration
	// Settle after the last Machine is Ready, then Idle is measured.
	Settle, Idle time.Duration
	BMC          BMCOptions
	Sim          SimOptions
	// ServeArgs are extra flags of the controllers for Sizes.
	ServeArgs []string
	// Extra sizes run after Sizes with flags of their own (a raised
	// --kube-api-qps, say), to find the next limit once the defaults'
	// is known. They run even when a size of Sizes did not complete.
	Extra []Variant
	Seed  int64
	// Runs per size (at least 1): the report shows the medians.
	Runs int
	// Profile saves a CPU profile of each process over the idle window
	// into Dir (profile-idle-<hosts>-<process>.pprof).
	Profile bool
	// AuditBodies keeps each request's body in the audit log (--keep it).
	AuditBodies bool
	// Anvil binary, RepoRoot (to build it when Anvil is empty), Dir for
	// the logs of every size.
	Anvil, RepoRoot, Dir string
	Logf                 func(string, ...any)
}

// Variant is one extra size with its own controller flags.
type Variant struct {
	Hosts     int
	ServeArgs []string
}

// FastArgs raise the controllers' client-side API rate limit (default
// --kube-api-qps 50, --kube-api-burst 100) for the extra size.
var FastArgs = []string{"--kube-api-qps=500", "--kube-api-burst=1000"}

// DefaultOptions are issue 9's sizes and BMCs.
func DefaultOptions() Options {
	return Options{
		// 5,000 takes over an hour with the defaults on 2 shared cores
		// (the trend of these); --scale-extra 5000 adds it with FastArgs.
		Sizes:   []int{500, 1000, 2000},
		Timeout: 40 * time.Minute,
		Settle:  30 * time.Second, Idle: 60 * time.Second,
		BMC: DefaultBMC(),
		// Real servers take minutes to POST; the rest is close to real
		// (kernel and initrd over the network, the OS start). A config
		// fetched before Anvil's Host cache has the script's credential
		// (seconds behind under load) is refused and the boot fails, so
		// shorter delays would measure that race more than the controllers.
		Sim: SimOptions{POSTDelay: 5 * time.Second, KernelBootDelay: 30 * time.Second, AgentStartDelay: 20 * time.Second, KubeletStartDelay: 20 * time.Second,
			NodeStatusInterval: 5 * time.Minute, PollInterval: 30 * time.Second, ApplyDelay: 10 * time.Second, Concurrency: 64},
		Seed: 9,
	}
}

// SmokeOptions run one tiny size (20 Hosts and Machines, fast BMCs, a
// short idle window) in well under a minute, so the benchmark cannot rot.
func SmokeOptions() Options {
	o := DefaultOptions()
	o.Sizes, o.Extra = []int{20}, nil
	o.Timeout = 3 * time.Minute
	o.Settle, o.Idle = 2*time.Second, 5*time.Second
	o.BMC.Median, o.BMC.P99, o.BMC.TimeoutHold = 20*time.Millisecond, 200*time.Millisecond, 3*time.Second
	o.BMC.PowerDelay = 100 * time.Millisecond
	o.Sim = SimOptions{POSTDelay: 500 * time.Millisecond, KernelBootDelay: time.Second, AgentStartDelay: time.Second, KubeletStartDelay: time.Second,
		NodeStatusInterval: 10 * time.Second, PollInterval: time.Second, IgnorePollHint: true, ApplyDelay: time.Second, Concurrency: 16}
	return o
}

func (o *Options) prepare(ctx context.Context) error {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Anvil == "" {
		o.Anvil = filepath.Join(o.Dir, "anvil")
		if err := BuildAnvil(ctx, o.RepoRoot, o.Anvil, o.Logf); err != nil {
			return err
		}
	}
	return nil
}

// Run measures every size.
func Run(ctx context.Context, o Options) *results.Scale {
	load := machine.LoadAvg()
	res := &results.Scale{Started: time.Now().UTC(), Setup: fmt.Sprintf("%s; %s", o.BMC, o.Sim)}
	defer func() { res.Finished = time.Now().UTC(); res.Load = [2]float64{load[0], machine.LoadAvg()[0]} }()
	if err := o.prepare(ctx); err != nil {
		res.Error = err.Error()
		return res
	}
	one := func(n int, args []string) bool {
		var runs []results.ScaleSize
		for i := range max(o.Runs, 1) {
			if ctx.Err() != nil {
				break
			}
			o.Logf("scale: %d Hosts, MachineSet 0 -> %d, anvil serve defaults%s (run %d of %d)", n, n, flagsNote(args), i+1, max(o.Runs, 1))
			ro := o
			ro.Seed += int64(i) // each run its own BMC latencies and faults
			if o.Runs > 1 {
				ro.Dir = filepath.Join(o.Dir, fmt.Sprintf("run%d", i+1))
			}
			runs = append(runs, runSize(ctx, ro, n, args))
		}
		if len(runs) == 0 {
			return false
		}
		sz := foldRuns(runs)
		res.Sizes = append(res.Sizes, sz)
		o.Logf("scale %d: completed=%v ready=%d in %.0fs, %.1f API requests/Machine, idle CPU %.3f cores %s",
			n, sz.Completed, sz.Ready, sz.ReadySeconds, sz.ScaleUp.APIPerMachine, sz.Idle.CPU, sz.Error)
		return sz.Completed
	}
	for _, n := range o.Sizes {
		if ctx.Err() != nil || !one(n, o.ServeArgs) {
			break // a bigger size will not complete either
		}
	}
	for _, v := range o.Extra {
		if ctx.Err() == nil {
			one(v.Hosts, v.ServeArgs)
		}
	}
	return res
}

func flagsNote(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " except " + strings.Join(args, " ")
}

func runSize(ctx context.Context, o Options, n int, args []string) (sz results.ScaleSize) {
	sz = results.ScaleSize{Hosts: n, Machines: n, ServeArgs: args}
	fail := func(err error) results.ScaleSize {
		sz.Error = err.Error()
		o.Logf("scale %d: %v", n, err)
		return sz
	}
	ready := newReadyTracker()
	e, err := startEnv(ctx, EnvOptions{Dir: filepath.Join(o.Dir, "scale-"+strconv.Itoa(n)), Anvil: o.Anvil, Hosts: n,
		Versions: []string{simhost.DefaultVersion}, BMC: o.BMC, Sim: o.Sim, ServeArgs: args, Pprof: o.Profile, AuditBodies: o.AuditBodies, Seed: o.Seed, Logf: o.Logf})
	if err != nil {
		return fail(err)
	}
	defer e.stop()
	defer func() {
		st := e.bmc.Stats()
		sz.BMC = results.BMCStats{Requests: st.Requests, InjectedErrors: st.InjectedErrors, InjectedTimeouts: st.InjectedTimeouts, Logins: st.SessionsCreated}
		sz.Fleet = fleetStats(e.fleet.Stats())
		if u, err := scrape(context.Background(), e.anvil.Netboot.MetricsURL); err == nil {
			sz.ConfigDenied = u.by(mConfigDenied, "reason", nil)
			for k, v := range sz.ConfigDenied {
				if v == 0 {
					delete(sz.ConfigDenied, k)
				}
			}
		}
	}()

	o.Logf("  registering %d Hosts", n)
	reg, err := e.registerHosts(ctx, max(15*time.Minute, time.Duration(n)*time.Second))
	sz.RegisterSeconds = reg.Seconds()
	if err != nil {
		return fail(fmt.Errorf("registering Hosts: %w", err))
	}
	o.Logf("  %d Hosts Available in %.0fs", n, reg.Seconds())
	registered := time.Now()

	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "scale", Namespace: Namespace}, Spec: metalv1.MachineSetSpec{
		Replicas: ptr.To[int32](0),
		Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "sim"}, Version: simhost.DefaultVersion}},
	}}
	if err := e.c.Create(ctx, ms); err != nil {
		return fail(err)
	}
	if err := ready.attach(ctx, e); err != nil {
		return fail(err)
	}
	sleepCtx(ctx, 2*time.Second) // the set reconciles at 0 first
	u0, err := e.read(ctx)
	if err != nil {
		return fail(err)
	}
	e.ctrlMon.ResetPeak()
	e.netMon.ResetPeak()
	patch := client.MergeFrom(ms.DeepCopy())
	ms.Spec.Replicas = ptr.To(int32(n))
	start := time.Now()
	sz.ScaleUpStart = start.UTC()
	ready.start(start)
	if err := e.c.Patch(ctx, ms, patch); err != nil {
		return fail(err)
	}
	deadline := start.Add(o.Timeout)
	lastLog := start
	for ready.count() < n && time.Now().Before(deadline) && ctx.Err() == nil {
		sleepCtx(ctx, time.Second)
		if time.Since(lastLog) >= 30*time.Second {
			o.Logf("  %4.0fs: %d of %d Ready; phases %s", time.Since(start).Seconds(), ready.count(), n, phases(ctx, e))
			lastLog = time.Now()
		}
	}
	end := time.Now()
	sz.Ready = ready.count()
	sz.Completed = sz.Ready == n
	sz.ReadySeconds = end.Sub(start).Seconds()
	if sz.Completed {
		sz.ReadySeconds = ready.last().Sub(start).Seconds()
	}
	d := dist(ready.durations())
	sz.ReadyP50, sz.ReadyP99 = d.P50, d.P99
	if t := ready.createdAt(n); !t.IsZero() {
		sz.CreatedSeconds = t.Sub(start).Seconds()
	}
	u1, err := e.read(context.WithoutCancel(ctx))
	if err != nil {
		return fail(err)
	}
	sz.ScaleUp = e.work(ctx, u0, u1, n)
	sz.ScaleUp.PeakRSS, sz.ScaleUp.NetbootPeakRSS = e.ctrlMon.Peak(), e.netMon.Peak()
	if !sz.Completed {
		why := "the time limit"
		if ctx.Err() != nil {
			why = "being stopped"
		}
		return fail(fmt.Errorf("%d of %d Machines Ready after %s (%s); phases %s", sz.Ready, n, time.Since(start).Round(time.Second), why, phases(ctx, e)))
	}

	o.Logf("  all Ready in %.0fs; settling %s, then idle for %s", sz.ReadySeconds, o.Settle, o.Idle)
	sleepCtx(ctx, o.Settle)
	i0, err := e.read(ctx)
	if err != nil {
		return fail(err)
	}
	e.ctrlMon.ResetPeak()
	e.netMon.ResetPeak()
	bmc0 := e.bmc.Stats().Requests
	sz.IdleAfterRegister = i0.at.Sub(registered).Seconds()
	profiled := func() {}
	if o.Profile {
		profiled = e.profile(ctx, o.Idle, filepath.Join(o.Dir, fmt.Sprintf("profile-idle-%d", n)))
	}
	sleepCtx(ctx, o.Idle)
	profiled()
	sz.IdleBMCRequests = e.bmc.Stats().Requests - bmc0
	i1, err := e.read(ctx)
	if err != nil {
		return fail(err)
	}
	sz.SettleSeconds, sz.IdleSeconds = o.Settle.Seconds(), i1.at.Sub(i0.at).Seconds()
	sz.Idle = e.work(ctx, i0, i1, n)
	sz.Idle.PeakRSS, sz.Idle.NetbootPeakRSS = e.ctrlMon.Peak(), e.netMon.Peak()
	return sz
}

// phases counts the set's Machines by phase, for progress lines.
func phases(ctx context.Context, e *env) string {
	var l metalv1.MachineList
	if err := e.cache.List(ctx, &l); err != nil {
		return err.Error()
	}
	c := map[string]int{}
	for _, m := range l.Items {
		c[string(m.Status.Phase)]++
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", nonEmpty(k, "new"), c[k])
	}
	return strings.TrimSpace(b.String())
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func fleetStats(s simhost.Stats) results.FleetStats {
	return results.FleetStats{Boots: s.Boots, BootsFailed: s.BootsFailed, ScriptRetries: s.ScriptRetries, Reports: s.Reports,
		Polls: s.Polls, NodeStatusPosts: s.NodeStatusPosts, Upgrades: s.Upgrades, UpgradesFailed: s.UpgradesFailed,
		Errors: s.Errors, LastError: s.LastError}
}

// readyTracker records when each Machine first became Ready, from watch
// events (no polling of thousands of objects).
type readyTracker struct {
	mu      sync.Mutex
	t0      time.Time
	first   map[string]time.Time
	latest  time.Time
	created map[string]bool
	lastNew time.Time // the last Machine created
}

func newReadyTracker() *readyTracker {
	return &readyTracker{first: map[string]time.Time{}, created: map[string]bool{}}
}

func (r *readyTracker) attach(ctx context.Context, e *env) error {
	inf, err := e.cache.GetInformer(ctx, &metalv1.Machine{})
	if err != nil {
		return err
	}
	see := func(o any) {
		m, ok := o.(*metalv1.Machine)
		if !ok {
			return
		}
		now := time.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.t0.IsZero() {
			return
		}
		if !r.created[m.Name] {
			r.created[m.Name], r.lastNew = true, now
		}
		if !meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady) {
			return
		}
		if _, seen := r.first[m.Name]; !seen {
			r.first[m.Name] = now
			r.latest = now
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o any) { see(o) }})
	return err
}

func (r *readyTracker) start(t time.Time) {
	r.mu.Lock()
	r.t0 = t
	r.mu.Unlock()
}

func (r *readyTracker) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.first)
}

// createdAt is when the n-th Machine appeared (zero before).
func (r *readyTracker) createdAt(n int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.created) < n {
		return time.Time{}
	}
	return r.lastNew
}

func (r *readyTracker) last() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.latest
}

func (r *readyTracker) durations() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]float64, 0, len(r.first))
	for _, t := range r.first {
		out = append(out, t.Sub(r.t0).Seconds())
	}
	return out
}
