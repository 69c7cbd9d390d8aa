package deploy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/test/envtest"
)

func policyHost(ns, name, machine string) *metalv1.Host {
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://rack1"}, BootMACs: []string{"52:54:00:00:00:01"}}}
	if machine != "" {
		h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: metalv1.GroupVersion.String(), Kind: "Machine", Namespace: ns, Name: machine, UID: "0b9c7a52-0000-4000-8000-000000000001"}
	}
	return h
}

// With deploy/policy installed, the real API server refuses to delete a
// Host a Machine holds, naming the Machine; a free Host, or one its Machine
// let go of, is deleted. The envtest namespace cleanup still empties a
// namespace that holds a claimed Host.
func TestClaimedHostCannotBeDeleted(t *testing.T) {
	env, err := envtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()
	if err := deploy.InstallPolicies(ctx, env.Client); err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	claimed := policyHost(ns, "claimed", "worker-1")
	free := policyHost(ns, "free", "")
	free.Spec.BootMACs = []string{"52:54:00:00:00:02"}
	for _, h := range []*metalv1.Host{claimed, free} {
		if err := env.Client.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
	}

	// The API server enforces a new policy once its informer has it: a
	// dry-run delete (nothing is removed) shows when.
	var refusal error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		refusal = env.Client.Delete(ctx, claimed.DeepCopy(), client.DryRunAll)
		return refusal != nil, nil
	})
	if err != nil {
		t.Fatalf("a dry-run delete of a claimed Host was never refused: %v", err)
	}
	if err := env.Client.Delete(ctx, claimed.DeepCopy()); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "Host claimed is held by Machine worker-1") {
		t.Fatalf("deleting a claimed Host: %v, want Forbidden naming Machine worker-1", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(claimed), &metalv1.Host{}); err != nil {
		t.Fatalf("the claimed Host is gone after a refused delete: %v", err)
	}

	if err := env.Client.Delete(ctx, free); err != nil {
		t.Fatalf("deleting a free Host: %v", err)
	}

	// The Machine lets go (as the Machine controller's release does).
	got := &metalv1.Host{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(claimed), got); err != nil {
		t.Fatal(err)
	}
	before := got.DeepCopy()
	got.Spec.ConsumerRef = nil
	if err := env.Client.Patch(ctx, got, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Fatalf("deleting a released Host: %v", err)
	}

	var left metalv1.Host
	t.Run("cleanup", func(t *testing.T) {
		sub := env.Namespace(t)
		left = *policyHost(sub, "left-claimed", "worker-2")
		if err := env.Client.Create(ctx, &left); err != nil {
			t.Fatal(err)
		}
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&left), &metalv1.Host{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the namespace cleanup left a claimed Host: %v", err)
	}
}
