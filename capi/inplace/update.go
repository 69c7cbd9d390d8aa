package inplace

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	hooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
)

// RetryAfterSeconds is how long Cluster API waits before asking again
// about an upgrade in progress (it answers from its cache meanwhile).
const RetryAfterSeconds = 10

// updateMachineHook is the hook's name in the pending-hooks annotation.
const updateMachineHook = "UpdateMachine"

// updater carries out UpdateMachine from live objects only: the request
// names the Machine, and nothing else in it is used.
type updater struct {
	reader client.Reader // the API server, not a cache: annotations must be current
	writer client.Client
}

// outcome is an UpdateMachine answer: Failure, Success with retryAfter
// (in progress) or Success without (done).
type outcome struct {
	status     hooksv1.ResponseStatus
	retryAfter int32
	message    string
	// patched is set when this call changed the Anvil Machine's version.
	patched bool
}

func failure(format string, args ...any) outcome {
	return outcome{status: hooksv1.ResponseStatusFailure, message: fmt.Sprintf(format, args...)}
}

func inProgress(format string, args ...any) outcome {
	return outcome{status: hooksv1.ResponseStatusSuccess, retryAfter: RetryAfterSeconds, message: fmt.Sprintf(format, args...)}
}

func done(format string, args ...any) outcome {
	return outcome{status: hooksv1.ResponseStatusSuccess, message: fmt.Sprintf(format, args...)}
}

// update is one UpdateMachine call for the CAPI Machine key. It sets the
// Anvil Machine's spec.version to the live CAPI Machine's (once) and then
// reports what Anvil's in-place upgrade (machine/upgrade.go) did with it.
// Being called again is the normal case: Cluster API asks again after
// retryAfterSeconds, and after a Failure it retries with backoff for as
// long as the Machine stays marked for the update.
func (u *updater) update(ctx context.Context, key types.NamespacedName) outcome {
	cm := &clusterv1.Machine{}
	if err := u.reader.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return failure("Machine.cluster.x-k8s.io %s not found", key)
		}
		return failure("reading Machine.cluster.x-k8s.io %s: %v", key, err)
	}
	if why := notUpdatingInPlace(cm); why != "" {
		return failure("Machine.cluster.x-k8s.io %s is not being updated in place (%s): nothing done", key, why)
	}
	ref := cm.Spec.InfrastructureRef
	if ref.APIGroup != infrav1.GroupVersion.Group || ref.Kind != "AnvilMachine" || ref.Name == "" {
		return failure("Machine.cluster.x-k8s.io %s: spec.infrastructureRef is %s %s, not an AnvilMachine: nothing done", key, ref.Kind, ref.Name)
	}
	am := &infrav1.AnvilMachine{}
	amKey := types.NamespacedName{Namespace: cm.Namespace, Name: ref.Name}
	if err := u.reader.Get(ctx, amKey, am); err != nil {
		return failure("reading AnvilMachine %s: %v", amKey, err)
	}
	if !ownedBy(am, cm) {
		return failure("AnvilMachine %s is not owned by Machine.cluster.x-k8s.io %s (uid %s): nothing done", amKey, key, cm.UID)
	}
	if _, ok := am.Annotations[clusterv1.UpdateInProgressAnnotation]; !ok {
		return failure("AnvilMachine %s has no %s annotation yet: nothing done", amKey, clusterv1.UpdateInProgressAnnotation)
	}
	// The infra provider names the Anvil Machine after the AnvilMachine.
	m := &metalv1.Machine{}
	if err := u.reader.Get(ctx, amKey, m); err != nil {
		return failure("reading Machine.metal.anvil.dev %s (of AnvilMachine %s): %v", amKey, amKey, err)
	}
	if !metav1.IsControlledBy(m, am) {
		return failure("Machine.metal.anvil.dev %s is not controlled by AnvilMachine %s: nothing done", amKey, amKey)
	}
	v := cm.Spec.Version
	if !versionRe.MatchString(v) {
		return failure("Machine.cluster.x-k8s.io %s: spec.version %q is not vX.Y.Z, which Anvil needs to pick the kubelet", key, v)
	}
	return u.progress(ctx, cm, m, v)
}

// notUpdatingInPlace says why Cluster API is not updating cm in place
// right now, "" if it is: the MachineSet or KubeadmControlPlane controller
// marked it (update-in-progress annotation) and its UpdateMachine hook is
// pending, the two things CAPI's Machine controller waits for before it
// calls the hook.
func notUpdatingInPlace(cm *clusterv1.Machine) string {
	var missing []string
	if _, ok := cm.Annotations[clusterv1.UpdateInProgressAnnotation]; !ok {
		missing = append(missing, "no "+clusterv1.UpdateInProgressAnnotation+" annotation")
	}
	pending := false
	for _, h := range strings.Split(cm.Annotations[runtimev1.PendingHooksAnnotation], ",") {
		pending = pending || strings.TrimSpace(h) == updateMachineHook
	}
	if !pending {
		missing = append(missing, updateMachineHook+" not in its "+runtimev1.PendingHooksAnnotation+" annotation")
	}
	if !cm.DeletionTimestamp.IsZero() {
		missing = append(missing, "it is being deleted")
	}
	return strings.Join(missing, "; ")
}

// ownedBy: Cluster API makes the Machine an owner of its InfraMachine.
func ownedBy(am *infrav1.AnvilMachine, cm *clusterv1.Machine) bool {
	for _, o := range am.OwnerReferences {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err == nil && gv.Group == clusterv1.GroupVersion.Group && o.Kind == "Machine" && o.UID == cm.UID {
			return true
		}
	}
	return false
}

// progress starts the upgrade to v if it has not been asked for, else
// reports on it from the Anvil Machine's status.upgrade, the Machine
// controller's record of it.
func (u *updater) progress(ctx context.Context, cm *clusterv1.Machine, m *metalv1.Machine, v string) outcome {
	name := fmt.Sprintf("Machine.metal.anvil.dev %s/%s", m.Namespace, m.Name)
	if !m.DeletionTimestamp.IsZero() {
		return failure("%s is being deleted", name)
	}
	if m.Status.FailureReason != "" {
		return failure("%s failed (%s): %s", name, m.Status.FailureReason, m.Status.FailureMessage)
	}
	up := m.Status.Upgrade
	tried := up != nil && up.Version == v
	failed := tried && (up.State == metalv1.UpgradeFailed || up.State == metalv1.UpgradeRejected)
	if m.Spec.Version != v {
		if failed {
			// Someone set the version back after the failure. Asking for v
			// again would start the upgrade that failed, unseen: leave it.
			return failure("%s: the in-place upgrade to %s %s: %s; its spec.version has been %s since, so Anvil does not start it again. "+
				"To retry: set its spec.version to %s and annotate it %s=%s; to replace the Machine instead: kubectl delete machine.cluster.x-k8s.io %s -n %s",
				name, v, strings.ToLower(string(up.State)), up.Message, m.Spec.Version, v, machine.AnnotationRetryUpgrade, up.PlanID, cm.Name, cm.Namespace)
		}
		from := m.Spec.Version
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"version":%q}}`, v))
		if err := u.writer.Patch(ctx, m, patch, client.FieldOwner(FieldOwner)); err != nil {
			return failure("setting spec.version of %s to %s: %v", name, v, err)
		}
		o := inProgress("asked Anvil for kubelet %s on %s (spec.version was %s)", v, name, from)
		o.patched = true
		return o
	}
	if !tried {
		if m.Status.Version == v {
			return done("Node of %s runs kubelet %s", name, v)
		}
		return inProgress("waiting for Anvil to start the upgrade to %s (%s is %s, its Node runs %q)", v, name, m.Status.Phase, m.Status.Version)
	}
	switch up.State {
	case metalv1.UpgradeVerified:
		if m.Status.Version == v {
			return done("%s", up.Message)
		}
	case metalv1.UpgradeFailed:
		// The agent rolled the kubelet back on the host; Cluster API has no
		// rollback of its own and keeps calling. Anvil does not retry by
		// itself: the answer stays this Failure until an admin retries the
		// same plan (the annotation below makes the Machine controller
		// start over, and the next call reports its progress) or deletes
		// the CAPI Machine to have it replaced.
		return failure("%s: in-place upgrade %s -> %s failed and was rolled back on the host: %s. "+
			"To retry: kubectl annotate machine.metal.anvil.dev %s -n %s --overwrite %s=%s; to replace it instead: kubectl delete machine.cluster.x-k8s.io %s -n %s",
			name, up.FromVersion, v, up.Message, m.Name, m.Namespace, machine.AnnotationRetryUpgrade, up.PlanID, cm.Name, cm.Namespace)
	case metalv1.UpgradeRejected:
		// Nothing was touched, and the Machine controller validates the
		// version again only when spec.version changes or an admin
		// retries the plan (e.g. once the class has the kubelet).
		return failure("%s: in-place upgrade to %s rejected, nothing changed on the host: %s. "+
			"Fix the cause, then retry: kubectl annotate machine.metal.anvil.dev %s -n %s --overwrite %s=%s; to replace it instead: kubectl delete machine.cluster.x-k8s.io %s -n %s",
			name, v, up.Message, m.Name, m.Namespace, machine.AnnotationRetryUpgrade, up.PlanID, cm.Name, cm.Namespace)
	}
	return inProgress("%s: %s", up.State, up.Progress())
}
