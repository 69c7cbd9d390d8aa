package ticket

import (
	"context"
	"errors"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
)

// HostEventReconciler files the Host events: power.action_requested when a
// manual:// Host waits for a person, power.action_cancelled when such an
// action is no longer needed (and nobody acknowledged it), host.failed
// when a Host goes to Error. Everything it needs is in the Host and the
// deliveries already filed, so a restart files nothing twice.
type HostEventReconciler struct {
	Client client.Client
	Outbox *Outbox
}

// Reconcile files whatever one Host's state calls for.
func (r *HostEventReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	h := &metalv1.Host{}
	if err := r.Client.Get(ctx, req.NamespacedName, h); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var errs []error
	current := ""
	if p := h.Status.PendingPowerAction; p != nil {
		id := inventory.PendingActionID(p)
		// The ID has one-second resolution; the action tells apart two
		// requests within one second.
		current = id + "/" + string(p.Action) + "/" + string(p.BootDevice)
		data := map[string]any{"action": p.Action, "actionID": id, "requestedAt": p.RequestedAt.UTC().Format(time.RFC3339)}
		if p.BootDevice != "" {
			data["bootDevice"] = p.BootDevice
		}
		errs = append(errs, r.Outbox.Enqueue(ctx, Event{Type: PowerActionRequested, Object: h, Instance: current, Data: data}))
	}
	// Earlier requests that are no longer pending were either done (an ack
	// at or after them) or cancelled.
	var filed metalv1.TicketDeliveryList
	if err := r.Client.List(ctx, &filed, client.InNamespace(h.Namespace), client.MatchingLabels{LabelObjectUID: string(h.UID), LabelEventType: PowerActionRequested}); err != nil {
		return ctrl.Result{}, err
	}
	ack := parseActionID(h.Annotations[inventory.AnnotationAckPower])
	done := map[string]bool{current: true}
	for _, d := range filed.Items {
		inst := d.Spec.Instance
		if done[inst] {
			continue
		}
		done[inst] = true
		if at := parseActionID(inst); !ack.IsZero() && !ack.Before(at) {
			continue // acknowledged (this or a later action)
		}
		id, action, _ := strings.Cut(inst, "/")
		action, _, _ = strings.Cut(action, "/")
		errs = append(errs, r.Outbox.Enqueue(ctx, Event{Type: PowerActionCancelled, Object: h, Instance: inst, Data: map[string]any{"actionID": id, "action": action}}))
	}
	if h.Status.State == metalv1.HostError {
		errs = append(errs, r.Outbox.Enqueue(ctx, hostFailed(h)))
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// hostFailed describes a Host in Error. Each visit to Error is one event:
// keyed by when the failing condition turned False.
func hostFailed(h *metalv1.Host) Event {
	var at metav1.Time
	var problems []map[string]any
	for _, c := range h.Status.Conditions {
		if c.Status != metav1.ConditionFalse {
			continue
		}
		problems = append(problems, map[string]any{"type": c.Type, "reason": c.Reason, "message": c.Message})
		if at.IsZero() || c.LastTransitionTime.Before(&at) {
			at = c.LastTransitionTime
		}
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionValid); c != nil && c.Status == metav1.ConditionFalse {
		at = c.LastTransitionTime
	}
	return Event{Type: HostFailed, Object: h, Instance: at.UTC().Format(time.RFC3339), Data: map[string]any{"state": string(h.Status.State), "problems": problems}}
}

// parseActionID reads the time of an action ID or instance.
func parseActionID(s string) time.Time {
	s, _, _ = strings.Cut(s, "/")
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t
}

// SetupWithManager registers the Host event controller.
func (r *HostEventReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&metalv1.Host{}).
		Named("tickethostevents").
		Complete(r)
}
