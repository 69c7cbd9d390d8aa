package simhost

import (
	"context"
	"errors"
	"fmt"
	"time"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/client"
)

// runAgent is anvil-agent's loop (agent/onhost/daemon) over the real client:
// report, then poll for actions and carry them out, report again after
// acting and every ReportInterval.
func (s *simHost) runAgent(ctx context.Context, cfg *bootConfig, bootReq string, k *kubelet) {
	f := s.f
	hc, closeIdle := newAgentHTTPClient(s.addr)
	defer closeIdle()
	api, err := client.New(client.Options{Endpoint: cfg.endpoint, Credential: cfg.credential, HTTPClient: hc,
		UserAgent: "anvil-agent/simhost", Attempts: 6, BaseDelay: time.Second, MaxDelay: 30 * time.Second})
	if err != nil {
		f.fail(fmt.Errorf("host %s: agent: %w", s.key, err))
		return
	}
	defer api.CloseIdleConnections() // the long poll's own connection too
	a := &simAgent{s: s, api: api, bootID: f.bootID(), bootReq: bootReq, kubelet: k}
	if !sleep(ctx, f.jitter(f.o.AgentStartDelay)) {
		return
	}
	a.report(ctx)
	lastReport := time.Now()
	early := 0 // held polls in a row answered "none" long before the wait (agent/onhost/daemon)
	for ctx.Err() == nil {
		wait := f.o.PollInterval
		hold := f.o.PollWait
		if hold > 0 { // a held poll must not delay the next report
			hold = min(hold, max(f.o.ReportInterval-time.Since(lastReport), time.Second))
		}
		start := time.Now()
		hint, acted, waited := a.poll(ctx, hold)
		switch {
		case acted:
			a.report(ctx)
			lastReport = time.Now()
		case hint > wait && !f.o.IgnorePollHint:
			wait = hint
		}
		switch {
		case !waited:
			early = 0
		case !acted && time.Since(start) < hold/2:
			early++
		default:
			early = 0
		}
		if waited && early <= 3 {
			wait = 0 // the server holds polls: ask again at once
		}
		if time.Since(lastReport) >= f.o.ReportInterval {
			a.report(ctx)
			lastReport = time.Now()
		}
		if wait > 0 && !sleep(ctx, wait) {
			return
		}
	}
}

type simAgent struct {
	s       *simHost
	api     *client.Client
	bootID  string
	bootReq string
	kubelet *kubelet // nil in a wipe boot
}

// call runs one API call within the fleet's in-flight bound.
func (a *simAgent) call(ctx context.Context, fn func() error) error {
	if !a.s.f.acquire(ctx) {
		return ctx.Err()
	}
	defer a.s.f.release()
	return fn()
}

func (a *simAgent) report(ctx context.Context) {
	s, f := a.s, a.s.f
	mac := ""
	if h := f.host(ctx, s.key); h != nil && len(h.Spec.BootMACs) > 0 {
		mac = h.Spec.BootMACs[0]
	}
	r := agent.Report{AgentVersion: "simhost", BootID: a.bootID, Kernel: "6.1.0-simhost", Hostname: s.key.Name,
		CPU: agent.CPU{Model: "Simulated CPU @ 2.10GHz", Count: 64}, MemoryMiB: 256 * 1024,
		Disks: []agent.Disk{{Name: "nvme0n1", SizeBytes: 960 << 30, Model: "SIM NVMe"}}}
	if mac != "" {
		r.NICs = []agent.NIC{{Name: "eno1", MAC: mac, SpeedMbps: 25000}}
	}
	if a.kubelet != nil {
		r.KubeletVersion = s.currentVersion()
	}
	err := a.call(ctx, func() error { return a.api.Report(ctx, r) })
	switch {
	case err == nil:
		f.stats.reports.Add(1)
		f.event(Event{Host: s.key, Kind: EventReported, BootRequest: a.bootReq, Version: r.KubeletVersion})
	case ctx.Err() == nil:
		a.failed("report", err)
	}
}

func (a *simAgent) failed(what string, err error) {
	if errors.Is(err, client.ErrUnauthorized) {
		a.s.f.event(Event{Host: a.s.key, Kind: EventAgentRefused, BootRequest: a.bootReq})
	}
	a.s.f.fail(fmt.Errorf("host %s: agent %s: %w", a.s.key, what, err))
}

// poll asks for an action, letting the server hold it up to hold (0: at
// once), and carries it out; hint is the server's pause, waited that the
// server held the poll. A held poll takes no in-flight slot: it is idle
// on both ends, and thousands of them would starve every other call.
func (a *simAgent) poll(ctx context.Context, hold time.Duration) (hint time.Duration, acted, waited bool) {
	f := a.s.f
	var act agent.Action
	var err error
	if hold > 0 {
		act, err = a.api.NextActionWait(ctx, hold)
	} else {
		err = a.call(ctx, func() error {
			var err error
			act, err = a.api.NextAction(ctx)
			return err
		})
	}
	f.stats.polls.Add(1)
	if err != nil {
		if ctx.Err() == nil {
			a.failed("poll", err)
		}
		if errors.Is(err, client.ErrUnauthorized) {
			return f.o.ReportInterval, false, false // as the real agent: wait for a new config
		}
		return 0, false, false
	}
	hint, waited = time.Duration(act.PollAfterSeconds)*time.Second, act.Waited
	switch act.Type {
	case agent.ActionUpgrade:
		a.upgrade(ctx, act.Upgrade)
		return hint, true, waited
	case agent.ActionWipe:
		a.wipe(ctx, act.ID)
		return hint, true, waited
	}
	return hint, false, waited
}

// progress is the agent's path through a plan (agent/onhost/upgrade's phases).
var progress = []agent.Phase{agent.PhaseDownloading, agent.PhaseInstalling, agent.PhaseSwitching, agent.PhaseRestarting, agent.PhaseVerifying}

// upgrade applies a plan once: progress updates over ApplyDelay, then on
// success the kubelet restarts on the new version (the Node reports it)
// before the outcome is posted, as the real agent health-checks first;
// on an injected failure the old kubelet stays.
func (a *simAgent) upgrade(ctx context.Context, p *agent.UpgradePlan) {
	s, f := a.s, a.s.f
	s.mu.Lock()
	done, seen := s.plans[p.PlanID]
	s.mu.Unlock()
	if seen { // applied already: report the outcome again (idempotent)
		a.send(ctx, p.PlanID, done)
		return
	}
	f.event(Event{Host: s.key, Kind: EventPlanReceived, BootRequest: a.bootReq, PlanID: p.PlanID, Version: p.Version})
	if a.kubelet == nil {
		a.finish(ctx, p, agent.Result{Type: agent.ActionUpgrade, PlanID: p.PlanID, Result: agent.Failed, Phase: agent.PhaseDone,
			Reason: "refused by the agent: no kubelet on this boot"})
		return
	}
	from := s.currentVersion()
	reason := ""
	if f.o.FailUpgrade != nil {
		reason = f.o.FailUpgrade(s.key, p.Version)
	}
	if reason == "" && f.o.FailFraction > 0 && f.float() < f.o.FailFraction {
		reason = f.o.FailReason
	}
	failing := reason != ""
	step := f.jitter(f.o.ApplyDelay) / time.Duration(len(progress))
	for _, ph := range progress {
		// Progress is advisory: one attempt, errors ignored (agent/onhost/daemon).
		_ = a.call(ctx, func() error {
			return a.api.SendResult(ctx, p.PlanID, agent.Result{Type: agent.ActionUpgrade, PlanID: p.PlanID, Result: agent.InProgress, Phase: ph})
		})
		if !sleep(ctx, step) {
			return // interrupted (reset): a real agent resumes after boot; this OS is gone
		}
	}
	res := agent.Result{Type: agent.ActionUpgrade, PlanID: p.PlanID, Phase: agent.PhaseDone}
	if failing {
		_ = a.call(ctx, func() error {
			return a.api.SendResult(ctx, p.PlanID, agent.Result{Type: agent.ActionUpgrade, PlanID: p.PlanID, Result: agent.InProgress, Phase: agent.PhaseRollingBack})
		})
		res.Result, res.Reason, res.KubeletVersion = agent.Failed, reason, from
		f.stats.upgradesFailed.Add(1)
	} else {
		s.mu.Lock()
		s.version = p.Version
		s.mu.Unlock()
		if err := a.kubelet.restarted(ctx); err != nil && ctx.Err() == nil {
			f.fail(fmt.Errorf("host %s: kubelet restart: %w", s.key, err))
		}
		res.Result, res.Reason, res.KubeletVersion = agent.Succeeded, fmt.Sprintf("kubelet %s installed and healthy (simulated)", p.Version), p.Version
		f.stats.upgrades.Add(1)
	}
	a.finish(ctx, p, res)
}

func (a *simAgent) finish(ctx context.Context, p *agent.UpgradePlan, res agent.Result) {
	s := a.s
	s.mu.Lock()
	s.plans[p.PlanID] = res
	s.mu.Unlock()
	if a.send(ctx, p.PlanID, res) {
		kind := EventPlanSucceeded
		if res.Result == agent.Failed {
			kind = EventPlanFailed
		}
		s.f.event(Event{Host: s.key, Kind: kind, BootRequest: a.bootReq, PlanID: p.PlanID, Version: res.KubeletVersion})
	}
}

// send posts an outcome (the client retries); a 409/404 means the server
// moved on, which is fine.
func (a *simAgent) send(ctx context.Context, id string, res agent.Result) bool {
	err := a.call(ctx, func() error { return a.api.SendResult(ctx, id, res) })
	switch {
	case err == nil:
		return true
	case errors.Is(err, client.ErrConflict) || errors.Is(err, client.ErrNotFound):
		return false
	case ctx.Err() == nil:
		a.failed("result", err)
	}
	return false
}

// wipe "erases the disks" once per action ID.
func (a *simAgent) wipe(ctx context.Context, id string) {
	s, f := a.s, a.s.f
	s.mu.Lock()
	done, seen := s.plans[id]
	s.mu.Unlock()
	if seen {
		a.send(ctx, id, done)
		return
	}
	_ = a.call(ctx, func() error {
		return a.api.SendResult(ctx, id, agent.Result{Type: agent.ActionWipe, Result: agent.InProgress, Phase: agent.PhaseWiping})
	})
	if !sleep(ctx, f.jitter(f.o.WipeDelay)) {
		return
	}
	res := agent.Result{Type: agent.ActionWipe, Result: agent.Succeeded, Phase: agent.PhaseDone,
		Reason: "erased the partition tables and signatures of 1 disk (simulated)"}
	s.mu.Lock()
	s.plans[id] = res
	s.mu.Unlock()
	// The disks are erased now, whether or not the report's answer comes
	// back: the server may act on it (release, power off) and end this
	// boot before the response is read.
	f.stats.wipes.Add(1)
	f.event(Event{Host: s.key, Kind: EventWiped, BootRequest: a.bootReq, PlanID: id})
	a.send(ctx, id, res)
}
