package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/test/clustertest"
	"anvil.dev/anvil/test/envtest"
)

// The boot service's ServiceAccount, with the Role deploy/pxe/daemonset.yaml
// ships, can read the named target kubeconfig Secret and no other.
func TestDaemonSetReadsOnlyNamedKubeconfig(t *testing.T) {
	need2(t)
	ctx := context.Background()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "pxe", "daemonset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := mgmt.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "anvil-system"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	applied := 0
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if u.GetName() != "anvil-pxe-target-kubeconfigs" {
			continue
		}
		if err := mgmt.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("test"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
		applied++
	}
	if applied != 2 {
		t.Fatalf("found %d of the Role and RoleBinding anvil-pxe-target-kubeconfigs", applied)
	}
	for _, name := range []string{"target-cluster-kubeconfig", "other-kubeconfig"} {
		if _, err := clustertest.CreateSecret(ctx, mgmt.Client, "anvil-system", name, target.Config); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(mgmt.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:anvil-system:anvil-pxe"}
	sa, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cluster.New(cluster.Options{Secrets: sa})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ForSecret(ctx, types.NamespacedName{Namespace: "anvil-system", Name: "target-cluster-kubeconfig"}); err != nil {
		t.Fatalf("as the DaemonSet's ServiceAccount: %v", err)
	}
	_, err = r.ForSecret(ctx, types.NamespacedName{Namespace: "anvil-system", Name: "other-kubeconfig"})
	if err == nil || !strings.Contains(err.Error(), "not readable by anvil") {
		t.Fatalf("another Secret as the DaemonSet's ServiceAccount: %v, want a clear RBAC error", err)
	}
}
