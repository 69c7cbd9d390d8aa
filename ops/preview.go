package ops

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
)

// UpgradeMode is how Anvil would carry out a version change of a Machine.
type UpgradeMode string

const (
	ModeInPlace     UpgradeMode = "InPlace"     // only spec.version changes: drain, the agent swaps the kubelet
	ModeReplacement UpgradeMode = "Replacement" // the Machine would be or is being replaced instead (Why says why)
	ModeNoChange    UpgradeMode = "NoChange"    // it already asks for that version
	ModeRefused     UpgradeMode = "Refused"     // the upgrade would be rejected (Why says why)
	ModeWaiting     UpgradeMode = "Waiting"     // accepted, but starts once the Machine is Running (or its set resumes)
)

// MachinePreview says what an upgrade of one Machine would do, without
// doing it.
type MachinePreview struct {
	Machine, Namespace string
	Running            string // kubelet the Node runs now (status.version), "" if none
	Target             string
	Mode               UpgradeMode
	Why                string // one line: why this mode
	SkewOK             bool
	Skew               string // the skew check's verdict in one line, or why it fails
}

// PreviewMachineUpgrade says what UpgradeMachine would do. apiVersion is
// the API server's git version (discovery's ServerVersion().GitVersion),
// read by the caller; "" leaves that part of the skew unchecked. The
// controller checks against the Machine's target cluster, which is this
// API server unless the class names another.
func PreviewMachineUpgrade(ctx context.Context, c client.Client, apiVersion string, key types.NamespacedName, version string) (MachinePreview, error) {
	if err := ValidVersion(version); err != nil {
		return MachinePreview{}, err
	}
	m, err := GetMachine(ctx, c, key)
	if err != nil {
		return MachinePreview{}, err
	}
	in := previewInput{m: m, target: version, apiVersion: apiVersion}
	in.class, in.classErr = readClass(ctx, c, m.Namespace, m.Spec.MachineClassRef.Name)
	if set := m.Labels[metalv1.LabelMachineSet]; set != "" {
		ms := &metalv1.MachineSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: set}, ms); err == nil {
			in.set = ms // unreadable: UpgradeMachine does not refuse either
		}
	}
	return decide(in), nil
}

// PreviewMachineSetUpgrade says what UpgradeMachineSet would do to each of
// the set's Machines, sorted by name.
func PreviewMachineSetUpgrade(ctx context.Context, c client.Client, apiVersion string, key types.NamespacedName, version string) ([]MachinePreview, error) {
	if err := ValidVersion(version); err != nil {
		return nil, err
	}
	ms, err := GetMachineSet(ctx, c, key)
	if err != nil {
		return nil, err
	}
	if ms.DeletionTimestamp != nil {
		return nil, fmt.Errorf("machineset %s is being deleted; there is nothing to upgrade", ms.Name)
	}
	members, err := SetMachines(ctx, c, ms)
	if err != nil {
		return nil, err
	}
	type classRead struct {
		class *metalv1.MachineClass
		err   error
	}
	classes := map[string]classRead{}
	out := make([]MachinePreview, 0, len(members))
	for i := range members {
		m := &members[i]
		name := m.Spec.MachineClassRef.Name
		cr, ok := classes[name]
		if !ok {
			cr.class, cr.err = readClass(ctx, c, m.Namespace, name)
			classes[name] = cr
		}
		out = append(out, decide(previewInput{m: m, target: version, apiVersion: apiVersion, class: cr.class, classErr: cr.err, set: ms, viaSet: true}))
	}
	return out, nil
}

// readClass reads a MachineClass: nil and no error when it does not exist.
func readClass(ctx context.Context, c client.Client, ns, name string) (*metalv1.MachineClass, error) {
	class := &metalv1.MachineClass{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, class); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return class, nil
}

// previewInput is everything a preview decides from, read beforehand, so
// that decide is pure (and table-tested).
type previewInput struct {
	m          *metalv1.Machine
	target     string
	apiVersion string                // "" when unknown: not checked
	class      *metalv1.MachineClass // nil: not found (unless classErr)
	classErr   error                 // the class could not be read: not checked
	set        *metalv1.MachineSet   // the Machine's MachineSet, if any
	viaSet     bool                  // the set is upgraded, not the Machine alone
}

// decide is the preview of one Machine: the same refusals UpgradeMachine
// and the controller make, in the order they make them.
func decide(in previewInput) MachinePreview {
	m := in.m
	p := MachinePreview{Machine: m.Name, Namespace: m.Namespace, Running: m.Status.Version, Target: in.target}
	p.SkewOK, p.Skew = skewVerdict(in)
	up := m.Status.Upgrade
	switch {
	case m.DeletionTimestamp != nil:
		p.Mode, p.Why = ModeRefused, "the Machine is being deleted; there is nothing to upgrade"
	case m.Status.Phase == metalv1.MachineFailed:
		p.Mode, p.Why = ModeRefused, "the Machine has failed ("+MachineFailureText(m)+"); an in-place upgrade needs a running Machine: delete it and create a new one"
	case m.Spec.Version == in.target:
		p.Mode, p.Why = ModeNoChange, fmt.Sprintf("spec.version is already %s; its Node runs %s", in.target, orDash(m.Status.Version))
		if up != nil && up.Version == in.target && up.State != metalv1.UpgradeVerified {
			p.Why += fmt.Sprintf("; its upgrade is %s", up.State)
			if up.State == metalv1.UpgradeFailed || up.State == metalv1.UpgradeRejected {
				p.Why += " (retry it: anvil machines retry-upgrade " + m.Name + " -n " + m.Namespace + ")"
			}
		}
	case !in.viaSet && in.set != nil && in.set.Spec.Template.Spec.Version != in.target && !in.set.Spec.Paused:
		p.Mode, p.Why = ModeRefused, OneLine(setRefusal(m.Name, in.set.Name, m.Namespace, in.set.Spec.Template.Spec.Version, in.target).Error())
	case m.Status.Replacement != nil:
		r := m.Status.Replacement
		p.Mode, p.Why = ModeReplacement, fmt.Sprintf("the Machine is being replaced (%s: %s); the new install runs %s", r.Reason, OneLine(r.Message), in.target)
	case hasAnnotation(m, metalv1.AnnotationReplace):
		p.Mode, p.Why = ModeReplacement, fmt.Sprintf("annotation %s is set: the Machine is replaced (drain, wipe, install again) and the new install runs %s", metalv1.AnnotationReplace, in.target)
	case m.Status.InstalledClass != "" && m.Status.InstalledClass != m.Spec.MachineClassRef.Name:
		p.Mode, p.Why = ModeReplacement, fmt.Sprintf("spec.machineClassRef changed from %s to %s: the Machine is replaced with a fresh install, which runs %s", m.Status.InstalledClass, m.Spec.MachineClassRef.Name, in.target)
	case !p.SkewOK:
		p.Mode, p.Why = ModeRefused, "the skew check fails: "+p.Skew
	case m.Status.Phase != metalv1.MachineRunning && m.Status.Phase != metalv1.MachineUpdating:
		p.Mode, p.Why = ModeWaiting, fmt.Sprintf("the Machine is %s, not Running; the upgrade starts once its Node is Running", orDash(m.Status.Phase))
	case in.viaSet && in.set.Spec.Paused:
		p.Mode, p.Why = ModeWaiting, fmt.Sprintf("machineset %s has spec.paused set; the rollout waits for: anvil machinesets resume %s -n %s", in.set.Name, in.set.Name, m.Namespace)
	default:
		node := "its Node"
		if m.Status.NodeRef != nil {
			node = "Node " + m.Status.NodeRef.Name
		}
		p.Mode, p.Why = ModeInPlace, fmt.Sprintf("only spec.version changes: Anvil drains %s and the agent swaps kubelet %s for %s", node, orDash(m.Status.Version), in.target)
	}
	return p
}

func hasAnnotation(m *metalv1.Machine, k string) bool {
	_, ok := m.Annotations[k]
	return ok
}

// skewVerdict applies the controller's rules (machine.KubeletStep,
// machine.APISkew) and the class's artifact check, as one line.
func skewVerdict(in previewInput) (bool, string) {
	m, target := in.m, in.target
	ok := true
	var parts []string
	add := func(err error, good string) {
		if err != nil {
			ok = false
			parts = append(parts, OneLine(err.Error()))
		} else if good != "" {
			parts = append(parts, good)
		}
	}
	if running := m.Status.Version; running == "" {
		parts = append(parts, "no kubelet runs yet: "+target+" is installed with the OS")
	} else {
		err := machine.KubeletStep(running, target, m.Spec.AllowDowngrade)
		add(err, running+" -> "+target+": "+stepText(running, target))
	}
	if in.apiVersion == "" {
		parts = append(parts, "the API server's version is unknown: not checked against it")
	} else {
		add(machine.APISkew(in.apiVersion, target), "within the API server "+in.apiVersion+"'s skew")
	}
	className := m.Spec.MachineClassRef.Name
	switch {
	case in.classErr != nil:
		parts = append(parts, fmt.Sprintf("MachineClass %s could not be read (%s): its kubelet not checked", className, OneLine(in.classErr.Error())))
	case in.class == nil:
		add(fmt.Errorf("MachineClass %s not found in namespace %s; an in-place upgrade takes the kubelet from it", className, m.Namespace), "")
	default:
		var err error
		if miss := classKubeletMissing(in.class, target); miss != "" {
			err = fmt.Errorf("%s", miss)
		}
		add(err, "MachineClass "+className+" has its kubelet (sha256)")
	}
	return ok, strings.Join(parts, "; ")
}

// stepText names a step KubeletStep allowed.
func stepText(running, target string) string {
	from, err1 := utilversion.ParseSemantic(running)
	to, err2 := utilversion.ParseSemantic(target)
	switch {
	case err1 != nil || err2 != nil:
		return "allowed"
	case from.Minor() < to.Minor():
		return "one minor up"
	case from.Minor() > to.Minor():
		return "a minor down (spec.allowDowngrade)"
	case to.LessThan(from):
		return "a patch down (spec.allowDowngrade)"
	case from.LessThan(to):
		return "a patch up"
	}
	return "the version it runs"
}
