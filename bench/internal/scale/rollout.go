package scale

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bench/internal/machine"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/test/simhost"
)

// RolloutOptions of the in-place rollout benchmark.
type RolloutOptions struct {
	Machines, MaxUnavailable int
	From, To                 string
	// ReadyTimeout bounds the scale-up before, Timeout the rollout;
	// Settle is the pause between them.
	ReadyTimeout, Timeout, Settle time.Duration
	BMC                           BMCOptions
	Sim                           SimOptions
	ServeArgs                     []string
	Seed                          int64
	Anvil, RepoRoot, Dir          string
	Logf                          func(string, ...any)
}

// DefaultRolloutOptions are issue 7's: 500 Machines, maxUnavailable 50.
func DefaultRolloutOptions() RolloutOptions {
	d := DefaultOptions()
	return RolloutOptions{Machines: 500, MaxUnavailable: 50, From: "v1.36.4", To: simhost.DefaultVersion,
		ReadyTimeout: 30 * time.Minute, Timeout: 40 * time.Minute, Settle: 30 * time.Second, BMC: d.BMC, Sim: d.Sim, Seed: 7}
}

// SmokeRolloutOptions: 10 Machines, maxUnavailable 5, fast everything.
func SmokeRolloutOptions() RolloutOptions {
	s := SmokeOptions()
	o := DefaultRolloutOptions()
	o.Machines, o.MaxUnavailable = 10, 5
	o.ReadyTimeout, o.Timeout, o.Settle = 3*time.Minute, 3*time.Minute, 2*time.Second
	o.BMC, o.Sim = s.BMC, s.Sim
	return o
}

// machineTimes are the moments one Machine's upgrade passed, as watched.
type machineTimes struct {
	patched, draining, applying, agentDone, verified time.Time
}

// timeline records every Machine's upgrade from watch events and the
// fleet's agent events.
type timeline struct {
	mu          sync.Mutex
	to          string
	on          bool
	m           map[string]*machineTimes // by Machine name
	byHost      map[string]string        // Host -> Machine
	updating    map[string]bool
	maxUpdating int
}

func newTimeline(to string) *timeline {
	return &timeline{to: to, m: map[string]*machineTimes{}, byHost: map[string]string{}, updating: map[string]bool{}}
}

func (t *timeline) machine(m *metalv1.Machine) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if m.Status.HostRef != nil {
		t.byHost[m.Status.HostRef.Name] = m.Name
	}
	if !t.on {
		return
	}
	mt := t.m[m.Name]
	if mt == nil {
		mt = &machineTimes{}
		t.m[m.Name] = mt
	}
	if m.Spec.Version == t.to && mt.patched.IsZero() {
		mt.patched = now
	}
	if up := m.Status.Upgrade; up != nil && up.Version == t.to {
		switch {
		case up.State == metalv1.UpgradeDraining && mt.draining.IsZero():
			mt.draining = now
		case up.State == metalv1.UpgradeApplying && mt.applying.IsZero():
			mt.applying = now
		case up.State == metalv1.UpgradeVerified && mt.verified.IsZero() && m.Status.Version == t.to:
			mt.verified = now
		}
	}
	if meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionUpdating) {
		t.updating[m.Name] = true
	} else {
		delete(t.updating, m.Name)
	}
	t.maxUpdating = max(t.maxUpdating, len(t.updating))
}

func (t *timeline) agent(e simhost.Event) {
	if e.Kind != simhost.EventPlanSucceeded && e.Kind != simhost.EventPlanFailed {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.on || e.Version != t.to && e.Kind == simhost.EventPlanSucceeded {
		return
	}
	name := t.byHost[e.Host.Name]
	if mt := t.m[name]; mt != nil && mt.agentDone.IsZero() {
		mt.agentDone = e.At
	} else if mt == nil && name != "" {
		t.m[name] = &machineTimes{agentDone: e.At}
	}
}

func (t *timeline) verified() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, mt := range t.m {
		if !mt.verified.IsZero() {
			n++
		}
	}
	return n
}

// RunRollout measures one rollout.
func RunRollout(ctx context.Context, o RolloutOptions) (res *results.Rollout) {
	load := machine.LoadAvg()
	res = &results.Rollout{Started: time.Now().UTC(), Machines: o.Machines, MaxUnavailable: o.MaxUnavailable, From: o.From, To: o.To,
		Setup: fmt.Sprintf("%s; %s; no pods on the Nodes (drain = cordon + an empty eviction list); anvil serve defaults%s", o.BMC, o.Sim, flagsNote(o.ServeArgs))}
	defer func() { res.Finished = time.Now().UTC(); res.Load = [2]float64{load[0], machine.LoadAvg()[0]} }()
	fail := func(err error) *results.Rollout {
		res.Error = err.Error()
		o.Logf("rollout: %v", err)
		return res
	}
	so := Options{Anvil: o.Anvil, RepoRoot: o.RepoRoot, Dir: o.Dir, Logf: o.Logf}
	if err := so.prepare(ctx); err != nil {
		return fail(err)
	}
	o.Anvil, o.Logf = so.Anvil, so.Logf
	tl := newTimeline(o.To)
	e, err := startEnv(ctx, EnvOptions{Dir: filepath.Join(o.Dir, "rollout"), Anvil: o.Anvil, Hosts: o.Machines,
		Versions: []string{o.From, o.To}, BMC: o.BMC, Sim: o.Sim, ServeArgs: o.ServeArgs, Seed: o.Seed, Logf: o.Logf, OnEvent: tl.agent})
	if err != nil {
		return fail(err)
	}
	defer e.stop()
	defer func() { res.Fleet = fleetStats(e.fleet.Stats()) }()
	o.Logf("rollout: registering %d Hosts", o.Machines)
	if _, err := e.registerHosts(ctx, max(15*time.Minute, time.Duration(o.Machines)*time.Second)); err != nil {
		return fail(fmt.Errorf("registering Hosts: %w", err))
	}
	inf, err := e.cache.GetInformer(ctx, &metalv1.Machine{})
	if err != nil {
		return fail(err)
	}
	see := func(obj any) {
		if m, ok := obj.(*metalv1.Machine); ok {
			tl.machine(m)
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, obj any) { see(obj) }}); err != nil {
		return fail(err)
	}
	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "rollout", Namespace: Namespace}, Spec: metalv1.MachineSetSpec{
		Replicas: ptr.To(int32(o.Machines)),
		Strategy: metalv1.RolloutStrategy{MaxUnavailable: ptr.To(intstr.FromInt(o.MaxUnavailable))},
		Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "sim"}, Version: o.From}},
	}}
	if err := e.c.Create(ctx, ms); err != nil {
		return fail(err)
	}
	o.Logf("rollout: MachineSet of %d on %s, waiting for all Ready", o.Machines, o.From)
	start := time.Now()
	for {
		n, err := e.countMachines(ctx, func(m *metalv1.Machine) bool {
			return meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady) && m.Status.Version == o.From
		})
		if err != nil {
			return fail(err)
		}
		if n == o.Machines {
			break
		}
		if time.Since(start) > o.ReadyTimeout {
			return fail(fmt.Errorf("%d of %d Machines Ready on %s after %s; phases %s", n, o.Machines, o.From, o.ReadyTimeout, phases(ctx, e)))
		}
		if !sleepCtx(ctx, 2*time.Second) {
			return fail(ctx.Err())
		}
	}
	o.Logf("rollout: all Ready in %.0fs; settling %s, then %s -> %s with maxUnavailable %d", time.Since(start).Seconds(), o.Settle, o.From, o.To, o.MaxUnavailable)
	sleepCtx(ctx, o.Settle)

	u0, err := e.read(ctx)
	if err != nil {
		return fail(err)
	}
	e.ctrlMon.ResetPeak()
	e.netMon.ResetPeak()
	tl.mu.Lock()
	tl.on = true
	tl.mu.Unlock()
	patch := client.MergeFrom(ms.DeepCopy())
	ms.Spec.Template.Spec.Version = o.To
	t0 := time.Now()
	if err := e.c.Patch(ctx, ms, patch); err != nil {
		return fail(err)
	}
	lastLog := t0
	for tl.verified() < o.Machines && time.Since(t0) < o.Timeout && ctx.Err() == nil {
		sleepCtx(ctx, time.Second)
		if time.Since(lastLog) >= 30*time.Second {
			o.Logf("  %4.0fs: %d of %d upgraded; phases %s", time.Since(t0).Seconds(), tl.verified(), o.Machines, phases(ctx, e))
			lastLog = time.Now()
		}
	}
	u1, err := e.read(ctx)
	if err != nil {
		return fail(err)
	}
	res.Work = e.work(ctx, u0, u1, o.Machines)
	res.Work.PeakRSS, res.Work.NetbootPeakRSS = e.ctrlMon.Peak(), e.netMon.Peak()
	tl.mu.Lock()
	var total, agent, drain, over, notice []float64
	var last time.Time
	for _, mt := range tl.m {
		if mt.verified.IsZero() || mt.patched.IsZero() || mt.applying.IsZero() || mt.agentDone.IsZero() {
			continue
		}
		res.Upgraded++
		if mt.verified.After(last) {
			last = mt.verified
		}
		tot := mt.verified.Sub(mt.patched).Seconds()
		ag := mt.agentDone.Sub(mt.applying).Seconds()
		dr := 0.0
		if !mt.draining.IsZero() {
			dr = mt.applying.Sub(mt.draining).Seconds()
		}
		total, agent, drain = append(total, tot), append(agent, ag), append(drain, dr)
		over = append(over, tot-ag)
		notice = append(notice, mt.verified.Sub(mt.agentDone).Seconds())
	}
	res.MaxUpdating = tl.maxUpdating
	tl.mu.Unlock()
	res.Total, res.Agent, res.Drain, res.Overhead, res.NoticeOutcome = dist(total), dist(agent), dist(drain), dist(over), dist(notice)
	res.Completed = res.Upgraded == o.Machines
	res.Seconds = time.Since(t0).Seconds()
	if res.Completed {
		res.Seconds = last.Sub(t0).Seconds()
	} else {
		return fail(fmt.Errorf("%d of %d Machines upgraded after %s; phases %s", res.Upgraded, o.Machines, o.Timeout, phases(ctx, e)))
	}
	o.Logf("rollout: %d upgraded in %.0fs; overhead per Machine p50 %.2fs p99 %.2fs; %.1f API requests per Machine; peak RSS %d MB",
		res.Upgraded, res.Seconds, res.Overhead.P50, res.Overhead.P99, res.Work.APIPerMachine, res.Work.PeakRSS>>20)
	return res
}

// countMachines counts the cached Machines that satisfy ok.
func (e *env) countMachines(ctx context.Context, ok func(*metalv1.Machine) bool) (int, error) {
	var l metalv1.MachineList
	if err := e.cache.List(ctx, &l); err != nil {
		return 0, err
	}
	n := 0
	for i := range l.Items {
		if ok(&l.Items[i]) {
			n++
		}
	}
	return n, nil
}
