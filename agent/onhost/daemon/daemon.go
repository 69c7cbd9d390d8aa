// Package daemon is the agent's main loop: finish (or roll back) an upgrade
// interrupted by a restart, report the host's facts on start and then
// periodically, poll for actions, carry them out and report the outcome.
// The poll is a long poll where the server supports it: the server holds
// it until there is something to do, and the agent asks again at once.
// The agent only makes outbound calls.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/client"
	"anvil.dev/anvil/agent/onhost/upgrade"
	"anvil.dev/anvil/internal/atomicfile"
)

// API is the agent API as the daemon uses it; *client.Client implements it.
type API interface {
	Report(ctx context.Context, r agent.Report) error
	NextAction(ctx context.Context) (agent.Action, error)
	SendResult(ctx context.Context, id string, r agent.Result) error
	ResolveURL(ref string) (string, error)
}

// LongPoller is an API that can ask the server to hold the action poll
// while there is nothing to do (*client.Client implements it).
type LongPoller interface {
	NextActionWait(ctx context.Context, wait time.Duration) (agent.Action, error)
}

// Options configure a Daemon.
type Options struct {
	API API
	// Facts returns the host's facts; the daemon fills in KubeletVersion
	// from the Upgrader (the `current` link) when Facts leaves it empty.
	Facts func(ctx context.Context) (agent.Report, error)
	// Upgrader applies upgrade plans. Required.
	Upgrader *upgrade.Upgrader
	// Wipe erases the host's disks and returns a summary for the server;
	// nil refuses wipe actions.
	Wipe func(ctx context.Context) (string, error)
	// StateDir holds the wipe journal (absolute path). Required.
	StateDir string
	// ReportInterval (default 10m) and PollInterval (default 30s; the
	// server's hint wins when it is longer).
	ReportInterval time.Duration
	PollInterval   time.Duration
	// PollWait is how long the server may hold an action poll that finds
	// nothing to do (long poll; default 5m, capped at agent.MaxWaitSeconds
	// and at the time left until the next report; negative: the short
	// poll only). It needs an API that is a LongPoller. A server that held
	// the poll (Action.Waited) is asked again at once; one without long
	// poll answers at once and is asked again after PollInterval.
	PollWait time.Duration
	Logger   logr.Logger
}

// maxEarly is how many held polls in a row may come back "none" in less
// than half the wait before the daemon falls back to PollInterval pauses
// (a server or proxy that answers held polls early must not make it spin).
const maxEarly = 3

// Daemon runs the loop.
type Daemon struct {
	opts Options
	log  logr.Logger
	mu   sync.Mutex // guards the wipe journal
}

// New validates opts.
func New(opts Options) (*Daemon, error) {
	if opts.API == nil || opts.Facts == nil || opts.Upgrader == nil || opts.StateDir == "" {
		return nil, errors.New("daemon: API, Facts, Upgrader and StateDir are required")
	}
	if opts.ReportInterval <= 0 {
		opts.ReportInterval = 10 * time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 30 * time.Second
	}
	if opts.PollWait == 0 {
		opts.PollWait = 5 * time.Minute
	}
	opts.PollWait = min(opts.PollWait, agent.MaxWaitSeconds*time.Second)
	return &Daemon{opts: opts, log: opts.Logger.WithName("daemon")}, nil
}

// ReportProgress returns an upgrade.Options.OnPhase that posts each
// non-terminal phase to the server (one attempt; progress is advisory).
func ReportProgress(api API, log logr.Logger) func(context.Context, upgrade.State) {
	return func(ctx context.Context, st upgrade.State) {
		if st.Phase.Terminal() {
			return // the daemon reports outcomes, with retries
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := api.SendResult(ctx, st.PlanID, st.Result()); err != nil {
			log.V(1).Info("progress not delivered", "plan", st.PlanID, "phase", st.Phase, "error", err.Error())
		}
	}
}

// Run loops until ctx is done. Errors are logged and retried; Run returns
// only ctx's error.
func (d *Daemon) Run(ctx context.Context) error {
	d.resume(ctx)
	d.report(ctx)
	lastReport := time.Now()
	early := 0 // held polls in a row answered "none" long before the wait
	for ctx.Err() == nil {
		wait := d.opts.PollInterval
		hold := d.opts.PollWait
		if hold > 0 { // a held poll must not delay the next report
			hold = min(hold, max(d.opts.ReportInterval-time.Since(lastReport), time.Second))
		}
		start := time.Now()
		out := d.poll(ctx, hold)
		if out.acted {
			d.report(ctx) // the kubelet version may have changed
			lastReport = time.Now()
		} else if out.hint > wait {
			wait = out.hint
		}
		switch {
		case !out.waited:
			early = 0 // a short poll: the usual pause
		case !out.acted && time.Since(start) < hold/2:
			if early++; early == maxEarly+1 {
				d.log.Info("the server answers held polls early; polling at the usual interval", "wait", hold.String())
			}
		default:
			early = 0
		}
		if out.waited && early <= maxEarly {
			wait = 0 // the server holds polls: ask again at once
		}
		if time.Since(lastReport) >= d.opts.ReportInterval {
			d.report(ctx)
			lastReport = time.Now()
		}
		if untilReport := d.opts.ReportInterval - time.Since(lastReport); wait > 0 && untilReport < wait {
			wait = max(untilReport, time.Second)
		}
		if wait == 0 {
			continue
		}
		d.log.V(1).Info("pausing before the next poll", "wait", wait.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	return ctx.Err()
}

// Once does one round: resume, report, poll (without a hold) and act.
func (d *Daemon) Once(ctx context.Context) error {
	d.resume(ctx)
	if err := d.report(ctx); err != nil {
		return err
	}
	if out := d.poll(ctx, 0); out.acted {
		return d.report(ctx)
	}
	return ctx.Err()
}

// resume finishes a plan an earlier agent started and delivers outcomes
// the server has not acknowledged.
func (d *Daemon) resume(ctx context.Context) {
	st, err := d.opts.Upgrader.Pending()
	if err != nil {
		d.log.Error(err, "reading the upgrade state")
		return
	}
	if st == nil {
		return
	}
	if !st.Phase.Terminal() {
		d.log.Info("resuming an interrupted upgrade", "plan", st.PlanID, "phase", st.Phase)
		s, err := d.opts.Upgrader.Run(ctx)
		if err != nil {
			d.log.Error(err, "resuming the upgrade", "plan", st.PlanID)
			return
		}
		st = &s
	}
	d.sendOutcome(ctx, *st)
}

func (d *Daemon) report(ctx context.Context) error {
	r, err := d.opts.Facts(ctx)
	if err != nil {
		d.log.Error(err, "collecting facts")
		return err
	}
	if r.KubeletVersion == "" {
		if v, err := d.opts.Upgrader.CurrentVersion(); err == nil {
			r.KubeletVersion = v
		}
	}
	if err := d.opts.API.Report(ctx, r); err != nil {
		d.log.Error(err, "reporting facts")
		return err
	}
	return nil
}

// pollOutcome is what one poll did.
type pollOutcome struct {
	hint   time.Duration // the server's suggested pause
	acted  bool          // an action was carried out
	waited bool          // the server held the poll (it supports long poll)
}

// poll asks for an action, letting the server hold the request up to hold
// (0: answer at once), and carries it out.
func (d *Daemon) poll(ctx context.Context, hold time.Duration) pollOutcome {
	var (
		a   agent.Action
		err error
	)
	if lp, ok := d.opts.API.(LongPoller); ok && hold > 0 {
		a, err = lp.NextActionWait(ctx, hold)
	} else {
		a, err = d.opts.API.NextAction(ctx)
	}
	if err != nil {
		if errors.Is(err, client.ErrUnauthorized) {
			d.log.Error(err, "the server refuses this host's credential; a new config is needed")
			return pollOutcome{hint: d.opts.ReportInterval}
		}
		if ctx.Err() == nil {
			d.log.Error(err, "polling for actions")
		}
		return pollOutcome{}
	}
	out := pollOutcome{hint: time.Duration(a.PollAfterSeconds) * time.Second, waited: a.Waited}
	switch a.Type {
	case agent.ActionUpgrade:
		d.upgrade(ctx, a)
		out.acted = true
	case agent.ActionWipe:
		d.wipe(ctx, a)
		out.acted = true
	}
	return out
}

func (d *Daemon) upgrade(ctx context.Context, a agent.Action) {
	p := a.Upgrade
	log := d.log.WithValues("plan", p.PlanID, "version", p.Version)
	fail := func(reason string) {
		st := upgrade.State{PlanID: p.PlanID, Version: p.Version, Phase: upgrade.PhaseFailed, Reason: reason}
		if err := d.opts.API.SendResult(ctx, p.PlanID, st.Result()); err != nil {
			log.Error(err, "reporting a refused plan")
		}
	}
	u, err := d.opts.API.ResolveURL(p.URL)
	if err != nil {
		fail(err.Error())
		return
	}
	st, err := d.opts.Upgrader.Begin(ctx, upgrade.Plan{
		ID: p.PlanID, Version: p.Version, URL: u, SHA256: p.SHA256,
		HealthTimeout: time.Duration(p.HealthCheckTimeoutSeconds) * time.Second,
	})
	switch {
	case errors.Is(err, upgrade.ErrAlreadyApplied):
		log.Info("plan already applied; reporting its outcome again", "outcome", st.Phase)
		d.sendOutcome(ctx, st)
		return
	case errors.Is(err, upgrade.ErrBusy):
		log.Info("another plan is unfinished; finishing it first", "other", st.PlanID)
		d.resume(ctx)
		return
	case err != nil:
		log.Error(err, "refusing plan")
		fail("refused by the agent: " + err.Error())
		return
	}
	st, err = d.opts.Upgrader.Run(ctx)
	if err != nil {
		log.Error(err, "upgrade interrupted; it resumes with the next start")
		return
	}
	d.sendOutcome(ctx, st)
}

// sendOutcome delivers a terminal result and records the acknowledgement.
func (d *Daemon) sendOutcome(ctx context.Context, st upgrade.State) {
	err := d.opts.API.SendResult(ctx, st.PlanID, st.Result())
	if errors.Is(err, client.ErrConflict) || errors.Is(err, client.ErrNotFound) {
		d.log.Info("the server no longer tracks the plan; outcome dropped", "plan", st.PlanID, "outcome", st.Phase)
		err = nil
	}
	if err != nil {
		d.log.Error(err, "reporting the upgrade outcome; retrying later", "plan", st.PlanID)
		return
	}
	if err := d.opts.Upgrader.MarkReported(st.PlanID); err != nil {
		d.log.Error(err, "recording the acknowledgement")
	}
}

// wipeRecord is one finished wipe in the journal.
type wipeRecord struct {
	ID       string        `json:"id"`
	Result   agent.Outcome `json:"result"`
	Reason   string        `json:"reason,omitempty"`
	Reported bool          `json:"reported,omitempty"`
}

type wipeJournal struct {
	Done []wipeRecord `json:"done"`
}

func (d *Daemon) journalPath() string { return filepath.Join(d.opts.StateDir, "wipe.json") }

func (d *Daemon) loadJournal() (*wipeJournal, error) {
	b, err := os.ReadFile(d.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return &wipeJournal{}, nil
	}
	if err != nil {
		return nil, err
	}
	var j wipeJournal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("wipe journal is corrupt: %w", err)
	}
	return &j, nil
}

func (d *Daemon) saveJournal(j *wipeJournal) error {
	if n := len(j.Done) - 32; n > 0 {
		j.Done = j.Done[n:]
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return writeFileSync(d.journalPath(), b)
}

// wipe carries out a wipe action once per action ID; a repeated offer gets
// the recorded outcome.
func (d *Daemon) wipe(ctx context.Context, a agent.Action) {
	d.mu.Lock()
	defer d.mu.Unlock()
	log := d.log.WithValues("action", a.ID)
	j, err := d.loadJournal()
	if err != nil {
		log.Error(err, "reading the wipe journal; not wiping")
		return
	}
	for i, r := range j.Done {
		if r.ID == a.ID {
			if err := d.opts.API.SendResult(ctx, a.ID, agent.Result{Type: agent.ActionWipe, Result: r.Result, Reason: r.Reason, Phase: agent.PhaseDone}); err == nil {
				j.Done[i].Reported = true
				_ = d.saveJournal(j)
			}
			return
		}
	}
	rec := wipeRecord{ID: a.ID}
	if d.opts.Wipe == nil {
		rec.Result, rec.Reason = agent.Failed, "wiping is disabled in this agent's configuration"
	} else {
		log.Info("wiping disks")
		_ = d.opts.API.SendResult(ctx, a.ID, agent.Result{Type: agent.ActionWipe, Result: agent.InProgress, Phase: agent.PhaseWiping})
		summary, err := d.opts.Wipe(ctx)
		if ctx.Err() != nil {
			log.Info("wipe interrupted; it runs again when offered again")
			return
		}
		if err != nil {
			rec.Result, rec.Reason = agent.Failed, err.Error()
		} else {
			rec.Result, rec.Reason = agent.Succeeded, summary
		}
	}
	log.Info("wipe finished", "result", rec.Result, "reason", rec.Reason)
	j.Done = append(j.Done, rec)
	if err := d.saveJournal(j); err != nil {
		log.Error(err, "recording the wipe")
	}
	if err := d.opts.API.SendResult(ctx, a.ID, agent.Result{Type: agent.ActionWipe, Result: rec.Result, Reason: rec.Reason, Phase: agent.PhaseDone}); err != nil {
		log.Error(err, "reporting the wipe; it is reported again when offered again")
		return
	}
	j.Done[len(j.Done)-1].Reported = true
	_ = d.saveJournal(j)
}

func writeFileSync(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, data, 0o600)
}
