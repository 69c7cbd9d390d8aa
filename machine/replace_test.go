package machine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// runMachine plays a Machine's boot and kubelet until it is Running.
func (e *machineEnv) runMachine(t *testing.T, name string) (*metalv1.Machine, *corev1.Node) {
	t.Helper()
	m := e.waitPhase(t, name, metalv1.MachineProvisioning, 30*time.Second)
	e.playHostBoot(t, m)
	m = e.waitPhase(t, name, metalv1.MachineJoining, 30*time.Second)
	n := e.playKubelet(t, m, true)
	m = e.waitPhase(t, name, metalv1.MachineRunning, 30*time.Second)
	// The write that says Running says UpToDate too: no later event is
	// promised to bring it.
	if up := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpToDate); n.Status.NodeInfo.KubeletVersion == m.Spec.Version && (up == nil || up.Status != "True") {
		t.Fatalf("Machine %s is Running without UpToDate=True: %s", name, describe(m))
	}
	return m, n
}

// TestSpecChangeReplacesTheMachine: a failure domain its Host is not in
// cannot be done in place: the Machine says so, drains and deletes its
// Node, wipes and releases the Host, and is installed on a Host of the new
// domain. The replace annotation does the same on demand, and a Host
// claimed again gets a new boot request.
func TestSpecChangeReplacesTheMachine(t *testing.T) {
	e := newMachineEnv(t, 2, fastOptions())
	ctx := context.Background()
	e.addClass(t, true)
	e.addHost(t, 0, map[string]string{"role": "worker", metalv1.LabelFailureDomain: "fd-a"})
	e.addHost(t, 1, map[string]string{"role": "worker", metalv1.LabelFailureDomain: "fd-b"})
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.waitHostState(t, "host-1", metalv1.HostAvailable)
	mustCreate(t, e.c, &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: e.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"}, Version: kubeletVersion, FailureDomain: "fd-a",
		HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}},
	}})
	m, n := e.runMachine(t, "m1")
	if m.Status.HostRef.Name != "host-0" || m.Status.InstalledClass != "flatcar-worker" {
		t.Fatalf("m1 should run on host-0 from flatcar-worker: %s host=%v class=%q", describe(m), m.Status.HostRef, m.Status.InstalledClass)
	}

	orig := m.DeepCopy()
	m.Spec.FailureDomain = "fd-b"
	if err := e.c.Patch(ctx, m, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "m1 says it is replaced and why", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		up := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpToDate)
		ok := m.Status.Replacement != nil && m.Status.Replacement.Reason == metalv1.ReplaceHostMismatch &&
			up != nil && up.Reason == metalv1.ReasonReplacing && strings.Contains(up.Message, "fd-b") && strings.Contains(up.Message, "in place")
		return ok, describe(m)
	})
	eventually(t, 30*time.Second, "the old Node drained and deleted", func(ctx context.Context) (bool, string) {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(n), &corev1.Node{})
		return apierrors.IsNotFound(err), describe(m)
	})
	e.playWipe(t, "host-0", true, "erased 1 disk")
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	m, _ = e.runMachine(t, "m1")
	if m.Status.HostRef.Name != "host-1" || m.Status.Replacements != 1 || m.Status.Replacement != nil || !strings.Contains(m.Status.Boot.RequestID, "-r1p") {
		t.Fatalf("after the replacement: %s host=%v replacements=%d boot=%+v", describe(m), m.Status.HostRef, m.Status.Replacements, m.Status.Boot)
	}

	// The annotation: the same Host (the only one in fd-b) is installed
	// again, with a boot request it has not seen.
	orig = m.DeepCopy()
	m.Annotations = map[string]string{metalv1.AnnotationReplace: "reinstall"}
	if err := e.c.Patch(ctx, m, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "replace annotation taken and removed", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		_, still := m.Annotations[metalv1.AnnotationReplace]
		return !still && m.Status.Replacement != nil && m.Status.Replacement.Reason == metalv1.ReplaceRequested, describe(m)
	})
	e.playWipe(t, "host-1", true, "erased 1 disk")
	m, _ = e.runMachine(t, "m1")
	if m.Status.HostRef.Name != "host-1" || m.Status.Replacements != 2 || !strings.Contains(m.Status.Boot.RequestID, "-r2p") {
		t.Fatalf("after the second replacement: %s host=%v replacements=%d boot=%+v", describe(m), m.Status.HostRef, m.Status.Replacements, m.Status.Boot)
	}
}

// TestReplacementAfterALostReleaseWrite: a reconcile released the Host but
// its Machine status write was lost (a conflict, as CI saw, or a crash).
// The next reconcile finds a Machine that still names the Host and a Host
// that no longer names it. During a replacement that is the release it
// asked for, not a lost Host: the Machine claims again and runs.
func TestReplacementAfterALostReleaseWrite(t *testing.T) {
	e := newMachineEnv(t, 1, fastOptions())
	ctx := context.Background()
	e.addClass(t, true)
	e.addHost(t, 0, map[string]string{"role": "worker"})
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.addMachine(t, "m1", map[string]string{"role": "worker"})
	m, _ := e.runMachine(t, "m1")

	orig := m.DeepCopy()
	m.Annotations = map[string]string{metalv1.AnnotationReplace: "reinstall"}
	if err := e.c.Patch(ctx, m, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	e.waitHostState(t, "host-0", metalv1.HostDeprovisioning)
	e.stop()
	// The wipe done, and what release writes, without the Machine status
	// write after it.
	e.playWipe(t, "host-0", true, "erased 1 disk")
	h, _ := e.host(ctx, "host-0")
	hostPatch := client.MergeFrom(h.DeepCopy())
	h.Spec.ConsumerRef, h.Spec.BootRequest, h.Spec.Online = nil, nil, false
	delete(h.Labels, metalv1.LabelConsumerUID)
	delete(h.Annotations, metalv1.AnnotationProvisioned)
	if err := e.c.Patch(ctx, h, hostPatch); err != nil {
		t.Fatal(err)
	}
	m, _ = e.machine(ctx, "m1")
	if m.Status.Replacement == nil || m.Status.HostRef == nil || m.Status.HostRef.Name != "host-0" {
		t.Fatalf("the Machine should still be replacing on host-0: %s host=%v", describe(m), m.Status.HostRef)
	}
	e.stop = e.startManager(t)

	m, _ = e.runMachine(t, "m1")
	if m.Status.HostRef.Name != "host-0" || m.Status.Replacements != 1 || m.Status.FailureReason != "" || !strings.Contains(m.Status.Boot.RequestID, "-r1p") {
		t.Fatalf("after the replacement: %s host=%v replacements=%d boot=%+v", describe(m), m.Status.HostRef, m.Status.Replacements, m.Status.Boot)
	}
}
