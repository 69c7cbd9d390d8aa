package clusterctl_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/capi/clusterctl"
	"anvil.dev/anvil/test/capitest"
	"anvil.dev/anvil/test/envtest"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func decode(t *testing.T, b []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("decoding YAML: %v", err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// clusterScoped are the kinds in the components that have no namespace.
var clusterScoped = []string{"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

// checkComponents checks what clusterctl needs of, or made of, the
// components: one Namespace, every namespaced object in it, Anvil's CRDs
// (the infrastructure ones with the contract label) and the controller
// Deployment running the provider.
func checkComponents(t *testing.T, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	var namespaces, crds []string
	var deploy *unstructured.Unstructured
	for _, u := range objs {
		switch k := u.GetKind(); {
		case k == "Namespace":
			namespaces = append(namespaces, u.GetName())
		case k == "CustomResourceDefinition":
			crds = append(crds, u.GetName())
			if strings.HasPrefix(u.GetName(), "anvil") && u.GetLabels()["cluster.x-k8s.io/v1beta2"] != "v1beta1" {
				t.Errorf("CRD %s lacks the contract label cluster.x-k8s.io/v1beta2: v1beta1", u.GetName())
			}
		case k == "Deployment" && u.GetName() == "anvil-controller":
			deploy = u
		}
		scoped := slices.Contains(clusterScoped, u.GetKind())
		if !scoped && u.GetNamespace() != ns {
			t.Errorf("%s %s is in namespace %q, not %s", u.GetKind(), u.GetName(), u.GetNamespace(), ns)
		}
		if scoped && u.GetKind() != "Namespace" && u.GetNamespace() != "" {
			// clusterctl sets a namespace on kinds it does not know are
			// cluster-scoped; the API server drops it (the dry run shows).
			t.Logf("%s %s carries namespace %q", u.GetKind(), u.GetName(), u.GetNamespace())
		}
	}
	if !slices.Equal(namespaces, []string{ns}) {
		t.Errorf("Namespaces %v, want exactly [%s]", namespaces, ns)
	}
	for _, want := range []string{"anvilclusters.infrastructure.cluster.x-k8s.io", "anvilmachines.infrastructure.cluster.x-k8s.io",
		"anvilmachinetemplates.infrastructure.cluster.x-k8s.io", "hosts.metal.anvil.dev", "machines.metal.anvil.dev"} {
		if !slices.Contains(crds, want) {
			t.Errorf("no CRD %s in %v", want, crds)
		}
	}
	if deploy == nil {
		t.Fatal("no Deployment anvil-controller")
	}
	cs, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(cs[0].(map[string]any), "args")
	if !slices.Contains(args, "--capi") || !slices.Contains(args, "--secret-namespaces=$(POD_NAMESPACE)") {
		t.Errorf("anvil-controller args %v: want --capi and --secret-namespaces=$(POD_NAMESPACE)", args)
	}
}

// The components are deploy/ in clusterctl's shape: nothing left in
// kube-system or default, which clusterctl would move into its target
// namespace, no namespace written out in arguments, no variables.
func TestComponentsLiveInOneNamespace(t *testing.T) {
	b, err := clusterctl.Components(root(t))
	if err != nil {
		t.Fatal(err)
	}
	checkComponents(t, decode(t, b), "anvil-system")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "anvil-system") && strings.TrimSpace(l) != "namespace: anvil-system" && strings.TrimSpace(l) != "name: anvil-system" {
			t.Errorf("anvil-system outside metadata (clusterctl would not rewrite it): %q", l)
		}
		if strings.Contains(l, "${") {
			t.Errorf("a clusterctl variable: %q", l)
		}
	}
}

func TestWriteRepositoryRefusesVersionsClusterctlWould(t *testing.T) {
	for ver, want := range map[string]string{
		"0.1.0":    "semantic version with a leading v",
		"latest":   "semantic version",
		"v9.9.0":   "no release series 9.9",
		"v0.1.0-x": "",
	} {
		_, err := clusterctl.WriteRepository(root(t), t.TempDir(), ver)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("WriteRepository %s: %v, want %q", ver, err, want)
		}
	}
}

// The real clusterctl (bin/capi) reads the provider from a local file
// repository, validates it, installs it into another target namespace
// (rewriting the namespaced objects), and what it prints applies to a real
// API server. No network: a proxy on a closed loopback port would fail any
// request, and there is no GitHub token or overrides directory.
func TestClusterctlGeneratesTheProviderFromALocalRepository(t *testing.T) {
	bin := capitest.Dir(t)
	tmp := t.TempDir()
	comps, err := clusterctl.WriteRepository(root(t), filepath.Join(tmp, "repo"), "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(tmp, "clusterctl.yaml")
	must(t, os.WriteFile(cfg, []byte("providers:\n- name: anvil\n  type: InfrastructureProvider\n  url: file://"+comps+"\n"), 0o644))

	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "clusterctl"), append(args, "--config", cfg)...)
		home := filepath.Join(tmp, "home")
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=/usr/bin:/bin",
			"CLUSTERCTL_DISABLE_VERSIONCHECK=true",
			"HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1", "NO_PROXY="}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("clusterctl %v: %v\n%s", args, err, stderr.Bytes())
		}
		return out
	}

	// No variables: $(POD_NAMESPACE) and the like are the kubelet's, not
	// clusterctl's (it lists any it finds under Variables:).
	desc := string(run("generate", "provider", "--infrastructure", "anvil:v0.1.0", "--describe"))
	for _, want := range []string{"Version:            v0.1.0", "TargetNamespace:    anvil-system", "- anvil.dev/anvil:dev"} {
		if !strings.Contains(desc, want) {
			t.Errorf("clusterctl generate provider --describe lacks %q:\n%s", want, desc)
		}
	}
	if strings.Contains(desc, "Variables:") {
		t.Errorf("the components have clusterctl variables:\n%s", desc)
	}

	const ns = "anvil-capi"
	out := run("generate", "provider", "--infrastructure", "anvil:v0.1.0", "--target-namespace", ns)
	objs := decode(t, out)
	checkComponents(t, objs, ns)
	for _, u := range objs {
		if l := u.GetLabels()["cluster.x-k8s.io/provider"]; l != clusterctl.ProviderLabel {
			t.Errorf("%s %s: cluster.x-k8s.io/provider label %q, want %s", u.GetKind(), u.GetName(), l, clusterctl.ProviderLabel)
		}
	}

	env, err := envtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()
	// Namespace and CRDs for real (the rest needs them), the rest dry run.
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		first := func(u *unstructured.Unstructured) bool {
			return u.GetKind() == "Namespace" || u.GetKind() == "CustomResourceDefinition"
		}
		switch {
		case first(a) && !first(b):
			return -1
		case first(b) && !first(a):
			return 1
		}
		return 0
	})
	for _, u := range objs {
		opts := []client.ApplyOption{client.FieldOwner("test"), client.ForceOwnership}
		if u.GetKind() != "Namespace" && u.GetKind() != "CustomResourceDefinition" {
			opts = append(opts, client.DryRunAll)
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
			t.Errorf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
