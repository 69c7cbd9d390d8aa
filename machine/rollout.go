package machine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// ConditionRolloutPaused on a MachineSet says why its version rollout stopped.
const ConditionRolloutPaused = "RolloutPaused"

// AnnotationResumeRollout on a MachineSet lists failed upgrade plan IDs
// (comma separated) the admin has seen: those Machines no longer count
// against maxFailures or maxUnavailable, so the rollout goes on without them
// (`anvil machinesets resume` sets it). The Machines stay as they failed.
const AnnotationResumeRollout = "metal.anvil.dev/resume-rollout"

// resumedPlans is the set of plan IDs a MachineSet's resume annotation names.
func resumedPlans(ms *metalv1.MachineSet) map[string]bool {
	out := map[string]bool{}
	for _, id := range strings.Split(ms.Annotations[AnnotationResumeRollout], ",") {
		if id = strings.TrimSpace(id); id != "" {
			out[id] = true
		}
	}
	return out
}

// rollout moves the set's Machines to the template's version in place, at
// most maxUnavailable at a time, one failure domain after another when the
// strategy asks, and stops after maxFailures failed upgrades.
func (r *MachineSetReconciler) rollout(ctx context.Context, ms *metalv1.MachineSet, active []metalv1.Machine) (time.Duration, error) {
	target := ms.Spec.Template.Spec.Version
	var outdated, failed []string
	unavailable := 0
	resumed := resumedPlans(ms)
	for i := range active {
		m := &active[i]
		ready := meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady)
		up := m.Status.Upgrade
		switch {
		// A failure counts against this rollout only when it was an upgrade
		// to the template's version; one to another version (patched on the
		// Machine by hand) leaves the Machine outdated, to be patched again.
		case up != nil && up.State == metalv1.UpgradeFailed && up.Version == m.Spec.Version && up.Version == target && resumed[up.PlanID]:
			// The admin resumed past this failure; it is left as it is.
		case up != nil && up.State == metalv1.UpgradeFailed && up.Version == m.Spec.Version && up.Version == target:
			failed = append(failed, m.Name)
			unavailable++
		case m.Spec.Version != target && r.patchedTo(m.UID, target):
			// Patched by an earlier step; the cache has yet to show it.
			// It counts as upgrading, not as outdated: picked again, it
			// would cost another patch and event.
			unavailable++
		case m.Spec.Version != target:
			if !ready {
				unavailable++
			}
			outdated = append(outdated, m.Name)
		case !ready || isUpdating(m) || m.Status.Version != m.Spec.Version:
			unavailable++
		}
	}
	maxFailures := int32(1)
	if p := ms.Spec.Strategy.MaxFailures; p != nil {
		maxFailures = *p
	}
	switch {
	case len(outdated) == 0:
		meta.RemoveStatusCondition(&ms.Status.Conditions, ConditionRolloutPaused)
		for i := range active {
			r.patched.forget(active[i].UID)
		}
		return 0, nil
	case ms.Spec.Paused:
		setSetCondition(ms, ConditionRolloutPaused, true, "Paused", "spec.paused is set; %d Machines still on another version than %s", len(outdated), target)
		return 0, nil
	case int32(len(failed)) >= maxFailures:
		sort.Strings(failed)
		setSetCondition(ms, ConditionRolloutPaused, true, metalv1.ReasonInPlaceUpdateFail,
			"in-place upgrade to %s failed on %s (maxFailures %d); retry or replace those Machines, or `anvil machinesets resume %s` to go on without them", target, strings.Join(failed, ", "), maxFailures, ms.Name)
		return 0, nil
	}
	meta.RemoveStatusCondition(&ms.Status.Conditions, ConditionRolloutPaused)
	replicas := int(ptrOr(ms.Spec.Replicas, 1))
	maxUnavail := intstr.FromInt32(1)
	if ms.Spec.Strategy.MaxUnavailable != nil {
		maxUnavail = *ms.Spec.Strategy.MaxUnavailable
	}
	budget, err := intstr.GetScaledValueFromIntOrPercent(&maxUnavail, replicas, false)
	if err != nil {
		return 0, fmt.Errorf("spec.strategy.maxUnavailable: %w", err)
	}
	budget = max(budget, 1) - unavailable
	if budget <= 0 {
		return 10 * time.Second, nil
	}
	byName := map[string]*metalv1.Machine{}
	for i := range active {
		byName[active[i].Name] = &active[i]
	}
	sort.Slice(outdated, func(i, j int) bool {
		a, b := byName[outdated[i]], byName[outdated[j]]
		if ms.Spec.Strategy.ByFailureDomain && a.Spec.FailureDomain != b.Spec.FailureDomain {
			return a.Spec.FailureDomain < b.Spec.FailureDomain
		}
		return a.Name < b.Name
	})
	domain := byName[outdated[0]].Spec.FailureDomain
	var next []*metalv1.Machine
	for _, name := range outdated {
		if budget == 0 {
			break
		}
		m := byName[name]
		if ms.Spec.Strategy.ByFailureDomain && m.Spec.FailureDomain != domain {
			break // the next domain starts once this one is done
		}
		if !meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady) {
			continue // it is not serving; the Machine controller upgrades it once Running
		}
		next = append(next, m)
		budget--
	}
	// In parallel: one after another, a step of 500 Machines took the
	// 5,000-Machine rollout benchmark up to a minute of round trips, and
	// the first ones were done before the last ones started (138 upgrading
	// at most, of a budget of 500).
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxCreateBatch)
	var mu sync.Mutex
	var started []string
	for _, m := range next {
		g.Go(func() error {
			patch := client.MergeFrom(m)
			m := m.DeepCopy() // m is the cache's object (see machines)
			m.Spec.Version = target
			if err := r.Client.Patch(gctx, m, patch); err != nil {
				return fmt.Errorf("patching Machine %s to %s: %w", m.Name, target, err)
			}
			r.patched.put(m.UID, target)
			mu.Lock()
			started = append(started, m.Name+" ("+m.Status.Version+")")
			mu.Unlock()
			return nil
		})
	}
	err = g.Wait()
	if len(started) > 0 {
		// One Event per step, not per Machine: each Machine records its
		// own upgrade, and a rollout of 5,000 wrote 5,000 more Events on
		// the one MachineSet.
		slices.Sort(started)
		what := fmt.Sprintf("%d Machines", len(started))
		if len(started) == 1 {
			what = "1 Machine"
		}
		r.event(ms, corev1.EventTypeNormal, ReasonRolloutStep, "Upgrade", "%s to kubelet %s in place: %s", what, target, listSome(started, 10))
	}
	if err != nil {
		return 0, err
	}
	return 10 * time.Second, nil
}

// ReasonRolloutStep is the MachineSet's Event for each step of an in-place
// rollout: the Machines it patched to the new version.
const ReasonRolloutStep = "RolloutStep"

// listSome joins up to n of names, and says how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// patchedTo reports whether a rollout step patched the Machine to version
// within the last minute.
func (r *MachineSetReconciler) patchedTo(uid types.UID, version string) bool {
	v, ok := r.patched.get(uid)
	return ok && v == version
}

func setSetCondition(ms *metalv1.MachineSet, typ string, ok bool, reason, format string, args ...any) {
	c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: fmt.Sprintf(format, args...), ObservedGeneration: ms.Generation}
	if ok {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&ms.Status.Conditions, c)
}
