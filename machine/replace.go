package machine

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// replace decides how a spec change is carried out. A new kubelet version
// is done in place (the upgrade phase); anything else that needs a new OS
// (another class) or another Host (a selector or failure domain its Host
// no longer matches), or the replace annotation, replaces the Machine: the
// same steps as a deletion give the Host back (drain, wipe, release), then
// the claim and boot phases install a Host again. The Machine says which
// it chose and why, in status.replacement and the UpToDate condition.
func (r *MachineReconciler) replace(ctx context.Context, s *scope) result {
	m := s.m
	if m.Status.Replacement == nil {
		reason, msg := r.replacementNeeded(s)
		if reason == "" {
			return result{}
		}
		host := ""
		if s.host != nil {
			host = s.host.Name
		}
		rep := &metalv1.MachineReplacement{Reason: reason, Message: msg, StartedAt: metav1.NewTime(s.now), Host: host}
		if _, ok := m.Annotations[metalv1.AnnotationReplace]; ok {
			// The decision is written before the annotation goes, so that a
			// lost status write cannot lose the request; then go on from
			// what the API server has.
			withRep := m.DeepCopy()
			withRep.Status.Replacement = rep
			withRep.Status.FailureReason, withRep.Status.FailureMessage = "", ""
			if err := r.Client.Status().Patch(ctx, withRep, client.MergeFrom(m), client.FieldOwner(FieldManager)); err != nil {
				return result{err: fmt.Errorf("recording the replacement: %w", err)}
			}
			noAnn := withRep.DeepCopy()
			delete(noAnn.Annotations, metalv1.AnnotationReplace)
			if err := r.Client.Patch(ctx, noAnn, client.MergeFrom(withRep)); err != nil {
				return result{err: fmt.Errorf("removing the %s annotation: %w", metalv1.AnnotationReplace, err)}
			}
			r.event(m, corev1.EventTypeNormal, metalv1.ReasonReplacing, "Replace", "%s", msg)
			return result{stop: true, after: time.Second}
		}
		m.Status.Replacement = rep
		// A failed Machine can be replaced: that is the way out.
		m.Status.FailureReason, m.Status.FailureMessage = "", ""
		r.event(m, corev1.EventTypeNormal, metalv1.ReasonReplacing, "Replace", "%s", msg)
	}
	rep := m.Status.Replacement
	if h := s.host; h != nil && h.Spec.BootRequest != nil && h.Spec.BootRequest.Purpose == metalv1.BootPurposeProvision &&
		strings.Contains(h.Spec.BootRequest.ID, fmt.Sprintf("-r%dp", m.Status.Replacements+1)) {
		// The Host was given back and a Host claimed again in a reconcile
		// whose status write was lost (a conflict, a crash): the claim on
		// the Host is the truth. Keep it; only finish the bookkeeping.
		r.finishReplacement(m, rep)
		m.Status.InstalledClass = m.Spec.MachineClassRef.Name
		return result{}
	}
	setCondition(m, metalv1.ConditionUpToDate, false, metalv1.ReasonReplacing, "%s", rep.Message)
	setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonReplacing, "%s", rep.Message)
	meta.RemoveStatusCondition(&m.Status.Conditions, metalv1.ConditionUpdating)
	s.teardown = teardown{condition: metalv1.ConditionReplacing, action: "Replace", since: rep.StartedAt.Time}
	for _, p := range []func(context.Context, *scope) result{r.drain, r.wipe, r.releaseHost} {
		if res := p(ctx, s); res.err != nil || res.stop {
			return res
		}
	}
	// The Host is back: start over as a new Machine would, keeping the
	// replacement count so boot IDs stay new.
	r.finishReplacement(m, rep)
	st := &m.Status
	st.HostRef, st.ProviderID, st.Boot, st.InstalledClass = nil, "", nil, ""
	s.host, s.node = nil, nil
	return result{}
}

// finishReplacement counts a replacement whose Host was given back and
// forgets what described the old install.
func (r *MachineReconciler) finishReplacement(m *metalv1.Machine, rep *metalv1.MachineReplacement) {
	st := &m.Status
	r.event(m, corev1.EventTypeNormal, "Replaced", "Replace", "gave Host %s back; installing a Host from %s", nonEmpty(rep.Host, "(none)"), m.Spec.MachineClassRef.Name)
	st.Replacements++
	st.Replacement = nil
	st.NodeRef, st.Addresses, st.Version, st.Upgrade = nil, nil, "", nil
	for _, c := range []string{metalv1.ConditionReplacing, metalv1.ConditionInfrastructureReady, metalv1.ConditionNodeReady, metalv1.ConditionUpToDate} {
		meta.RemoveStatusCondition(&st.Conditions, c)
	}
}

// replacementNeeded says why the Machine's Host no longer fits its spec
// ("" when it does).
func (r *MachineReconciler) replacementNeeded(s *scope) (reason metalv1.ReplacementReason, msg string) {
	m, h := s.m, s.host
	if v, ok := m.Annotations[metalv1.AnnotationReplace]; ok {
		return metalv1.ReplaceRequested, fmt.Sprintf("annotation %s=%q: the Machine is replaced (drain, wipe and release Host %s, then install a Host again)",
			metalv1.AnnotationReplace, v, hostName(h))
	}
	if h == nil || !m.DeletionTimestamp.IsZero() {
		return "", ""
	}
	if c := m.Status.InstalledClass; c != "" && c != m.Spec.MachineClassRef.Name {
		return metalv1.ReplaceClassChanged, fmt.Sprintf("spec.machineClassRef changed from %s to %s: a new OS needs a fresh install, so Host %s is drained, wiped and released and a Host is installed from %s (only a spec.version change is done in place)",
			c, m.Spec.MachineClassRef.Name, h.Name, m.Spec.MachineClassRef.Name)
	}
	var why []string
	if sel, err := metav1.LabelSelectorAsSelector(&m.Spec.HostSelector); err == nil && !sel.Matches(labels.Set(h.Labels)) {
		why = append(why, "spec.hostSelector "+sel.String())
	}
	if fd := m.Spec.FailureDomain; fd != "" && h.Labels[metalv1.LabelFailureDomain] != fd {
		why = append(why, fmt.Sprintf("spec.failureDomain %s (the Host is in %q)", fd, h.Labels[metalv1.LabelFailureDomain]))
	}
	if len(why) > 0 {
		return metalv1.ReplaceHostMismatch, fmt.Sprintf("Host %s no longer matches %s: the Machine moves to a Host that does (drain, wipe and release this one, then install the new one; only a spec.version change is done in place)",
			h.Name, strings.Join(why, " and "))
	}
	return "", ""
}

func hostName(h *metalv1.Host) string {
	if h == nil {
		return "(none)"
	}
	return h.Name
}
