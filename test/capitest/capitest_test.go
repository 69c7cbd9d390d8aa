package capitest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	"anvil.dev/anvil/capi/infra"
	"anvil.dev/anvil/test/capitest"
	"anvil.dev/anvil/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	envtest.Run(m, &env)
}

func newClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(env.Config, client.Options{Scheme: capitest.Scheme()})
	must(t, err)
	return c
}

// Cluster API's real core manager provisions a Cluster's infrastructure
// from an AnvilCluster (found through the CRD's contract label) once
// Anvil's controller reports it provisioned: it owns the AnvilCluster,
// copies its control plane endpoint and mirrors its Ready condition.
func TestRealClusterAPIProvisionsClusterFromAnvilCluster(t *testing.T) {
	capi := capitest.Start(t, env, capitest.Options{})
	c := newClient(t)
	ctx := context.Background()
	startAnvilCluster(t)
	ns := env.Namespace(t)

	ac := &infrav1.AnvilCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: infrav1.AnvilClusterSpec{HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "capi"}}}}
	must(t, c.Create(ctx, ac))
	cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilCluster", Name: "c1"}}}
	must(t, c.Create(ctx, cl))

	// CAPI found the AnvilCluster and owns it; without an endpoint it is
	// not provisioned, and CAPI says so.
	waitFor(t, capi, "CAPI to own the AnvilCluster and report its infrastructure not ready", func() bool {
		got := &infrav1.AnvilCluster{}
		must(t, c.Get(ctx, client.ObjectKeyFromObject(ac), got))
		owned := false
		for _, o := range got.OwnerReferences {
			owned = owned || (o.Kind == "Cluster" && o.Name == cl.Name && o.UID == cl.UID)
		}
		gc := &clusterv1.Cluster{}
		must(t, c.Get(ctx, client.ObjectKeyFromObject(cl), gc))
		r := meta.FindStatusCondition(gc.Status.Conditions, clusterv1.ClusterInfrastructureReadyCondition)
		return owned && r != nil && r.Status == metav1.ConditionFalse
	})
	gc := &clusterv1.Cluster{}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(cl), gc))
	if p := gc.Status.Initialization.InfrastructureProvisioned; p != nil && *p {
		t.Fatal("Cluster infrastructure provisioned before the AnvilCluster has a control plane endpoint")
	}

	p := client.MergeFrom(ac.DeepCopy())
	ac.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443}
	must(t, c.Patch(ctx, ac, p))
	waitFor(t, capi, "the Cluster's infrastructure provisioned", func() bool {
		must(t, c.Get(ctx, client.ObjectKeyFromObject(cl), gc))
		p := gc.Status.Initialization.InfrastructureProvisioned
		return p != nil && *p && meta.IsStatusConditionTrue(gc.Status.Conditions, clusterv1.ClusterInfrastructureReadyCondition)
	})
	if ep := gc.Spec.ControlPlaneEndpoint; ep.Host != "10.0.0.100" || ep.Port != 6443 {
		t.Errorf("Cluster spec.controlPlaneEndpoint = %+v, want the AnvilCluster's 10.0.0.100:6443", ep)
	}
}

// Core's, CABPK's and KCP's webhooks run: validation refuses what only the
// webhook checks, defaulting fills in what only the webhook sets, and
// v1beta1 reads go through the conversion webhooks.
func TestClusterAPIWebhooksServe(t *testing.T) {
	capi := capitest.Start(t, env, capitest.Options{ControlPlane: true})
	c := newClient(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	yes := true
	// Paused: the controllers leave these objects alone.
	cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{Paused: &yes, InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilCluster", Name: "c1"}}}
	must(t, c.Create(ctx, cl))

	t.Run("core validation", func(t *testing.T) {
		topo := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "topo"},
			Spec: clusterv1.ClusterSpec{Topology: clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "cc"}, Version: "v1.37.2"}}}
		// The defaulting webhook reads the ClusterClass from an informer
		// it starts at the first such request; on a loaded machine that
		// informer may miss the webhook's sync timeout, a transient
		// refusal that is not the one under test: ask again, a few times.
		var err error
		for range 5 {
			if err = c.Create(ctx, topo); err == nil || !strings.Contains(err.Error(), "Informer to sync") {
				break
			}
			t.Logf("the defaulting webhook's informer was not synced yet: %v", err)
		}
		if err == nil || !strings.Contains(err.Error(), "ClusterTopology feature flag") {
			t.Errorf("creating a Cluster with spec.topology, ClusterTopology off: %v, want the validating webhook's refusal", err)
		}
	})
	t.Run("core defaulting", func(t *testing.T) {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"},
			Spec: clusterv1.MachineSpec{ClusterName: cl.Name, Version: "1.37.2",
				Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: "m1"}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachine", Name: "m1"}}}
		must(t, c.Create(ctx, m))
		if m.Spec.Version != "v1.37.2" || m.Labels[clusterv1.ClusterNameLabel] != cl.Name {
			t.Errorf("Machine after the defaulting webhook: version %q, labels %v; want v1.37.2 and %s=%s", m.Spec.Version, m.Labels, clusterv1.ClusterNameLabel, cl.Name)
		}
	})
	t.Run("core conversion", func(t *testing.T) {
		u := readAs(t, c, "cluster.x-k8s.io/v1beta1", "Cluster", ns, cl.Name)
		// v1beta1 names the infrastructure by apiVersion, v1beta2 by group.
		if v, _, _ := unstructured.NestedString(u.Object, "spec", "infrastructureRef", "apiVersion"); v != infrav1.GroupVersion.String() {
			t.Errorf("Cluster as v1beta1: spec.infrastructureRef.apiVersion = %q, want %s", v, infrav1.GroupVersion)
		}
	})
	t.Run("bootstrap validation", func(t *testing.T) {
		kc := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ign"}, Spec: bootstrapv1.KubeadmConfigSpec{Format: bootstrapv1.Ignition}}
		err := c.Create(ctx, kc)
		if err == nil || !strings.Contains(err.Error(), "KubeadmBootstrapFormatIgnition feature gate") {
			t.Errorf("creating an Ignition KubeadmConfig, the gate off: %v, want CABPK's validating webhook's refusal", err)
		}
	})
	t.Run("bootstrap conversion", func(t *testing.T) {
		v := "2"
		kc := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kc1"},
			Spec: bootstrapv1.KubeadmConfigSpec{ClusterConfiguration: bootstrapv1.ClusterConfiguration{
				APIServer: bootstrapv1.APIServer{ExtraArgs: []bootstrapv1.Arg{{Name: "v", Value: &v}}}}}}
		must(t, c.Create(ctx, kc))
		// v1beta2's list of {name, value} is a map in v1beta1.
		u := readAs(t, c, "bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig", ns, kc.Name)
		args, _, err := unstructured.NestedStringMap(u.Object, "spec", "clusterConfiguration", "apiServer", "extraArgs")
		if err != nil || args["v"] != "2" {
			t.Errorf("KubeadmConfig as v1beta1: spec.clusterConfiguration.apiServer.extraArgs = %v (%v), want map[v:2]", args, err)
		}
	})
	t.Run("control plane defaulting and conversion", func(t *testing.T) {
		kcp := &controlplanev1.KubeadmControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp"},
			Spec: controlplanev1.KubeadmControlPlaneSpec{Version: "1.37.2", MachineTemplate: controlplanev1.KubeadmControlPlaneMachineTemplate{
				Spec: controlplanev1.KubeadmControlPlaneMachineTemplateSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachineTemplate", Name: "cp"}}}}}
		must(t, c.Create(ctx, kcp))
		if kcp.Spec.Version != "v1.37.2" || kcp.Spec.Replicas == nil || *kcp.Spec.Replicas != 1 {
			t.Errorf("KubeadmControlPlane after the defaulting webhook: version %q, replicas %v; want v1.37.2 and 1", kcp.Spec.Version, kcp.Spec.Replicas)
		}
		// v1beta1 names the machine template's infrastructure by apiVersion.
		u := readAs(t, c, "controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlane", ns, kcp.Name)
		if v, _, _ := unstructured.NestedString(u.Object, "spec", "machineTemplate", "infrastructureRef", "apiVersion"); v != infrav1.GroupVersion.String() {
			t.Errorf("KubeadmControlPlane as v1beta1: spec.machineTemplate.infrastructureRef.apiVersion = %q, want %s", v, infrav1.GroupVersion)
		}
	})
	if err := capi.Alive(); err != nil {
		t.Error(err)
	}
}

// readAs reads an object at another version of its CRD: the API server
// asks the CRD's conversion webhook.
func readAs(t *testing.T, c client.Client, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	must(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u))
	if u.GetAPIVersion() != apiVersion {
		t.Fatalf("%s %s read as %s", kind, name, u.GetAPIVersion())
	}
	return u
}

// startAnvilCluster runs Anvil's AnvilCluster controller in the test, as
// anvil serve --capi does.
func startAnvilCluster(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: capitest.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logr.Discard()})
	must(t, err)
	must(t, (&infra.AnvilClusterReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("Anvil's manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing early if a manager exited.
func waitFor(t *testing.T, capi *capitest.CAPI, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		if err := capi.Alive(); err != nil {
			return false, err
		}
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
