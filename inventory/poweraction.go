package inventory

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/backoff"
)

// A BMC accepts a power request at once and changes the power seconds
// later; asked again meanwhile, it starts the change over. So an action the
// BMC accepted is recorded in status.issuedPowerAction and read back on a
// short backoff until the BMC reports its result. It is never sent again
// before its deadline, however often the Host is reconciled.

// desiredPower is the power state spec.online asks for.
func desiredPower(h *metalv1.Host) metalv1.PowerState {
	if h.Spec.Online {
		return metalv1.PowerOn
	}
	return metalv1.PowerOff
}

// targetOf is the power state that shows an action took effect. A reset
// of a running server may show On throughout; what matters is that it is
// not left off.
func targetOf(action bmc.PowerAction) metalv1.PowerState {
	if action == bmc.PowerOff || action == bmc.PowerGracefulOff {
		return metalv1.PowerOff
	}
	return metalv1.PowerOn
}

// actionDeadline is how long the BMC may take for the attempt-th sending
// of an action: ActionTimeout, doubled per retry, at most BackoffMax (but
// never less than ActionTimeout), so a BMC slower than the deadline is not
// restarted for ever.
func (o *PowerOptions) actionDeadline(attempt int32) time.Duration {
	return max(o.ActionTimeout, backoff.Backoff{Base: o.ActionTimeout, Cap: o.BackoffMax}.Step(int(attempt)))
}

// readBackDelay is the wait before the next read-back, elapsed after the
// action was sent: about as long again (1s, 1s, 2s, 4s, ...), within
// [ReadBackBase, ReadBackMax]. Computed from the issue time in the status,
// so a restarted controller continues the same backoff.
func (o *PowerOptions) readBackDelay(elapsed time.Duration) time.Duration {
	return min(max(elapsed, o.ReadBackBase), o.ReadBackMax)
}

// actionSent records an action the BMC accepted.
func (r *HostReconciler) actionSent(h *metalv1.Host, action bmc.PowerAction, boot bmc.BootDevice, attempt int32) {
	r.checks.active(h)
	switch {
	case attempt == 1 && r.cycleSent(h, action, boot, "sent"): // its own Event
	case boot != "" && h.Spec.BootRequest != nil:
		h.Status.BootRequestID = h.Spec.BootRequest.ID
		r.event(h, corev1.EventTypeNormal, "NetworkBoot", "Power", "one-time %s boot set and power %s sent (boot request %s)", boot, action, h.Spec.BootRequest.ID)
	case attempt == 1:
		r.event(h, corev1.EventTypeNormal, "Power"+string(action), "Power", "power %s sent", action)
	}
	now := r.now()
	h.Status.IssuedPowerAction = &metalv1.IssuedPowerAction{
		Action: metalv1.PowerAction(action), BootDevice: metalv1.BootDevice(boot), Target: targetOf(action),
		IssuedAt: metav1.NewTime(now), Deadline: metav1.NewTime(now.Add(r.Power.actionDeadline(attempt))), Attempts: attempt,
	}
	if attempt == 1 {
		setCondition(h, metalv1.ConditionPowerSynced, false, ReasonPowering, fmt.Sprintf("power %s sent; waiting for the BMC to report %s", action, targetOf(action)))
	}
}

// followPowerAction reads the power back after an issued action: confirmed
// when the BMC reports the target, else wait (never sending it again) until
// the deadline, then report the timeout and send it once more.
func (r *HostReconciler) followPowerAction(ctx context.Context, h *metalv1.Host, p *metalv1.IssuedPowerAction) (stepResult, bool) {
	var ps bmc.PowerState
	seen := r.checks.reading(h)
	wait, err := r.bmcCall(ctx, h, "read power state after power "+string(p.Action), func(ctx context.Context, d bmc.Driver) (err error) {
		ps, err = d.PowerState(ctx)
		return err
	})
	if err != nil {
		if wait == 0 {
			return stepResult{err: err}, false
		}
		return stepResult{requeueAfter: wait}, false
	}
	r.observePower(h, ps, seen)
	now := r.now()
	if h.Status.PowerState == p.Target {
		h.Status.IssuedPowerAction = nil
		if p.Attempts > 1 {
			r.event(h, corev1.EventTypeNormal, "PowerConfirmed", "Power", "the BMC reports power %s after %d attempts of power %s", p.Target, p.Attempts, p.Action)
		}
		setCondition(h, metalv1.ConditionPowerSynced, true, ReasonInSync, "")
		return stepResult{}, true
	}
	if now.Before(p.Deadline.Time) {
		if p.Attempts > 1 {
			setCondition(h, metalv1.ConditionPowerSynced, false, ReasonPowerActionTimedOut, fmt.Sprintf(
				"power %s was not confirmed in time; sent again (attempt %d), the BMC reports %s; waiting until %s",
				p.Action, p.Attempts, h.Status.PowerState, p.Deadline.UTC().Format(time.RFC3339)))
		}
		return stepResult{requeueAfter: min(r.Power.readBackDelay(now.Sub(p.IssuedAt.Time)), p.Deadline.Sub(now)+time.Second)}, false
	}
	if p.Target != desiredPower(h) {
		// spec.online changed while the BMC did nothing: not worth
		// resending; what the spec wants now is sent instead.
		h.Status.IssuedPowerAction = nil
		return stepResult{}, true
	}
	msg := fmt.Sprintf("power %s sent at %s (attempt %d) was not confirmed by %s: the BMC still reports %s; sending it again",
		p.Action, p.IssuedAt.UTC().Format(time.RFC3339), p.Attempts, p.Deadline.UTC().Format(time.RFC3339), h.Status.PowerState)
	r.event(h, corev1.EventTypeWarning, ReasonPowerActionTimedOut, "Power", "%s", msg)
	setCondition(h, metalv1.ConditionPowerSynced, false, ReasonPowerActionTimedOut, msg)
	ctrlLog(ctx).Info("power action timed out", "action", p.Action, "attempt", p.Attempts, "powerState", h.Status.PowerState)
	// The boot request of a network boot was acted on at its first
	// sending; the retry repeats the one-time boot device with the action.
	return r.issuePower(ctx, h, bmc.PowerAction(p.Action), bmc.BootDevice(p.BootDevice), p.Attempts+1), false
}
