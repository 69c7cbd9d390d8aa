package envtest

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
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
