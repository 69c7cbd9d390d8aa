package inplace_test

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimecatalog "sigs.k8s.io/cluster-api/api/runtime/catalog"
	hooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	"anvil.dev/anvil/capi/inplace"
)

// Discovery announces the three handlers as Cluster API's runtime client
// validates them (internal/runtime/client: defaultAndValidateDiscoveryResponse).
func TestDiscovery(t *testing.T) {
	resp := &hooksv1.DiscoveryResponse{}
	call(t, hooksv1.Discovery, "", &hooksv1.DiscoveryRequest{}, resp)
	if resp.Status != hooksv1.ResponseStatusSuccess || resp.Kind != "DiscoveryResponse" || resp.APIVersion != hooksv1.GroupVersion.String() {
		t.Fatalf("discovery: %+v", resp)
	}
	want := map[string]string{inplace.HandlerCanUpdateMachine: "CanUpdateMachine", inplace.HandlerCanUpdateMachineSet: "CanUpdateMachineSet", inplace.HandlerUpdateMachine: "UpdateMachine"}
	if len(resp.Handlers) != len(want) {
		t.Fatalf("handlers %+v, want %v", resp.Handlers, want)
	}
	for _, h := range resp.Handlers {
		gvh := runtimecatalog.GroupVersionHook{Group: hooksv1.GroupVersion.Group, Version: hooksv1.GroupVersion.Version, Hook: h.RequestHook.Hook}
		if want[h.Name] != h.RequestHook.Hook || h.RequestHook.APIVersion != hooksv1.GroupVersion.String() || !catalog.IsHookRegistered(gvh) {
			t.Errorf("handler %+v", h)
		}
		if errs := validation.IsDNS1123Label(h.Name); len(errs) > 0 {
			t.Errorf("handler name %q: %v", h.Name, errs)
		}
		if h.TimeoutSeconds == nil || *h.TimeoutSeconds < 1 || *h.TimeoutSeconds > 30 {
			t.Errorf("handler %s timeoutSeconds %v, want 1..30", h.Name, h.TimeoutSeconds)
		}
		if h.FailurePolicy == nil || *h.FailurePolicy != hooksv1.FailurePolicyFail {
			t.Errorf("handler %s failurePolicy %v, want Fail", h.Name, h.FailurePolicy)
		}
	}
}

func rawOf(t testing.TB, o any) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(o)
	must(t, err)
	return runtime.RawExtension{Raw: b}
}

func asMap(t testing.TB, o any) map[string]any {
	t.Helper()
	m := map[string]any{}
	must(t, json.Unmarshal(rawOf(t, o).Raw, &m))
	return m
}

func machineSet(version string) clusterv1.MachineSet {
	return clusterv1.MachineSet{TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "md-0-abc", Namespace: "ns", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec: clusterv1.MachineSetSpec{ClusterName: "c1", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{ClusterName: "c1", Version: version,
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Name: "md-0"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachineTemplate", Name: "md-0"}}}}}
}

func template(class, pool string) *infrav1.AnvilMachineTemplate {
	return &infrav1.AnvilMachineTemplate{TypeMeta: metav1.TypeMeta{APIVersion: infrav1.GroupVersion.String(), Kind: "AnvilMachineTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: "md-0", Namespace: "ns"},
		Spec: infrav1.AnvilMachineTemplateSpec{Template: infrav1.AnvilMachineTemplateResource{Spec: infrav1.AnvilMachineSpec{
			MachineClassRef: infrav1.LocalObjectReference{Name: class}, HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}}}}}}
}

// The secret a KubeadmConfig(Template) may carry; it must never reach a
// log or a response.
const secretMarker = "abcdef.0123456789abcdef-SECRET"

func kubeadmConfigTemplate() map[string]any {
	return map[string]any{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate", "metadata": map[string]any{"name": "md-0", "namespace": "ns"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"joinConfiguration": map[string]any{"discovery": map[string]any{"bootstrapToken": map[string]any{"token": secretMarker}}}}}}}
}

func canUpdateMachineSet(t *testing.T, from, to string, curTmpl, desTmpl *infrav1.AnvilMachineTemplate) (*hooksv1.CanUpdateMachineSetRequest, *hooksv1.CanUpdateMachineSetResponse) {
	req := &hooksv1.CanUpdateMachineSetRequest{
		Current: hooksv1.CanUpdateMachineSetRequestObjects{MachineSet: machineSet(from), InfrastructureMachineTemplate: rawOf(t, curTmpl), BootstrapConfigTemplate: rawOf(t, kubeadmConfigTemplate())},
		Desired: hooksv1.CanUpdateMachineSetRequestObjects{MachineSet: machineSet(to), InfrastructureMachineTemplate: rawOf(t, desTmpl), BootstrapConfigTemplate: rawOf(t, kubeadmConfigTemplate())},
	}
	resp := &hooksv1.CanUpdateMachineSetResponse{}
	call(t, hooksv1.CanUpdateMachineSet, inplace.HandlerCanUpdateMachineSet, req, resp)
	if resp.Status != hooksv1.ResponseStatusSuccess {
		t.Fatalf("CanUpdateMachineSet: %+v", resp)
	}
	return req, resp
}

// A version bump is claimed with a patch that, applied by Cluster API to
// the current MachineSet, gives the desired spec.template.spec; nothing
// else is patched.
func TestCanUpdateMachineSetClaimsAVersionBump(t *testing.T) {
	req, resp := canUpdateMachineSet(t, "v1.36.3", "v1.37.2", template("fcos", "a"), template("fcos", "a"))
	if resp.MachineSetPatch.PatchType != hooksv1.JSONPatchType || resp.InfrastructureMachineTemplatePatch.IsDefined() || resp.BootstrapConfigTemplatePatch.IsDefined() {
		t.Fatalf("patches: %+v", resp)
	}
	got := inplace.ApplyLikeCAPI(t, req.Current.MachineSet, resp.MachineSetPatch, "spec", "template", "spec")
	if want := asMap(t, req.Desired.MachineSet); !reflect.DeepEqual(got["spec"], want["spec"]) {
		t.Errorf("patched spec\n%v\nwant\n%v", got["spec"], want["spec"])
	}
	if !strings.Contains(resp.Message, "kubelet v1.36.3 -> v1.37.2 in place") {
		t.Errorf("message %q", resp.Message)
	}
}

// Another class or host selector is not Anvil's to change in place: no
// patch for it, so Cluster API sees the difference and replaces.
func TestCanUpdateMachineSetLeavesClassAndSelectorToReplacement(t *testing.T) {
	for name, des := range map[string]*infrav1.AnvilMachineTemplate{"class": template("flatcar", "a"), "selector": template("fcos", "b")} {
		t.Run(name, func(t *testing.T) {
			req, resp := canUpdateMachineSet(t, "v1.36.3", "v1.37.2", template("fcos", "a"), des)
			if resp.InfrastructureMachineTemplatePatch.IsDefined() {
				t.Fatalf("AnvilMachineTemplate patch %s", resp.InfrastructureMachineTemplatePatch.Patch)
			}
			got := inplace.ApplyLikeCAPI(t, req.Current.InfrastructureMachineTemplate, resp.InfrastructureMachineTemplatePatch, "spec", "template", "spec")
			if reflect.DeepEqual(got["spec"], asMap(t, des)["spec"]) {
				t.Error("current AnvilMachineTemplate equals desired after the patches")
			}
			if !strings.Contains(resp.Message, "not in place (Cluster API replaces the Machine for these): the AnvilMachineTemplate's spec") {
				t.Errorf("message %q", resp.Message)
			}
		})
	}
}

func TestCanUpdateMachineOverHTTPS(t *testing.T) {
	m := func(version string, labels map[string]string) clusterv1.Machine {
		return clusterv1.Machine{TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"},
			ObjectMeta: metav1.ObjectMeta{Name: "cp-1", Namespace: "ns", Labels: labels},
			Spec: clusterv1.MachineSpec{ClusterName: "c1", Version: version,
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachine", Name: "cp-1"}}}
	}
	am := rawOf(t, &infrav1.AnvilMachine{TypeMeta: metav1.TypeMeta{APIVersion: infrav1.GroupVersion.String(), Kind: "AnvilMachine"},
		Spec: infrav1.AnvilMachineSpec{MachineClassRef: infrav1.LocalObjectReference{Name: "fcos"}}})
	cfg := rawOf(t, map[string]any{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig", "spec": map[string]any{}})
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		claimed bool
	}{
		{"worker", nil, true},
		{"control plane", map[string]string{clusterv1.MachineControlPlaneLabel: ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &hooksv1.CanUpdateMachineRequest{
				Current: hooksv1.CanUpdateMachineRequestObjects{Machine: m("v1.36.3", tc.labels), InfrastructureMachine: am, BootstrapConfig: cfg},
				Desired: hooksv1.CanUpdateMachineRequestObjects{Machine: m("v1.37.2", tc.labels), InfrastructureMachine: am, BootstrapConfig: cfg},
			}
			resp := &hooksv1.CanUpdateMachineResponse{}
			call(t, hooksv1.CanUpdateMachine, inplace.HandlerCanUpdateMachine, req, resp)
			if resp.Status != hooksv1.ResponseStatusSuccess || resp.MachinePatch.IsDefined() != tc.claimed {
				t.Fatalf("response %+v, want claimed=%v", resp, tc.claimed)
			}
			got := inplace.ApplyLikeCAPI(t, req.Current.Machine, resp.MachinePatch, "spec")
			if same := reflect.DeepEqual(got["spec"], asMap(t, req.Desired.Machine)["spec"]); same != tc.claimed {
				t.Errorf("current equals desired after the patch: %v (%v)", same, got["spec"])
			}
		})
	}
}

// The extension refuses what is not a well-formed hook request, answers
// in Cluster API's format (HTTP 200, status Failure), and never logs or
// echoes a body.
func TestBadRequests(t *testing.T) {
	gvh, _ := catalog.GroupVersionHook(hooksv1.UpdateMachine)
	path := runtimecatalog.GVHToPath(gvh, inplace.HandlerUpdateMachine)
	failure := func(body []byte, want string) {
		t.Helper()
		code, out := post(t, path, body)
		resp := &hooksv1.UpdateMachineResponse{}
		if code != http.StatusOK || json.Unmarshal(out, resp) != nil || resp.Status != hooksv1.ResponseStatusFailure || !strings.Contains(resp.Message, want) {
			t.Errorf("HTTP %d %s; want 200 with Failure %q", code, out, want)
		}
		if strings.Contains(string(out), secretMarker) {
			t.Errorf("the response echoes the body: %s", out)
		}
	}
	big := append([]byte(`{"kind":"UpdateMachineRequest","settings":{"x":"`+secretMarker), make([]byte, inplace.MaxBodyBytes)...)
	failure(big, "request body over 10485760 bytes")
	failure([]byte(`{"desired":`+secretMarker), "the request body is not a UpdateMachineRequest in JSON")
	failure([]byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"CanUpdateMachineRequest","settings":{"x":"`+secretMarker+`"}}`),
		"the request's apiVersion and kind are not hooks.runtime.cluster.x-k8s.io/v1alpha1, UpdateMachineRequest")
	failure([]byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"UpdateMachineRequest","desired":{"machine":{"metadata":{"namespace":"../x","name":"`+secretMarker+`"}}}}`),
		"the request names no valid Machine")

	r, err := httpClient(t, 0).Get(baseURL + path)
	must(t, err)
	r.Body.Close()
	if r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d, want 405", r.StatusCode)
	}
	if code, _ := post(t, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/updatemachine/other", []byte(`{}`)); code != http.StatusNotFound {
		t.Errorf("unknown handler: HTTP %d, want 404", code)
	}
	// TLS 1.2 at least, and only TLS.
	if _, err := httpClient(t, tls.VersionTLS11).Post(baseURL+path, "application/json", strings.NewReader("{}")); err == nil {
		t.Error("a TLS 1.1 client was served")
	}
	if r, err := http.Post(strings.Replace(baseURL, "https:", "http:", 1)+path, "application/json", strings.NewReader("{}")); err == nil {
		r.Body.Close()
		if r.StatusCode == http.StatusOK {
			t.Error("plain HTTP was served")
		}
	}
	if strings.Contains(logs.String(), secretMarker) {
		t.Errorf("a request body reached the log:\n%s", logs.String())
	}
}

// A missing or bad certificate is an error naming the file at New, not
// a server that fails its first handshake.
func TestNewNeedsACertificate(t *testing.T) {
	dir := t.TempDir()
	opts := inplace.Options{CertDir: dir, Reader: c, Client: c}
	if _, err := inplace.New(opts); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "tls.crt")) {
		t.Errorf("no certificate: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "tls.crt"), []byte("not PEM"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "tls.key"), []byte("not PEM"), 0o600))
	if _, err := inplace.New(opts); err == nil || !strings.Contains(err.Error(), "tls.key") {
		t.Errorf("bad certificate: %v", err)
	}
}
