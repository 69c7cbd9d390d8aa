package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/test/testkubelet"
)

type phaseLog struct {
	mu     sync.Mutex
	phases []Phase
}

func (p *phaseLog) record(_ context.Context, st State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phases = append(p.phases, st.Phase)
}

func (p *phaseLog) get() []Phase {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Phase(nil), p.phases...)
}

func apply(t *testing.T, u *Upgrader, p Plan) State {
	t.Helper()
	if _, err := u.Begin(context.Background(), p); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := u.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return st
}

func TestUpgradeSucceeds(t *testing.T) {
	h := newHost(t, oldK)
	arts := newArtifacts(t)
	var pl phaseLog
	u := h.upgrader(func(o *Options) { o.OnPhase = pl.record })
	oldPID := h.sup.PID()

	st := apply(t, u, planFor("plan-ok", newK, arts.add(newK)))

	if st.Phase != PhaseSucceeded || st.Reason != "" {
		t.Fatalf("state %+v", st)
	}
	want := []Phase{PhaseDownloading, PhaseInstalling, PhaseSwitching, PhaseRestarting, PhaseVerifying, PhaseSucceeded}
	if got := pl.get(); !reflect.DeepEqual(got, want) {
		t.Errorf("phases %v, want %v", got, want)
	}
	if v, err := u.CurrentVersion(); err != nil || v != newK.Version {
		t.Errorf("current = %q, %v", v, err)
	}
	if v := h.runningVersion(); v != newK.Version {
		t.Errorf("running kubelet %q", v)
	}
	if v := h.nodeVersion(); v != newK.Version {
		t.Errorf("node reports %q", v)
	}
	if pid := h.sup.PID(); pid == 0 || pid == oldPID {
		t.Errorf("kubelet pid %d (was %d): not restarted", pid, oldPID)
	}
	fi, err := os.Stat(filepath.Join(h.kdir, newK.Version, "kubelet"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("installed binary: %v %v", fi, err)
	}
	if sum, _ := fileSHA256(filepath.Join(h.kdir, newK.Version, "kubelet")); sum != newK.SHA256 {
		t.Error("installed binary has the wrong digest")
	}
	wantList := []string{"current -> " + newK.Version, oldK.Version, newK.Version}
	if got := h.listing(); !reflect.DeepEqual(got, wantList) {
		t.Errorf("kubelet dir %v, want %v (old version kept for rollback, no temp files)", got, wantList)
	}
	if r := st.Result(); r.Result != agent.Succeeded || r.KubeletVersion != newK.Version || r.PlanID != "plan-ok" {
		t.Errorf("result %+v", r)
	}
}

// TestUpgradeRefusedDownloads: a bad artifact fails the plan before
// anything is touched: same files, same kubelet process, same version.
func TestUpgradeRefusedDownloads(t *testing.T) {
	const secret = "s3cr3t-signature-value"
	tests := []struct {
		name       string
		plan       func(a *artifacts) Plan
		wantReason string
		requests   int
	}{
		{"wrong sha256", func(a *artifacts) Plan {
			p := planFor("p-sha", newK, a.add(newK)+"?sig="+secret)
			sum := sha256.Sum256([]byte("something else"))
			p.SHA256 = hex.EncodeToString(sum[:])
			return p
		}, "sha256 mismatch", 1},
		{"not found", func(a *artifacts) Plan {
			return planFor("p-404", newK, a.srv.URL+"/missing?sig="+secret)
		}, "404", 1},
		{"too large", func(a *artifacts) Plan {
			return planFor("p-big", newK, a.add(newK)+"?sig="+secret)
		}, "larger than", 1},
		{"server keeps failing", func(a *artifacts) Plan {
			a.failCode, a.failN = http.StatusServiceUnavailable, 100
			return planFor("p-503", newK, a.add(newK)+"?sig="+secret)
		}, "503", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, oldK)
			arts := newArtifacts(t)
			u := h.upgrader(func(o *Options) {
				if tt.name == "too large" {
					o.MaxDownloadBytes = int64(len(newK.Bytes)) / 2
				}
			})
			before, pid := h.listing(), h.sup.PID()
			p := tt.plan(arts)
			st := apply(t, u, p)
			if st.Phase != PhaseFailed || !strings.Contains(st.Reason, tt.wantReason) {
				t.Fatalf("state %+v, want failed with %q", st, tt.wantReason)
			}
			if strings.Contains(st.Reason, secret) || strings.Contains(h.logText(), secret) {
				t.Error("the URL's query (a signature) leaked into the reason or the logs")
			}
			if got := h.listing(); !reflect.DeepEqual(got, before) {
				t.Errorf("kubelet dir changed: %v -> %v", before, got)
			}
			if h.sup.PID() != pid || h.runningVersion() != oldK.Version {
				t.Errorf("kubelet touched: pid %d -> %d, running %q", pid, h.sup.PID(), h.runningVersion())
			}
			if n := arts.count(strings.Split(p.URL, "?")[0]); n != tt.requests {
				t.Errorf("%d download requests, want %d", n, tt.requests)
			}
			if r := st.Result(); r.Result != agent.Failed || r.KubeletVersion != oldK.Version {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func TestUpgradeRetriesTransientDownloadErrors(t *testing.T) {
	h := newHost(t, oldK)
	arts := newArtifacts(t)
	arts.failCode, arts.failN = http.StatusBadGateway, 2
	u := h.upgrader(nil)
	url := arts.add(newK)
	st := apply(t, u, planFor("p-retry", newK, url))
	if st.Phase != PhaseSucceeded {
		t.Fatalf("state %+v", st)
	}
	if n := arts.count(url); n != 3 {
		t.Errorf("%d requests, want 3 (two failures, one success)", n)
	}
}

// TestUpgradeUnhealthyRollsBack: a kubelet that fails its health checks
// is replaced by the previous one, which runs and is healthy again.
func TestUpgradeUnhealthyRollsBack(t *testing.T) {
	h := newHost(t, oldK)
	arts := newArtifacts(t)
	var pl phaseLog
	u := h.upgrader(func(o *Options) { o.HealthTimeout = 3 * time.Second; o.OnPhase = pl.record })

	st := apply(t, u, planFor("p-broken", brokenK, arts.add(brokenK)))

	if st.Phase != PhaseFailed {
		t.Fatalf("state %+v", st)
	}
	for _, want := range []string{"kubelet v1.37.1 not healthy within 3s", "kubelet healthz", "rolled back to kubelet v1.36.0"} {
		if !strings.Contains(st.Reason, want) {
			t.Errorf("reason %q lacks %q", st.Reason, want)
		}
	}
	if got := pl.get(); !reflect.DeepEqual(got[len(got)-2:], []Phase{PhaseRollingBack, PhaseFailed}) {
		t.Errorf("phases %v", got)
	}
	if v, _ := u.CurrentVersion(); v != oldK.Version {
		t.Errorf("current = %q after rollback", v)
	}
	h.waitHealthy(oldK.Version)
	if v := h.runningVersion(); v != oldK.Version {
		t.Errorf("running %q after rollback", v)
	}
	if r := st.Result(); r.Result != agent.Failed || r.KubeletVersion != oldK.Version {
		t.Errorf("result %+v", r)
	}
}

// TestUpgradeResumesAfterCrash stops the agent after each number of steps
// (and, for reboots, the kubelet with it, as if the host went down), then
// starts a new agent from the state file. Whatever the crash point, the
// host ends on a consistent version: the one `current` names is the one
// running, the plan is terminal, and a healthy plan succeeds while a
// broken one is rolled back.
func TestUpgradeResumesAfterCrash(t *testing.T) {
	type tc struct {
		name   string
		bin    *testkubelet.Binary
		steps  int
		reboot bool
		// between runs between the crash and the restart: the work of
		// the persisted phase done, but not yet recorded.
		between func(h *host, u *Upgrader)
	}
	var tests []tc
	for _, bin := range []*testkubelet.Binary{newK, brokenK} {
		for steps := 0; steps <= 5; steps++ {
			for _, reboot := range []bool{false, true} {
				tests = append(tests, tc{name: fmt.Sprintf("%s/steps=%d/reboot=%v", bin.Version, steps, reboot), bin: bin, steps: steps, reboot: reboot})
			}
		}
		tests = append(tests,
			tc{name: bin.Version + "/partial-download", bin: bin, steps: 0, between: func(h *host, u *Upgrader) {
				st, _ := u.Pending()
				if err := os.WriteFile(u.tmpPath(st.PlanID), bin.Bytes[:len(bin.Bytes)/3], 0o600); err != nil {
					t.Fatal(err)
				}
			}},
			tc{name: bin.Version + "/flipped-not-recorded", bin: bin, steps: 2, reboot: true, between: func(h *host, u *Upgrader) {
				if err := u.flip(bin.Version); err != nil {
					t.Fatal(err)
				}
			}},
			tc{name: bin.Version + "/restarted-not-recorded", bin: bin, steps: 3, between: func(h *host, u *Upgrader) {
				if err := h.sup.Restart(context.Background()); err != nil {
					t.Fatal(err)
				}
			}},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, oldK)
			arts := newArtifacts(t)
			url := arts.add(tt.bin)
			// Short for the broken kubelet (it never passes), generous for the
			// healthy one (a loaded machine must not turn it into a rollback).
			timeout := func(o *Options) {
				o.HealthTimeout = 30 * time.Second
				if !tt.bin.Healthy {
					o.HealthTimeout = 4 * time.Second
				}
			}
			u1 := h.upgrader(timeout)
			ctx := context.Background()
			if _, err := u1.Begin(ctx, planFor("p-crash", tt.bin, url)); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tt.steps; i++ {
				if _, err := u1.Step(ctx); err != nil {
					t.Fatalf("step %d: %v", i+1, err)
				}
			}
			if tt.between != nil {
				tt.between(h, u1)
			}
			h.crash(tt.reboot)

			u2 := h.upgrader(timeout)
			pending, err := u2.Pending()
			if err != nil || pending == nil || pending.PlanID != "p-crash" {
				t.Fatalf("after restart: pending %+v, %v", pending, err)
			}
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			st, err := u2.Run(rctx)
			if errors.Is(err, ErrNoPlan) && st.Phase.Terminal() {
				err = nil // it had finished before the crash
			}
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			wantPhase, wantVersion := PhaseSucceeded, tt.bin.Version
			if !tt.bin.Healthy {
				wantPhase, wantVersion = PhaseFailed, oldK.Version
			}
			if st.Phase != wantPhase {
				t.Fatalf("ended %s (%s), want %s", st.Phase, st.Reason, wantPhase)
			}
			cur, _ := u2.CurrentVersion()
			h.waitHealthy(wantVersion)
			if cur != wantVersion || h.runningVersion() != wantVersion {
				t.Errorf("current %q, running %q, want %q", cur, h.runningVersion(), wantVersion)
			}
			if _, err := u2.Begin(ctx, planFor("p-crash", tt.bin, url)); !errors.Is(err, ErrAlreadyApplied) {
				t.Errorf("Begin of the finished plan: %v, want ErrAlreadyApplied", err)
			}
		})
	}
}

// TestPlanAppliedOnce: a finished plan offered again (also after an agent
// restart, also after a later plan) is not downloaded, installed or
// restarted again; its recorded outcome is returned for reporting.
func TestPlanAppliedOnce(t *testing.T) {
	h := newHost(t, oldK)
	arts := newArtifacts(t)
	url := arts.add(newK)
	u := h.upgrader(nil)
	p := planFor("p-once", newK, url)
	apply(t, u, p)
	pid := h.sup.PID()

	check := func(u *Upgrader, what string) {
		t.Helper()
		st, err := u.Begin(context.Background(), p)
		if !errors.Is(err, ErrAlreadyApplied) || st.Phase != PhaseSucceeded || st.PlanID != p.ID {
			t.Fatalf("%s: Begin = %+v, %v", what, st, err)
		}
		if _, err := u.Step(context.Background()); !errors.Is(err, ErrNoPlan) {
			t.Errorf("%s: Step after a refused Begin: %v", what, err)
		}
	}
	check(u, "same agent")
	if err := u.MarkReported(p.ID); err != nil {
		t.Fatal(err)
	}
	if pend, _ := u.Pending(); pend != nil {
		t.Errorf("pending after MarkReported: %+v", pend)
	}
	h.crash(false)
	check(h.upgrader(nil), "restarted agent")
	if h.sup.PID() != pid || arts.count(url) != 1 {
		t.Errorf("plan re-applied: pid %d -> %d, %d downloads", pid, h.sup.PID(), arts.count(url))
	}

	u2 := h.upgrader(nil)
	if st := apply(t, u2, planFor("p-next", newerK, arts.add(newerK))); st.Phase != PhaseSucceeded {
		t.Fatalf("second plan %+v", st)
	}
	check(u2, "after a later plan")
	if arts.count(url) != 1 {
		t.Errorf("%d downloads of the first plan's kubelet", arts.count(url))
	}
}

func TestBeginRejects(t *testing.T) {
	h := newHost(t, oldK)
	arts := newArtifacts(t)
	u := h.upgrader(nil)
	good := planFor("p1", newK, arts.add(newK))
	tests := []struct {
		name string
		mod  func(p *Plan)
	}{
		{"path in version", func(p *Plan) { p.Version = "../../etc" }},
		{"short digest", func(p *Plan) { p.SHA256 = "abc" }},
		{"relative URL", func(p *Plan) { p.URL = "/artifacts/kubelet" }},
		{"file URL", func(p *Plan) { p.URL = "file:///etc/shadow" }},
		{"slash in ID", func(p *Plan) { p.ID = "a/b" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good
			tt.mod(&p)
			if _, err := u.Begin(context.Background(), p); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if _, err := u.Begin(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	other := planFor("p2", newerK, arts.add(newerK))
	if st, err := u.Begin(context.Background(), other); !errors.Is(err, ErrBusy) || st.PlanID != "p1" {
		t.Errorf("second plan while one runs: %+v %v", st, err)
	}
	if st, err := u.Begin(context.Background(), good); err != nil || st.Phase != PhaseDownloading {
		t.Errorf("same plan again (resume): %+v %v", st, err)
	}
}

// TestAdopt brings a plainly installed kubelet (a unit running
// /usr/local/bin/kubelet) under the agent's layout; a later upgrade then
// changes what that path runs.
func TestAdopt(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "usr/local/bin/kubelet")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, oldK.Bytes, 0o755); err != nil {
		t.Fatal(err)
	}
	version := func() string {
		t.Helper()
		v, err := binaryVersion(context.Background(), bin)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	u, err := New(Options{Root: root, Kubelet: noRestart{}, Health: healthyAlways{}, HealthInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	v, err := u.Adopt(context.Background(), "/usr/local/bin/kubelet")
	if err != nil || v != oldK.Version {
		t.Fatalf("Adopt = %q, %v", v, err)
	}
	if cur, _ := u.CurrentVersion(); cur != oldK.Version {
		t.Errorf("current %q", cur)
	}
	if sum, _ := fileSHA256(filepath.Join(u.KubeletDir(), oldK.Version, "kubelet")); sum != oldK.SHA256 {
		t.Error("adopted copy differs")
	}
	if fi, err := os.Lstat(bin); err != nil || fi.Mode()&os.ModeSymlink == 0 || version() != oldK.Version {
		t.Fatalf("%s is not a working symlink: %v %v", bin, fi, err)
	}
	if v, err := u.Adopt(context.Background(), "/usr/local/bin/kubelet"); err != nil || v != "" {
		t.Errorf("second Adopt = %q, %v; want a no-op", v, err)
	}
	arts := newArtifacts(t)
	if st := apply(t, u, planFor("p-adopted", newK, arts.add(newK))); st.Phase != PhaseSucceeded {
		t.Fatalf("upgrade %+v", st)
	}
	if version() != newK.Version {
		t.Errorf("%s runs %s after the upgrade", bin, version())
	}
}

// noRestart and healthyAlways stand in for the kubelet in TestAdopt,
// which is about files, not processes.
type noRestart struct{}

func (noRestart) Restart(context.Context) error { return nil }

type healthyAlways struct{}

func (healthyAlways) Check(context.Context, string) error { return nil }
