package inventory

import (
	corev1 "k8s.io/api/core/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
)

// AnnotationPowerCycle asks for one power cycle of a Host: a new value (a
// request ID; `anvil hosts power HOST cycle` writes the time) gets one
// power reset, and the ID is then recorded in status.powerCycleID. An ID
// is a request, not a count, so a lost status write or a requeue cannot
// make two resets of one request, and a new request needs a new ID.
const AnnotationPowerCycle = "metal.anvil.dev/power-cycle"

// Event reasons of a power cycle.
const (
	ReasonPowerCycle        = "PowerCycle"
	ReasonPowerCycleSkipped = "PowerCycleSkipped"
)

// MessagePowerIsOff is why a Host that is off is not cycled; ops refuses
// with it up front, the controller records it when the power went off
// between the request and its turn.
const MessagePowerIsOff = "power is off: nothing to cycle; power it on instead"

// PowerCycleRequested is the ID of the Host's power cycle request that is
// not handled yet, "" when there is none.
func PowerCycleRequested(h *metalv1.Host) string {
	if id := h.Annotations[AnnotationPowerCycle]; id != "" && id != h.Status.PowerCycleID {
		return id
	}
	return ""
}

// powerCycle folds a pending power cycle request into the action
// reconcilePower is about to take. It runs only when no boot request wants
// the BMC and no action is in flight: those win, and the cycle waits. A
// Host that is off, or kept off by spec.online, has nothing to cycle: the
// request is recorded as handled with an Event saying so. While the power
// still has to be brought to spec.online, that goes first.
func (r *HostReconciler) powerCycle(h *metalv1.Host, action bmc.PowerAction) bmc.PowerAction {
	id := PowerCycleRequested(h)
	switch {
	case id == "":
		return action
	case h.Status.PowerState == metalv1.PowerOff, !h.Spec.Online:
		why := MessagePowerIsOff
		if h.Status.PowerState != metalv1.PowerOff {
			why = "spec.online is false: nothing to cycle; power it on instead"
		}
		h.Status.PowerCycleID = id
		r.event(h, corev1.EventTypeNormal, ReasonPowerCycleSkipped, "Power", "power cycle %s not done: %s", id, why)
		return action
	case action != "":
		return action
	}
	return bmc.PowerReset
}

// cycleSent records the power cycle a reset without a boot device carried
// out (sent to the BMC, or acknowledged by a person for a manual:// Host):
// only a power cycle sends such a reset. It reports whether it was one.
func (r *HostReconciler) cycleSent(h *metalv1.Host, action bmc.PowerAction, boot bmc.BootDevice, how string) bool {
	id := PowerCycleRequested(h)
	if action != bmc.PowerReset || boot != "" || id == "" {
		return false
	}
	h.Status.PowerCycleID = id
	r.event(h, corev1.EventTypeNormal, ReasonPowerCycle, "Power", "power cycle %s: power reset %s", id, how)
	return true
}
