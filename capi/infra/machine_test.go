package infra_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// capiObjects are a CAPI Cluster and Machine and the AnvilMachine the
// Machine owns, as CAPI's controllers leave them.
type capiObjects struct {
	cluster *clusterv1.Cluster
	machine *clusterv1.Machine
	am      *infrav1.AnvilMachine
}

type capiOpts struct {
	secret        string // spec.bootstrap.dataSecretName; "" unset
	clusterPaused bool
	annotations   map[string]string // on the CAPI Machine
}

func newCAPI(t *testing.T, ns, name string, o capiOpts) capiObjects {
	t.Helper()
	ctx := context.Background()
	var out capiObjects
	out.cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c-" + name},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilCluster", Name: "c-" + name}}}
	if o.clusterPaused {
		yes := true
		out.cluster.Spec.Paused = &yes
	}
	must(t, c.Create(ctx, out.cluster))
	out.machine = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: o.annotations},
		Spec: clusterv1.MachineSpec{
			ClusterName: out.cluster.Name, Version: "v1.37.2", FailureDomain: "rack-a",
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachine", Name: name},
		}}
	if o.secret != "" {
		out.machine.Spec.Bootstrap.DataSecretName = &o.secret
	}
	must(t, c.Create(ctx, out.machine))
	out.am = &infrav1.AnvilMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: out.cluster.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: out.machine.UID}}},
		Spec: infrav1.AnvilMachineSpec{MachineClassRef: infrav1.LocalObjectReference{Name: "fcos"},
			HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "capi"}}},
	}
	must(t, c.Create(ctx, out.am))
	return out
}

func getAM(t *testing.T, am *infrav1.AnvilMachine) *infrav1.AnvilMachine {
	t.Helper()
	got := &infrav1.AnvilMachine{}
	must(t, c.Get(context.Background(), client.ObjectKeyFromObject(am), got))
	return got
}

// waitReason waits for the AnvilMachine's condition typ to have reason.
func waitReason(t *testing.T, am *infrav1.AnvilMachine, typ, reason string) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	waitFor(t, fmt.Sprintf("AnvilMachine %s condition %s reason %s", am.Name, typ, reason), func() bool {
		got := &infrav1.AnvilMachine{}
		if c.Get(context.Background(), client.ObjectKeyFromObject(am), got) != nil {
			return false
		}
		cond = meta.FindStatusCondition(got.Status.Conditions, typ)
		return cond != nil && cond.Reason == reason
	})
	return cond
}

func anvilMachine(t *testing.T, ns, name string) (*metalv1.Machine, bool) {
	t.Helper()
	m := &metalv1.Machine{}
	err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, m)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	must(t, err)
	return m, true
}

func waitMachine(t *testing.T, ns, name string) *metalv1.Machine {
	t.Helper()
	var m *metalv1.Machine
	waitFor(t, "Machine.metal.anvil.dev "+name, func() bool {
		var ok bool
		m, ok = anvilMachine(t, ns, name)
		return ok
	})
	return m
}

// No Anvil Machine (so no Host claimed, nothing booted) before the CAPI
// Machine has bootstrap data; then one, with the CAPI Machine's version,
// failure domain and Secret and the AnvilMachine's class and selector.
func TestAnvilMachineCreatesMachineOnlyWithBootstrapData(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	o := newCAPI(t, ns, "m1", capiOpts{})
	cond := waitReason(t, o.am, infrav1.ConditionReady, infrav1.ReasonWaitingForBootstrapData)
	if cond.Status != metav1.ConditionFalse || cond.Message != "waiting for Machine.cluster.x-k8s.io m1 to have spec.bootstrap.dataSecretName" {
		t.Errorf("Ready = %+v", cond)
	}
	if _, ok := anvilMachine(t, ns, "m1"); ok {
		t.Fatal("an Anvil Machine exists before the CAPI Machine has bootstrap data")
	}

	secret := "m1-bootstrap"
	p := client.MergeFrom(o.machine.DeepCopy())
	o.machine.Spec.Bootstrap.DataSecretName = &secret
	must(t, c.Patch(ctx, o.machine, p))
	m := waitMachine(t, ns, "m1")
	if !metav1.IsControlledBy(m, getAM(t, o.am)) {
		t.Errorf("Anvil Machine owners %+v, want the AnvilMachine as controller", m.OwnerReferences)
	}
	want := metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "fcos"},
		HostSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "capi"}},
		FailureDomain:   "rack-a", Version: "v1.37.2",
		Bootstrap: &metalv1.MachineBootstrap{DataSecretName: secret,
			KubeconfigSecretRef: &metalv1.KubeconfigSecretReference{Name: "c-m1-kubeconfig", Key: "value"}},
	}
	if !equality.Semantic.DeepEqual(m.Spec, want) || m.Spec.Bootstrap == nil {
		t.Errorf("Anvil Machine spec\n%+v (bootstrap %+v)\nwant\n%+v", m.Spec, m.Spec.Bootstrap, want)
	}
	if m.Labels[clusterv1.ClusterNameLabel] != "c-m1" || m.Labels[infrav1.LabelAnvilMachine] != "m1" {
		t.Errorf("Anvil Machine labels %v", m.Labels)
	}
	waitReason(t, o.am, infrav1.ConditionMachineCreated, infrav1.ReasonMachineCreated)
	if !controllerutil.ContainsFinalizer(getAM(t, o.am), infrav1.FinalizerAnvilMachine) {
		t.Error("the AnvilMachine has no finalizer while its Anvil Machine exists")
	}
}

// A paused Cluster or a paused CAPI Machine stops the AnvilMachine before
// anything is created; unpausing lets it go on.
func TestAnvilMachinePaused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts capiOpts
	}{
		{"cluster-spec-paused", capiOpts{secret: "s", clusterPaused: true}},
		{"machine-annotation", capiOpts{secret: "s", annotations: map[string]string{clusterv1.PausedAnnotation: ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.Namespace(t)
			o := newCAPI(t, ns, tc.name, tc.opts)
			cond := waitReason(t, o.am, infrav1.ConditionPaused, infrav1.ReasonPaused)
			if cond.Status != metav1.ConditionTrue {
				t.Errorf("Paused = %+v", cond)
			}
			if _, ok := anvilMachine(t, ns, tc.name); ok {
				t.Fatal("a paused AnvilMachine created its Anvil Machine")
			}
			if tc.opts.clusterPaused {
				p := client.MergeFrom(o.cluster.DeepCopy())
				no := false
				o.cluster.Spec.Paused = &no
				must(t, c.Patch(ctx, o.cluster, p))
			} else {
				p := client.MergeFrom(o.machine.DeepCopy())
				o.machine.Annotations = nil
				must(t, c.Patch(ctx, o.machine, p))
			}
			waitMachine(t, ns, tc.name)
			waitReason(t, o.am, infrav1.ConditionPaused, infrav1.ReasonNotPaused)
		})
	}
}

// What the Anvil Machine reports reaches the AnvilMachine as CAPI reads
// it: spec.providerID, initialization.provisioned, addresses, the Host's
// failure domain, phase, version and Ready.
func TestAnvilMachineMirrorsStatus(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	o := newCAPI(t, ns, "m3", capiOpts{secret: "m3-bootstrap"})
	m := waitMachine(t, ns, "m3")
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h3", Labels: map[string]string{metalv1.LabelFailureDomain: "rack-b", "pool": "capi"}},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: []string{"02:00:00:00:03:01"}}}
	must(t, c.Create(ctx, h))

	// Claimed and booting: not provisioned yet.
	m.Status.Phase = metalv1.MachineProvisioning
	m.Status.HostRef = &metalv1.LocalObjectReference{Name: h.Name}
	m.Status.ProviderID = metalv1.ProviderIDPrefix + string(h.UID)
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: metalv1.ConditionInfrastructureReady, Status: metav1.ConditionFalse, Reason: metalv1.ReasonNetworkBooting, Message: "Host h3 is network booting"})
	must(t, c.Status().Update(ctx, m))
	cond := waitReason(t, o.am, infrav1.ConditionReady, metalv1.ReasonNetworkBooting)
	if cond.Status != metav1.ConditionFalse {
		t.Errorf("Ready while booting = %+v", cond)
	}
	if got := getAM(t, o.am); got.Status.Initialization.Provisioned != nil {
		t.Errorf("provisioned = %v while the Host is booting", *got.Status.Initialization.Provisioned)
	}

	// Booted with the bootstrap data.
	m.Status.Phase = metalv1.MachineJoining
	m.Status.Version = "v1.37.2"
	m.Status.Addresses = []metalv1.MachineAddress{{Type: "InternalIP", Address: "10.0.0.3"}, {Type: "Hostname", Address: "h3"}}
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: metalv1.ConditionInfrastructureReady, Status: metav1.ConditionTrue, Reason: metalv1.ReasonBooted, Message: "Host h3 booted"})
	must(t, c.Status().Update(ctx, m))
	waitReason(t, o.am, infrav1.ConditionReady, metalv1.ReasonBooted)
	var got *infrav1.AnvilMachine
	waitFor(t, "provisioned and spec.providerID", func() bool {
		got = getAM(t, o.am)
		p := got.Status.Initialization.Provisioned
		return p != nil && *p && got.Spec.ProviderID != ""
	})
	if got.Spec.ProviderID != m.Status.ProviderID {
		t.Errorf("spec.providerID = %q, want %q", got.Spec.ProviderID, m.Status.ProviderID)
	}
	st := got.Status
	if st.FailureDomain != "rack-b" || st.Phase != metalv1.MachineJoining || st.Version != "v1.37.2" ||
		st.HostRef == nil || st.HostRef.Name != "h3" || st.MachineRef == nil || st.MachineRef.Name != "m3" {
		t.Errorf("status = %+v", st)
	}
	wantAddr := []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.3"}, {Type: clusterv1.MachineHostName, Address: "h3"}}
	if fmt.Sprint(st.Addresses) != fmt.Sprint(wantAddr) {
		t.Errorf("addresses = %v, want %v", st.Addresses, wantAddr)
	}
	if c := meta.FindStatusCondition(st.Conditions, metalv1.ConditionInfrastructureReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("InfrastructureReady not mirrored: %+v", c)
	}
}

// Deleting the AnvilMachine deletes its Anvil Machine and keeps the
// AnvilMachine until that is gone (Anvil's finalizer: drain, wipe,
// release).
func TestAnvilMachineDeleteWaitsForMachine(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	o := newCAPI(t, ns, "m4", capiOpts{secret: "m4-bootstrap"})
	m := waitMachine(t, ns, "m4")
	// What Anvil's Machine controller puts there.
	p := client.MergeFrom(m.DeepCopy())
	controllerutil.AddFinalizer(m, metalv1.FinalizerMachine)
	must(t, c.Patch(ctx, m, p))
	waitFor(t, "the AnvilMachine's finalizer", func() bool {
		return controllerutil.ContainsFinalizer(getAM(t, o.am), infrav1.FinalizerAnvilMachine)
	})

	must(t, c.Delete(ctx, getAM(t, o.am)))
	waitFor(t, "the Anvil Machine to be deleted", func() bool {
		got, ok := anvilMachine(t, ns, "m4")
		return ok && !got.DeletionTimestamp.IsZero()
	})
	cond := waitReason(t, o.am, infrav1.ConditionReady, infrav1.ReasonDeleting)
	if cond.Status != metav1.ConditionFalse {
		t.Errorf("Ready while deleting = %+v", cond)
	}
	if got := getAM(t, o.am); !controllerutil.ContainsFinalizer(got, infrav1.FinalizerAnvilMachine) {
		t.Fatal("the AnvilMachine lost its finalizer while its Anvil Machine still exists")
	}

	// Anvil is done with the Host.
	m, _ = anvilMachine(t, ns, "m4")
	p = client.MergeFrom(m.DeepCopy())
	controllerutil.RemoveFinalizer(m, metalv1.FinalizerMachine)
	must(t, c.Patch(ctx, m, p))
	waitFor(t, "the AnvilMachine to be gone", func() bool {
		err := c.Get(ctx, client.ObjectKeyFromObject(o.am), &infrav1.AnvilMachine{})
		return apierrors.IsNotFound(err)
	})
}
