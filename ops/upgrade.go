package ops

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
)

// versionRE is the CRD's pattern for spec.version.
var versionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// ValidVersion checks a kubelet version's syntax as the CRD does, with a
// hint when only the leading v is missing.
func ValidVersion(v string) error { return ValidVersionFor("version", v) }

// ValidVersionFor is ValidVersion with the error naming where v came from
// (a flag like --version, a field like spec.version).
func ValidVersionFor(name, v string) error {
	switch {
	case v == "":
		return fmt.Errorf("%s is required: the kubelet version to move to, like v1.37.2", name)
	case versionRE.MatchString(v):
		return nil
	case versionRE.MatchString("v" + v):
		return fmt.Errorf("invalid %s %q: want a kubelet version like v1.37.2 (did you mean v%s?)", name, v, v)
	}
	return fmt.Errorf("invalid %s %q: want a kubelet version like v1.37.2", name, v)
}

// VersionLess orders kubelet versions semantically (v1.9 before v1.10),
// falling back to string order for what does not parse.
func VersionLess(a, b string) bool {
	va, ea := utilversion.ParseSemantic(a)
	vb, eb := utilversion.ParseSemantic(b)
	if ea != nil || eb != nil {
		return a < b
	}
	return va.LessThan(vb)
}

// GetMachine reads a Machine with a not-found error that says where.
func GetMachine(ctx context.Context, c client.Client, key types.NamespacedName) (*metalv1.Machine, error) {
	m := &metalv1.Machine{}
	if err := c.Get(ctx, key, m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("machine %s not found in namespace %s (anvil machines list -n %s): %w", key.Name, key.Namespace, key.Namespace, err)
		}
		return nil, fmt.Errorf("reading machine %s: %w", key.Name, err)
	}
	return m, nil
}

// CheckClassKubelet refuses a version the class has no kubelet artifact
// for: Anvil would reject the upgrade. A class it cannot read for another
// reason than not found is left to the controller to judge.
func CheckClassKubelet(ctx context.Context, c client.Client, ns, className, v string) error {
	var class metalv1.MachineClass
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: className}, &class); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("MachineClass %s not found in namespace %s; an in-place upgrade takes the kubelet from it", className, ns)
		}
		return nil
	}
	if miss := classKubeletMissing(&class, v); miss != "" {
		return fmt.Errorf("%s; add it to the class's spec.kubelets first, nothing was patched", miss)
	}
	return nil
}

// classKubeletMissing says what the class lacks for kubelet v: "" when it
// lists it with a sha256, as the controller requires.
func classKubeletMissing(class *metalv1.MachineClass, v string) string {
	var listed []string
	for _, k := range class.Spec.Kubelets {
		if k.Version == v && len(k.SHA256) == 64 {
			return ""
		}
		listed = append(listed, k.Version)
	}
	sort.Slice(listed, func(i, j int) bool { return VersionLess(listed[i], listed[j]) })
	has := "it lists none"
	if len(listed) > 0 {
		has = "it lists " + strings.Join(listed, ", ")
	}
	return fmt.Sprintf("MachineClass %s has no kubelet %s with a sha256 (%s)", class.Name, v, has)
}

// MachineUpgrade is what UpgradeMachineWith did.
type MachineUpgrade struct {
	Before  *metalv1.Machine // as read, before the patch
	After   *metalv1.Machine // as patched (Before again when nothing was patched)
	Message string           // the line UpgradeMachine returns
	// Note is "" or why the upgrade does not start now (the Machine is not
	// Running yet).
	Note string
}

// UpgradeMachine sets a Machine's spec.version: Anvil checks the skew
// rules, drains the Node and has the agent swap the kubelet in place.
func UpgradeMachine(ctx context.Context, c client.Client, key types.NamespacedName, version string) (string, error) {
	u, err := UpgradeMachineWith(ctx, c, key, version, nil)
	if err != nil {
		return "", err
	}
	return u.Message, nil
}

// UpgradeMachineWith is UpgradeMachine for callers that follow the
// upgrade: beforePatch (may be nil) is called with the validated Machine
// just before the patch (the CLI takes the Events present then as seen),
// and the result carries the Machine before and after.
func UpgradeMachineWith(ctx context.Context, c client.Client, key types.NamespacedName, version string, beforePatch func(*metalv1.Machine)) (*MachineUpgrade, error) {
	if err := ValidVersion(version); err != nil {
		return nil, err
	}
	m, err := GetMachine(ctx, c, key)
	if err != nil {
		return nil, err
	}
	name, ns := m.Name, m.Namespace
	switch {
	case m.DeletionTimestamp != nil:
		return nil, fmt.Errorf("machine %s is being deleted; there is nothing to upgrade", name)
	case m.Status.Phase == metalv1.MachineFailed:
		return nil, fmt.Errorf("machine %s has failed (%s); an in-place upgrade needs a running Machine: delete it and create a new one", name, MachineFailureText(m))
	}
	if set := m.Labels[metalv1.LabelMachineSet]; set != "" && m.Spec.Version != version {
		// The set's rollout would patch the version straight back, unless
		// it is paused (an admin trying one Machine first).
		var ms metalv1.MachineSet
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: set}, &ms); err == nil && ms.Spec.Template.Spec.Version != version && !ms.Spec.Paused {
			return nil, setRefusal(name, set, ns, ms.Spec.Template.Spec.Version, version)
		}
	}
	if m.Spec.Version != version {
		if err := CheckClassKubelet(ctx, c, ns, m.Spec.MachineClassRef.Name, version); err != nil {
			return nil, err
		}
	}
	if beforePatch != nil {
		beforePatch(m)
	}
	u := &MachineUpgrade{Before: m.DeepCopy(), After: m}
	running := orDash(m.Status.Version)
	if m.Spec.Version == version {
		u.Message = fmt.Sprintf("machine/%s already asks for kubelet %s (its Node runs %s); nothing patched", name, version, running)
	} else {
		patch := client.MergeFrom(m.DeepCopy())
		m.Spec.Version = version
		if err := c.Patch(ctx, m, patch); err != nil {
			return nil, fmt.Errorf("patching spec.version of machine %s: %w", name, err)
		}
		u.Message = fmt.Sprintf("machine/%s patched: spec.version %s -> %s (its Node runs %s); Anvil drains the Node and upgrades the kubelet in place",
			name, u.Before.Spec.Version, version, running)
	}
	if p := m.Status.Phase; p != metalv1.MachineRunning && p != metalv1.MachineUpdating {
		u.Note = fmt.Sprintf("machine %s is %s, not Running; the upgrade starts once its Node is Running", name, orDash(p))
	}
	return u, nil
}

// setRefusal: a Machine of a rolling MachineSet is upgraded through it.
func setRefusal(name, set, ns, setVersion, version string) error {
	return fmt.Errorf("machine %s belongs to MachineSet %s, which keeps its Machines at kubelet %s; upgrade the set instead (anvil machinesets upgrade %s --version %s -n %s), or pause its rollout (spec.paused) to try one Machine first",
		name, set, setVersion, set, version, ns)
}

// RetryUpgrade asks Anvil to run a Machine's failed upgrade plan again:
// it annotates machine.AnnotationRetryUpgrade=<status.upgrade.planID>.
func RetryUpgrade(ctx context.Context, c client.Client, key types.NamespacedName) (string, error) {
	m, err := GetMachine(ctx, c, key)
	if err != nil {
		return "", err
	}
	up := m.Status.Upgrade
	switch {
	case m.DeletionTimestamp != nil:
		return "", fmt.Errorf("machine %s is being deleted; there is no upgrade to retry", m.Name)
	case up == nil:
		return "", fmt.Errorf("machine %s has no upgrade to retry (status.upgrade is empty)", m.Name)
	case up.State != metalv1.UpgradeFailed && up.State != metalv1.UpgradeRejected:
		return "", fmt.Errorf("the upgrade of machine %s to %s is %s, not Failed; only a failed upgrade is retried", m.Name, up.Version, orDash(up.State))
	case up.Version != m.Spec.Version:
		return "", fmt.Errorf("the failed upgrade of machine %s was to %s, but its spec.version is now %s; Anvil upgrades to that already", m.Name, up.Version, m.Spec.Version)
	case m.Annotations[machine.AnnotationRetryUpgrade] == up.PlanID:
		return fmt.Sprintf("machine/%s: a retry of plan %s is already requested", m.Name, up.PlanID), nil
	}
	patch := client.MergeFrom(m.DeepCopy())
	metav1.SetMetaDataAnnotation(&m.ObjectMeta, machine.AnnotationRetryUpgrade, up.PlanID)
	if err := c.Patch(ctx, m, patch); err != nil {
		return "", fmt.Errorf("annotating machine %s to retry plan %s: %w", m.Name, up.PlanID, err)
	}
	return fmt.Sprintf("machine/%s: retrying the %s upgrade %s -> %s (plan %s: %s)",
		m.Name, strings.ToLower(string(up.State)), orDash(up.FromVersion), up.Version, up.PlanID, orDash(OneLine(up.Message))), nil
}

// RetryCommand is the kubectl line that retries a Machine's failed plan.
// --overwrite: an earlier retry leaves the annotation with an older plan.
func RetryCommand(m *metalv1.Machine) string {
	return fmt.Sprintf("kubectl annotate machine %s %s=%s -n %s --overwrite", m.Name, machine.AnnotationRetryUpgrade, m.Status.Upgrade.PlanID, m.Namespace)
}
