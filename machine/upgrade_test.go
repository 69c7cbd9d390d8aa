package machine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/machine"
)

const oldVersion = "v1.36.4"

// addUpgradableClass is the example class with kubelets for the old and
// the new version.
func (e *machineEnv) addUpgradableClass(t *testing.T) {
	t.Helper()
	mc := loadExample(t, "machineclass-flatcar.yaml")
	mc.Namespace = e.ns
	wipe := false
	mc.Spec.Wipe = &wipe
	old := mc.Spec.Kubelets[0]
	old.Version = oldVersion
	old.SHA256 = strings.Repeat("1", 64)
	mc.Spec.Kubelets = append(mc.Spec.Kubelets, old)
	mustCreate(t, e.c, mc)
	waitConfigValid(t, e.c, client.ObjectKeyFromObject(mc), metav1.ConditionTrue)
}

// runningMachine takes a Machine through provisioning to Running with a
// kubelet of the old version.
func (e *machineEnv) runningMachine(t *testing.T, m *metalv1.Machine) *corev1.Node {
	t.Helper()
	m = e.waitPhase(t, m.Name, metalv1.MachineProvisioning, 60*time.Second)
	e.playHostBoot(t, m)
	m = e.waitPhase(t, m.Name, metalv1.MachineJoining, 30*time.Second)
	n := e.playKubeletVersion(t, m, true, oldVersion)
	e.waitPhase(t, m.Name, metalv1.MachineRunning, 30*time.Second)
	return n
}

func (e *machineEnv) setVersion(t *testing.T, name, version string) {
	t.Helper()
	m, err := e.machine(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.Version = version
	if err := e.c.Patch(context.Background(), m, patch); err != nil {
		t.Fatal(err)
	}
}

// playAgent answers the published plan of a Machine as the agent API
// records it (status.upgrade.agentResult; the controller moves the state): the kubelet restarts on the new version (the Node says so)
// and the plan succeeds, or it fails and the old kubelet stays.
func (e *machineEnv) playAgent(ctx context.Context, m *metalv1.Machine, ok bool, reason string) error {
	up := m.Status.Upgrade
	if ok {
		n := &corev1.Node{}
		if err := e.c.Get(ctx, types.NamespacedName{Name: m.Status.NodeRef.Name}, n); err != nil {
			return err
		}
		n.Status.NodeInfo.KubeletVersion = up.Version
		if err := e.c.Status().Update(ctx, n); err != nil {
			return err
		}
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := e.machine(ctx, m.Name)
		if err != nil {
			return err
		}
		up := m.Status.Upgrade
		if up == nil || up.State != metalv1.UpgradeApplying {
			return nil // as the agent API: only a published plan takes a result
		}
		res := metalv1.AgentUpgradeResult{PlanID: up.PlanID, Outcome: metalv1.AgentUpgradeSucceeded, Message: "kubelet healthy", ReportedAt: metav1.Now()}
		if !ok {
			res.Outcome, res.Message = metalv1.AgentUpgradeFailed, reason
		}
		_, err = statusapply.AgentUpgrade.Apply(ctx, e.c, statusapply.Request{Live: m, GVK: statusapply.MachineGVK, ResourceVersion: m.ResourceVersion,
			Status: map[string]any{"upgrade": map[string]any{"agentResult": res}}})
		return err
	})
}

func (e *machineEnv) node(ctx context.Context, name string) *corev1.Node {
	n := &corev1.Node{}
	_ = e.c.Get(ctx, types.NamespacedName{Name: name}, n)
	return n
}

// TestInPlaceUpgrade: a version patch cordons and drains the Node,
// publishes a plan, and once the Node reports the new version it is
// uncordoned and the Machine UpToDate. A failed plan leaves the Node
// cordoned with the agent's reason; a version that breaks the skew policy
// is rejected without touching anything.
func TestInPlaceUpgrade(t *testing.T) {
	e := newMachineEnv(t, 1, fastOptions())
	ctx := context.Background()
	e.addUpgradableClass(t)
	e.addHost(t, 0, nil)
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: e.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"}, Version: oldVersion}}
	mustCreate(t, e.c, m)
	n := e.runningMachine(t, m)

	// Rejected: skips a minor version.
	e.setVersion(t, "m1", "v1.38.0")
	eventually(t, 30*time.Second, "v1.38.0 rejected", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpToDate)
		return c != nil && c.Reason == machine.ReasonUpgradeRejected && strings.Contains(c.Message, "skips minor versions"), describe(m)
	})
	if e.node(ctx, n.Name).Spec.Unschedulable {
		t.Fatal("a rejected upgrade cordoned the Node")
	}

	// Accepted: v1.36.4 -> v1.37.2.
	e.setVersion(t, "m1", kubeletVersion)
	eventually(t, 30*time.Second, "plan published after cordon and drain", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		up := m.Status.Upgrade
		return up != nil && up.State == metalv1.UpgradeApplying && up.Version == kubeletVersion && m.Status.Phase == metalv1.MachineUpdating, describe(m)
	})
	if !e.node(ctx, n.Name).Spec.Unschedulable {
		t.Fatal("the Node is not cordoned while its kubelet is replaced")
	}
	// Every write of the Machine from here is a watch event.
	writes := e.watchMachine(t, m)
	if err := e.playAgent(ctx, m, true, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "upgrade verified and Node uncordoned", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		return m.Status.Upgrade.State == metalv1.UpgradeVerified && m.Status.Version == kubeletVersion &&
			meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionUpToDate) && m.Status.Phase == metalv1.MachineRunning &&
			!e.node(ctx, n.Name).Spec.Unschedulable, describe(m)
	})
	// The Node reported the new kubelet before the agent's outcome: the
	// Machine's version stayed the old one until the upgrade was verified,
	// and the outcome was taken and verified in one write.
	for i, w := range writes.until(t, func(w *metalv1.Machine) bool { return w.Status.Upgrade.State == metalv1.UpgradeVerified }) {
		up := w.Status.Upgrade
		switch {
		case up.State != metalv1.UpgradeVerified && w.Status.Version != oldVersion:
			t.Errorf("write %d: status.version %s while the upgrade is %s, want %s until Verified", i, w.Status.Version, up.State, oldVersion)
		case up.State == metalv1.UpgradeSucceeded:
			t.Errorf("write %d: state Succeeded written on its own; the outcome and its verification are one write", i)
		}
	}

	// A failed plan (allowDowngrade to go back): cordoned, with the reason.
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.Version, m.Spec.AllowDowngrade = oldVersion, true
	if err := e.c.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "downgrade plan published", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		return m.Status.Upgrade.State == metalv1.UpgradeApplying && m.Status.Upgrade.Version == oldVersion, describe(m)
	})
	if err := e.playAgent(ctx, m, false, "sha256 mismatch: got 3f9a..., want 1111...; rolled back to v1.37.2"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "InPlaceUpdateFailed with the agent's reason", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpdating)
		return c != nil && c.Reason == metalv1.ReasonInPlaceUpdateFail && strings.Contains(c.Message, "sha256 mismatch"), describe(m)
	})
	if !e.node(ctx, n.Name).Spec.Unschedulable {
		t.Fatal("after a failed upgrade the Node must stay cordoned (uncordonOnFailure is not set)")
	}
	eventually(t, 30*time.Second, "a Warning Event InPlaceUpdateFailed with the agent's reason", func(ctx context.Context) (bool, string) {
		var l eventsv1.EventList
		if err := e.c.List(ctx, &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range l.Items {
			if ev.Regarding.Kind == "Machine" && ev.Regarding.Name == "m1" {
				if ev.Type == corev1.EventTypeWarning && ev.Reason == metalv1.ReasonInPlaceUpdateFail && strings.Contains(ev.Note, "sha256 mismatch") {
					return true, ""
				}
				seen = append(seen, ev.Type+"/"+ev.Reason)
			}
		}
		return false, fmt.Sprintf("events of m1: %v", seen)
	})
}

// machineWrites are the versions of a Machine its watch showed.
type machineWrites struct {
	w watch.Interface
}

// watchMachine watches m from its resourceVersion.
func (e *machineEnv) watchMachine(t *testing.T, m *metalv1.Machine) machineWrites {
	t.Helper()
	env := apiServer(t)
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &metalv1.MachineList{}, client.InNamespace(m.Namespace),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: m.ResourceVersion, FieldSelector: "metadata.name=" + m.Name}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return machineWrites{w: w}
}

// until returns the writes up to and including the first that done accepts.
func (mw machineWrites) until(t *testing.T, done func(*metalv1.Machine) bool) []*metalv1.Machine {
	t.Helper()
	var out []*metalv1.Machine
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-mw.w.ResultChan():
			if !ok || ev.Type != watch.Modified {
				t.Fatalf("watch: event %v (open %v) after %d writes", ev.Type, ok, len(out))
			}
			m := ev.Object.(*metalv1.Machine)
			out = append(out, m)
			if done(m) {
				return out
			}
		case <-timeout:
			t.Fatalf("no such write among %d", len(out))
		}
	}
}

// TestRejectedUpgradeRetried: a version the class has no kubelet for is
// rejected and nothing is touched; it stays rejected until the admin,
// having added the kubelet, retries the plan with the annotation the
// condition names; then it is validated again and runs.
func TestRejectedUpgradeRetried(t *testing.T) {
	e := newMachineEnv(t, 1, fastOptions())
	ctx := context.Background()
	e.addUpgradableClass(t)
	e.addHost(t, 0, nil)
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: e.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"}, Version: oldVersion}}
	mustCreate(t, e.c, m)
	n := e.runningMachine(t, m)

	const missing = "v1.37.1" // the skew allows it; the class has no kubelet for it
	e.setVersion(t, "m1", missing)
	var plan string
	eventually(t, 30*time.Second, missing+" rejected, naming the retry", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpToDate)
		up := m.Status.Upgrade
		if up == nil || up.State != metalv1.UpgradeRejected || c == nil {
			return false, describe(m)
		}
		plan = up.PlanID
		return c.Reason == machine.ReasonUpgradeRejected && strings.Contains(c.Message, "no kubelet artifact") &&
			strings.Contains(c.Message, machine.AnnotationRetryUpgrade+"="+plan), describe(m)
	})

	// The admin adds the kubelet to the class, then retries the plan.
	mc := &metalv1.MachineClass{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "flatcar-worker"}, mc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	k := mc.Spec.Kubelets[0]
	k.Version, k.SHA256 = missing, strings.Repeat("2", 64)
	mc.Spec.Kubelets = append(mc.Spec.Kubelets, k)
	if err := e.c.Patch(ctx, mc, patch); err != nil {
		t.Fatal(err)
	}
	m, _ = e.machine(ctx, "m1")
	mp := client.MergeFrom(m.DeepCopy())
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[machine.AnnotationRetryUpgrade] = plan
	if err := e.c.Patch(ctx, m, mp); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the retried plan published after cordon and drain", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		up := m.Status.Upgrade
		return up != nil && up.State == metalv1.UpgradeApplying && up.Version == missing && up.PlanID != plan, describe(m)
	})
	if !e.node(ctx, n.Name).Spec.Unschedulable {
		t.Fatal("the Node is not cordoned while its kubelet is replaced")
	}
}

// TestMachineSetRolloutMaxUnavailable: 3 Machines, maxUnavailable 1: all
// reach the new version and never more than one Node is cordoned at once.
func TestMachineSetRolloutMaxUnavailable(t *testing.T) {
	e := newMachineEnv(t, 3, fastOptions())
	ctx := context.Background()
	e.addUpgradableClass(t)
	for i := range 3 {
		e.addHost(t, i, map[string]string{"pool": "w"})
		e.waitHostState(t, fmt.Sprintf("host-%d", i), metalv1.HostAvailable)
	}
	three := int32(3)
	one := intstr.FromInt32(1)
	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: e.ns}, Spec: metalv1.MachineSetSpec{
		Replicas: &three, Strategy: metalv1.RolloutStrategy{MaxUnavailable: &one},
		Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"},
			HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "w"}}, Version: oldVersion}},
	}}
	mustCreate(t, e.c, ms)
	var nodes []string
	for i := range 3 {
		m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w-%d", i)}}
		nodes = append(nodes, e.runningMachine(t, m).Name)
	}
	// Watch the cordons while the rollout runs, and play every agent.
	var mu sync.Mutex
	maxCordoned := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			cordoned := 0
			for _, n := range nodes {
				if e.node(ctx, n).Spec.Unschedulable {
					cordoned++
				}
			}
			mu.Lock()
			maxCordoned = max(maxCordoned, cordoned)
			mu.Unlock()
			var list metalv1.MachineList
			if err := e.c.List(ctx, &list, client.InNamespace(e.ns)); err == nil {
				for i := range list.Items {
					if up := list.Items[i].Status.Upgrade; up != nil && up.State == metalv1.UpgradeApplying {
						_ = e.playAgent(ctx, &list.Items[i], true, "")
					}
				}
			}
		}
	}()
	defer func() { close(stop); <-done }()
	patch := client.MergeFrom(ms.DeepCopy())
	ms.Spec.Template.Spec.Version = kubeletVersion
	if err := e.c.Patch(ctx, ms, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 120*time.Second, "all 3 Machines on the new version and up to date", func(ctx context.Context) (bool, string) {
		got := &metalv1.MachineSet{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(ms), got); err != nil {
			return false, err.Error()
		}
		return got.Status.ObservedGeneration == got.Generation && got.Status.UpToDateReplicas == 3 && got.Status.ReadyReplicas == 3, fmt.Sprintf("%+v", got.Status)
	})
	mu.Lock()
	defer mu.Unlock()
	if maxCordoned != 1 {
		t.Fatalf("at most %d Nodes were cordoned at once during the rollout, want exactly 1 (maxUnavailable)", maxCordoned)
	}
	// One Event per step on the set, naming its Machine: three steps.
	eventually(t, 30*time.Second, "a RolloutStep Event per Machine's step", func(ctx context.Context) (bool, string) {
		var l eventsv1.EventList
		if err := e.c.List(ctx, &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		var steps []string
		for _, ev := range l.Items {
			if ev.Regarding.Kind == "MachineSet" && ev.Regarding.Name == "w" && ev.Reason == machine.ReasonRolloutStep {
				steps = append(steps, ev.Note)
			}
		}
		slices.Sort(steps)
		want := []string{
			"1 Machine to kubelet " + kubeletVersion + " in place: w-0 (" + oldVersion + ")",
			"1 Machine to kubelet " + kubeletVersion + " in place: w-1 (" + oldVersion + ")",
			"1 Machine to kubelet " + kubeletVersion + " in place: w-2 (" + oldVersion + ")",
		}
		return slices.Equal(steps, want), fmt.Sprintf("RolloutStep Events %q, want %q", steps, want)
	})
}

// A failed upgrade pauses the set's rollout (maxFailures 1), counts as
// failed, and `resume` (the annotation naming the plan) lets it go on.
func TestMachineSetRolloutPausesOnFailureAndResumes(t *testing.T) {
	e := newMachineEnv(t, 2, fastOptions())
	ctx := context.Background()
	e.addUpgradableClass(t)
	for i := range 2 {
		e.addHost(t, i, map[string]string{"pool": "f"})
		e.waitHostState(t, fmt.Sprintf("host-%d", i), metalv1.HostAvailable)
	}
	two := int32(2)
	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "f", Namespace: e.ns}, Spec: metalv1.MachineSetSpec{
		Replicas: &two,
		Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"},
			HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "f"}}, Version: oldVersion}},
	}}
	mustCreate(t, e.c, ms)
	for i := range 2 {
		e.runningMachine(t, &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("f-%d", i)}})
	}
	patch := client.MergeFrom(ms.DeepCopy())
	ms.Spec.Template.Spec.Version = kubeletVersion
	if err := e.c.Patch(ctx, ms, patch); err != nil {
		t.Fatal(err)
	}
	// The first Machine to get a plan fails it; nothing else may start.
	var failedName, failedPlan string
	eventually(t, 60*time.Second, "a Machine applying the plan", func(ctx context.Context) (bool, string) {
		var list metalv1.MachineList
		if err := e.c.List(ctx, &list, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		for i := range list.Items {
			m := &list.Items[i]
			if up := m.Status.Upgrade; up != nil && up.State == metalv1.UpgradeApplying {
				if err := e.playAgent(ctx, m, false, "kubelet health check failed: not Ready within 2m"); err != nil {
					return false, err.Error()
				}
				failedName, failedPlan = m.Name, up.PlanID
				return true, ""
			}
		}
		return false, "no Machine applying yet"
	})
	setStatus := func(ctx context.Context) (*metalv1.MachineSet, string) {
		got := &metalv1.MachineSet{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(ms), got); err != nil {
			return nil, err.Error()
		}
		return got, fmt.Sprintf("%+v", got.Status)
	}
	eventually(t, 60*time.Second, "the rollout paused naming "+failedName+", one failed replica", func(ctx context.Context) (bool, string) {
		got, why := setStatus(ctx)
		if got == nil {
			return false, why
		}
		c := meta.FindStatusCondition(got.Status.Conditions, machine.ConditionRolloutPaused)
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, failedName) &&
			got.Status.FailedReplicas == 1 && got.Status.UpdatingReplicas == 0, why
	})
	var other metalv1.Machine
	otherName := "f-0"
	if failedName == otherName {
		otherName = "f-1"
	}
	if err := e.c.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: otherName}, &other); err != nil {
		t.Fatal(err)
	}
	if other.Spec.Version != oldVersion || other.Status.Upgrade != nil {
		t.Fatalf("Machine %s was touched while the rollout was paused: version %s, upgrade %+v", otherName, other.Spec.Version, other.Status.Upgrade)
	}
	// Resume past the failure: the other Machine upgrades.
	patch = client.MergeFrom(ms.DeepCopy())
	ms.Annotations = map[string]string{machine.AnnotationResumeRollout: failedPlan}
	if err := e.c.Patch(ctx, ms, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, otherName+" upgraded after resume", func(ctx context.Context) (bool, string) {
		m := &metalv1.Machine{}
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: otherName}, m); err != nil {
			return false, err.Error()
		}
		if up := m.Status.Upgrade; up != nil && up.State == metalv1.UpgradeApplying {
			if err := e.playAgent(ctx, m, true, ""); err != nil {
				return false, err.Error()
			}
		}
		return m.Status.Upgrade != nil && m.Status.Upgrade.State == metalv1.UpgradeVerified, describe(m)
	})
	eventually(t, 60*time.Second, "the set counts one up to date, one failed, and is no longer paused", func(ctx context.Context) (bool, string) {
		got, why := setStatus(ctx)
		if got == nil {
			return false, why
		}
		return got.Status.UpToDateReplicas == 1 && got.Status.FailedReplicas == 1 &&
			meta.FindStatusCondition(got.Status.Conditions, machine.ConditionRolloutPaused) == nil, why
	})
}
