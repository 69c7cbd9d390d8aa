package machine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// TestRolloutStepWithALaggingCache: a step patches up to maxUnavailable
// Machines at once; a next step that still sees them on the old version
// (the cache lags its own patches) counts them as upgrading: it neither
// patches them again (a request and an event each) nor others.
func TestRolloutStepWithALaggingCache(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metalv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	const n, budget = 20, 5
	var active []metalv1.Machine
	var objs []client.Object
	for i := range n {
		m := metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("m-%02d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec: metalv1.MachineSpec{Version: "v1.36.4"},
			Status: metalv1.MachineStatus{Version: "v1.36.4", Conditions: []metav1.Condition{
				{Type: metalv1.ConditionReady, Status: metav1.ConditionTrue, Reason: metalv1.ReasonNodeReady}}}}
		active = append(active, m)
		objs = append(objs, m.DeepCopy())
	}
	var patches atomic.Int32
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			patches.Add(1)
			return c.Patch(ctx, obj, p, opts...)
		}}).Build()
	r := &MachineSetReconciler{Client: c}
	maxUnavail := intstr.FromInt32(budget)
	replicas := int32(n)
	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "set"}, Spec: metalv1.MachineSetSpec{
		Replicas: &replicas, Strategy: metalv1.RolloutStrategy{MaxUnavailable: &maxUnavail},
		Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{Version: "v1.37.2"}}}}
	patched := func() (names []string) {
		var l metalv1.MachineList
		if err := c.List(context.Background(), &l); err != nil {
			t.Fatal(err)
		}
		for _, m := range l.Items {
			if m.Spec.Version == "v1.37.2" {
				names = append(names, m.Name)
			}
		}
		return names
	}
	for step := range 3 {
		// The same stale view every time: nothing patched shows yet.
		if _, err := r.rollout(context.Background(), ms, active); err != nil {
			t.Fatal(err)
		}
		if got := patched(); len(got) != budget {
			t.Fatalf("after step %d: %d Machines patched (%v), want maxUnavailable %d", step+1, len(got), got, budget)
		}
		if got := patches.Load(); got != budget {
			t.Fatalf("after step %d: %d patch requests, want %d (the first step's only)", step+1, got, budget)
		}
	}
	if got := patched(); got[0] != "m-00" || got[budget-1] != fmt.Sprintf("m-%02d", budget-1) {
		t.Fatalf("patched %v, want the first %d by name", got, budget)
	}
}

// TestScaleUpWithALaggingCache: Machines a set created count as created
// while the cache does not show them: a next reconcile on the stale view
// sends no creates (before, hundreds came back AlreadyExists in a
// scale-up to 1,000), and once the cache shows them they count as usual.
func TestScaleUpWithALaggingCache(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metalv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	const want = 10
	replicas := int32(want)
	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "set", UID: "set-uid"}, Spec: metalv1.MachineSetSpec{
		Replicas: &replicas, Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{Version: "v1.37.2"}}}}
	var creates atomic.Int32
	var stale atomic.Bool // the cache shows no Machine
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ms).WithStatusSubresource(ms).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates.Add(1)
			return c.Create(ctx, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*metalv1.MachineList); ok && stale.Load() {
				return nil
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	r := &MachineSetReconciler{Client: c}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ms)}); err != nil {
			t.Fatal(err)
		}
	}
	stale.Store(true)
	reconcile()
	if got := creates.Load(); got != want {
		t.Fatalf("first reconcile: %d creates, want %d", got, want)
	}
	reconcile()
	if got := creates.Load(); got != want {
		t.Fatalf("a reconcile on the stale cache sent %d more creates, want none", got-want)
	}
	// The cache catches up; one Machine is then deleted behind the set's
	// back: it is created again.
	stale.Store(false)
	reconcile()
	if got := creates.Load(); got != want {
		t.Fatalf("with the cache caught up: %d more creates, want none", got-want)
	}
	if err := c.Delete(context.Background(), &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "set-3"}}); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if got := creates.Load(); got != want+1 {
		t.Fatalf("after a Machine was deleted: %d more creates, want 1", got-want)
	}
}
