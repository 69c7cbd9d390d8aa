package deploy_test

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"anvil.dev/anvil/test/envtest"
)

// Every container kustomize renders runs the image deploy/kustomization.yaml
// names, so setting it there (or in an overlay) sets it everywhere; the name is
// the one `make images` writes (hack/images: anvil.dev/anvil).
func TestKustomizeSetsTheImageInOnePlace(t *testing.T) {
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "deploy")
	fs := filesys.MakeFsOnDisk()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		t.Fatalf("kustomize build deploy/: %v", err)
	}
	data, err := fs.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k := struct {
		Images []struct{ Name, NewName, NewTag string }
	}{}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.Images) != 1 || k.Images[0].Name != "anvil.dev/anvil" || k.Images[0].NewTag == "" {
		t.Fatalf("deploy/kustomization.yaml images: %+v, want one entry for anvil.dev/anvil with a newTag", k.Images)
	}
	want := k.Images[0].NewName + ":" + k.Images[0].NewTag
	n := 0
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		for _, field := range []string{"containers", "initContainers"} {
			v, _, _ := unstructured.NestedFieldNoCopy(m, "spec", "template", "spec", field)
			cs, _ := v.([]any)
			for _, c := range cs {
				img, _ := c.(map[string]any)["image"].(string)
				if img != want {
					t.Errorf("%s %s: image %q, want %q from kustomization.yaml", u.GetKind(), u.GetName(), img, want)
				}
				n++
			}
		}
	}
	if n < 2 {
		t.Errorf("%d containers, want the controller's and the netboot DaemonSet's", n)
	}
}
