package daemon_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/daemon"
	"anvil.dev/anvil/agent/onhost/upgrade"
)

// pollAPI is a scripted agent API: every poll is answered "none" after
// hold (the long poll's wait, or at once) with waited.
type pollAPI struct {
	hold   bool // a long poll takes its whole wait
	waited bool // answers say the server held them
	mu     sync.Mutex
	waits  []time.Duration // one per poll; 0 for a short poll
}

func (p *pollAPI) Report(context.Context, agent.Report) error { return nil }
func (p *pollAPI) NextAction(ctx context.Context) (agent.Action, error) {
	return p.NextActionWait(ctx, 0)
}
func (p *pollAPI) NextActionWait(ctx context.Context, wait time.Duration) (agent.Action, error) {
	p.mu.Lock()
	p.waits = append(p.waits, wait)
	p.mu.Unlock()
	if p.hold && wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return agent.Action{}, ctx.Err()
		}
	}
	return agent.Action{Type: agent.ActionNone, PollAfterSeconds: 30, Waited: p.waited && wait > 0}, nil
}
func (p *pollAPI) SendResult(context.Context, string, agent.Result) error { return nil }
func (p *pollAPI) ResolveURL(ref string) (string, error)                  { return ref, nil }

func (p *pollAPI) polls() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.waits...)
}

type noKubelet struct{}

func (noKubelet) Restart(context.Context) error       { return nil }
func (noKubelet) Check(context.Context, string) error { return nil }

// runPolls runs a daemon over api with a PollInterval far longer than the
// test, until it made n polls (or 20 s passed); then for settle more, and
// returns the polls made.
func runPolls(t *testing.T, api *pollAPI, wait time.Duration, n int, settle bool) []time.Duration {
	t.Helper()
	root := t.TempDir()
	up, err := upgrade.New(upgrade.Options{Root: root, Kubelet: noKubelet{}, Health: noKubelet{}})
	if err != nil {
		t.Fatal(err)
	}
	// The daemon logs each pause before it starts it: the marker that no
	// poll comes before the pause ends.
	paused := make(chan struct{}, 1)
	logger := funcr.New(func(_, args string) {
		if strings.Contains(args, "pausing before the next poll") {
			select {
			case paused <- struct{}{}:
			default:
			}
		}
	}, funcr.Options{Verbosity: 1})
	d, err := daemon.New(daemon.Options{
		API: api, Upgrader: up, StateDir: filepath.Join(root, "state"), Logger: logger,
		Facts:        func(context.Context) (agent.Report, error) { return agent.Report{BootID: "1"}, nil },
		PollInterval: time.Hour, ReportInterval: 2 * time.Hour, PollWait: wait,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	for i := 0; len(api.polls()) < n && i < 2000; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if settle {
		select {
		case <-paused:
		case <-time.After(30 * time.Second):
			t.Fatalf("the daemon never paused; polls %v", api.polls())
		}
	}
	return api.polls()
}

// TestDaemonLongPollRepolls: after a held poll the daemon asks again at
// once (the PollInterval of an hour would stop the test otherwise).
func TestDaemonLongPollRepolls(t *testing.T) {
	api := &pollAPI{hold: true, waited: true}
	polls := runPolls(t, api, 200*time.Millisecond, 5, false)
	if len(polls) < 5 {
		t.Fatalf("%d polls, want the next at once after each held one", len(polls))
	}
	for _, w := range polls {
		if w != 200*time.Millisecond {
			t.Fatalf("polls asked to wait %v, want 200ms each", polls)
		}
	}
}

// TestDaemonLongPollFallbacks: a server without long poll (no Waited), or
// one that answers held polls at once, gets the usual pause, not a loop.
func TestDaemonLongPollFallbacks(t *testing.T) {
	// Server without long poll: one poll, then the hour's pause.
	api := &pollAPI{}
	if polls := runPolls(t, api, time.Minute, 1, true); len(polls) != 1 || polls[0] != time.Minute {
		t.Errorf("polls %v, want one long poll and then a pause", polls)
	}
	// Answers with Waited at once: a few at once, then the pause.
	api = &pollAPI{waited: true}
	if polls := runPolls(t, api, time.Minute, 4, true); len(polls) != 4 {
		t.Errorf("%d polls answered early, want 4 and then a pause", len(polls))
	}
	// A negative PollWait is the short poll.
	api = &pollAPI{hold: true, waited: true}
	if polls := runPolls(t, api, -1, 1, true); len(polls) != 1 || polls[0] != 0 {
		t.Errorf("polls %v, want one short poll", polls)
	}
}
