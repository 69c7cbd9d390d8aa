package clusterctl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/capi/clusterctl"
	"anvil.dev/anvil/capi/inplace"
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
	checkExtension(t, objs, args, cs[0].(map[string]any))
}

// checkExtension checks that the in-place update extension's pieces agree:
// the controller listens where the Service sends Cluster API, and the
// Secret and Service its flags name are the ones the Role and Service
// name.
func checkExtension(t *testing.T, objs []*unstructured.Unstructured, args []string, container map[string]any) {
	t.Helper()
	for _, want := range []string{"--capi-extension-bind-address=:9443",
		"--capi-extension-cert-secret=$(POD_NAMESPACE)/" + extensionSecret,
		"--capi-extension-service=$(POD_NAMESPACE)/anvil-capi-extension:443"} {
		if !slices.Contains(args, want) {
			t.Errorf("anvil-controller args %v lack %s", args, want)
		}
	}
	ports, _, _ := unstructured.NestedSlice(container, "ports")
	listens := false
	for _, p := range ports {
		p := p.(map[string]any)
		listens = listens || (p["name"] == "capi-ext" && fmt.Sprint(p["containerPort"]) == "9443")
	}
	if !listens {
		t.Errorf("anvil-controller ports %v: no capi-ext on 9443", ports)
	}
	var svc, role *unstructured.Unstructured
	for _, u := range objs {
		switch {
		case u.GetKind() == "Service" && u.GetName() == "anvil-capi-extension":
			svc = u
		case u.GetKind() == "Role" && u.GetName() == "anvil-capi-extension-cert":
			role = u
		}
	}
	if svc == nil || role == nil {
		t.Fatalf("no Service anvil-capi-extension (%v) or Role anvil-capi-extension-cert (%v)", svc != nil, role != nil)
	}
	sp, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(sp) != 1 || fmt.Sprint(sp[0].(map[string]any)["port"]) != "443" || sp[0].(map[string]any)["targetPort"] != "capi-ext" {
		t.Errorf("Service anvil-capi-extension ports %v: want 443 to capi-ext", sp)
	}
	if !strings.Contains(fmt.Sprint(role.Object["rules"]), "resourceNames:["+extensionSecret+"]") {
		t.Errorf("Role anvil-capi-extension-cert rules %v do not name Secret %s", role.Object["rules"], extensionSecret)
	}
}

const extensionSecret = "anvil-capi-extension-cert"

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
	extensionWritesAsItsServiceAccount(ctx, t, env, objs, ns)
}

// extensionWritesAsItsServiceAccount grants what the components grant
// (for real this time) and runs the extension's own writes, the
// certificate Secret and the ExtensionConfig, as the controller's service
// account in the target namespace: the grants are enough, and name the
// same Secret as the flags.
func extensionWritesAsItsServiceAccount(ctx context.Context, t *testing.T, env *envtest.Env, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	must(t, envtest.InstallCRDFiles(ctx, env.Client, filepath.Join(capitest.Dir(t), "crds", "core", "bases", "runtime.cluster.x-k8s.io_extensionconfigs.yaml")))
	for _, u := range objs {
		switch u.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			u = u.DeepCopy() // as generated: the dry run above filled in server fields
			u.SetManagedFields(nil)
			u.SetResourceVersion("")
			u.SetUID("")
			u.SetCreationTimestamp(metav1.Time{})
			if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("test"), client.ForceOwnership); err != nil {
				t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
	rc := rest.CopyConfig(env.Config)
	rc.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":anvil",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	sa, err := client.New(rc, client.Options{Scheme: env.Client.Scheme()})
	must(t, err)
	key := types.NamespacedName{Namespace: ns, Name: extensionSecret}
	cert := &inplace.CertSecret{Key: key, DNSNames: []string{"anvil-capi-extension." + ns + ".svc"}, Reader: sa, Client: sa, Logger: logr.Discard()}
	must(t, cert.Sync(ctx)) // creates it
	cert.DNSNames = []string{"anvil-capi-extension." + ns + ".svc", "renamed"}
	must(t, cert.Sync(ctx)) // renews it
	reg := &inplace.Registration{Service: &runtimev1.ServiceReference{Namespace: ns, Name: "anvil-capi-extension"}, CASecret: key, Client: sa, Logger: logr.Discard()}
	must(t, reg.Apply(ctx)) // creates it
	must(t, reg.Apply(ctx)) // applies it again
	// And no more: another Secret of the namespace cannot be written.
	other := &inplace.CertSecret{Key: types.NamespacedName{Namespace: ns, Name: "other"}, DNSNames: []string{"x"}, Reader: sa, Client: sa, Logger: logr.Discard()}
	must(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other", Annotations: map[string]string{inplace.GeneratedByAnnotation: "x"}}}))
	if err := other.Sync(ctx); err == nil || !apierrors.IsForbidden(errors.Unwrap(err)) {
		t.Errorf("renewing another Secret as the service account: %v, want forbidden", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
