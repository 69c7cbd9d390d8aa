package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
)

// GetMachineSet reads a MachineSet with a not-found error that says where.
func GetMachineSet(ctx context.Context, c client.Client, key types.NamespacedName) (*metalv1.MachineSet, error) {
	ms := &metalv1.MachineSet{}
	if err := c.Get(ctx, key, ms); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("machineset %s not found in namespace %s (kubectl get machinesets -n %s): %w", key.Name, key.Namespace, key.Namespace, err)
		}
		return nil, fmt.Errorf("reading machineset %s: %w", key.Name, err)
	}
	return ms, nil
}

// SetMachines lists a MachineSet's Machines as its controller counts them:
// its label and its controller reference. Sorted by name.
func SetMachines(ctx context.Context, c client.Client, ms *metalv1.MachineSet) ([]metalv1.Machine, error) {
	var list metalv1.MachineList
	if err := c.List(ctx, &list, client.InNamespace(ms.Namespace), client.MatchingLabels{metalv1.LabelMachineSet: ms.Name}); err != nil {
		return nil, fmt.Errorf("listing the machines of machineset %s: %w", ms.Name, err)
	}
	out := list.Items[:0]
	for _, m := range list.Items {
		if ref := metav1.GetControllerOf(&m); ref != nil && ref.UID == ms.UID {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FailedUpgrade is a Machine whose upgrade to its spec.version failed, as
// the rollout counts it.
func FailedUpgrade(m *metalv1.Machine) bool {
	up := m.Status.Upgrade
	return up != nil && up.State == metalv1.UpgradeFailed && up.Version == m.Spec.Version
}

// MachineSetUpgrade is what UpgradeMachineSetWith did.
type MachineSetUpgrade struct {
	Set     *metalv1.MachineSet // as patched
	Members []metalv1.Machine   // the set's Machines, read before the patch
	Message string              // the line UpgradeMachineSet returns
	// Note is "" or why the rollout does not start now (spec.paused).
	Note string
}

// UpgradeMachineSet sets a MachineSet's spec.template.spec.version: Anvil
// upgrades its Machines in place, spec.strategy.maxUnavailable at a time.
func UpgradeMachineSet(ctx context.Context, c client.Client, key types.NamespacedName, version string) (string, error) {
	u, err := UpgradeMachineSetWith(ctx, c, key, version, nil)
	if err != nil {
		return "", err
	}
	return u.Message, nil
}

// UpgradeMachineSetWith is UpgradeMachineSet for callers that follow the
// rollout: beforePatch (may be nil) is called with the validated set just
// before the patch.
func UpgradeMachineSetWith(ctx context.Context, c client.Client, key types.NamespacedName, version string, beforePatch func(*metalv1.MachineSet)) (*MachineSetUpgrade, error) {
	if err := ValidVersion(version); err != nil {
		return nil, err
	}
	ms, err := GetMachineSet(ctx, c, key)
	if err != nil {
		return nil, err
	}
	name, ns := ms.Name, ms.Namespace
	if ms.DeletionTimestamp != nil {
		return nil, fmt.Errorf("machineset %s is being deleted; there is nothing to upgrade", name)
	}
	if ms.Spec.Template.Spec.Version != version {
		if err := CheckClassKubelet(ctx, c, ns, ms.Spec.Template.Spec.MachineClassRef.Name, version); err != nil {
			return nil, err
		}
	}
	members, err := SetMachines(ctx, c, ms)
	if err != nil {
		return nil, err
	}
	if beforePatch != nil {
		beforePatch(ms)
	}
	u := &MachineSetUpgrade{Set: ms, Members: members}
	from := ms.Spec.Template.Spec.Version
	if from == version {
		u.Message = fmt.Sprintf("machineset/%s already asks for kubelet %s; nothing patched", name, version)
	} else {
		patch := client.MergeFrom(ms.DeepCopy())
		ms.Spec.Template.Spec.Version = version
		if err := c.Patch(ctx, ms, patch); err != nil {
			return nil, fmt.Errorf("patching spec.template.spec.version of machineset %s: %w", name, err)
		}
		maxUnavail := "1"
		if mu := ms.Spec.Strategy.MaxUnavailable; mu != nil {
			maxUnavail = mu.String()
		}
		u.Message = fmt.Sprintf("machineset/%s patched: spec.template.spec.version %s -> %s; its %d Machines are upgraded in place, %s at a time",
			name, from, version, len(members), maxUnavail)
	}
	if ms.Spec.Paused {
		u.Note = fmt.Sprintf("machineset %s has spec.paused set; the rollout waits for: anvil machinesets resume %s -n %s", name, name, ns)
	}
	return u, nil
}

// ResumeMachineSet goes on with a paused rollout: it clears spec.paused
// and lists the failed upgrade plans in the set's resume annotation, so
// the rollout no longer counts them; with retryFailed it annotates the
// failed Machines to retry their plans instead. A line per step goes to out.
func ResumeMachineSet(ctx context.Context, c client.Client, key types.NamespacedName, retryFailed bool, out io.Writer) error {
	ms, err := GetMachineSet(ctx, c, key)
	if err != nil {
		return err
	}
	name, ns := ms.Name, ms.Namespace
	members, err := SetMachines(ctx, c, ms)
	if err != nil {
		return err
	}
	var failed []*metalv1.Machine
	for i := range members {
		if FailedUpgrade(&members[i]) && members[i].DeletionTimestamp == nil {
			failed = append(failed, &members[i])
		}
	}
	did := false
	var errs []error
	if retryFailed {
		for _, m := range failed {
			up := m.Status.Upgrade
			if m.Annotations[machine.AnnotationRetryUpgrade] == up.PlanID {
				fmt.Fprintf(out, "machine/%s: a retry of plan %s is already requested\n", m.Name, up.PlanID)
				continue
			}
			patch := client.MergeFrom(m.DeepCopy())
			metav1.SetMetaDataAnnotation(&m.ObjectMeta, machine.AnnotationRetryUpgrade, up.PlanID)
			if err := c.Patch(ctx, m, patch); err != nil {
				errs = append(errs, fmt.Errorf("annotating machine %s to retry plan %s: %w", m.Name, up.PlanID, err))
				continue
			}
			did = true
			fmt.Fprintf(out, "machine/%s: retrying the failed upgrade %s -> %s (plan %s failed: %s)\n",
				m.Name, orDash(up.FromVersion), up.Version, up.PlanID, orDash(OneLine(up.Message)))
		}
	} else {
		resumed := resumedPlanIDs(ms)
		for _, m := range failed {
			up := m.Status.Upgrade
			if resumed[up.PlanID] {
				fmt.Fprintf(out, "machine/%s: the rollout already goes on without it (plan %s)\n", m.Name, up.PlanID)
				continue
			}
			did = true
			fmt.Fprintf(out, "machine/%s: the rollout goes on without it; it stays as its upgrade %s -> %s failed (plan %s: %s). Retry later: %s\n",
				m.Name, orDash(up.FromVersion), up.Version, up.PlanID, orDash(OneLine(up.Message)), RetryCommand(m))
		}
	}
	addPlans := !retryFailed && did
	if ms.Spec.Paused || addPlans {
		wasPaused := ms.Spec.Paused
		if err := patchResume(ctx, c, ms, failed, addPlans); err != nil {
			errs = append(errs, err)
		} else {
			did = true
			if addPlans {
				fmt.Fprintf(out, "machineset/%s: annotation %s=%s\n", name, machine.AnnotationResumeRollout, ms.Annotations[machine.AnnotationResumeRollout])
			}
			if wasPaused {
				fmt.Fprintf(out, "machineset/%s: spec.paused cleared\n", name)
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if !did && len(failed) == 0 {
		msg := "the rollout is not paused and no Machine's upgrade failed"
		if cond := meta.FindStatusCondition(ms.Status.Conditions, machine.ConditionRolloutPaused); cond != nil && cond.Status == metav1.ConditionTrue {
			msg = "no Machine's upgrade failed now, though the status still says " + ConditionLine(*cond) + " (the controller updates it shortly)"
		}
		fmt.Fprintf(out, "machineset/%s: nothing to resume: %s\n", name, msg)
		return nil
	}
	if did {
		fmt.Fprintf(out, "follow the rollout with: anvil machinesets upgrade %s --version %s --watch -n %s\n", name, ms.Spec.Template.Spec.Version, ns)
	}
	return nil
}

// resumedPlanIDs is the set of plan IDs in the set's resume annotation.
func resumedPlanIDs(ms *metalv1.MachineSet) map[string]bool {
	out := map[string]bool{}
	for _, id := range strings.Split(ms.Annotations[machine.AnnotationResumeRollout], ",") {
		if id = strings.TrimSpace(id); id != "" {
			out[id] = true
		}
	}
	return out
}

// patchResume clears spec.paused and, with addPlans, writes the failed
// plans into the resume annotation. IDs of plans no Machine has failed on
// any more are dropped, so the annotation does not grow forever. The patch
// carries the resourceVersion: a concurrent edit is re-read, not lost.
func patchResume(ctx context.Context, c client.Client, ms *metalv1.MachineSet, failed []*metalv1.Machine, addPlans bool) error {
	current := map[string]bool{}
	for _, m := range failed {
		current[m.Status.Upgrade.PlanID] = true
	}
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(ms), ms); err != nil {
				return err
			}
		}
		first = false
		patch := client.MergeFromWithOptions(ms.DeepCopy(), client.MergeFromWithOptimisticLock{})
		ms.Spec.Paused = false
		if addPlans {
			ids := map[string]bool{}
			for id := range resumedPlanIDs(ms) {
				if current[id] {
					ids[id] = true
				}
			}
			for id := range current {
				ids[id] = true
			}
			list := make([]string, 0, len(ids))
			for id := range ids {
				list = append(list, id)
			}
			sort.Strings(list)
			metav1.SetMetaDataAnnotation(&ms.ObjectMeta, machine.AnnotationResumeRollout, strings.Join(list, ","))
		}
		if err := c.Patch(ctx, ms, patch); err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			return fmt.Errorf("patching machineset %s: %w", ms.Name, err)
		}
		return nil
	})
}
