package inventory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/backoff"
)

// AnnotationAckPower acknowledges a manual power action: its value is the
// pending action's ID (status.pendingPowerAction.requestedAt in RFC 3339).
// `anvil hosts ack-power` and ticket callbacks set it.
const AnnotationAckPower = "metal.anvil.dev/ack-power"

// Condition reasons of BMCReachable and PowerSynced beyond the shared ones.
const (
	ReasonReachable            = "Reachable"
	ReasonBMCError             = "BMCError"
	ReasonManualActionRequired = "ManualActionRequired"
	ReasonInSync               = "InSync"
	ReasonPowering             = "Powering"
	// ReasonPowerActionTimedOut: the BMC accepted a power action and did
	// not report its result before the deadline; it is sent once more.
	ReasonPowerActionTimedOut = "PowerActionTimedOut"
)

// PowerOptions tune how the Host controller talks to BMCs.
type PowerOptions struct {
	// Pool caches drivers (and Redfish sessions) per BMC and bounds calls
	// per BMC. Nil disables everything below: Hosts are only validated.
	Pool *bmc.Pool
	// CallTimeout bounds one BMC call; one dead BMC then holds one worker
	// for at most this long.
	CallTimeout time.Duration
	// PollInterval is how often the power state is read to catch
	// out-of-band changes; jittered by ±20% so BMCs are not polled in step.
	// Each read that finds the power as it was doubles the wait to the
	// next, up to PollMaxInterval (default PollInterval: no backoff); an
	// action of Anvil's on the Host starts again from PollInterval.
	PollInterval, PollMaxInterval time.Duration
	// BackoffBase and BackoffMax bound the exponential backoff after a
	// failed BMC call (with jitter). Authentication failures start at
	// AuthBackoff instead: retrying a wrong password only locks accounts.
	BackoffBase, BackoffMax, AuthBackoff time.Duration
	// IPMICipherSuite for ipmi:// BMCs; zero is the driver default.
	IPMICipherSuite int
	// ReadBackBase and ReadBackMax bound the backoff of reading the power
	// back after a power action (ReadBackBase, then the time since the
	// action: 1s, 1s, 2s, 4s, ... up to ReadBackMax), independent of
	// PollInterval.
	ReadBackBase, ReadBackMax time.Duration
	// Events subscribes to the BMCs' event streams where they offer them
	// (Redfish server-sent events, events.go): a Host whose BMC's stream
	// is open is polled every EventsPollInterval only (default
	// PollMaxInterval), a safety net for events a BMC did not send.
	Events             bool
	EventsPollInterval time.Duration
	// ActionTimeout is how long the BMC may take to report the result of
	// a power action. Then the action counts as timed out and is sent once
	// more, with a deadline twice as long each time (at most BackoffMax,
	// never less than ActionTimeout).
	ActionTimeout time.Duration
}

func (o *PowerOptions) defaults() {
	if o.CallTimeout <= 0 {
		o.CallTimeout = 60 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 10 * time.Minute
	}
	if o.PollMaxInterval < o.PollInterval {
		o.PollMaxInterval = o.PollInterval
	}
	if o.EventsPollInterval <= 0 {
		o.EventsPollInterval = o.PollMaxInterval
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 5 * time.Second
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 30 * time.Minute
	}
	if o.AuthBackoff <= 0 {
		o.AuthBackoff = 5 * time.Minute
	}
	if o.ReadBackBase <= 0 {
		o.ReadBackBase = time.Second
	}
	if o.ReadBackMax <= 0 {
		o.ReadBackMax = 30 * time.Second
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 5 * time.Minute
	}
}

// jitter spreads d over [0.8d, 1.2d].
func jitter(d time.Duration) time.Duration {
	return backoff.Spread(d, 0.8, 1.2)
}

// backoff is the wait after the n-th consecutive failure.
func (o *PowerOptions) backoff(n int32, kind error) time.Duration {
	base := o.BackoffBase
	if errors.Is(kind, bmc.ErrAuthFailed) {
		base = o.AuthBackoff
	}
	return backoff.Backoff{Base: base, Cap: o.BackoffMax, Low: 0.8, High: 1.2}.Delay(int(n))
}

// DriverOptions builds the driver options for a Host, reading its Secret
// through reader now (the CLI's one-off calls; the controller remembers
// credentials instead, see credentialCache).
func DriverOptions(ctx context.Context, reader client.Reader, h *metalv1.Host, p PowerOptions) (bmc.Options, error) {
	o := baseDriverOptions(h, p)
	if !needsCredentials(h) {
		return o, nil
	}
	var s corev1.Secret
	if err := reader.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: h.Spec.BMC.CredentialsName}, &s); err != nil {
		return o, fmt.Errorf("reading credentials Secret %q: %w", h.Spec.BMC.CredentialsName, err)
	}
	o.Credentials = bmc.Credentials{Username: string(s.Data[metalv1.CredentialsUsernameKey]), Password: string(s.Data[metalv1.CredentialsPasswordKey])}
	return o, nil
}

func baseDriverOptions(h *metalv1.Host, p PowerOptions) bmc.Options {
	return bmc.Options{
		Address:                        h.Spec.BMC.Address,
		DisableCertificateVerification: h.Spec.BMC.DisableCertificateVerification,
		AllowPlainHTTP:                 h.Spec.BMC.AllowPlainHTTP,
		UEFI:                           h.Spec.BootMode != "Legacy",
		Timeout:                        p.CallTimeout,
		IPMICipherSuite:                p.IPMICipherSuite,
	}
}

// driverOptions builds the Host's driver options with credentials from the
// memo: no API request unless the Secret changed.
func (r *HostReconciler) driverOptions(ctx context.Context, h *metalv1.Host) (bmc.Options, error) {
	o := baseDriverOptions(h, r.Power)
	if !needsCredentials(h) {
		return o, nil
	}
	creds, p, err := r.creds.get(ctx, r.Client, r.APIReader, h)
	if err != nil {
		return o, err
	}
	if p != nil { // validate runs first, so only a change since then gets here
		return o, fmt.Errorf("host %s/%s: %s", h.Namespace, h.Name, p.Message)
	}
	o.Credentials = creds
	return o, nil
}

// bmcCall runs fn against the Host's BMC and turns the outcome into the
// BMCReachable condition, the error count and a requeue delay.
func (r *HostReconciler) bmcCall(ctx context.Context, h *metalv1.Host, op string, fn func(context.Context, bmc.Driver) error) (time.Duration, error) {
	opts, err := r.driverOptions(ctx, h)
	if err != nil {
		return 0, err // an API error: let controller-runtime retry
	}
	err = r.Power.Pool.Do(ctx, opts, fn)
	err = bmc.Redact(err, opts.Credentials.Password)
	if err == nil || errors.Is(err, bmc.ErrManualActionRequired) {
		h.Status.ErrorCount = 0
		setCondition(h, metalv1.ConditionBMCReachable, true, ReasonReachable, "")
		return 0, err
	}
	kind := bmc.KindOf(err)
	if errors.Is(kind, bmc.ErrAuthFailed) {
		// The remembered credentials may be older than the Secret (the
		// cache lags the API server): read it again on the next call.
		r.creds.forget(secretKey(h))
	}
	reason := ReasonBMCError
	switch {
	case errors.Is(kind, bmc.ErrUnreachable):
		reason = metalv1.ReasonUnreachable
	case errors.Is(kind, bmc.ErrAuthFailed):
		reason = metalv1.ReasonAuthFailed
	case errors.Is(kind, bmc.ErrUnsupported):
		reason = metalv1.ReasonUnsupported
	case errors.Is(kind, bmc.ErrInvalidAddress):
		reason = metalv1.ReasonInvalidAddress
	}
	h.Status.ErrorCount++
	wait := r.Power.backoff(h.Status.ErrorCount, kind)
	msg := fmt.Sprintf("%s failed (%d in a row, next try in %s): %v", op, h.Status.ErrorCount, wait.Round(time.Second), err)
	if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionBMCReachable); c == nil || c.Reason != reason {
		r.event(h, corev1.EventTypeWarning, reason, "BMC", msg)
	}
	setCondition(h, metalv1.ConditionBMCReachable, false, reason, msg)
	ctrlLog(ctx).Info("BMC call failed", "op", op, "reason", reason, "errorCount", h.Status.ErrorCount, "retryIn", wait, "error", err.Error())
	return wait, err
}

// checkBMC reads power and facts once, to register a Host.
func (r *HostReconciler) checkBMC(ctx context.Context, s *hostScope) stepResult {
	h := s.host
	var ps bmc.PowerState
	seen := r.checks.reading(h)
	wait, err := r.bmcCall(ctx, h, "registration check", func(ctx context.Context, d bmc.Driver) (err error) {
		ps, err = d.PowerState(ctx)
		return err
	})
	if err != nil {
		if wait == 0 {
			return stepResult{err: err}
		}
		return stepResult{requeueAfter: wait}
	}
	r.observePower(h, ps, seen)
	// Facts are worth having, not worth blocking on: a BMC that reads power
	// but fails an inventory query still registers. Its own deadline.
	opts, err := r.driverOptions(ctx, h)
	if err == nil {
		var facts bmc.Facts
		err = r.Power.Pool.Do(ctx, opts, func(ctx context.Context, d bmc.Driver) (err error) {
			facts, err = d.Facts(ctx)
			return err
		})
		if err == nil {
			h.Status.Hardware = mergeFacts(h.Status.Hardware, facts)
		} else {
			ctrlLog(ctx).Info("reading hardware facts failed; registering without them", "error", bmc.Redact(err, opts.Credentials.Password).Error())
		}
	}
	return stepResult{next: metalv1.HostAvailable}
}

// observePower records a power read: the time in memory (powerChecks; it
// reaches status.lastPowerCheck only with a write made for another reason),
// the state in the status.
func (r *HostReconciler) observePower(h *metalv1.Host, ps bmc.PowerState, seen uint64) {
	switch ps {
	case bmc.PowerStateOn:
		h.Status.PowerState = metalv1.PowerOn
	case bmc.PowerStateOff:
		h.Status.PowerState = metalv1.PowerOff
	default:
		if h.Status.PowerState == "" {
			h.Status.PowerState = metalv1.PowerUnknown
		}
	}
	interval, maxInterval := r.Power.PollInterval, r.Power.PollMaxInterval
	if r.events.live(hostKey(h)) {
		// Events tell of changes: the poll is only a safety net.
		interval = r.Power.EventsPollInterval
		maxInterval = max(maxInterval, interval)
	}
	r.checks.record(h, r.now(), interval, maxInterval, h.Status.PowerState, seen)
}

func mergeFacts(hw *metalv1.HardwareDetails, f bmc.Facts) *metalv1.HardwareDetails {
	if hw == nil {
		hw = &metalv1.HardwareDetails{}
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&hw.Manufacturer, f.Manufacturer)
	set(&hw.Model, f.Model)
	set(&hw.SerialNumber, f.SerialNumber)
	set(&hw.UUID, f.UUID)
	set(&hw.CPUModel, f.CPUModel)
	if f.CPUCount > 0 {
		hw.CPUCount = int32(f.CPUCount)
	}
	if f.MemoryMiB > 0 {
		hw.MemoryMiB = f.MemoryMiB
	}
	if len(f.MACs) > 0 {
		hw.MACs = f.MACs
	}
	if equality.Semantic.DeepEqual(*hw, metalv1.HardwareDetails{}) {
		return nil
	}
	return hw
}

// reconcilePower acts on a new boot request, else drives the observed power
// to spec.online, else polls. Manual hosts get a pending action instead.
func (r *HostReconciler) reconcilePower(ctx context.Context, s *hostScope) stepResult {
	h := s.host
	if s.problem != nil || h.Spec.BMC.Address == "" {
		return stepResult{}
	}
	if done := r.ackManualAction(h); done {
		return stepResult{requeueAfter: jitter(r.Power.PollInterval)}
	}
	if res, called := r.ejectAfterBoot(ctx, h); called {
		return res
	}
	action, boot := r.wantedAction(h)
	if p := h.Status.IssuedPowerAction; p != nil {
		switch {
		case boot != "":
			// A new boot request replaces the action in flight. The
			// observed power is changing: a reset boots the server
			// whether it ends up on or off (drivers power on one that is off).
			h.Status.IssuedPowerAction = nil
			action = bmc.PowerReset
		default:
			// Even when spec.online changed meanwhile: an action sent
			// now would meet a BMC in mid-change and a stale power state.
			res, confirmed := r.followPowerAction(ctx, h, p)
			if !confirmed {
				return res
			}
			action, boot = r.wantedAction(h)
		}
	}
	if boot == "" {
		action = r.powerCycle(h, action)
	}
	if action == "" {
		if h.Status.PendingPowerAction != nil {
			r.event(h, corev1.EventTypeNormal, "ManualActionCancelled", "Power", "%s is no longer needed", h.Status.PendingPowerAction.Action)
			h.Status.PendingPowerAction = nil
		}
		return r.pollPower(ctx, h)
	}
	return r.issuePower(ctx, h, action, boot, 1)
}

// issuePower sends a power action (after a one-time boot device, if any)
// and records it as issued, to be read back (followPowerAction).
func (r *HostReconciler) issuePower(ctx context.Context, h *metalv1.Host, action bmc.PowerAction, boot bmc.BootDevice, attempt int32) stepResult {
	op := "power " + string(action)
	if boot != "" {
		op = "network boot (" + string(action) + ")"
	}
	if boot == bmc.BootHTTP {
		op = "UEFI HTTP boot (" + string(action) + ")"
	}
	var mediaURL string // secret: never logged
	if boot == bmc.BootCD {
		op = "virtual media boot (" + string(action) + ")"
		url, res, ok := r.prepareMedia(h)
		if !ok {
			return res
		}
		mediaURL = url
	}
	wait, err := r.bmcCall(ctx, h, op, func(ctx context.Context, d bmc.Driver) error {
		if mediaURL != "" {
			if err := insertMedia(ctx, h, d, mediaURL); err != nil {
				return err
			}
		}
		if boot != "" {
			if err := d.SetBootOnce(ctx, boot); err != nil {
				return err
			}
		}
		return d.SetPower(ctx, action)
	})
	if errors.Is(err, bmc.ErrManualActionRequired) {
		r.requestManualAction(h, action, boot)
		return stepResult{}
	}
	if err != nil {
		if boot == bmc.BootHTTP && errors.Is(err, bmc.ErrUnsupported) {
			r.httpBootUnsupported(h, err)
			return stepResult{requeueAfter: r.Power.BackoffMax}
		}
		if boot == bmc.BootCD {
			r.mediaFailed(h, err)
			if errors.Is(err, bmc.ErrNoVirtualMedia) {
				return stepResult{requeueAfter: r.Power.BackoffMax}
			}
		}
		if wait == 0 {
			return stepResult{err: err}
		}
		setCondition(h, metalv1.ConditionPowerSynced, false, metalv1.ReasonUnreachable, "cannot reach the BMC to "+op)
		return stepResult{requeueAfter: wait}
	}
	if boot == bmc.BootCD {
		r.mediaInserted(h)
	}
	r.actionSent(h, action, boot, attempt)
	return stepResult{requeueAfter: r.Power.ReadBackBase}
}

// wantedAction is what the BMC must do now: a network boot for a new boot
// request (not a Rejoin one, which powers nothing: see ackRejoin), else
// whatever moves the power to spec.online.
func (r *HostReconciler) wantedAction(h *metalv1.Host) (bmc.PowerAction, bmc.BootDevice) {
	if br := h.Spec.BootRequest; br != nil && br.ID != h.Status.BootRequestID && br.Purpose != metalv1.BootPurposeRejoin {
		if h.Status.PowerState == metalv1.PowerOn {
			return bmc.PowerReset, bootDevice(h)
		}
		return bmc.PowerOn, bootDevice(h)
	}
	switch {
	case h.Spec.Online && h.Status.PowerState != metalv1.PowerOn:
		return bmc.PowerOn, ""
	case !h.Spec.Online && h.Status.PowerState == metalv1.PowerOn:
		return bmc.PowerOff, ""
	}
	return "", ""
}

// actionDone records what an admin did (a manual action acknowledged).
func (r *HostReconciler) actionDone(h *metalv1.Host, action bmc.PowerAction, boot bmc.BootDevice) {
	switch {
	case r.cycleSent(h, action, boot, "done by hand (acknowledged)"): // its own Event
	case boot != "" && h.Spec.BootRequest != nil:
		h.Status.BootRequestID = h.Spec.BootRequest.ID
		r.event(h, corev1.EventTypeNormal, "NetworkBoot", "Power", "one-time %s boot set and power %s sent (boot request %s)", boot, action, h.Spec.BootRequest.ID)
	default:
		r.event(h, corev1.EventTypeNormal, "Power"+string(action), "Power", "power %s sent", action)
	}
	if action == bmc.PowerOff || action == bmc.PowerGracefulOff {
		h.Status.PowerState = metalv1.PowerOff
	} else {
		h.Status.PowerState = metalv1.PowerOn
	}
	h.Status.PendingPowerAction = nil
	setCondition(h, metalv1.ConditionPowerSynced, true, ReasonInSync, "")
}

func (r *HostReconciler) requestManualAction(h *metalv1.Host, action bmc.PowerAction, boot bmc.BootDevice) {
	p := h.Status.PendingPowerAction
	if p != nil && p.Action == metalv1.PowerAction(action) && p.BootDevice == metalv1.BootDevice(boot) {
		return // already asked; the Event and ticket went out once
	}
	at := r.now().Truncate(time.Second)
	if h.Annotations[AnnotationAckPower] == at.UTC().Format(time.RFC3339) {
		// The ID is the second: an acknowledgement of the action before,
		// asked for in the same second, must not complete this one.
		at = at.Add(time.Second)
	}
	h.Status.PendingPowerAction = &metalv1.PendingPowerAction{Action: metalv1.PowerAction(action), BootDevice: metalv1.BootDevice(boot), RequestedAt: metav1.NewTime(at)}
	what := "power " + strings.ToLower(string(action))
	if boot != "" {
		what += " with a one-time " + string(boot) + " boot"
	}
	msg := fmt.Sprintf("a person must %s this host, then run: anvil hosts ack-power %s -n %s", what, h.Name, h.Namespace)
	r.event(h, corev1.EventTypeNormal, ReasonManualActionRequired, "Power", "%s", msg)
	setCondition(h, metalv1.ConditionPowerSynced, false, ReasonManualActionRequired, msg)
}

// PendingActionID identifies a pending manual action for acknowledgement.
func PendingActionID(p *metalv1.PendingPowerAction) string {
	return p.RequestedAt.UTC().Format(time.RFC3339)
}

// ackManualAction completes a pending manual action an admin acknowledged.
func (r *HostReconciler) ackManualAction(h *metalv1.Host) bool {
	p := h.Status.PendingPowerAction
	if p == nil || h.Annotations[AnnotationAckPower] != PendingActionID(p) {
		return false
	}
	r.actionDone(h, bmc.PowerAction(p.Action), bmc.BootDevice(p.BootDevice))
	return true
}

// pollPower reads the power state when the last read is old enough.
func (r *HostReconciler) pollPower(ctx context.Context, h *metalv1.Host) stepResult {
	if strings.HasPrefix(h.Spec.BMC.Address, "manual:") {
		return stepResult{}
	}
	if r.events != nil && !strings.HasPrefix(h.Spec.BMC.Address, "redfish") {
		r.events.forget(hostKey(h)) // no stream; leaves one its old address had
	} else if r.events != nil {
		opts, err := r.driverOptions(ctx, h)
		if err != nil {
			return stepResult{err: err}
		}
		r.events.ensure(h, opts)
		if r.events.live(hostKey(h)) && meta.IsStatusConditionTrue(h.Status.Conditions, metalv1.ConditionPowerSynced) {
			// Events tell of changes from now on: the poll read
			// scheduled before is not needed (one that sets
			// PowerSynced is).
			r.checks.relax(h, r.Power.EventsPollInterval)
		}
	}
	if h.Status.ErrorCount == 0 {
		if due := r.checks.due(h, r.now(), r.Power.PollInterval); r.now().Before(due) {
			return stepResult{requeueAfter: due.Sub(r.now())}
		}
	}
	byEvent, seen := r.checks.woken(h), r.checks.reading(h)
	var ps bmc.PowerState
	wait, err := r.bmcCall(ctx, h, "read power state", func(ctx context.Context, d bmc.Driver) error {
		var err error
		ps, err = d.PowerState(ctx)
		return err
	})
	if err != nil {
		if wait == 0 {
			return stepResult{err: err}
		}
		return stepResult{requeueAfter: wait}
	}
	before := h.Status.PowerState
	r.observePower(h, ps, seen)
	if before != "" && before != h.Status.PowerState {
		how, action := "found by the power poll", "Poll"
		if byEvent {
			how, action = "read at once on an event from the BMC", "BMCEvent"
		}
		// The action names the state: Events of one reason and action on
		// one object are kept as one series under the first one's note, and
		// a Host that went On and then Off must not read "On" twice.
		r.event(h, corev1.EventTypeNormal, "PowerChanged", action+string(h.Status.PowerState), "power is %s (was %s), changed outside Anvil or by the BMC; %s", h.Status.PowerState, before, how)
	}
	synced := (h.Spec.Online && h.Status.PowerState == metalv1.PowerOn) || (!h.Spec.Online && h.Status.PowerState != metalv1.PowerOn)
	if synced {
		setCondition(h, metalv1.ConditionPowerSynced, true, ReasonInSync, "")
		return stepResult{requeueAfter: r.checks.due(h, r.now(), r.Power.PollInterval).Sub(r.now())}
	}
	setCondition(h, metalv1.ConditionPowerSynced, false, ReasonPowering, fmt.Sprintf("power is %s, want online=%t", h.Status.PowerState, h.Spec.Online))
	return stepResult{requeueAfter: time.Second}
}

func setCondition(h *metalv1.Host, t string, ok bool, reason, msg string) {
	st := metav1.ConditionFalse
	if ok {
		st = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{Type: t, Status: st, Reason: reason, Message: msg, ObservedGeneration: h.Generation})
}
