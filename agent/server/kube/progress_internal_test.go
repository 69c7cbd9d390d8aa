package kube

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
)

// windows is the number of open windows.
func (t *progressThrottle) windows() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

// manualTimers stands in for time.AfterFunc: the test fires them.
type manualTimers struct{ pending []*manualTimer }

type manualTimer struct {
	f       func()
	stopped bool
}

func (m *manualTimers) afterFunc(_ time.Duration, f func()) func() bool {
	tm := &manualTimer{f: f}
	m.pending = append(m.pending, tm)
	return func() bool { was := !tm.stopped; tm.stopped = true; return was }
}

// fire runs every timer armed so far that was not stopped.
func (m *manualTimers) fire() {
	due := m.pending
	m.pending = nil
	for _, tm := range due {
		if !tm.stopped {
			tm.stopped = true
			tm.f()
		}
	}
}

func TestProgressThrottle(t *testing.T) {
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	phase := func(key types.NamespacedName, ph agent.Phase) progressReport {
		return progressReport{host: server.HostInfo{Namespace: key.Namespace, Name: key.Name}, planID: "p",
			result: agent.Result{Result: agent.InProgress, Phase: ph}}
	}
	type step struct {
		op   string // "hold" (want: held?), "drop", "fire"
		key  types.NamespacedName
		ph   agent.Phase
		held bool
	}
	tests := []struct {
		name    string
		steps   []step
		written []agent.Phase // by the windows' ends, in order
	}{
		{"first phase written, the rest held, the newest written when the window ends", []step{
			{op: "hold", key: a, ph: agent.PhaseDownloading, held: false},
			{op: "hold", key: a, ph: agent.PhaseInstalling, held: true},
			{op: "hold", key: a, ph: agent.PhaseSwitching, held: true},
			{op: "fire"},
		}, []agent.Phase{agent.PhaseSwitching}},
		{"an outcome drops what is held", []step{
			{op: "hold", key: a, ph: agent.PhaseDownloading, held: false},
			{op: "hold", key: a, ph: agent.PhaseInstalling, held: true},
			{op: "drop", key: a},
			{op: "fire"},
		}, nil},
		{"a window that held nothing closes quietly; the next phase is written at once", []step{
			{op: "hold", key: a, ph: agent.PhaseDownloading, held: false},
			{op: "fire"},
			{op: "hold", key: a, ph: agent.PhaseInstalling, held: false},
		}, nil},
		{"Machines have their own windows", []step{
			{op: "hold", key: a, ph: agent.PhaseDownloading, held: false},
			{op: "hold", key: b, ph: agent.PhaseDownloading, held: false},
			{op: "hold", key: b, ph: agent.PhaseRestarting, held: true},
			{op: "fire"},
		}, []agent.Phase{agent.PhaseRestarting}},
		{"after a drop a new window opens", []step{
			{op: "hold", key: a, ph: agent.PhaseDownloading, held: false},
			{op: "drop", key: a},
			{op: "hold", key: a, ph: agent.PhaseDownloading, held: false},
			{op: "hold", key: a, ph: agent.PhaseVerifying, held: true},
			{op: "fire"},
		}, []agent.Phase{agent.PhaseVerifying}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timers := &manualTimers{}
			var written []agent.Phase
			var th *progressThrottle
			th = newProgressThrottle(time.Second, func(p progressReport) {
				written = append(written, p.result.Phase)
				// As the Backend does: the write goes through hold, which
				// opens the next window.
				if th.hold(types.NamespacedName{Namespace: p.host.Namespace, Name: p.host.Name}, p) {
					t.Errorf("a held phase's write was held again")
				}
			})
			th.afterFunc = timers.afterFunc
			for i, s := range tt.steps {
				switch s.op {
				case "hold":
					if got := th.hold(s.key, phase(s.key, s.ph)); got != s.held {
						t.Fatalf("step %d: hold(%s, %s) = %v, want %v", i, s.key.Name, s.ph, got, s.held)
					}
				case "drop":
					th.drop(s.key)
				case "fire":
					timers.fire()
				}
			}
			if fmt.Sprint(written) != fmt.Sprint(tt.written) {
				t.Errorf("written %v, want %v", written, tt.written)
			}
		})
	}

	t.Run("windows are forgotten", func(t *testing.T) {
		timers := &manualTimers{}
		th := newProgressThrottle(time.Second, func(progressReport) {})
		th.afterFunc = timers.afterFunc
		th.hold(a, phase(a, agent.PhaseDownloading))
		th.hold(b, phase(b, agent.PhaseDownloading))
		th.drop(a)
		timers.fire()
		if n := th.windows(); n != 0 {
			t.Errorf("%d windows open after every window ended", n)
		}
	})
	t.Run("interval below zero writes every phase", func(t *testing.T) {
		th := newProgressThrottle(-1, func(progressReport) { t.Error("nothing is held, so nothing is written later") })
		for _, ph := range []agent.Phase{agent.PhaseDownloading, agent.PhaseInstalling} {
			if th.hold(a, phase(a, ph)) {
				t.Errorf("%s held with the throttle off", ph)
			}
		}
	})
}
