package inplace_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	hooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/capi/inplace"
	"anvil.dev/anvil/machine"
)

// inPlace are the annotations a MachineSet (or KCP) puts on a CAPI Machine
// it updates in place, before CAPI's Machine controller calls UpdateMachine.
func inPlace() map[string]string {
	return map[string]string{clusterv1.UpdateInProgressAnnotation: "", runtimev1.PendingHooksAnnotation: "UpdateMachine"}
}

// world is a CAPI Machine being moved to v1.37.2, its AnvilMachine (named
// differently, as a MachineSet names them) and the Anvil Machine the
// AnvilMachine controls, Running v1.36.3.
type world struct {
	cm *clusterv1.Machine
	am *infrav1.AnvilMachine
	m  *metalv1.Machine
}

type worldOpts struct {
	machineAnnotations map[string]string
	amNotAnnotated     bool
	amOwnerUID         types.UID // "" : the CAPI Machine's
	notControlled      bool      // the Anvil Machine has no controller
}

func newWorld(t *testing.T, o worldOpts) world {
	t.Helper()
	ctx := context.Background()
	ns := env.Namespace(t)
	secret := "md-0-abc-bootstrap"
	w := world{}
	w.cm = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "md-0-abc", Annotations: o.machineAnnotations},
		Spec: clusterv1.MachineSpec{ClusterName: "c1", Version: "v1.37.2",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: &secret},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachine", Name: "md-0-abc-x7k2p"}}}
	must(t, c.Create(ctx, w.cm))
	uid := w.cm.UID
	if o.amOwnerUID != "" {
		uid = o.amOwnerUID
	}
	yes := true
	w.am = &infrav1.AnvilMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "md-0-abc-x7k2p",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: w.cm.Name, UID: uid, Controller: &yes}}},
		Spec: infrav1.AnvilMachineSpec{MachineClassRef: infrav1.LocalObjectReference{Name: "fcos"}}}
	if !o.amNotAnnotated {
		w.am.Annotations = map[string]string{clusterv1.UpdateInProgressAnnotation: ""}
	}
	must(t, c.Create(ctx, w.am))
	w.m = &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.am.Name},
		Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "fcos"}, Version: "v1.36.3"}}
	if !o.notControlled {
		must(t, controllerutil.SetControllerReference(w.am, w.m, c.Scheme()))
	}
	must(t, c.Create(ctx, w.m))
	w.m.Status.Phase, w.m.Status.Version = metalv1.MachineRunning, "v1.36.3"
	must(t, c.Status().Update(ctx, w.m))
	return w
}

// anvilMachine reads the Anvil Machine back.
func (w world) anvilMachine(t *testing.T) *metalv1.Machine {
	t.Helper()
	m := &metalv1.Machine{}
	must(t, c.Get(context.Background(), client.ObjectKeyFromObject(w.m), m))
	return m
}

// setUpgrade writes the Anvil Machine's status as its controller would.
func (w world) setUpgrade(t *testing.T, phase metalv1.MachinePhase, version string, up *metalv1.UpgradeStatus) {
	t.Helper()
	m := w.anvilMachine(t)
	m.Status.Phase, m.Status.Version, m.Status.Upgrade = phase, version, up
	must(t, c.Status().Update(context.Background(), m))
}

// update calls UpdateMachine as CAPI's Machine controller does: desired
// is the live Machine (spec only, no status), with bodyVersion in
// spec.version if set, and the infrastructure and bootstrap objects.
func (w world) update(t *testing.T, bodyVersion string) *hooksv1.UpdateMachineResponse {
	t.Helper()
	cm := &clusterv1.Machine{}
	must(t, c.Get(context.Background(), client.ObjectKeyFromObject(w.cm), cm))
	desired := clusterv1.Machine{TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace, Labels: cm.Labels, Annotations: cm.Annotations}, Spec: cm.Spec}
	if bodyVersion != "" {
		desired.Spec.Version = bodyVersion
	}
	req := &hooksv1.UpdateMachineRequest{Desired: hooksv1.UpdateMachineRequestObjects{
		Machine: desired,
		InfrastructureMachine: rawOf(t, map[string]any{"apiVersion": infrav1.GroupVersion.String(), "kind": "AnvilMachine",
			"metadata": map[string]any{"name": "someone-else", "namespace": cm.Namespace}, "spec": map[string]any{"machineClassRef": map[string]any{"name": "evil"}}}),
		BootstrapConfig: rawOf(t, map[string]any{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig",
			"spec": map[string]any{"joinConfiguration": map[string]any{"discovery": map[string]any{"bootstrapToken": map[string]any{"token": secretMarker}}}}}),
	}}
	resp := &hooksv1.UpdateMachineResponse{}
	call(t, hooksv1.UpdateMachine, inplace.HandlerUpdateMachine, req, resp)
	if strings.Contains(logs.String(), secretMarker) {
		t.Fatalf("the request body reached the log:\n%s", logs.String())
	}
	return resp
}

func wantInProgress(t *testing.T, r *hooksv1.UpdateMachineResponse, msg string) {
	t.Helper()
	if r.Status != hooksv1.ResponseStatusSuccess || r.RetryAfterSeconds != inplace.RetryAfterSeconds || !strings.Contains(r.Message, msg) {
		t.Fatalf("response %+v, want in progress (Success, retryAfterSeconds %d) with %q", r, inplace.RetryAfterSeconds, msg)
	}
}

func wantFailure(t *testing.T, r *hooksv1.UpdateMachineResponse, msg ...string) {
	t.Helper()
	for _, s := range msg {
		if r.Status != hooksv1.ResponseStatusFailure || !strings.Contains(r.Message, s) {
			t.Fatalf("response %+v, want Failure with %q", r, s)
		}
	}
}

// The Anvil Machine's version is set once (repeated calls write nothing)
// under the extension's field manager; the answers follow status.upgrade
// as Anvil's Machine controller writes it, to Success once Verified.
func TestUpdateMachineUpgradesOnceAndReports(t *testing.T) {
	w := newWorld(t, worldOpts{machineAnnotations: inPlace()})
	wantInProgress(t, w.update(t, ""), "asked Anvil for kubelet v1.37.2 on Machine.metal.anvil.dev "+w.m.Namespace+"/md-0-abc-x7k2p (spec.version was v1.36.3)")
	m := w.anvilMachine(t)
	if m.Spec.Version != "v1.37.2" {
		t.Fatalf("Anvil Machine spec.version %s, want v1.37.2", m.Spec.Version)
	}
	owned := false
	for _, f := range m.ManagedFields {
		owned = owned || f.Manager == inplace.FieldOwner && strings.Contains(string(f.FieldsV1.GetRawBytes()), `"f:version"`)
	}
	if !owned {
		t.Errorf("spec.version is not managed by %s: %+v", inplace.FieldOwner, m.ManagedFields)
	}
	gen, rv := m.Generation, m.ResourceVersion

	for range 2 {
		wantInProgress(t, w.update(t, ""), "waiting for Anvil to start the upgrade to v1.37.2")
	}
	if got := w.anvilMachine(t); got.ResourceVersion != rv {
		t.Fatalf("a repeated call wrote the Anvil Machine (resourceVersion %s -> %s)", rv, got.ResourceVersion)
	}

	up := &metalv1.UpgradeStatus{PlanID: "abc-v1.37.2-1", FromVersion: "v1.36.3", Version: "v1.37.2", State: metalv1.UpgradeDraining,
		Message: "draining Node n1: 3 pods left (PodDisruptionBudgets respected)", PodsLeft: 3}
	w.setUpgrade(t, metalv1.MachineUpdating, "v1.36.3", up)
	wantInProgress(t, w.update(t, ""), "Draining: draining Node n1: 3 pods left")
	up.State, up.Message, up.PodsLeft = metalv1.UpgradeApplying, "plan published; waiting for the agent", 0
	w.setUpgrade(t, metalv1.MachineUpdating, "v1.36.3", up)
	wantInProgress(t, w.update(t, ""), "Applying: plan published; waiting for the agent")
	// The agent's phase, as the agent API records it.
	up.AgentResult = &metalv1.AgentUpgradeResult{PlanID: up.PlanID, Outcome: metalv1.AgentUpgradeInProgress, Message: "downloading kubelet v1.37.2", ReportedAt: metav1.Now()}
	w.setUpgrade(t, metalv1.MachineUpdating, "v1.36.3", up)
	wantInProgress(t, w.update(t, ""), "Applying: agent: downloading kubelet v1.37.2")
	up.State, up.Message = metalv1.UpgradeSucceeded, "kubelet v1.37.2 installed and healthy"
	w.setUpgrade(t, metalv1.MachineUpdating, "v1.37.2", up)
	wantInProgress(t, w.update(t, ""), "Succeeded: kubelet v1.37.2 installed and healthy")

	up.State, up.Message = metalv1.UpgradeVerified, "Node n1 runs kubelet v1.37.2, Ready, uncordoned"
	w.setUpgrade(t, metalv1.MachineRunning, "v1.37.2", up)
	for range 2 {
		r := w.update(t, "")
		if r.Status != hooksv1.ResponseStatusSuccess || r.RetryAfterSeconds != 0 || r.Message != up.Message {
			t.Fatalf("after Verified: %+v, want Success, no retry, %q", r, up.Message)
		}
	}
	if got := w.anvilMachine(t); got.Generation != gen || got.Spec.Version != "v1.37.2" {
		t.Errorf("Anvil Machine generation %d (want %d: one spec write in all), version %s", got.Generation, gen, got.Spec.Version)
	}
}

// A failed upgrade (rolled back on the host) is a Failure with the
// agent's reason, again and again, with nothing restarted, until an admin
// retries; an admin's revert is not undone either.
func TestUpdateMachineFailureStaysUntilAnAdminRetries(t *testing.T) {
	w := newWorld(t, worldOpts{machineAnnotations: inPlace()})
	wantInProgress(t, w.update(t, ""), "asked Anvil")
	reason := "kubelet v1.37.2 not healthy after 2m0s: rolled back to v1.36.3"
	now := metav1.Now()
	up := &metalv1.UpgradeStatus{PlanID: "abc-v1.37.2-1", FromVersion: "v1.36.3", Version: "v1.37.2", State: metalv1.UpgradeFailed, Message: reason, FinishedAt: &now}
	w.setUpgrade(t, metalv1.MachineRunning, "v1.36.3", up)
	rv := w.anvilMachine(t).ResourceVersion
	first := w.update(t, "")
	wantFailure(t, first, reason, "rolled back on the host",
		"kubectl annotate machine.metal.anvil.dev md-0-abc-x7k2p -n "+w.m.Namespace+" --overwrite "+machine.AnnotationRetryUpgrade+"=abc-v1.37.2-1",
		"kubectl delete machine.cluster.x-k8s.io md-0-abc -n "+w.m.Namespace)
	for range 2 {
		if again := w.update(t, ""); again.Status != first.Status || again.Message != first.Message {
			t.Fatalf("called again: %+v, want the same Failure %q", again, first.Message)
		}
	}
	if got := w.anvilMachine(t); got.ResourceVersion != rv {
		t.Fatalf("a call after the failure wrote the Anvil Machine")
	}

	// An admin sets the version back: it stays back.
	must(t, c.Patch(context.Background(), w.anvilMachine(t), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"version":"v1.36.3"}}`)), client.FieldOwner("admin")))
	wantFailure(t, w.update(t, ""), reason, "its spec.version has been v1.36.3 since, so Anvil does not start it again")
	if got := w.anvilMachine(t); got.Spec.Version != "v1.36.3" {
		t.Fatalf("the extension set the version again after an admin's revert: %s", got.Spec.Version)
	}

	// The admin retries: the version again and the retry annotation; the
	// Machine controller starts a new plan, and the hook follows it.
	must(t, c.Patch(context.Background(), w.anvilMachine(t), client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+machine.AnnotationRetryUpgrade+`":"abc-v1.37.2-1"}},"spec":{"version":"v1.37.2"}}`)), client.FieldOwner("admin")))
	w.setUpgrade(t, metalv1.MachineUpdating, "v1.36.3", &metalv1.UpgradeStatus{PlanID: "abc-v1.37.2-2", FromVersion: "v1.36.3", Version: "v1.37.2",
		State: metalv1.UpgradeDraining, Message: "cordoning and draining the Node"})
	wantInProgress(t, w.update(t, ""), "Draining: cordoning and draining the Node")
}

func TestUpdateMachineRejected(t *testing.T) {
	w := newWorld(t, worldOpts{machineAnnotations: inPlace()})
	wantInProgress(t, w.update(t, ""), "asked Anvil")
	reason := "MachineClass fcos has no kubelet artifact with a sha256 for v1.37.2 (spec.kubelets)"
	w.setUpgrade(t, metalv1.MachineRunning, "v1.36.3", &metalv1.UpgradeStatus{PlanID: "abc-v1.37.2-1", FromVersion: "v1.36.3", Version: "v1.37.2", State: metalv1.UpgradeRejected, Message: reason})
	wantFailure(t, w.update(t, ""), "rejected, nothing changed on the host", reason, "metal.anvil.dev/retry-upgrade=abc-v1.37.2-1")
}

// UpdateMachine acts only on a Machine Cluster API is updating in place,
// through the AnvilMachine it owns and the Anvil Machine that controls;
// anything else is refused and nothing is written.
func TestUpdateMachineRefusesWhatIsNotUpdatingInPlace(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    worldOpts
		want string
	}{
		{"no annotations", worldOpts{}, "is not being updated in place (no " + clusterv1.UpdateInProgressAnnotation + " annotation; UpdateMachine not in its " + runtimev1.PendingHooksAnnotation + " annotation): nothing done"},
		{"update in progress, hook not pending", worldOpts{machineAnnotations: map[string]string{clusterv1.UpdateInProgressAnnotation: ""}}, "UpdateMachine not in its"},
		{"hook pending, no update in progress", worldOpts{machineAnnotations: map[string]string{runtimev1.PendingHooksAnnotation: "UpdateMachine"}}, "no " + clusterv1.UpdateInProgressAnnotation},
		{"other hooks pending", worldOpts{machineAnnotations: map[string]string{clusterv1.UpdateInProgressAnnotation: "", runtimev1.PendingHooksAnnotation: "AfterControlPlaneUpgrade,UpdateMachines"}}, "UpdateMachine not in its"},
		{"AnvilMachine not marked", worldOpts{machineAnnotations: inPlace(), amNotAnnotated: true}, "has no " + clusterv1.UpdateInProgressAnnotation + " annotation yet: nothing done"},
		{"AnvilMachine of another Machine", worldOpts{machineAnnotations: inPlace(), amOwnerUID: "0000-other"}, "is not owned by Machine.cluster.x-k8s.io"},
		{"Anvil Machine not the AnvilMachine's", worldOpts{machineAnnotations: inPlace(), notControlled: true}, "is not controlled by AnvilMachine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.o)
			rv := w.anvilMachine(t).ResourceVersion
			wantFailure(t, w.update(t, ""), tc.want)
			if got := w.anvilMachine(t); got.ResourceVersion != rv || got.Spec.Version != "v1.36.3" {
				t.Errorf("the Anvil Machine was written (version %s)", got.Spec.Version)
			}
		})
	}
	t.Run("no such Machine", func(t *testing.T) {
		w := newWorld(t, worldOpts{machineAnnotations: inPlace()})
		must(t, c.Delete(context.Background(), w.cm))
		resp := &hooksv1.UpdateMachineResponse{}
		call(t, hooksv1.UpdateMachine, inplace.HandlerUpdateMachine, &hooksv1.UpdateMachineRequest{Desired: hooksv1.UpdateMachineRequestObjects{Machine: *w.cm}}, resp)
		wantFailure(t, resp, "Machine.cluster.x-k8s.io "+w.cm.Namespace+"/md-0-abc not found")
		if got := w.anvilMachine(t); got.Spec.Version != "v1.36.3" {
			t.Errorf("the Anvil Machine was written")
		}
	})
}

// What the request body says beyond the Machine's name does not matter:
// the version comes from the live CAPI Machine.
func TestUpdateMachineTakesTheVersionFromTheLiveMachine(t *testing.T) {
	for _, body := range []string{"v1.36.1", "v1.38.0", "v9.9.9"} {
		t.Run(body, func(t *testing.T) {
			w := newWorld(t, worldOpts{machineAnnotations: inPlace()})
			wantInProgress(t, w.update(t, body), "asked Anvil for kubelet v1.37.2")
			if got := w.anvilMachine(t); got.Spec.Version != "v1.37.2" {
				t.Fatalf("Anvil Machine spec.version %s with a body naming %s; want the live Machine's v1.37.2", got.Spec.Version, body)
			}
		})
	}
}
