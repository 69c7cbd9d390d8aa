package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
)

// The tests play the Machine and MachineSet controllers and the agent: they
// write the status changes and Events that the CLI must follow.

// running creates a Machine that runs kubelet version on node <name>, Ready
// and up to date; owner makes it a member of that MachineSet.
func (f *machinesFixture) running(name, version string, owner *metalv1.MachineSet) *metalv1.Machine {
	f.t.Helper()
	m := &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "workers"}, Version: version},
	}
	if owner != nil {
		m.Labels = map[string]string{metalv1.LabelMachineSet: owner.Name}
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: metalv1.GroupVersion.String(), Kind: "MachineSet", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	if err := f.c.Create(context.Background(), m); err != nil {
		f.t.Fatal(err)
	}
	f.status(name, func(s *metalv1.MachineStatus) {
		s.Phase, s.Version = metalv1.MachineRunning, version
		s.HostRef = &metalv1.LocalObjectReference{Name: "host-" + name}
		s.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: name}
		setCond(metalv1.ConditionReady, metav1.ConditionTrue, "Ready", "")(s)
		setCond(metalv1.ConditionUpToDate, metav1.ConditionTrue, "UpToDate", "")(s)
	})
	return m
}

// event records an Event about obj the way the controllers' recorder does
// (events.k8s.io/v1, action Upgrade).
func (f *machinesFixture) event(obj client.Object, kind, typ, reason, note string) {
	f.t.Helper()
	e := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: f.ns, Name: fmt.Sprintf("%s.%x", obj.GetName(), time.Now().UnixNano())},
		EventTime:           metav1.NowMicro(),
		ReportingController: "anvil-machine",
		ReportingInstance:   "anvil-machine-test",
		Action:              "Upgrade",
		Reason:              reason,
		Type:                typ,
		Note:                note,
		Regarding: corev1.ObjectReference{APIVersion: metalv1.GroupVersion.String(), Kind: kind, Namespace: f.ns,
			Name: obj.GetName(), UID: obj.GetUID()},
	}
	if err := f.c.Create(context.Background(), e); err != nil {
		f.t.Fatalf("recording event %s: %v", reason, err)
	}
}

func (f *machinesFixture) machineSet(name, version string, replicas int32) *metalv1.MachineSet {
	f.t.Helper()
	ms := &metalv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: metalv1.MachineSetSpec{Replicas: ptr.To(replicas), Template: metalv1.MachineTemplate{
			Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "workers"}, Version: version}}},
	}
	if err := f.c.Create(context.Background(), ms); err != nil {
		f.t.Fatal(err)
	}
	return ms
}

func (f *machinesFixture) getSet(name string) *metalv1.MachineSet {
	f.t.Helper()
	ms := &metalv1.MachineSet{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, ms); err != nil {
		f.t.Fatal(err)
	}
	return ms
}

// setStatus plays the MachineSet controller.
func (f *machinesFixture) setStatus(name string, change func(*metalv1.MachineSet)) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ms := f.getSet(name)
		change(ms)
		return f.c.Status().Update(context.Background(), ms)
	})
	if err != nil {
		f.t.Fatalf("updating status of machineset %s: %v", name, err)
	}
}

// specVersion plays a MachineSet rollout: it moves a Machine's spec.version.
func (f *machinesFixture) specVersion(name, v string) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := f.get(name)
		if err != nil {
			return err
		}
		m.Spec.Version = v
		return f.c.Update(context.Background(), m)
	})
	if err != nil {
		f.t.Fatalf("patching spec.version of %s: %v", name, err)
	}
}

func upgradeStep(up metalv1.UpgradeStatus, updating func(*metalv1.MachineStatus)) func(*metalv1.MachineStatus) {
	return func(s *metalv1.MachineStatus) {
		s.Phase = metalv1.MachineUpdating
		s.Upgrade = &up
		if updating != nil {
			updating(s)
		}
	}
}

func TestMachinesUpgradeValidation(t *testing.T) {
	f := newMachinesFixture(t)
	f.running("m1", "v1.36.4", nil)
	ms := f.machineSet("ms1", "v1.36.4", 1)
	f.running("ms1-a", "v1.36.4", ms)
	f.create("broken", nil)
	f.status("broken", func(s *metalv1.MachineStatus) {
		s.Phase, s.FailureReason, s.FailureMessage = metalv1.MachineFailed, "BootTimeout", "no boot report"
	})
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no version", []string{"m1"}, []string{"--version is required"}},
		{"version without v", []string{"m1", "--version", "1.37.2"}, []string{`invalid --version "1.37.2"`, "did you mean v1.37.2?"}},
		{"short version", []string{"m1", "--version", "v1.37"}, []string{`invalid --version "v1.37"`}},
		{"bad timeout", []string{"m1", "--version", "v1.37.2", "--timeout", "0s"}, []string{"--timeout must be positive"}},
		{"no such machine", []string{"ghost", "--version", "v1.37.2"}, []string{"machine ghost not found in namespace " + f.ns}},
		{"kubelet not in class", []string{"m1", "--version", "v1.38.0"}, []string{"MachineClass workers has no kubelet v1.38.0", "it lists v1.36.4, v1.37.2", "nothing was patched"}},
		{"member of a set", []string{"ms1-a", "--version", "v1.37.2"}, []string{"belongs to MachineSet ms1", "anvil machinesets upgrade ms1 --version v1.37.2"}},
		{"failed machine", []string{"broken", "--version", "v1.36.4"}, []string{"machine broken has failed (BootTimeout: no boot report)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.run(append([]string{"machines", "upgrade"}, tc.args...)...)
			if err == nil {
				t.Fatalf("upgrade %v succeeded:\n%s", tc.args, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	for _, n := range []string{"m1", "ms1-a", "broken"} {
		if m, _ := f.get(n); m.Spec.Version != map[string]string{"m1": "v1.36.4", "ms1-a": "v1.36.4", "broken": "v1.37.2"}[n] {
			t.Errorf("a refused upgrade changed machine %s to %s", n, m.Spec.Version)
		}
	}

	// Without --watch: only spec.version changes, and the output says how to follow.
	before, _ := f.get("m1")
	out, err := f.run("machines", "upgrade", "m1", "--version", "v1.37.2")
	if err != nil {
		t.Fatalf("upgrade: %v\n%s", err, out)
	}
	wantInOrder(t, out, "machine/m1 patched: spec.version v1.36.4 -> v1.37.2 (its Node runs v1.36.4)",
		"follow it with: anvil machines upgrade m1 --version v1.37.2 --watch -n "+f.ns)
	after, _ := f.get("m1")
	want := before.Spec.DeepCopy()
	want.Version = "v1.37.2"
	if !apiequality.Semantic.DeepEqual(after.Spec, *want) || after.Generation != before.Generation+1 {
		t.Fatalf("spec after upgrade = %+v (generation %d), want %+v (generation %d)", after.Spec, after.Generation, *want, before.Generation+1)
	}
	if out, err := f.run("machines", "upgrade", "m1", "--version", "v1.37.2"); err != nil || !strings.Contains(out, "machine/m1 already asks for kubelet v1.37.2") {
		t.Fatalf("second upgrade: %v\n%s", err, out)
	}
	// A member of a set may be moved to the version its set asks for.
	f.specVersion("ms1-a", "v1.36.4")
	if out, err := f.run("machines", "upgrade", "ms1-a", "--version", "v1.36.4"); err != nil {
		t.Fatalf("upgrade of a set member to its set's version: %v\n%s", err, out)
	}
}

// TestMachinesUpgradeWatch plays each way an upgrade ends.
func TestMachinesUpgradeWatch(t *testing.T) {
	f := newMachinesFixture(t)
	for _, tc := range []struct {
		name, from, to string
		flags          []string
		play           func(m *metalv1.Machine, plan string, out *lockedBuffer)
		wantErr        []string // nil: success
		wantOut        []string // in this order
		wantAlso       []string // anywhere
	}{{
		name: "succeeded", from: "v1.36.4", to: "v1.37.2",
		play: func(m *metalv1.Machine, plan string, out *lockedBuffer) {
			up := metalv1.UpgradeStatus{PlanID: plan, FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeDraining, PodsLeft: 3,
				Message: "draining Node " + m.Name + ": 3 pods left (PodDisruptionBudgets respected)"}
			f.status(m.Name, upgradeStep(up, func(s *metalv1.MachineStatus) {
				setCond(metalv1.ConditionUpdating, metav1.ConditionTrue, metalv1.ReasonInPlaceUpdating, up.Message)(s)
				setCond(metalv1.ConditionUpToDate, metav1.ConditionFalse, metalv1.ReasonInPlaceUpdating, "Node runs v1.36.4, spec asks for v1.37.2")(s)
			}))
			up.State, up.PodsLeft, up.Message = metalv1.UpgradeApplying, 0, "plan published; waiting for the agent"
			f.status(m.Name, upgradeStep(up, nil))
			// Events are read apart from the watched status: wait for each, so the order is known.
			f.eventually("the CLI to show Applying", func() bool { return strings.Contains(out.String(), "Applying: plan published") })
			f.event(m, "Machine", corev1.EventTypeNormal, "PlanPublished", "Node "+m.Name+" drained; plan "+plan+" (kubelet v1.37.2) published to the agent")
			f.eventually("the CLI to show the PlanPublished event", func() bool { return strings.Contains(out.String(), "PlanPublished") })
			// The agent API records each phase in agentResult; the
			// controller's message stays.
			for _, phase := range []string{"Downloading", "Restarting"} {
				up.AgentResult = &metalv1.AgentUpgradeResult{PlanID: plan, Outcome: metalv1.AgentUpgradeInProgress, Message: phase, ReportedAt: metav1.Now()}
				f.status(m.Name, upgradeStep(up, nil))
			}
			up.State, up.Message = metalv1.UpgradeSucceeded, "kubelet v1.37.2 installed and healthy"
			f.status(m.Name, upgradeStep(up, nil))
			up.State, up.Message = metalv1.UpgradeVerified, "Node "+m.Name+" runs kubelet v1.37.2, Ready, uncordoned"
			f.status(m.Name, func(s *metalv1.MachineStatus) {
				s.Phase, s.Version, s.Upgrade = metalv1.MachineRunning, "v1.37.2", &up
				meta.RemoveStatusCondition(&s.Conditions, metalv1.ConditionUpdating)
				setCond(metalv1.ConditionUpToDate, metav1.ConditionTrue, "UpToDate", "")(s)
			})
		},
		wantOut: []string{
			"machine/%s patched: spec.version v1.36.4 -> v1.37.2",
			"Updating            UpToDate=False InPlaceUpdating: Node runs v1.36.4, spec asks for v1.37.2",
			"Updating            Updating=True InPlaceUpdating: draining Node %s: 3 pods left",
			"upgrade v1.36.4 -> v1.37.2: Draining (3 pods left): draining Node %s: 3 pods left",
			"upgrade v1.36.4 -> v1.37.2: Applying: plan published; waiting for the agent",
			"event Normal PlanPublished: Node %s drained; plan %p (kubelet v1.37.2) published to the agent",
			"Applying: agent: Downloading", "Applying: agent: Restarting",
			"Succeeded: kubelet v1.37.2 installed and healthy",
			"Running             node reports kubelet v1.37.2", "UpToDate=True UpToDate", "Verified: Node %s runs kubelet v1.37.2",
			"machine/%s runs kubelet v1.37.2 after", "node %s, host host-%s, kubelet v1.37.2",
		},
	}, {
		name: "failed", from: "v1.36.4", to: "v1.37.2",
		play: func(m *metalv1.Machine, plan string, _ *lockedBuffer) {
			up := metalv1.UpgradeStatus{PlanID: plan, FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeApplying, Message: "plan published; waiting for the agent",
				AgentResult: &metalv1.AgentUpgradeResult{PlanID: plan, Outcome: metalv1.AgentUpgradeInProgress, Message: "Downloading", ReportedAt: metav1.Now()}}
			f.status(m.Name, upgradeStep(up, nil))
			up.State, up.Message = metalv1.UpgradeFailed, "kubelet v1.37.2: sha256 mismatch; the previous kubelet was restored"
			f.status(m.Name, upgradeStep(up, setCond(metalv1.ConditionUpdating, metav1.ConditionTrue, metalv1.ReasonInPlaceUpdateFail,
				"kubelet v1.36.4 -> v1.37.2 failed: "+up.Message+"; the Node stays cordoned")))
		},
		wantErr: []string{
			"the in-place upgrade of machine %s from v1.36.4 to v1.37.2 failed (InPlaceUpdateFailed, plan %p): kubelet v1.37.2: sha256 mismatch; the previous kubelet was restored; the Node stays cordoned",
			"retry it with: kubectl annotate machine %s metal.anvil.dev/retry-upgrade=%p -n %n --overwrite",
		},
		wantOut: []string{"Applying: agent: Downloading", "Updating=True InPlaceUpdateFailed", "Failed: kubelet v1.37.2: sha256 mismatch"},
	}, {
		name: "rejected", from: "v1.37.2", to: "v1.36.4",
		play: func(m *metalv1.Machine, plan string, _ *lockedBuffer) {
			msg := "v1.36.4 is older than the running v1.37.2; set spec.allowDowngrade to downgrade"
			// Recorded before the status: the CLI's last read of Events, as it ends, has it.
			f.event(m, "Machine", corev1.EventTypeWarning, machine.ReasonUpgradeRejected, "kubelet v1.37.2 -> v1.36.4 rejected: "+msg)
			f.status(m.Name, func(s *metalv1.MachineStatus) {
				s.Upgrade = &metalv1.UpgradeStatus{PlanID: plan, FromVersion: "v1.37.2", Version: "v1.36.4", State: metalv1.UpgradeRejected, Message: msg}
				meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: metalv1.ConditionUpToDate, Status: metav1.ConditionFalse,
					Reason: machine.ReasonUpgradeRejected, Message: "version v1.36.4 rejected: " + msg, ObservedGeneration: m.Generation + 1})
			})
		},
		wantErr: []string{
			"the upgrade of machine %s to v1.36.4 was rejected (UpgradeRejected): version v1.36.4 rejected: v1.36.4 is older than the running v1.37.2",
			"nothing was touched, its Node still runs v1.37.2", "anvil machines upgrade %s --version v1.37.2 -n %n",
		},
		wantOut:  []string{"UpToDate=False UpgradeRejected: version v1.36.4 rejected", "upgrade v1.37.2 -> v1.36.4: Rejected"},
		wantAlso: []string{"event Warning UpgradeRejected: kubelet v1.37.2 -> v1.36.4 rejected: v1.36.4 is older"},
	}, {
		name: "timeout", from: "v1.36.4", to: "v1.37.2", flags: []string{"--timeout", "2s"},
		play: func(*metalv1.Machine, string, *lockedBuffer) {}, // no controller: nothing happens
		wantErr: []string{"timed out after 2s waiting for machine %s to run kubelet v1.37.2",
			"it is Running, its Node on kubelet v1.36.4, and no upgrade to v1.37.2 has started (is anvil serve running?)",
			"anvil machines upgrade %s --version v1.37.2 --watch -n %n follows it again"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			name := "up-" + tc.name
			m := f.running(name, tc.from, nil)
			plan := string(m.UID)[:8] + "-" + tc.to + "-1"
			// An Event of an earlier upgrade is not shown.
			f.event(m, "Machine", corev1.EventTypeNormal, "Upgraded", "an earlier upgrade")
			args := append([]string{"machines", "upgrade", name, "--version", tc.to, "--watch", "--poll-interval", "200ms"}, tc.flags...)
			out, errc := f.start(context.Background(), args...)
			f.eventually("spec.version to be patched", func() bool { cur, err := f.get(name); return err == nil && cur.Spec.Version == tc.to })
			m, _ = f.get(name)
			tc.play(m, plan, out)
			err := f.result(errc, out)
			t.Logf("output:\n%s\nerror: %v", out, err)
			expand := func(s string) string {
				return strings.NewReplacer("%s", name, "%p", plan, "%n", f.ns).Replace(s)
			}
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("upgrade --watch: %v\n%s", err, out)
			case tc.wantErr != nil && err == nil:
				t.Fatalf("upgrade --watch succeeded, want an error:\n%s", out)
			}
			for _, w := range tc.wantErr {
				if w = expand(w); !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			var wants []string
			for _, w := range tc.wantOut {
				wants = append(wants, expand(w))
			}
			wantInOrder(t, out.String(), wants...)
			for _, w := range tc.wantAlso {
				if w = expand(w); !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if strings.Contains(out.String(), "an earlier upgrade") {
				t.Errorf("an Event from before the upgrade was shown:\n%s", out)
			}
			if strings.ContainsAny(out.String(), "\r\033") {
				t.Errorf("output to a non-terminal has control characters: %q", out)
			}
		})
	}
}

func TestMachineSetsUpgradeWatch(t *testing.T) {
	f := newMachinesFixture(t)
	for _, tc := range []struct {
		name    string
		flags   []string
		play    func(ms *metalv1.MachineSet, a, b *metalv1.Machine, out *lockedBuffer)
		wantErr []string
		wantOut [][]string // each group in its order: a Machine's lines, the set's lines
	}{{
		name: "paused",
		play: func(ms *metalv1.MachineSet, a, _ *metalv1.Machine, out *lockedBuffer) {
			plan := string(a.UID)[:8] + "-v1.37.2-1"
			f.specVersion(a.Name, "v1.37.2")
			f.event(ms, "MachineSet", corev1.EventTypeNormal, machine.ReasonRolloutStep, "1 Machine to kubelet v1.37.2 in place: "+a.Name+" (v1.36.4)")
			up := metalv1.UpgradeStatus{PlanID: plan, FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeDraining, PodsLeft: 2, Message: "draining"}
			f.status(a.Name, upgradeStep(up, nil))
			f.setStatus(ms.Name, func(s *metalv1.MachineSet) { s.Status.Replicas, s.Status.UpdatingReplicas = 2, 1 })
			// The set's status is read every poll interval: wait, or the next change may hide this one.
			f.eventually("the CLI to show 1 updating", func() bool { return strings.Contains(out.String(), "1 updating") })
			up.State, up.PodsLeft, up.Message = metalv1.UpgradeFailed, 0, "the Node did not drain within 10m0s (2 pods left)"
			f.status(a.Name, upgradeStep(up, nil))
			f.setStatus(ms.Name, func(s *metalv1.MachineSet) {
				meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: machine.ConditionRolloutPaused, Status: metav1.ConditionTrue,
					Reason: metalv1.ReasonInPlaceUpdateFail, ObservedGeneration: s.Generation,
					Message: "in-place upgrade to v1.37.2 failed on " + a.Name + " (maxFailures 1); retry or replace those Machines"})
			})
		},
		wantErr: []string{
			"the rollout of machineset %s to v1.37.2 paused (InPlaceUpdateFailed): in-place upgrade to v1.37.2 failed on %s-a (maxFailures 1)",
			"anvil machinesets resume %s -n %n", "anvil machinesets resume %s --retry-failed -n %n",
		},
		wantOut: [][]string{{
			"%s-a  Updating            upgrade v1.36.4 -> v1.37.2: Draining (2 pods left): draining",
			"%s-a  Updating            upgrade v1.36.4 -> v1.37.2: Failed: the Node did not drain within 10m0s",
		}, {
			"machineset/%s patched: spec.template.spec.version v1.36.4 -> v1.37.2; its 2 Machines are upgraded in place, 1 at a time",
			"machineset/%s  2 Machines: 0 updated, 0 updating, 0 failed",
			"machineset/%s  2 Machines: 0 updated, 1 updating, 0 failed",
			"machineset/%s  RolloutPaused=True InPlaceUpdateFailed: in-place upgrade to v1.37.2 failed on %s-a",
		}, {
			"event Normal RolloutStep: 1 Machine to kubelet v1.37.2 in place: %s-a (v1.36.4)",
		}},
	}, {
		name: "done",
		play: func(ms *metalv1.MachineSet, a, b *metalv1.Machine, _ *lockedBuffer) {
			for _, m := range []*metalv1.Machine{a, b} {
				f.specVersion(m.Name, "v1.37.2")
				up := metalv1.UpgradeStatus{PlanID: string(m.UID)[:8] + "-v1.37.2-1", FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeApplying}
				f.status(m.Name, upgradeStep(up, nil))
				up.State = metalv1.UpgradeVerified
				f.status(m.Name, func(s *metalv1.MachineStatus) { s.Phase, s.Version, s.Upgrade = metalv1.MachineRunning, "v1.37.2", &up })
			}
			f.setStatus(ms.Name, func(s *metalv1.MachineSet) {
				s.Status.Replicas, s.Status.UpToDateReplicas = 2, 2
				meta.RemoveStatusCondition(&s.Status.Conditions, machine.ConditionRolloutPaused)
			})
		},
		wantOut: [][]string{
			{"%s-a  Running             node reports kubelet v1.37.2", "upgrade v1.36.4 -> v1.37.2: Verified", "machineset/%s: all 2 Machines"},
			{"%s-b  Running             node reports kubelet v1.37.2", "upgrade v1.36.4 -> v1.37.2: Verified", "machineset/%s: all 2 Machines"},
			{"machineset/%s  2 Machines: 0 updated", "machineset/%s: all 2 Machines run kubelet v1.37.2 and are Ready after"},
		},
	}, {
		name: "timeout", flags: []string{"--timeout", "5s"},
		play: func(ms *metalv1.MachineSet, a, _ *metalv1.Machine, _ *lockedBuffer) {
			f.specVersion(a.Name, "v1.37.2")
			f.status(a.Name, upgradeStep(metalv1.UpgradeStatus{PlanID: "p", FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeDraining, PodsLeft: 4}, nil))
		},
		wantErr: []string{"timed out after 5s waiting for machineset %s to run kubelet v1.37.2: 0 of 2 Machines run it; " +
			"waiting for %s-a (upgrade Draining, 4 pods left), %s-b (waiting its turn, on v1.36.4)",
			"anvil machinesets upgrade %s --version v1.37.2 --watch -n %n follows it again"},
		wantOut: [][]string{{"%s-a  Updating            upgrade v1.36.4 -> v1.37.2: Draining (4 pods left)"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			name := "ms-" + tc.name
			ms := f.machineSet(name, "v1.36.4", 2)
			a, b := f.running(name+"-a", "v1.36.4", ms), f.running(name+"-b", "v1.36.4", ms)
			// Left from an earlier rollout: it must not end this one.
			f.setStatus(name, func(s *metalv1.MachineSet) {
				s.Status.Replicas = 2
				meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: machine.ConditionRolloutPaused, Status: metav1.ConditionTrue,
					Reason: metalv1.ReasonInPlaceUpdateFail, Message: "an earlier rollout", ObservedGeneration: s.Generation})
			})
			args := append([]string{"machinesets", "upgrade", name, "--version", "v1.37.2", "--watch", "--poll-interval", "200ms"}, tc.flags...)
			out, errc := f.start(context.Background(), args...)
			f.eventually("the template version to be patched", func() bool { return f.getSet(name).Spec.Template.Spec.Version == "v1.37.2" })
			f.eventually("the CLI to report the set's counts", func() bool { return strings.Contains(out.String(), "2 Machines: 0 updated") })
			tc.play(f.getSet(name), a, b, out)
			err := f.result(errc, out)
			t.Logf("output:\n%s\nerror: %v", out, err)
			expand := func(s string) string { return strings.NewReplacer("%s", name, "%n", f.ns).Replace(s) }
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("machinesets upgrade --watch: %v\n%s", err, out)
			case tc.wantErr != nil && err == nil:
				t.Fatalf("machinesets upgrade --watch succeeded, want an error:\n%s", out)
			}
			for _, w := range tc.wantErr {
				if w = expand(w); !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			for _, group := range tc.wantOut {
				var wants []string
				for _, w := range group {
					wants = append(wants, expand(w))
				}
				wantInOrder(t, out.String(), wants...)
			}
			if strings.Contains(fmt.Sprint(err), "an earlier rollout") {
				t.Errorf("a RolloutPaused condition of an earlier generation ended the watch: %v", err)
			}
		})
	}
}

func TestMachineSetsResume(t *testing.T) {
	f := newMachinesFixture(t)
	ms := f.machineSet("ms1", "v1.37.2", 3)
	fail := func(m *metalv1.Machine) string {
		plan := string(m.UID)[:8] + "-v1.37.2-1"
		f.specVersion(m.Name, "v1.37.2")
		f.status(m.Name, upgradeStep(metalv1.UpgradeStatus{PlanID: plan, FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeFailed,
			Message: "agent: kubelet did not become healthy"}, nil))
		return plan
	}
	planA, planB := fail(f.running("ms1-a", "v1.36.4", ms)), fail(f.running("ms1-b", "v1.36.4", ms))
	f.running("ms1-c", "v1.37.2", ms)
	// Labelled like a member, but not controlled by the set: not its business.
	fail(f.running("stray", "v1.36.4", nil))
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := f.getSet("ms1")
		cur.Spec.Paused = true
		cur.Annotations = map[string]string{machine.AnnotationResumeRollout: "gone-v1.37.2-1"}
		return f.c.Update(context.Background(), cur)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := f.get("stray")
		if err != nil {
			return err
		}
		m.Labels = map[string]string{metalv1.LabelMachineSet: "ms1"}
		return f.c.Update(context.Background(), m)
	}); err != nil {
		t.Fatal(err)
	}

	out, err := f.run("machinesets", "resume", "ms1")
	t.Logf("resume:\n%s", out)
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	wantPlans := strings.Join(slices.Sorted(slices.Values([]string{planA, planB})), ",")
	got := f.getSet("ms1")
	if v := got.Annotations[machine.AnnotationResumeRollout]; v != wantPlans || got.Spec.Paused {
		t.Fatalf("after resume: annotation %q (want %q, the stale ID dropped), paused %v", v, wantPlans, got.Spec.Paused)
	}
	wantInOrder(t, out, "machine/ms1-a: the rollout goes on without it", "plan "+planA+": agent: kubelet did not become healthy",
		"kubectl annotate machine ms1-a metal.anvil.dev/retry-upgrade="+planA,
		"machine/ms1-b: the rollout goes on without it", "machineset/ms1: annotation "+machine.AnnotationResumeRollout+"="+wantPlans,
		"machineset/ms1: spec.paused cleared")
	if strings.Contains(out, "stray") || strings.Contains(out, "ms1-c") {
		t.Errorf("resume touched a Machine that is not a failed member:\n%s", out)
	}

	out, err = f.run("machinesets", "resume", "ms1")
	if err != nil || !strings.Contains(out, "machine/ms1-a: the rollout already goes on without it") || strings.Contains(out, "annotation") {
		t.Fatalf("second resume: %v\n%s", err, out)
	}

	out, err = f.run("machinesets", "resume", "ms1", "--retry-failed")
	t.Logf("resume --retry-failed:\n%s", out)
	if err != nil {
		t.Fatalf("resume --retry-failed: %v\n%s", err, out)
	}
	wantInOrder(t, out, "machine/ms1-a: retrying the failed upgrade v1.36.4 -> v1.37.2 (plan "+planA, "machine/ms1-b: retrying")
	for n, want := range map[string]string{"ms1-a": planA, "ms1-b": planB, "ms1-c": "", "stray": ""} {
		m, err := f.get(n)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Annotations[machine.AnnotationRetryUpgrade]; got != want {
			t.Errorf("machine %s: retry annotation %q, want %q", n, got, want)
		}
	}
	if got := f.getSet("ms1").Annotations[machine.AnnotationResumeRollout]; got != wantPlans {
		t.Errorf("--retry-failed changed the resume annotation to %q", got)
	}

	// A set with nothing paused or failed.
	f.machineSet("calm", "v1.37.2", 1)
	f.running("calm-a", "v1.37.2", f.getSet("calm"))
	out, err = f.run("machinesets", "resume", "calm")
	if err != nil || !strings.Contains(out, "machineset/calm: nothing to resume: the rollout is not paused and no Machine's upgrade failed") {
		t.Fatalf("resume of a calm set: %v\n%s", err, out)
	}
	if _, err := f.run("machinesets", "resume", "ghost"); err == nil || !strings.Contains(err.Error(), "machineset ghost not found in namespace "+f.ns) {
		t.Fatalf("resume of a missing set: %v", err)
	}
}

func TestMachinesUpgradeWatchInterrupted(t *testing.T) {
	f := newMachinesFixture(t)
	f.running("m1", "v1.36.4", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errc := f.start(ctx, "machines", "upgrade", "m1", "--version", "v1.37.2", "--watch")
	f.eventually("spec.version to be patched", func() bool { m, err := f.get("m1"); return err == nil && m.Spec.Version == "v1.37.2" })
	f.status("m1", upgradeStep(metalv1.UpgradeStatus{PlanID: "p1", FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeDraining, PodsLeft: 3,
		Message: "draining Node m1: 3 pods left"}, nil))
	f.eventually("the CLI to show Draining", func() bool { return strings.Contains(out.String(), "Draining (3 pods left)") })
	cancel() // Ctrl-C
	err := f.result(errc, out)
	if err == nil {
		t.Fatalf("interrupted watch returned no error:\n%s", out)
	}
	for _, w := range []string{"stopped watching (interrupted); the upgrade of machine m1 goes on", "in upgrade state Draining (3 pods left): draining Node m1: 3 pods left"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

func TestMachineSetsUpgradeValidation(t *testing.T) {
	f := newMachinesFixture(t)
	ms := f.machineSet("ms1", "v1.36.4", 1)
	f.running("ms1-a", "v1.36.4", ms)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no version", []string{"ms1"}, "--version is required"},
		{"bad version", []string{"ms1", "--version", "1.37"}, `invalid --version "1.37"`},
		{"no such set", []string{"ghost", "--version", "v1.37.2"}, "machineset ghost not found in namespace " + f.ns},
		{"kubelet not in class", []string{"ms1", "--version", "v1.39.1"}, "MachineClass workers has no kubelet v1.39.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.run(append([]string{"machinesets", "upgrade"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("upgrade %v: error %v, want %q\n%s", tc.args, err, tc.want, out)
			}
		})
	}
	if v := f.getSet("ms1").Spec.Template.Spec.Version; v != "v1.36.4" {
		t.Fatalf("a refused upgrade changed the template to %s", v)
	}

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := f.getSet("ms1")
		cur.Spec.Paused = true
		return f.c.Update(context.Background(), cur)
	})
	if err != nil {
		t.Fatal(err)
	}
	before := f.getSet("ms1")
	out, err := f.run("machinesets", "upgrade", "ms1", "--version", "v1.37.2")
	if err != nil {
		t.Fatalf("upgrade: %v\n%s", err, out)
	}
	wantInOrder(t, out, "machineset/ms1 patched: spec.template.spec.version v1.36.4 -> v1.37.2; its 1 Machines are upgraded in place",
		"note: machineset ms1 has spec.paused set; the rollout waits for: anvil machinesets resume ms1 -n "+f.ns,
		"follow it with: anvil machinesets upgrade ms1 --version v1.37.2 --watch -n "+f.ns)
	after := f.getSet("ms1")
	want := before.Spec.DeepCopy()
	want.Template.Spec.Version = "v1.37.2"
	if !apiequality.Semantic.DeepEqual(after.Spec, *want) {
		t.Fatalf("spec after upgrade = %+v, want %+v", after.Spec, *want)
	}
	if m, _ := f.get("ms1-a"); m.Spec.Version != "v1.36.4" {
		t.Errorf("the CLI patched a Machine itself (%s); that is the rollout's job", m.Spec.Version)
	}
}
