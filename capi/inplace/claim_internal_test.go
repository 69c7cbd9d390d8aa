package inplace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	hooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
)

// applyLikeCAPI applies p to obj as Cluster API v1.14 does
// (internal/util/patch.ApplyPatchToObject): to the whole object's JSON,
// then only the field at path is copied back. It returns the result as
// JSON maps.
func applyLikeCAPI(t testing.TB, obj any, p hooksv1.Patch, path ...string) map[string]any {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := asMap(t, raw)
	if !p.IsDefined() {
		return out
	}
	var patched []byte
	switch p.PatchType {
	case hooksv1.JSONPatchType:
		jp, err := jsonpatch.DecodePatch(p.Patch)
		if err != nil {
			t.Fatalf("patch %s: %v", p.Patch, err)
		}
		if patched, err = jp.Apply(raw); err != nil {
			t.Fatalf("applying %s: %v", p.Patch, err)
		}
	case hooksv1.JSONMergePatchType:
		if patched, err = jsonpatch.MergePatch(raw, p.Patch); err != nil {
			t.Fatalf("applying %s: %v", p.Patch, err)
		}
	default:
		t.Fatalf("patch type %q", p.PatchType)
	}
	v, _ := nested(asMap(t, patched), path...)
	parent, _ := nested(out, path[:len(path)-1]...)
	parent.(map[string]any)[path[len(path)-1]] = v
	return out
}

func asMap(t testing.TB, b []byte) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func nested(m any, path ...string) (any, bool) {
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil, false
		}
		if m, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return m, true
}

func TestClaimVersion(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		claimed  bool
		why      string
	}{
		{"v1.36.3", "v1.37.2", true, "kubelet v1.36.3 -> v1.37.2 in place"},
		{"v1.36.1", "v1.36.3", true, "kubelet v1.36.1 -> v1.36.3 in place"},
		{"v1.37.2", "v1.37.2", false, "spec.version unchanged"},
		{"v1.37.2", "v1.36.3", false, "older than the running"},
		{"v1.35.0", "v1.37.2", false, "skips minor versions"},
		{"v1.37.2", "v2.0.0", false, "skips minor versions"},
		{"v1.36.3", "1.37.2", false, `desired version "1.37.2" is not vX.Y.Z`},
		{"v1.36.3", "v1.37.0-rc.1", false, "is not vX.Y.Z"},
		{"", "v1.37.2", false, `current version "" is not vX.Y.Z`},
		{"v1.36.3", "v1.37.2" + strings.Repeat("x", 1<<20), false, `desired version "v1.37.2xxxx`},
		{strings.Repeat("v", 1<<20), strings.Repeat("v", 1<<20), false, `spec.version unchanged ("vvv`},
	} {
		c := claimVersion("/spec/version", tc.from, tc.to)
		if (c.patch != nil) != tc.claimed || !strings.Contains(c.why, tc.why) || len(c.why) > 200 {
			t.Errorf("%.20s -> %.20s: patch %s, why %.300q; want claimed=%v, a short why containing %q", tc.from, tc.to, c.patch, c.why, tc.claimed, tc.why)
		}
		if !tc.claimed {
			continue
		}
		m := clusterv1.Machine{Spec: clusterv1.MachineSpec{Version: tc.from, FailureDomain: "rack-a"}}
		got := applyLikeCAPI(t, m, hooksv1.Patch{PatchType: hooksv1.JSONPatchType, Patch: c.patch}, "spec")
		if v, _ := nested(got, "spec", "version"); v != tc.to {
			t.Errorf("%s -> %s: patched version %v", tc.from, tc.to, v)
		}
		if fd, _ := nested(got, "spec", "failureDomain"); fd != "rack-a" {
			t.Errorf("the patch touched spec.failureDomain: %v", fd)
		}
		// The patch applies only to the version it was made for.
		other := clusterv1.Machine{Spec: clusterv1.MachineSpec{Version: "v1.30.0"}}
		raw, _ := json.Marshal(other)
		jp, _ := jsonpatch.DecodePatch(c.patch)
		if _, err := jp.Apply(raw); err == nil {
			t.Errorf("%s -> %s: the patch applied to a Machine at v1.30.0", tc.from, tc.to)
		}
	}
}

func raw(t testing.TB, o any) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

func anvilMachine(class string, selector map[string]string) *infrav1.AnvilMachine {
	return &infrav1.AnvilMachine{TypeMeta: metav1.TypeMeta{APIVersion: infrav1.GroupVersion.String(), Kind: "AnvilMachine"},
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"},
		Spec: infrav1.AnvilMachineSpec{MachineClassRef: infrav1.LocalObjectReference{Name: class},
			HostSelector: metav1.LabelSelector{MatchLabels: selector}}}
}

func kubeadmConfig(files ...string) map[string]any {
	var fs []any
	for _, f := range files {
		fs = append(fs, map[string]any{"path": f, "content": "x"})
	}
	return map[string]any{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig",
		"metadata": map[string]any{"name": "m", "namespace": "ns"}, "spec": map[string]any{"files": fs}}
}

func capiMachine(version, fd string, labels map[string]string) clusterv1.Machine {
	return clusterv1.Machine{TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine"},
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", Labels: labels},
		Spec: clusterv1.MachineSpec{ClusterName: "c", Version: version, FailureDomain: fd,
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachine", Name: "m"}}}
}

// CanUpdateMachine: what is claimed is exactly the version; the patch,
// applied as Cluster API applies it, makes current's spec desired's when
// nothing else differs, and leaves every other difference in place.
func TestCanUpdateMachine(t *testing.T) {
	pool := map[string]string{"pool": "a"}
	cp := map[string]string{clusterv1.MachineControlPlaneLabel: ""}
	type objs struct {
		m     clusterv1.Machine
		infra any
		boot  any
	}
	for _, tc := range []struct {
		name        string
		cur, des    objs
		claimed     bool
		inPlace     bool // current equals desired after the patch
		wantMessage string
	}{
		{"version bump", objs{capiMachine("v1.36.3", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig("/a")},
			objs{capiMachine("v1.37.2", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig("/a")}, true, true, "kubelet v1.36.3 -> v1.37.2 in place"},
		{"version bump and another class", objs{capiMachine("v1.36.3", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig()},
			objs{capiMachine("v1.37.2", "r1", nil), anvilMachine("flatcar", pool), kubeadmConfig()}, true, false, "not in place (Cluster API replaces the Machine for these): the AnvilMachine's spec"},
		{"another host selector", objs{capiMachine("v1.37.2", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig()},
			objs{capiMachine("v1.37.2", "r1", nil), anvilMachine("fcos", map[string]string{"pool": "b"}), kubeadmConfig()}, false, false, "the AnvilMachine's spec"},
		{"another failure domain", objs{capiMachine("v1.36.3", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig()},
			objs{capiMachine("v1.37.2", "r2", nil), anvilMachine("fcos", pool), kubeadmConfig()}, true, false, "spec.failureDomain"},
		{"bootstrap change", objs{capiMachine("v1.36.3", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig("/a")},
			objs{capiMachine("v1.37.2", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig("/b")}, true, false, "the bootstrap config's spec"},
		{"downgrade", objs{capiMachine("v1.37.2", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig()},
			objs{capiMachine("v1.36.3", "r1", nil), anvilMachine("fcos", pool), kubeadmConfig()}, false, false, "older than the running"},
		{"control plane", objs{capiMachine("v1.36.3", "r1", cp), anvilMachine("fcos", pool), kubeadmConfig()},
			objs{capiMachine("v1.37.2", "r1", cp), anvilMachine("fcos", pool), kubeadmConfig()}, false, false, "control-plane Machine"},
		{"another provider", objs{capiMachine("v1.36.3", "r1", nil), map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachine", "spec": map[string]any{}}, kubeadmConfig()},
			objs{capiMachine("v1.37.2", "r1", nil), map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachine", "spec": map[string]any{}}, kubeadmConfig()}, false, false, "not an AnvilMachine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &hooksv1.CanUpdateMachineRequest{
				Current: hooksv1.CanUpdateMachineRequestObjects{Machine: tc.cur.m, InfrastructureMachine: raw(t, tc.cur.infra), BootstrapConfig: raw(t, tc.cur.boot)},
				Desired: hooksv1.CanUpdateMachineRequestObjects{Machine: tc.des.m, InfrastructureMachine: raw(t, tc.des.infra), BootstrapConfig: raw(t, tc.des.boot)},
			}
			resp := &hooksv1.CanUpdateMachineResponse{}
			canUpdateMachine(req, resp)
			if resp.Status != hooksv1.ResponseStatusSuccess || !strings.Contains(resp.Message, tc.wantMessage) {
				t.Errorf("status %s, message %q; want Success and %q", resp.Status, resp.Message, tc.wantMessage)
			}
			if resp.MachinePatch.IsDefined() != tc.claimed {
				t.Errorf("machinePatch %+v, want claimed=%v", resp.MachinePatch, tc.claimed)
			}
			if resp.InfrastructureMachinePatch.IsDefined() || resp.BootstrapConfigPatch.IsDefined() {
				t.Errorf("patches for the AnvilMachine (%s) or bootstrap config (%s): Anvil changes neither in place", resp.InfrastructureMachinePatch.Patch, resp.BootstrapConfigPatch.Patch)
			}
			m := applyLikeCAPI(t, tc.cur.m, resp.MachinePatch, "spec")
			i := applyLikeCAPI(t, tc.cur.infra, resp.InfrastructureMachinePatch, "spec")
			b := applyLikeCAPI(t, tc.cur.boot, resp.BootstrapConfigPatch, "spec")
			same := reflect.DeepEqual(m["spec"], asMap(t, raw(t, tc.des.m).Raw)["spec"]) &&
				reflect.DeepEqual(i["spec"], asMap(t, raw(t, tc.des.infra).Raw)["spec"]) &&
				reflect.DeepEqual(b["spec"], asMap(t, raw(t, tc.des.boot).Raw)["spec"])
			if same != tc.inPlace {
				t.Errorf("after the patches current equals desired: %v, want %v (machine spec %v)", same, tc.inPlace, m["spec"])
			}
		})
	}
}

func machineSet(version, fd string) clusterv1.MachineSet {
	return clusterv1.MachineSet{TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "ms", Namespace: "ns"},
		Spec: clusterv1.MachineSetSpec{ClusterName: "c", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{ClusterName: "c", Version: version, FailureDomain: fd,
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachineTemplate", Name: "t"}}}}}
}

func amTemplate(class string, selector map[string]string) *infrav1.AnvilMachineTemplate {
	return &infrav1.AnvilMachineTemplate{TypeMeta: metav1.TypeMeta{APIVersion: infrav1.GroupVersion.String(), Kind: "AnvilMachineTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"},
		Spec:       infrav1.AnvilMachineTemplateSpec{Template: infrav1.AnvilMachineTemplateResource{Spec: anvilMachine(class, selector).Spec}}}
}

func TestCanUpdateMachineSet(t *testing.T) {
	pool := map[string]string{"pool": "a"}
	for _, tc := range []struct {
		name             string
		cur, des         clusterv1.MachineSet
		curTmpl, desTmpl any
		claimed, inPlace bool
		wantMessage      string
	}{
		{"version bump", machineSet("v1.36.3", ""), machineSet("v1.37.2", ""), amTemplate("fcos", pool), amTemplate("fcos", pool), true, true, "kubelet v1.36.3 -> v1.37.2 in place"},
		{"patch release", machineSet("v1.36.1", ""), machineSet("v1.36.3", ""), amTemplate("fcos", pool), amTemplate("fcos", pool), true, true, "kubelet v1.36.1 -> v1.36.3"},
		{"another class", machineSet("v1.37.2", ""), machineSet("v1.37.2", ""), amTemplate("fcos", pool), amTemplate("flatcar", pool), false, false, "the AnvilMachineTemplate's spec"},
		{"another selector with a version bump", machineSet("v1.36.3", ""), machineSet("v1.37.2", ""), amTemplate("fcos", pool), amTemplate("fcos", map[string]string{"pool": "b"}), true, false, "the AnvilMachineTemplate's spec"},
		{"another failure domain", machineSet("v1.37.2", "r1"), machineSet("v1.37.2", "r2"), amTemplate("fcos", pool), amTemplate("fcos", pool), false, false, "spec.template.spec.failureDomain"},
		{"skipped minor", machineSet("v1.35.2", ""), machineSet("v1.37.2", ""), amTemplate("fcos", pool), amTemplate("fcos", pool), false, false, "skips minor versions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &hooksv1.CanUpdateMachineSetRequest{
				Current: hooksv1.CanUpdateMachineSetRequestObjects{MachineSet: tc.cur, InfrastructureMachineTemplate: raw(t, tc.curTmpl)},
				Desired: hooksv1.CanUpdateMachineSetRequestObjects{MachineSet: tc.des, InfrastructureMachineTemplate: raw(t, tc.desTmpl)},
			}
			resp := &hooksv1.CanUpdateMachineSetResponse{}
			canUpdateMachineSet(req, resp)
			if resp.Status != hooksv1.ResponseStatusSuccess || !strings.Contains(resp.Message, tc.wantMessage) {
				t.Errorf("status %s, message %q; want Success and %q", resp.Status, resp.Message, tc.wantMessage)
			}
			if resp.MachineSetPatch.IsDefined() != tc.claimed || resp.InfrastructureMachineTemplatePatch.IsDefined() || resp.BootstrapConfigTemplatePatch.IsDefined() {
				t.Errorf("patches %+v, want a MachineSet patch only if claimed=%v", resp, tc.claimed)
			}
			ms := applyLikeCAPI(t, tc.cur, resp.MachineSetPatch, "spec", "template", "spec")
			tm := applyLikeCAPI(t, tc.curTmpl, resp.InfrastructureMachineTemplatePatch, "spec", "template", "spec")
			same := reflect.DeepEqual(ms["spec"], asMap(t, raw(t, tc.des).Raw)["spec"]) && reflect.DeepEqual(tm["spec"], asMap(t, raw(t, tc.desTmpl).Raw)["spec"])
			if same != tc.inPlace {
				t.Errorf("after the patches current equals desired: %v, want %v", same, tc.inPlace)
			}
		})
	}
}
