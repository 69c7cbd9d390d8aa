package envtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"anvil.dev/anvil/deploy"
)

// DeployObjects is what `kubectl apply -k deploy/` applies, CRDs and
// Namespaces first (the rest needs them to exist).
func DeployObjects(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "deploy"))
	if err != nil {
		t.Fatalf("kustomize build deploy/: %v", err)
	}
	var first, rest []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		if k := u.GetKind(); k == "CustomResourceDefinition" || k == "Namespace" {
			first = append(first, u)
		} else {
			rest = append(rest, u)
		}
	}
	return append(first, rest...)
}

// InstallCRDFiles creates the CRDs in the YAML files matching glob (one
// CRD a file, e.g. a package's copied testdata) and waits until they are
// served.
func InstallCRDFiles(ctx context.Context, c client.Client, glob string) error {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs match %s: %v", glob, err)
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := c.Create(ctx, crd); err != nil {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	return deploy.WaitEstablished(ctx, c, names...)
}
