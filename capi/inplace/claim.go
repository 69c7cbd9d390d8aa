package inplace

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	hooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	"anvil.dev/anvil/machine"
)

// versionRe is what an Anvil Machine's spec.version accepts.
var versionRe = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// claim is Anvil's answer to one "can you update this in place": the JSON
// patch (RFC 6902) that, applied to the current object, makes the fields
// Anvil handles equal to the desired ones (nil: none), and a sentence for
// the response message and the log.
type claim struct {
	patch []byte
	why   string
}

// claimVersion decides on the version change at path (a JSON pointer into
// the whole object, as Cluster API applies the patch to the whole object
// and then copies its spec back). Anvil upgrades the kubelet in place to
// the same or the next minor, never down: the rules its Machine
// controller applies when spec.version changes (machine.KubeletStep).
func claimVersion(path, current, desired string) claim {
	// Both come from the request: clipped wherever they are repeated.
	switch {
	case current == desired:
		return claim{why: fmt.Sprintf("spec.version unchanged (%q)", clip(current))}
	case !versionRe.MatchString(current):
		return claim{why: fmt.Sprintf("current version %q is not vX.Y.Z", clip(current))}
	case !versionRe.MatchString(desired):
		return claim{why: fmt.Sprintf("desired version %q is not vX.Y.Z", clip(desired))}
	}
	if err := machine.KubeletStep(current, desired, false); err != nil {
		return claim{why: fmt.Sprintf("version %s -> %s not in place: %v", current, desired, err)}
	}
	// The test op makes the patch apply only to the version it was
	// computed from.
	p, err := json.Marshal([]jsonPatchOp{{Op: "test", Path: path, Value: current}, {Op: "replace", Path: path, Value: desired}})
	if err != nil {
		return claim{why: err.Error()}
	}
	return claim{patch: p, why: fmt.Sprintf("kubelet %s -> %s in place", current, desired)}
}

// clip shortens a string from a request for a message or the log.
func clip(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// canUpdateMachine answers CanUpdateMachine, which Cluster API v1.14 sends
// only from the KubeadmControlPlane controller, for control-plane Machines.
//
// Anvil claims nothing there. A control-plane Machine's version is that of
// its kube-apiserver, controller-manager, scheduler and etcd, static pods
// that kubeadm upgrades; Anvil's in-place upgrade swaps the kubelet only.
// Claiming the version would make KCP report a control plane it never
// upgraded (and the worker kubelets upgraded next would then be newer than
// the API server). Cluster API replaces such Machines instead. For that
// reason the one difference KCP itself puts into a KubeadmConfig on a
// version change (the ControlPlaneKubeletLocalMode feature gate in
// clusterConfiguration.featureGates, which KCP adds for 1.31 <= v < 1.36)
// needs no patch here either.
//
// Any other Machine (the hook carries no rule that only KCP may call it)
// gets the same version claim as a MachineSet's.
func canUpdateMachine(req *hooksv1.CanUpdateMachineRequest, resp *hooksv1.CanUpdateMachineResponse) claim {
	resp.Status = hooksv1.ResponseStatusSuccess
	cur, des := &req.Current.Machine, &req.Desired.Machine
	if isControlPlane(cur) || isControlPlane(des) {
		c := claim{why: "control-plane Machine: Anvil upgrades only the kubelet in place, not the control plane kubeadm runs as static pods; Cluster API replaces it"}
		resp.Message = c.why
		return c
	}
	if why := notAnvil(req.Current.InfrastructureMachine, req.Desired.InfrastructureMachine, "AnvilMachine"); why != "" {
		resp.Message = why
		return claim{why: why}
	}
	c := claimVersion("/spec/version", cur.Spec.Version, des.Spec.Version)
	if c.patch != nil {
		resp.MachinePatch = hooksv1.Patch{PatchType: hooksv1.JSONPatchType, Patch: c.patch}
	}
	resp.Message = c.why + unclaimed(
		diff{cur.Spec.FailureDomain != des.Spec.FailureDomain, "spec.failureDomain"},
		diff{!sameSpec(req.Current.InfrastructureMachine, req.Desired.InfrastructureMachine), "the AnvilMachine's spec"},
		diff{!sameSpec(req.Current.BootstrapConfig, req.Desired.BootstrapConfig), "the bootstrap config's spec"})
	return claim{patch: c.patch, why: resp.Message}
}

// canUpdateMachineSet answers CanUpdateMachineSet (the MachineDeployment
// controller, for a rollout from one MachineSet to another): Anvil claims
// spec.template.spec.version; any other difference (another
// AnvilMachineTemplate spec: class, host selector; the bootstrap template;
// the failure domain) stays unclaimed, so Cluster API replaces the
// Machines.
func canUpdateMachineSet(req *hooksv1.CanUpdateMachineSetRequest, resp *hooksv1.CanUpdateMachineSetResponse) claim {
	resp.Status = hooksv1.ResponseStatusSuccess
	if why := notAnvil(req.Current.InfrastructureMachineTemplate, req.Desired.InfrastructureMachineTemplate, "AnvilMachineTemplate"); why != "" {
		resp.Message = why
		return claim{why: why}
	}
	cur, des := &req.Current.MachineSet.Spec.Template.Spec, &req.Desired.MachineSet.Spec.Template.Spec
	c := claimVersion("/spec/template/spec/version", cur.Version, des.Version)
	if c.patch != nil {
		resp.MachineSetPatch = hooksv1.Patch{PatchType: hooksv1.JSONPatchType, Patch: c.patch}
	}
	resp.Message = c.why + unclaimed(
		diff{cur.FailureDomain != des.FailureDomain, "spec.template.spec.failureDomain"},
		diff{!sameSpec(req.Current.InfrastructureMachineTemplate, req.Desired.InfrastructureMachineTemplate), "the AnvilMachineTemplate's spec"},
		diff{!sameSpec(req.Current.BootstrapConfigTemplate, req.Desired.BootstrapConfigTemplate), "the bootstrap config template's spec"})
	return claim{patch: c.patch, why: resp.Message}
}

func isControlPlane(m *clusterv1.Machine) bool {
	_, ok := m.Labels[clusterv1.MachineControlPlaneLabel]
	return ok
}

// notAnvil says why the infrastructure objects are not Anvil's kind (an
// ExtensionConfig's namespaceSelector may reach other providers'
// Machines); "" if they are.
func notAnvil(current, desired runtime.RawExtension, kind string) string {
	for _, o := range []runtime.RawExtension{current, desired} {
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(o.Raw, &tm); err != nil {
			return "the infrastructure object is not a JSON object: nothing claimed"
		}
		gv, err := schema.ParseGroupVersion(tm.APIVersion)
		if err != nil || gv.Group != infrav1.GroupVersion.Group || tm.Kind != kind {
			return fmt.Sprintf("the infrastructure object is not an %s: nothing claimed", kind)
		}
	}
	return ""
}

// sameSpec compares the spec of two raw objects as JSON values.
func sameSpec(a, b runtime.RawExtension) bool {
	spec := func(r runtime.RawExtension) string {
		var o struct {
			Spec json.RawMessage `json:"spec"`
		}
		if len(r.Raw) == 0 || json.Unmarshal(r.Raw, &o) != nil {
			return ""
		}
		var v any
		if json.Unmarshal(o.Spec, &v) != nil {
			return ""
		}
		out, _ := json.Marshal(v) // maps marshal with sorted keys
		return string(out)
	}
	return spec(a) == spec(b)
}

// diff is one difference between current and desired Anvil does not
// claim, and what it is.
type diff struct {
	differs bool
	what    string
}

// unclaimed lists, after the claim's own sentence, the differences Anvil
// leaves to a replacement.
func unclaimed(diffs ...diff) string {
	var left []string
	for _, d := range diffs {
		if d.differs {
			left = append(left, d.what)
		}
	}
	if len(left) == 0 {
		return ""
	}
	return "; not in place (Cluster API replaces the Machine for these): " + strings.Join(left, ", ")
}
