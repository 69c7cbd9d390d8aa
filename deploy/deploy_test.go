package deploy_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/test/envtest"
)

// The committed CRDs and ClusterRole must be what controller-gen makes
// from the code today.
func TestGeneratedManifestsUpToDate(t *testing.T) {
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(root, "bin", "controller-gen")
	if _, err := os.Stat(gen); err != nil {
		t.Fatalf("bin/controller-gen missing: run make tools")
	}
	tmp := t.TempDir()
	for _, tc := range []struct {
		args     []string
		dir, out string
	}{
		{[]string{"crd:maxDescLen=400", "paths=./api/...", "output:crd:artifacts:config=" + filepath.Join(tmp, "crds")}, "deploy/crds", filepath.Join(tmp, "crds")},
		{[]string{"rbac:roleName=anvil-manager", "paths=./...", "output:rbac:artifacts:config=" + filepath.Join(tmp, "rbac")}, "deploy/rbac", filepath.Join(tmp, "rbac")},
	} {
		cmd := exec.Command(gen, tc.args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", tc.args, err, out)
		}
		generated, _ := filepath.Glob(filepath.Join(tc.out, "*.yaml"))
		if len(generated) == 0 {
			t.Fatalf("controller-gen made nothing in %s", tc.out)
		}
		for _, g := range generated {
			want, _ := os.ReadFile(g)
			got, err := os.ReadFile(filepath.Join(root, tc.dir, filepath.Base(g)))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s/%s is out of date: run `make generate`", tc.dir, filepath.Base(g))
			}
		}
	}
}

// The kustomize base builds and the real API server accepts every object
// (server-side dry run: nothing is stored).
func TestKustomizeBaseAppliesWithDryRun(t *testing.T) {
	env, err := envtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()
	kinds := map[string]int{}
	// CRDs and the namespace first: the dry run of namespaced objects needs them.
	for _, u := range envtest.DeployObjects(t) {
		opts := []client.ApplyOption{client.FieldOwner("test"), client.ForceOwnership}
		if u.GetKind() != "Namespace" && u.GetKind() != "CustomResourceDefinition" {
			opts = append(opts, client.DryRunAll)
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		kinds[u.GetKind()]++
	}
	for _, k := range []string{"CustomResourceDefinition", "Deployment", "ClusterRole", "ClusterRoleBinding", "Role", "Service", "ServiceAccount"} {
		if kinds[k] == 0 {
			t.Errorf("kustomize base has no %s", k)
		}
	}
}
