package kube

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
)

// DefaultProgressInterval is how often at most an upgrade's progress phase
// is written to its Machine (Options.ProgressInterval).
const DefaultProgressInterval = 5 * time.Second

// progressThrottle coalesces an agent's progress phases per Machine. The
// agent reports five phases per upgrade, often seconds apart; each was a
// Machine status write, a third of a rollout's API requests at 5,000
// Machines. A phase that finds no window open is written at once and opens
// one for `every`; a phase inside the window is held, replacing any held
// before it, and written when the window closes (which opens the next).
// An outcome is never held: drop discards a held phase first. A phase held
// when the process stops is lost; phases are advisory, and the next phase
// or the outcome supersedes it.
type progressThrottle struct {
	every time.Duration
	// afterFunc runs f once after d (time.AfterFunc); stop cancels it.
	afterFunc func(d time.Duration, f func()) (stop func() bool)
	// write records a held phase when its window closes.
	write func(progressReport)

	mu   sync.Mutex
	open map[types.NamespacedName]*progressWindow
}

type progressWindow struct {
	stop    func() bool
	pending *progressReport // the newest phase held in this window
}

// progressReport is one progress phase as the agent posted it.
type progressReport struct {
	host   server.HostInfo
	planID string
	result agent.Result
}

func newProgressThrottle(every time.Duration, write func(progressReport)) *progressThrottle {
	return &progressThrottle{
		every: every,
		afterFunc: func(d time.Duration, f func()) func() bool {
			return time.AfterFunc(d, f).Stop
		},
		write: write,
		open:  map[types.NamespacedName]*progressWindow{},
	}
}

// hold reports whether r is held for the Machine key. false: no window was
// open; one is now, and the caller writes r itself.
func (t *progressThrottle) hold(key types.NamespacedName, r progressReport) bool {
	if t.every <= 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.open[key]; w != nil {
		w.pending = &r
		return true
	}
	w := &progressWindow{}
	w.stop = t.afterFunc(t.every, func() { t.close(key, w) })
	t.open[key] = w
	return false
}

// close ends w and writes what it held (the write opens the next window).
func (t *progressThrottle) close(key types.NamespacedName, w *progressWindow) {
	t.mu.Lock()
	if t.open[key] != w { // dropped, and maybe reopened, since
		t.mu.Unlock()
		return
	}
	delete(t.open, key)
	p := w.pending
	t.mu.Unlock()
	if p != nil {
		t.write(*p)
	}
}

// drop discards the Machine's window and any phase it held: an outcome is
// being written, and it supersedes every phase.
func (t *progressThrottle) drop(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.open[key]; w != nil {
		w.stop()
		delete(t.open, key)
	}
}

// writeHeldProgress records a phase the throttle held, once its window
// closed. The agent had its answer long ago, so a failure is only logged;
// a plan that moved on meanwhile is no failure.
func (b *Backend) writeHeldProgress(p progressReport) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := b.upgradeResult(ctx, p.host, p.planID, p.result)
	if err != nil && !errors.Is(err, server.ErrStaleAction) {
		b.opts.Logger.Info("recording a held upgrade phase failed; the next phase or the outcome supersedes it",
			"host", p.host.Namespace+"/"+p.host.Name, "plan", p.planID, "phase", p.result.Phase, "error", err.Error())
	}
}
