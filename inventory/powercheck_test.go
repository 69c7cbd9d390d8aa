package inventory

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestStatusUnchanged(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	base := func() metalv1.HostStatus {
		return metalv1.HostStatus{State: metalv1.HostAvailable, PowerState: metalv1.PowerOff, LastPowerCheck: &t0,
			Conditions: []metav1.Condition{{Type: metalv1.ConditionPowerSynced, Status: metav1.ConditionTrue, Reason: ReasonInSync}}}
	}
	cases := []struct {
		name   string
		mutate func(*metalv1.HostStatus)
		want   bool
	}{
		{"identical", func(*metalv1.HostStatus) {}, true},
		{"only lastPowerCheck newer", func(s *metalv1.HostStatus) { s.LastPowerCheck = &t1 }, true},
		{"only lastPowerCheck cleared", func(s *metalv1.HostStatus) { s.LastPowerCheck = nil }, true},
		{"power state", func(s *metalv1.HostStatus) { s.PowerState = metalv1.PowerOn }, false},
		{"error count", func(s *metalv1.HostStatus) { s.ErrorCount = 1 }, false},
		{"condition", func(s *metalv1.HostStatus) { s.Conditions[0].Reason = ReasonPowering }, false},
		{"state and lastPowerCheck", func(s *metalv1.HostStatus) { s.State = metalv1.HostClaimed; s.LastPowerCheck = &t1 }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base(), base()
			tc.mutate(&b)
			if got := statusUnchanged(&a, &b); got != tc.want {
				t.Fatalf("statusUnchanged = %t, want %t", got, tc.want)
			}
			if a.LastPowerCheck != &t0 {
				t.Fatal("statusUnchanged changed its argument")
			}
		})
	}
}

// When the next poll is due: from the last read in memory; after a restart
// from status.lastPowerCheck while that is recent, else spread over one
// interval (never all at once, never later than one interval).
func TestPowerChecksDue(t *testing.T) {
	const interval = 10 * time.Minute
	now := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	cases := []struct {
		name             string
		recorded         *time.Time // a read this process made
		status           *metav1.Time
		uid              string // of the Host now; the record is for "a"
		wantMin, wantMax time.Duration
	}{
		{"read 2m ago", timePtr(now.Add(-2 * time.Minute)), nil, "a", 6 * time.Minute, 10 * time.Minute},
		{"restart, status 2m old", nil, at(-2 * time.Minute), "a", 6 * time.Minute, 10 * time.Minute},
		{"restart, status a day old", nil, at(-24 * time.Hour), "a", 0, interval},
		{"restart, no status", nil, nil, "a", 0, interval},
		{"recreated Host ignores the old read", timePtr(now.Add(-time.Second)), nil, "b", 0, interval},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for range 50 { // random: check the bounds many times
				var p powerChecks
				h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h", UID: "a"}}
				if tc.recorded != nil {
					p.record(h, *tc.recorded, interval, interval, metalv1.PowerOn, p.reading(h))
				}
				h.UID = types.UID(tc.uid)
				h.Status.LastPowerCheck = tc.status
				due := p.due(h, now, interval)
				if d := due.Sub(now); d < tc.wantMin || d > tc.wantMax {
					t.Fatalf("due in %s, want within [%s, %s]", d, tc.wantMin, tc.wantMax)
				}
				if again := p.due(h, now.Add(time.Second), interval); !again.Equal(due) {
					t.Fatalf("due moved from %s to %s without a read", due, again)
				}
			}
		})
	}
}

// lastPowerCheck gets the time of the last real read, only when newer.
func TestPowerChecksStamp(t *testing.T) {
	now := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h", UID: "a"}}
	var p powerChecks
	p.due(h, now, time.Minute) // scheduled only: nothing to stamp
	p.stamp(h)
	if h.Status.LastPowerCheck != nil {
		t.Fatalf("a scheduled poll was stamped as a check: %v", h.Status.LastPowerCheck)
	}
	p.record(h, now, time.Minute, time.Minute, metalv1.PowerOn, p.reading(h))
	p.stamp(h)
	if c := h.Status.LastPowerCheck; c == nil || !c.Time.Equal(now) {
		t.Fatalf("lastPowerCheck = %v, want %v", c, now)
	}
	later := metav1.NewTime(now.Add(time.Hour))
	h.Status.LastPowerCheck = &later
	p.stamp(h)
	if !h.Status.LastPowerCheck.Time.Equal(later.Time) {
		t.Fatal("an older read replaced a newer lastPowerCheck")
	}
	p.forget(hostKey(h))
	h.Status.LastPowerCheck = nil
	p.stamp(h)
	if h.Status.LastPowerCheck != nil {
		t.Fatal("a forgotten Host was stamped")
	}
}

func TestMemoFromSecret(t *testing.T) {
	cases := []struct {
		name        string
		data        map[string][]byte
		wantProblem string // substring; "" means usable
	}{
		{"both keys", map[string][]byte{"username": []byte("admin"), "password": []byte("s3cret-value")}, ""},
		{"no password", map[string][]byte{"username": []byte("admin")}, "lacks key(s) password"},
		{"empty username", map[string][]byte{"username": {}, "password": []byte("s3cret-value")}, "lacks key(s) username"},
		{"empty", nil, "lacks key(s) username, password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bmc", ResourceVersion: "42"}, Data: tc.data}
			m := memoFromSecret(s)
			if m.resourceVersion != "42" {
				t.Fatalf("resourceVersion = %q", m.resourceVersion)
			}
			switch {
			case tc.wantProblem == "" && m.problem != nil:
				t.Fatalf("problem %q for a usable Secret", m.problem.Message)
			case tc.wantProblem == "" && (m.creds.Username != "admin" || m.creds.Password != "s3cret-value"):
				t.Fatalf("credentials not kept: %v", m.creds)
			case tc.wantProblem != "" && (m.problem == nil || m.problem.Reason != metalv1.ReasonSecretInvalid || !strings.Contains(m.problem.Message, tc.wantProblem)):
				t.Fatalf("problem = %+v, want reason %s with %q", m.problem, metalv1.ReasonSecretInvalid, tc.wantProblem)
			case tc.wantProblem != "" && strings.Contains(m.problem.Message, "s3cret-value"):
				t.Fatal("the problem shows the password")
			}
		})
	}
}

func timePtr(t time.Time) *time.Time { return &t }

func TestPowerActionBackoff(t *testing.T) {
	o := PowerOptions{}
	o.defaults()
	var got []time.Duration
	elapsed := time.Duration(0)
	for range 8 {
		d := o.readBackDelay(elapsed)
		got = append(got, d)
		elapsed += d
	}
	want := []time.Duration{1, 1, 2, 4, 8, 16, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("read-back delays %v, want %v seconds", got, want)
		}
	}
	for attempt, want := range map[int32]time.Duration{1: 5 * time.Minute, 2: 10 * time.Minute, 3: 20 * time.Minute, 4: 30 * time.Minute, 9: 30 * time.Minute} {
		if d := o.actionDeadline(attempt); d != want {
			t.Errorf("deadline of attempt %d = %s, want %s", attempt, d, want)
		}
	}
	o.BackoffMax = time.Second // shorter than the timeout: never below it
	if d := o.actionDeadline(3); d != o.ActionTimeout {
		t.Errorf("deadline with a short BackoffMax = %s, want %s", d, o.ActionTimeout)
	}
}

// A Host whose power stays as it was is polled less and less often, up to
// the maximum; a change or an action of Anvil's starts again from the
// base interval.
func TestPowerPollBacksOff(t *testing.T) {
	const interval, maxInterval = 10 * time.Minute, 80 * time.Minute
	for quiet, want := range []time.Duration{10 * time.Minute, 20 * time.Minute, 40 * time.Minute, 80 * time.Minute, 80 * time.Minute} {
		if got := pollWait(interval, maxInterval, quiet); got != want {
			t.Errorf("pollWait after %d unchanged reads = %s, want %s", quiet, got, want)
		}
	}
	if got := pollWait(interval, 0, 3); got != interval {
		t.Errorf("no maximum: pollWait = %s, want the interval", got)
	}
	now := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h", UID: "a"}}
	var p powerChecks
	wait := func(state metalv1.PowerState) time.Duration {
		p.record(h, now, interval, maxInterval, state, p.reading(h))
		return p.due(h, now, interval).Sub(now)
	}
	within := func(d, base time.Duration) bool { return d >= base*8/10 && d <= base*12/10 }
	steps := []struct {
		state metalv1.PowerState
		base  time.Duration
	}{{metalv1.PowerOn, interval}, {metalv1.PowerOn, 2 * interval}, {metalv1.PowerOn, 4 * interval}, {metalv1.PowerOff, interval}, {metalv1.PowerOff, 2 * interval}}
	for i, st := range steps {
		if d := wait(st.state); !within(d, st.base) {
			t.Fatalf("read %d (%s): next poll in %s, want about %s", i+1, st.state, d, st.base)
		}
	}
	p.active(h)
	if d := wait(metalv1.PowerOff); !within(d, interval) {
		t.Fatalf("after an action: next poll in %s, want about %s", d, interval)
	}
}
