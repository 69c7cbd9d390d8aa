package machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
)

// deletePhases take a deleted Machine's Host back: drain and delete the
// Node, wipe the disks (when the class asks), release the Host, and only
// then let the Machine go.
func (r *MachineReconciler) deletePhases() []func(context.Context, *scope) result {
	return []func(context.Context, *scope) result{r.findHost, r.drain, r.wipe, r.releaseHost, r.removeFinalizer}
}

func (r *MachineReconciler) drain(ctx context.Context, s *scope) result {
	m, td := s.m, s.teardown
	if td.condition == metalv1.ConditionDeleting {
		m.Status.Phase = metalv1.MachineDeleting
	}
	t, err := r.targetOf(ctx, s)
	if skipDrain(m, err) {
		if m.Status.NodeRef != nil {
			r.event(m, corev1.EventTypeWarning, "DrainSkipped", td.action, "not draining Node %s: %v", m.Status.NodeRef.Name, err)
		}
		m.Status.NodeRef = nil
		return result{}
	}
	if err != nil {
		return result{err: err}
	}
	n := s.node
	if n == nil && m.Status.NodeRef != nil {
		n = &corev1.Node{}
		if err := t.Nodes.Get(ctx, types.NamespacedName{Name: m.Status.NodeRef.Name}, n); err != nil {
			if !apierrors.IsNotFound(err) {
				return result{err: err}
			}
			n = nil
		} else if n.Spec.ProviderID != "" && n.Spec.ProviderID != m.Status.ProviderID {
			n = nil // a namesake from another host; not ours to touch
		}
	}
	if n != nil {
		setCondition(m, td.condition, true, metalv1.ReasonDraining, "cordoning and draining Node %s", n.Name)
		deadline := td.since.Add(r.Options.DrainTimeout)
		left := deadline.Sub(s.now)
		if left > 0 {
			done, podsLeft, err := r.drainNode(ctx, t.Clientset, n, min(left, drainStep))
			if err != nil {
				return result{err: err}
			}
			if !done {
				setCondition(m, td.condition, true, metalv1.ReasonDraining, "draining Node %s: %d pods left; going on without them at %s", n.Name, podsLeft, deadline.UTC().Format(time.RFC3339))
				return result{stop: true, after: 5 * time.Second}
			}
		} else {
			r.event(m, corev1.EventTypeWarning, "DrainTimeout", td.action, "Node %s did not drain within %s; deleting it anyway", n.Name, r.Options.DrainTimeout)
		}
		if err := t.Client.Delete(ctx, n); err != nil && !apierrors.IsNotFound(err) {
			return result{err: fmt.Errorf("deleting Node %s: %w", n.Name, err)}
		}
		r.event(m, corev1.EventTypeNormal, "NodeDeleted", td.action, "deleted Node %s", n.Name)
	}
	m.Status.NodeRef = nil
	if err := r.revokeTokens(ctx, s); err != nil {
		return result{err: err}
	}
	return result{}
}

// wipe network-boots the Host into the class's wipe mode and waits for the
// agent's report. A failed or silent wipe still releases the Host, which
// the Host controller then keeps in Error until an admin acknowledges it.
func (r *MachineReconciler) wipe(ctx context.Context, s *scope) result {
	m, h, td := s.m, s.host, s.teardown
	if h == nil {
		return result{}
	}
	// The class the Host was installed from wipes it (a replacement may
	// be moving to another class).
	className := m.Spec.MachineClassRef.Name
	if m.Status.InstalledClass != "" {
		className = m.Status.InstalledClass
	}
	class := &metalv1.MachineClass{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: className}, class)
	switch {
	case apierrors.IsNotFound(err):
		return r.wipeFailed(ctx, s, fmt.Sprintf("MachineClass %s was deleted before Host %s could be wiped with it", className, h.Name))
	case err != nil:
		return result{err: err}
	case class.Spec.Wipe != nil && !*class.Spec.Wipe:
		return result{}
	}
	br := h.Spec.BootRequest
	b := m.Status.Boot
	if br == nil || br.Purpose != metalv1.BootPurposeWipe {
		attempt := nextAttempt(b, metalv1.BootPurposeWipe)
		id := bootID(m, metalv1.BootPurposeWipe, attempt)
		if err := r.updateHost(ctx, h, m, func(h *metalv1.Host) {
			h.Spec.BootRequest = &metalv1.BootRequest{ID: id, Purpose: metalv1.BootPurposeWipe}
			h.Spec.Online = true
			delete(h.Annotations, metalv1.AnnotationProvisioned)
		}); err != nil {
			if errors.Is(err, errNotOurs) {
				s.host = nil
				return result{}
			}
			return result{err: fmt.Errorf("asking Host %s for a wipe boot: %w", h.Name, err)}
		}
		m.Status.Boot = &metalv1.MachineBoot{RequestID: id, Purpose: metalv1.BootPurposeWipe, Attempt: attempt, StartedAt: metav1.NewTime(s.now)}
		setCondition(m, td.condition, true, metalv1.ReasonWiping, "Host %s is network booting to wipe its disks", h.Name)
		r.event(m, corev1.EventTypeNormal, metalv1.ReasonWiping, td.action, "Host %s network-boots to wipe its disks", h.Name)
		return result{stop: true, after: r.Options.WipeTimeout}
	}
	if b == nil || b.RequestID != br.ID {
		b = &metalv1.MachineBoot{RequestID: br.ID, Purpose: br.Purpose, Attempt: attemptOf(br.ID), StartedAt: metav1.NewTime(s.now)}
		m.Status.Boot = b
	}
	c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionWiped)
	if c != nil && c.ObservedGeneration == h.Generation {
		if c.Status == metav1.ConditionTrue {
			r.event(m, corev1.EventTypeNormal, "Wiped", td.action, "Host %s: %s", h.Name, c.Message)
			return result{}
		}
		r.event(m, corev1.EventTypeWarning, metalv1.ReasonWipeFailed, td.action, "Host %s: %s; it goes to Error instead of Available", h.Name, c.Message)
		setCondition(m, td.condition, true, metalv1.ReasonWipeFailed, "Host %s: %s", h.Name, c.Message)
		return result{}
	}
	left := r.Options.WipeTimeout - s.now.Sub(b.StartedAt.Time)
	if left <= 0 {
		return r.wipeFailed(ctx, s, fmt.Sprintf("no wipe report from Host %s within %s", h.Name, r.Options.WipeTimeout))
	}
	setCondition(m, td.condition, true, metalv1.ReasonWiping, "waiting for the agent on Host %s to wipe its disks", h.Name)
	return result{stop: true, after: left}
}

// wipeFailed records a wipe that cannot happen on the Host, so it goes to
// Error when released.
func (r *MachineReconciler) wipeFailed(ctx context.Context, s *scope, msg string) result {
	h := s.host
	orig := h.DeepCopy()
	meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{
		Type: metalv1.ConditionWiped, Status: metav1.ConditionFalse, Reason: metalv1.ReasonWipeFailed, Message: msg, ObservedGeneration: h.Generation,
	})
	// Only the Wiped condition, by server-side apply: the Host's other
	// conditions and fields belong to other writers.
	_, err := statusapply.MachineWipe.Apply(ctx, r.Client, statusapply.Request{
		Live: orig, GVK: statusapply.HostGVK,
		Status: map[string]any{"conditions": []metav1.Condition{*meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionWiped)}},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return result{err: fmt.Errorf("recording the failed wipe of Host %s: %w", h.Name, err)}
	}
	r.event(s.m, corev1.EventTypeWarning, metalv1.ReasonWipeFailed, s.teardown.action, "%s; Host %s goes to Error instead of Available", msg, h.Name)
	setCondition(s.m, s.teardown.condition, true, metalv1.ReasonWipeFailed, "%s", msg)
	return result{}
}

func (r *MachineReconciler) releaseHost(ctx context.Context, s *scope) result {
	m, h, td := s.m, s.host, s.teardown
	if h == nil {
		return result{}
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, td.condition); c == nil || c.Reason != metalv1.ReasonWipeFailed {
		setCondition(m, td.condition, true, metalv1.ReasonReleasing, "powering off and releasing Host %s", h.Name)
	}
	if err := r.release(ctx, h, m); err != nil {
		return result{err: err}
	}
	r.event(m, corev1.EventTypeNormal, "HostReleased", td.action, "released Host %s", h.Name)
	s.host = nil
	m.Status.HostRef = nil
	return result{}
}

func (r *MachineReconciler) removeFinalizer(ctx context.Context, s *scope) result {
	m := s.m
	if waiting(m) || (m.Status.HardwareRequest != nil && m.Status.HostRef == nil) {
		// The finalizer stays until the cancellation is filed.
		if err := r.notify(ctx, Event{Type: EventHardwareCancelled, Machine: m}); err != nil {
			return result{err: err}
		}
	}
	if !controllerutil.ContainsFinalizer(m, metalv1.FinalizerMachine) {
		return result{}
	}
	orig := m.DeepCopy()
	controllerutil.RemoveFinalizer(m, metalv1.FinalizerMachine)
	if err := r.Client.Patch(ctx, m, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return result{err: fmt.Errorf("removing finalizer: %w", err)}
	}
	ctrl.LoggerFrom(ctx).Info("Machine released its Host and is gone")
	return result{stop: true}
}
