package machine

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/kubectl/pkg/drain"
	ctrl "sigs.k8s.io/controller-runtime"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// ReasonUpgradeRejected: the version change breaks a rule (skew, no
// artifact); nothing is touched.
const ReasonUpgradeRejected = "UpgradeRejected"

// AnnotationRetryUpgrade set to a failed or rejected plan's ID retries it
// (a rejected one is validated again).
const AnnotationRetryUpgrade = "metal.anvil.dev/retry-upgrade"

// upgrade changes the kubelet of a Running Machine in place when
// spec.version differs from what its Node runs: validate, cordon, drain,
// publish the plan to the agent, verify the Node, uncordon.
func (r *MachineReconciler) upgrade(ctx context.Context, s *scope) result {
	m, n := s.m, s.node
	// The phase as of this reconcile: join may just have seen the Node
	// Ready, and no watch event need follow to look again.
	summarize(m)
	if n == nil || m.Status.FailureReason != "" || m.Status.Phase != metalv1.MachineRunning && m.Status.Phase != metalv1.MachineUpdating {
		return result{}
	}
	running := n.Status.NodeInfo.KubeletVersion
	up := m.Status.Upgrade
	if up != nil && up.Version == m.Spec.Version {
		switch up.State {
		case metalv1.UpgradeDraining:
			return r.upgradeDrain(ctx, s)
		case metalv1.UpgradeApplying:
			if takeAgentResult(up) {
				// The next step follows in this reconcile, so one write
				// records the outcome and what came of it (verified, or
				// the failure's handling): a write and a trip through the
				// queue fewer per upgrade than waiting for this one's
				// watch event.
				if up.State == metalv1.UpgradeSucceeded {
					return r.upgradeVerify(ctx, s)
				}
				return r.upgradeFailedTaken(ctx, s, up.Message, true)
			}
			// Still applying: nothing to write. The agent's progress
			// phases stay in status.upgrade.agentResult (UpgradeStatus.
			// Progress); copying each into this status cost a reconcile
			// and a write per phase, and conflicts with the agent API's
			// writes (the rollout benchmark of 5,000).
			return result{after: time.Minute}
		case metalv1.UpgradeSucceeded:
			return r.upgradeVerify(ctx, s)
		case metalv1.UpgradeFailed:
			if m.Annotations[AnnotationRetryUpgrade] != up.PlanID {
				return r.upgradeFailed(ctx, s, up.Message)
			}
			// An admin asked to retry this plan: start over below.
		case metalv1.UpgradeRejected:
			if m.Annotations[AnnotationRetryUpgrade] != up.PlanID {
				return result{} // until spec.version changes, or an admin retries
			}
			// An admin fixed the cause (e.g. added the kubelet to the
			// class) and asked to retry: validate again below.
		case metalv1.UpgradeVerified:
			if running == m.Spec.Version {
				r.upToDate(m, running)
				return result{}
			}
		}
	}
	if running == "" || running == m.Spec.Version {
		r.upToDate(m, running)
		return result{}
	}
	if err := r.validateUpgrade(ctx, s, running); err != nil {
		id := planID(m, up) // a retry rejected again gets a new ID: the old annotation no longer matches
		m.Status.Upgrade = &metalv1.UpgradeStatus{PlanID: id, FromVersion: running, Version: m.Spec.Version, State: metalv1.UpgradeRejected, Message: err.Error(), AgentResult: agentResult(up)}
		setCondition(m, metalv1.ConditionUpToDate, false, ReasonUpgradeRejected, "version %s rejected: %s; nothing was touched. Fix it and retry: kubectl annotate machine %s -n %s --overwrite %s=%s",
			m.Spec.Version, err, m.Name, m.Namespace, AnnotationRetryUpgrade, id)
		meta.RemoveStatusCondition(&m.Status.Conditions, metalv1.ConditionUpdating)
		r.event(m, corev1.EventTypeWarning, ReasonUpgradeRejected, "Upgrade", "kubelet %s -> %s rejected: %s", running, m.Spec.Version, err)
		return result{}
	}
	now := metav1.NewTime(s.now)
	m.Status.Upgrade = &metalv1.UpgradeStatus{PlanID: planID(m, up), FromVersion: running, Version: m.Spec.Version, State: metalv1.UpgradeDraining, StartedAt: &now, Message: "cordoning and draining the Node", AgentResult: agentResult(up)}
	setCondition(m, metalv1.ConditionUpdating, true, metalv1.ReasonInPlaceUpdating, "in place: kubelet %s -> %s (plan %s)", running, m.Spec.Version, m.Status.Upgrade.PlanID)
	setCondition(m, metalv1.ConditionUpToDate, false, metalv1.ReasonInPlaceUpdating, "Node runs %s, spec asks for %s", running, m.Spec.Version)
	r.event(m, corev1.EventTypeNormal, metalv1.ReasonInPlaceUpdating, "Upgrade", "kubelet %s -> %s in place (plan %s): draining Node %s", running, m.Spec.Version, m.Status.Upgrade.PlanID, n.Name)
	return r.upgradeDrain(ctx, s)
}

// upgradeInFlight reports whether an in-place upgrade is between its start
// and its verdict (status.version then stays what it was before it).
func upgradeInFlight(up *metalv1.UpgradeStatus) bool {
	if up == nil {
		return false
	}
	switch up.State {
	case metalv1.UpgradeDraining, metalv1.UpgradeApplying, metalv1.UpgradeSucceeded:
		return true
	}
	return false
}

// takeAgentResult moves up as the agent's outcome for this plan says
// (status.upgrade.agentResult, written by the agent API alone) into state,
// message and finishedAt. A report on another plan, and a progress phase,
// change nothing (readers show the phase: UpgradeStatus.Progress). It
// reports whether up changed.
func takeAgentResult(up *metalv1.UpgradeStatus) bool {
	ar := up.AgentResult
	if ar == nil || ar.PlanID != up.PlanID || up.State != metalv1.UpgradeApplying {
		return false
	}
	old := *up
	switch ar.Outcome {
	case metalv1.AgentUpgradeSucceeded:
		up.State, up.Message = metalv1.UpgradeSucceeded, nonEmpty(ar.Message, fmt.Sprintf("kubelet %s installed and healthy", up.Version))
	case metalv1.AgentUpgradeFailed:
		up.State, up.Message = metalv1.UpgradeFailed, nonEmpty(ar.Message, "the agent reported a failure without a reason")
	default:
		return false
	}
	if up.State != metalv1.UpgradeApplying {
		at := ar.ReportedAt
		up.FinishedAt = &at
	}
	return up.State != old.State || up.Message != old.Message
}

// agentResult carries the agent API's field into a new status.upgrade, so
// that the controller's merge patch leaves it alone (it has one writer).
func agentResult(up *metalv1.UpgradeStatus) *metalv1.AgentUpgradeResult {
	if up == nil {
		return nil
	}
	return up.AgentResult
}

func (r *MachineReconciler) upToDate(m *metalv1.Machine, running string) {
	if running == "" {
		return
	}
	setCondition(m, metalv1.ConditionUpToDate, true, "UpToDate", "")
	meta.RemoveStatusCondition(&m.Status.Conditions, metalv1.ConditionUpdating)
}

// planID names one attempt: it changes when the version changes or an
// admin retries, so the agent treats it as a new plan.
func planID(m *metalv1.Machine, prev *metalv1.UpgradeStatus) string {
	n := 1
	if prev != nil && prev.Version == m.Spec.Version {
		if i := strings.LastIndex(prev.PlanID, "-"); i >= 0 {
			fmt.Sscanf(prev.PlanID[i+1:], "%d", &n)
			n++
		}
	}
	uid := strings.ReplaceAll(string(m.UID), "-", "")
	if len(uid) > 8 {
		uid = uid[:8]
	}
	return fmt.Sprintf("%s-%s-%d", uid, m.Spec.Version, n)
}

// validateUpgrade applies the version-skew policy and checks the class has
// the artifact, before anything is touched.
func (r *MachineReconciler) validateUpgrade(ctx context.Context, s *scope, running string) error {
	m := s.m
	to, err := kubeletSkew(running, m.Spec.Version, m.Spec.AllowDowngrade)
	if err != nil {
		return err
	}
	api, err := r.targetVersion(ctx, s)
	if err != nil {
		return fmt.Errorf("cannot read the API server's version to check skew: %v", err)
	}
	if err := apiSkew(api, to, m.Spec.Version); err != nil {
		return err
	}
	class := &metalv1.MachineClass{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.MachineClassRef.Name}, class); err != nil {
		return fmt.Errorf("reading MachineClass %s: %v", m.Spec.MachineClassRef.Name, err)
	}
	for _, k := range class.Spec.Kubelets {
		if k.Version == m.Spec.Version && len(k.SHA256) == 64 {
			return nil
		}
	}
	return fmt.Errorf("MachineClass %s has no kubelet artifact with a sha256 for %s (spec.kubelets)", class.Name, m.Spec.Version)
}

// kubeletSkew checks the step from the running kubelet to version: no
// downgrade unless allowed, no skipped minor. It returns version parsed.
func kubeletSkew(running, version string, allowDowngrade bool) (*utilversion.Version, error) {
	from, err := utilversion.ParseSemantic(running)
	if err != nil {
		return nil, fmt.Errorf("the Node reports kubelet %q, which is not a version", running)
	}
	to, err := utilversion.ParseSemantic(version)
	if err != nil {
		return nil, fmt.Errorf("spec.version %q is not a version", version)
	}
	if to.LessThan(from) && !allowDowngrade {
		return nil, fmt.Errorf("%s is older than the running %s; set spec.allowDowngrade to downgrade", version, running)
	}
	if to.Major() != from.Major() || to.Minor() > from.Minor()+1 {
		return nil, fmt.Errorf("%s skips minor versions from %s; upgrade one minor at a time", version, running)
	}
	return to, nil
}

// apiSkew checks kubelet version (to) against the API server's: not newer
// than its minor, at most 3 minors older.
func apiSkew(api, to *utilversion.Version, version string) error {
	if api.LessThan(to) && !(api.Major() == to.Major() && api.Minor() == to.Minor()) {
		return fmt.Errorf("kubelet %s would be newer than the API server %s", version, api)
	}
	if api.Major() == to.Major() && api.Minor() > to.Minor()+3 {
		return fmt.Errorf("kubelet %s would be more than 3 minors older than the API server %s", version, api)
	}
	return nil
}

func (r *MachineReconciler) upgradeDrain(ctx context.Context, s *scope) result {
	m, n, up := s.m, s.node, s.m.Status.Upgrade
	class := &metalv1.MachineClass{}
	_ = r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.MachineClassRef.Name}, class)
	timeout := 10 * time.Minute
	if d := class.Spec.Upgrade.DrainTimeout; d != nil && d.Duration > 0 {
		timeout = d.Duration
	}
	from, _ := utilversion.ParseSemantic(up.FromVersion)
	to, _ := utilversion.ParseSemantic(up.Version)
	patchOnly := from != nil && to != nil && from.Major() == to.Major() && from.Minor() == to.Minor()
	if class.Spec.Upgrade.SkipDrainForPatch && patchOnly {
		if err := r.cordon(ctx, s, n, true); err != nil {
			return result{err: err}
		}
		r.event(m, corev1.EventTypeNormal, "DrainSkipped", "Upgrade", "patch release %s -> %s: drain skipped (MachineClass upgrade.skipDrainForPatch)", up.FromVersion, up.Version)
	} else {
		left := timeout - s.now.Sub(up.StartedAt.Time)
		if left <= 0 {
			return r.upgradeFailed(ctx, s, fmt.Sprintf("the Node did not drain within %s (%d pods left)", timeout, up.PodsLeft))
		}
		t, err := r.targetOf(ctx, s)
		if err != nil {
			return result{err: err}
		}
		done, podsLeft, err := r.drainNode(ctx, t.Clientset, n, min(left, drainStep))
		if err != nil {
			return result{err: err}
		}
		up.PodsLeft = int32(podsLeft)
		if !done {
			up.Message = fmt.Sprintf("draining Node %s: %d pods left (PodDisruptionBudgets respected)", n.Name, podsLeft)
			setCondition(m, metalv1.ConditionUpdating, true, metalv1.ReasonInPlaceUpdating, "%s", up.Message)
			return result{stop: true, after: 5 * time.Second}
		}
	}
	up.State, up.Message, up.PodsLeft = metalv1.UpgradeApplying, "plan published; waiting for the agent", 0
	setCondition(m, metalv1.ConditionUpdating, true, metalv1.ReasonInPlaceUpdating, "Node %s drained; the agent on Host %s applies kubelet %s (plan %s)", n.Name, s.host.Name, up.Version, up.PlanID)
	r.event(m, corev1.EventTypeNormal, "PlanPublished", "Upgrade", "Node %s drained; plan %s (kubelet %s) published to the agent", n.Name, up.PlanID, up.Version)
	return result{after: time.Minute}
}

// upgradeVerify trusts the Node, not the agent: it must report the target
// version and be Ready.
func (r *MachineReconciler) upgradeVerify(ctx context.Context, s *scope) result {
	m, n, up := s.m, s.node, s.m.Status.Upgrade
	ready := nodeReady(n)
	if n.Status.NodeInfo.KubeletVersion != up.Version || ready == nil || ready.Status != corev1.ConditionTrue {
		since := up.StartedAt.Time
		if up.FinishedAt != nil {
			since = up.FinishedAt.Time
		}
		if s.now.Sub(since) > 5*time.Minute {
			return r.upgradeFailed(ctx, s, fmt.Sprintf("the agent reported success but Node %s reports kubelet %q (Ready=%v) after 5m", n.Name, n.Status.NodeInfo.KubeletVersion, ready != nil && ready.Status == corev1.ConditionTrue))
		}
		setCondition(m, metalv1.ConditionUpdating, true, metalv1.ReasonInPlaceUpdating, "agent done; waiting for Node %s to report kubelet %s and Ready", n.Name, up.Version)
		return result{after: 5 * time.Second}
	}
	if err := r.cordon(ctx, s, n, false); err != nil {
		return result{err: err}
	}
	up.State, up.Message = metalv1.UpgradeVerified, fmt.Sprintf("Node %s runs kubelet %s, Ready, uncordoned", n.Name, up.Version)
	m.Status.Version = up.Version
	r.upToDate(m, up.Version)
	r.event(m, corev1.EventTypeNormal, "Upgraded", "Upgrade", "kubelet %s -> %s in place; %s", up.FromVersion, up.Version, up.Message)
	return result{}
}

func (r *MachineReconciler) upgradeFailed(ctx context.Context, s *scope, reason string) result {
	return r.upgradeFailedTaken(ctx, s, reason, false)
}

// upgradeFailedTaken is upgradeFailed; taken: this reconcile took the
// failure from the agent's outcome (the state is Failed already, and the
// Warning Event is still to be recorded).
func (r *MachineReconciler) upgradeFailedTaken(ctx context.Context, s *scope, reason string, taken bool) result {
	m, up := s.m, s.m.Status.Upgrade
	first := up.State != metalv1.UpgradeFailed || taken
	if up.State != metalv1.UpgradeFailed {
		now := metav1.NewTime(s.now)
		up.State, up.Message, up.FinishedAt = metalv1.UpgradeFailed, reason, &now
	}
	msg := fmt.Sprintf("kubelet %s -> %s failed: %s", up.FromVersion, up.Version, reason)
	if m.Spec.UncordonOnFailure && s.node != nil {
		if err := r.cordon(ctx, s, s.node, false); err != nil {
			return result{err: err}
		}
		msg += "; Node uncordoned (spec.uncordonOnFailure)"
	} else {
		msg += "; the Node stays cordoned. Retry: kubectl annotate machine " + m.Name + " -n " + m.Namespace + " --overwrite " + AnnotationRetryUpgrade + "=" + up.PlanID +
			", or replace it (reinstall): kubectl annotate machine " + m.Name + " -n " + m.Namespace + " " + metalv1.AnnotationReplace + "=now"
	}
	setCondition(m, metalv1.ConditionUpdating, true, metalv1.ReasonInPlaceUpdateFail, "%s", msg)
	if first {
		r.event(m, corev1.EventTypeWarning, metalv1.ReasonInPlaceUpdateFail, "Upgrade", "%s", msg)
	}
	return result{}
}

func (r *MachineReconciler) cordon(ctx context.Context, s *scope, n *corev1.Node, on bool) error {
	if n.Spec.Unschedulable == on {
		return nil
	}
	t, err := r.targetOf(ctx, s)
	if err != nil {
		return err
	}
	h := &drain.Helper{Ctx: ctx, Client: t.Clientset, Out: logWriter{log: ctrl.LoggerFrom(ctx)}, ErrOut: logWriter{log: ctrl.LoggerFrom(ctx)}}
	if err := drain.RunCordonOrUncordon(h, n, on); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cordon=%v Node %s: %w", on, n.Name, err)
	}
	return nil
}
