// Package upgrade applies a kubelet upgrade plan on the host, at most once,
// surviving agent restarts and reboots.
//
// A plan runs through these phases; each is written to the state file
// (fsync'd) before its work starts, so after a crash the file names the
// one step that may be half done, and every step is safe to repeat:
//
//	downloading  fetch the URL to a temp file next to the versions, verify
//	             sha256 (a mismatch fails the plan; nothing else touched)
//	installing   rename it to <version>/kubelet (0755, fsync'd)
//	switching    point `current` at <version>: temp symlink + rename
//	restarting   restart the kubelet (systemd or the agent's supervisor)
//	verifying    health checks until they pass or the timeout passes
//	rollingBack  point `current` back, restart, check the old kubelet
//	succeeded | failed
//
// The `current` symlink is the single source of truth for what runs: a
// rebooted host starts whatever it points at; the state file says whether
// that is the end of a plan still to be verified (resume) or to be undone
// (rollingBack). Before switching, the old kubelet was never touched, so
// an interrupted download or install is simply done again.
package upgrade

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/agent"
)

// Plan is an upgrade to apply.
type Plan struct {
	ID      string
	Version string
	// URL is absolute http(s) (the agent resolves relative references).
	URL    string
	SHA256 string
	// HealthTimeout overrides Options.HealthTimeout when > 0.
	HealthTimeout time.Duration
}

// KubeletService restarts the kubelet so that it runs what `current`
// points to. kubelet.Systemd and *kubelet.Supervisor implement it.
type KubeletService interface {
	Restart(ctx context.Context) error
}

// HealthChecker runs one round of health checks of the kubelet, expecting
// version. kubelet.Health implements it.
type HealthChecker interface {
	Check(ctx context.Context, version string) error
}

// Errors of Begin.
var (
	// ErrAlreadyApplied: the plan ID finished before; the returned State
	// is its terminal state (to report again, never to apply again).
	ErrAlreadyApplied = errors.New("plan already applied")
	// ErrBusy: another plan is in progress; finish it first (Run).
	ErrBusy = errors.New("another plan is in progress")
	// ErrNoPlan: Step or Run without a plan in progress.
	ErrNoPlan = errors.New("no plan in progress")
)

// Options configure an Upgrader.
type Options struct {
	// Root prefixes every path (default "/").
	Root string
	// KubeletDir and StateDir are relative to Root (DefaultKubeletDir,
	// DefaultStateDir).
	KubeletDir string
	StateDir   string
	// Kubelet and Health are required.
	Kubelet KubeletService
	Health  HealthChecker
	// HTTPClient downloads kubelets (default: no proxy, 30s to the
	// response headers, no overall timeout: binaries are large).
	HTTPClient *http.Client
	// HealthTimeout is the default health window (5m); HealthInterval the
	// pause between rounds (2s).
	HealthTimeout  time.Duration
	HealthInterval time.Duration
	// DownloadAttempts (3), DownloadRetryDelay (2s, doubling) and
	// MaxDownloadBytes (1 GiB).
	DownloadAttempts   int
	DownloadRetryDelay time.Duration
	MaxDownloadBytes   int64
	// KeepDone bounds the remembered finished plans (default 64).
	KeepDone int
	// OnPhase is called after each phase change is persisted (progress
	// reporting); it must not call back into the Upgrader.
	OnPhase func(ctx context.Context, st State)
	Logger  logr.Logger
	Now     func() time.Time
}

// Upgrader applies plans. Its methods are safe for concurrent use, but
// plans run one at a time.
type Upgrader struct {
	opts      Options
	log       logr.Logger
	kdir      string
	statePath string
	mu        sync.Mutex
}

// New validates opts.
func New(opts Options) (*Upgrader, error) {
	if opts.Kubelet == nil || opts.Health == nil {
		return nil, errors.New("upgrade: Kubelet and Health are required")
	}
	if opts.Root == "" {
		opts.Root = "/"
	}
	if opts.KubeletDir == "" {
		opts.KubeletDir = DefaultKubeletDir
	}
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{Proxy: nil, ResponseHeaderTimeout: 30 * time.Second, IdleConnTimeout: time.Minute}}
	}
	if opts.HealthTimeout <= 0 {
		opts.HealthTimeout = 5 * time.Minute
	}
	if opts.HealthInterval <= 0 {
		opts.HealthInterval = 2 * time.Second
	}
	if opts.DownloadAttempts <= 0 {
		opts.DownloadAttempts = 3
	}
	if opts.DownloadRetryDelay <= 0 {
		opts.DownloadRetryDelay = 2 * time.Second
	}
	if opts.MaxDownloadBytes <= 0 {
		opts.MaxDownloadBytes = 1 << 30
	}
	if opts.KeepDone <= 0 {
		opts.KeepDone = 64
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Upgrader{
		opts:      opts,
		log:       opts.Logger.WithName("upgrade"),
		kdir:      filepath.Join(opts.Root, opts.KubeletDir),
		statePath: filepath.Join(opts.Root, opts.StateDir, "upgrade.json"),
	}, nil
}

// KubeletDir is the absolute directory holding the versions and `current`.
func (u *Upgrader) KubeletDir() string { return u.kdir }

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (p Plan) validate() error {
	switch {
	case !agent.ValidActionID(p.ID):
		return errors.New("plan ID is empty, too long or has invalid characters")
	case !agent.ValidVersion(p.Version):
		return errors.New("plan version is not vMAJOR.MINOR.PATCH")
	case !sha256RE.MatchString(p.SHA256):
		return errors.New("plan sha256 is not 64 lower-case hex digits")
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("plan URL is not an absolute http(s) URL")
	}
	return nil
}

// Begin records a new plan (phase downloading) and returns its state. A
// plan already in progress with the same ID is returned as is (resume);
// see ErrAlreadyApplied and ErrBusy for the other cases.
func (u *Upgrader) Begin(ctx context.Context, p Plan) (State, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := p.validate(); err != nil {
		return State{}, err
	}
	f, err := loadState(u.statePath)
	if err != nil {
		return State{}, err
	}
	if cur := f.Current; cur != nil && cur.PlanID == p.ID {
		if cur.Phase.Terminal() {
			return *cur, ErrAlreadyApplied
		}
		return *cur, nil
	}
	for _, d := range f.Done {
		if d.PlanID == p.ID {
			return d, ErrAlreadyApplied
		}
	}
	if cur := f.Current; cur != nil && !cur.Phase.Terminal() {
		return *cur, ErrBusy
	}
	prev, err := u.CurrentVersion()
	if err != nil {
		return State{}, err
	}
	u.removeStaleDownloads()
	now := u.opts.Now().UTC()
	st := &State{
		PlanID: p.ID, Version: p.Version, URL: p.URL, SHA256: p.SHA256,
		HealthTimeoutSeconds: int64(p.HealthTimeout / time.Second),
		PreviousVersion:      prev, Phase: PhaseDownloading, StartedAt: now, UpdatedAt: now,
	}
	f.Current = st
	if err := saveState(u.statePath, f); err != nil {
		return State{}, fmt.Errorf("saving upgrade state: %w", err)
	}
	u.log.Info("upgrade plan accepted", "plan", p.ID, "version", p.Version, "from", prev)
	u.notify(ctx, *st)
	return *st, nil
}

// Pending returns the plan that is unfinished or whose result the server
// has not acknowledged, or nil.
func (u *Upgrader) Pending() (*State, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f, err := loadState(u.statePath)
	if err != nil {
		return nil, err
	}
	if cur := f.Current; cur != nil && (!cur.Phase.Terminal() || !cur.Reported) {
		c := *cur
		return &c, nil
	}
	return nil, nil
}

// MarkReported records that the server has the terminal result of planID.
func (u *Upgrader) MarkReported(planID string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	f, err := loadState(u.statePath)
	if err != nil {
		return err
	}
	changed := false
	if cur := f.Current; cur != nil && cur.PlanID == planID && cur.Phase.Terminal() && !cur.Reported {
		cur.Reported, changed = true, true
	}
	for i := range f.Done {
		if f.Done[i].PlanID == planID && !f.Done[i].Reported {
			f.Done[i].Reported, changed = true, true
		}
	}
	if !changed {
		return nil
	}
	return saveState(u.statePath, f)
}

// Run steps the current plan until it is terminal or ctx is done. An
// interrupted plan (ctx done, agent killed) resumes with the next Run.
func (u *Upgrader) Run(ctx context.Context) (State, error) {
	for {
		st, err := u.Step(ctx)
		if err != nil || st.Phase.Terminal() {
			return st, err
		}
	}
}

// Step does the work of the current phase and persists the next one. It
// returns ErrNoPlan (with the last state, if any) when nothing is in
// progress, and ctx's error if interrupted (the phase is then repeated).
func (u *Upgrader) Step(ctx context.Context) (State, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f, err := loadState(u.statePath)
	if err != nil {
		return State{}, err
	}
	st := f.Current
	if st == nil {
		return State{}, ErrNoPlan
	}
	if st.Phase.Terminal() {
		return *st, ErrNoPlan
	}
	if err := ctx.Err(); err != nil {
		return *st, err
	}
	log := u.log.WithValues("plan", st.PlanID, "version", st.Version)
	next, reason, err := u.do(ctx, log, st)
	if err != nil {
		return *st, err // interrupted; the same phase runs again
	}
	if reason != "" {
		st.Reason = reason
	}
	st.Phase = next
	st.UpdatedAt = u.opts.Now().UTC()
	if next.Terminal() {
		f.Done = append(f.Done, *st)
		if n := len(f.Done) - u.opts.KeepDone; n > 0 {
			f.Done = f.Done[n:]
		}
		if next == PhaseFailed {
			log.Info("upgrade failed", "reason", st.Reason)
		} else {
			log.Info("upgrade succeeded")
		}
	}
	if err := saveState(u.statePath, f); err != nil {
		return *st, fmt.Errorf("saving upgrade state: %w", err)
	}
	u.notify(ctx, *st)
	return *st, nil
}

// do runs one phase. It returns the next phase and, when the plan turns to
// failure, the reason; err only for an interruption.
func (u *Upgrader) do(ctx context.Context, log logr.Logger, st *State) (Phase, string, error) {
	interrupted := func(err error) bool { return ctx.Err() != nil && !isFailure(err) }
	switch st.Phase {
	case PhaseDownloading:
		if u.installed(st.Version, st.SHA256) {
			return PhaseInstalling, "", nil
		}
		log.Info("downloading kubelet", "url", redactURL(st.URL))
		if err := u.download(ctx, st); err != nil {
			if interrupted(err) {
				return "", "", err
			}
			return PhaseFailed, err.Error(), nil // nothing was touched
		}
		return PhaseInstalling, "", nil

	case PhaseInstalling:
		err := u.install(st)
		switch {
		case errors.Is(err, errNeedDownload):
			return PhaseDownloading, "", nil
		case isFailure(err):
			return PhaseFailed, err.Error(), nil
		case err != nil:
			return PhaseFailed, "installing kubelet: " + err.Error(), nil
		}
		return PhaseSwitching, "", nil

	case PhaseSwitching:
		if err := u.flip(st.Version); err != nil {
			return PhaseRollingBack, fmt.Sprintf("switching to kubelet %s: %v", st.Version, err), nil
		}
		log.Info("switched kubelet", "from", st.PreviousVersion)
		return PhaseRestarting, "", nil

	case PhaseRestarting:
		if st.Version == st.PreviousVersion {
			return PhaseVerifying, "", nil // already running it; just verify
		}
		if err := u.opts.Kubelet.Restart(ctx); err != nil {
			if interrupted(err) {
				return "", "", err
			}
			return PhaseRollingBack, fmt.Sprintf("restarting kubelet %s: %v", st.Version, err), nil
		}
		return PhaseVerifying, "", nil

	case PhaseVerifying:
		if err := u.verify(ctx, st.Version, u.healthTimeout(st)); err != nil {
			if interrupted(err) {
				return "", "", err
			}
			return PhaseRollingBack, err.Error(), nil
		}
		return PhaseSucceeded, "", nil

	case PhaseRollingBack:
		reason, err := u.rollback(ctx, log, st)
		if err != nil {
			return "", "", err
		}
		return PhaseFailed, reason, nil
	}
	return PhaseFailed, fmt.Sprintf("unknown phase %q in the state file", st.Phase), nil
}

// rollback restores PreviousVersion and restarts it. Problems on the way
// are appended to the reason; only an interruption is an error.
func (u *Upgrader) rollback(ctx context.Context, log logr.Logger, st *State) (string, error) {
	reason := st.Reason
	if reason == "" {
		reason = "rolled back"
	}
	prev := st.PreviousVersion
	log.Info("rolling back kubelet", "to", prev, "reason", reason)
	if err := u.flip(prev); err != nil {
		return reason + fmt.Sprintf("; switching back to %q failed: %v", prev, err), nil
	}
	if prev == "" {
		return reason + "; there was no previous kubelet to restore", nil
	}
	if err := u.opts.Kubelet.Restart(ctx); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return reason + fmt.Sprintf("; restarting kubelet %s failed: %v", prev, err), nil
	}
	if err := u.verify(ctx, prev, u.healthTimeout(st)); err != nil {
		if ctx.Err() != nil && !isFailure(err) {
			return "", ctx.Err()
		}
		return reason + fmt.Sprintf("; kubelet %s is unhealthy after the rollback: %v", prev, err), nil
	}
	return reason + fmt.Sprintf("; rolled back to kubelet %s", prev), nil
}

// verify repeats the health checks until one round passes or timeout.
func (u *Upgrader) verify(ctx context.Context, version string, timeout time.Duration) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		err := u.opts.Health.Check(cctx, version)
		if err == nil {
			return nil
		}
		// A round cut short by the deadline says less than the one before.
		if last == nil || cctx.Err() == nil {
			last = err
		}
		select {
		case <-cctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return failf("kubelet %s not healthy within %s: %v", version, timeout, last)
		case <-time.After(u.opts.HealthInterval):
		}
	}
}

func (u *Upgrader) healthTimeout(st *State) time.Duration {
	if st.HealthTimeoutSeconds > 0 {
		return time.Duration(st.HealthTimeoutSeconds) * time.Second
	}
	return u.opts.HealthTimeout
}

func (u *Upgrader) notify(ctx context.Context, st State) {
	if u.opts.OnPhase != nil {
		u.opts.OnPhase(ctx, st)
	}
}

// removeStaleDownloads deletes temp files of earlier plans.
func (u *Upgrader) removeStaleDownloads() {
	ents, err := os.ReadDir(u.kdir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".download-") || e.Name() == ".current.tmp" {
			_ = os.Remove(filepath.Join(u.kdir, e.Name()))
		}
	}
}
