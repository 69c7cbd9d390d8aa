package machine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/join/token"
)

// boot follows the provisioning boot of the claimed Host: the BMC takes
// the one-time PXE boot, the host fetches its config, its agent reports.
func (r *MachineReconciler) boot(ctx context.Context, s *scope) result {
	m, h := s.m, s.host
	if h == nil || m.Status.FailureReason != "" {
		return result{stop: true}
	}
	br := h.Spec.BootRequest
	if br != nil && br.Purpose == metalv1.BootPurposeRejoin {
		// Armed by rejoin after the join: nothing is booting now, and
		// status.boot keeps the provisioning boot.
		if !meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionInfrastructureReady) {
			setCondition(m, metalv1.ConditionInfrastructureReady, true, metalv1.ReasonBooted, "Host %s booted", h.Name)
		}
		return result{}
	}
	if br == nil || br.Purpose != metalv1.BootPurposeProvision {
		// Claimed without a boot request (assigned by hand, or our claim
		// crashed half-way in an older version): ask for one.
		return r.requestBoot(ctx, s, nextAttempt(m.Status.Boot, metalv1.BootPurposeProvision), "boot")
	}
	b := m.Status.Boot
	if b == nil || b.RequestID != br.ID {
		// Status was not written after the Host was (a crash, a lost
		// patch): the Host is the truth; the timeout starts now.
		b = &metalv1.MachineBoot{RequestID: br.ID, Purpose: br.Purpose, Attempt: attemptOf(br.ID), StartedAt: metav1.NewTime(s.now)}
		m.Status.Boot = b
	}
	if h.Annotations[metalv1.AnnotationProvisioned] == b.RequestID || s.node != nil {
		markBooted(b, s.now)
		setCondition(m, metalv1.ConditionInfrastructureReady, true, metalv1.ReasonBooted, "Host %s booted", h.Name)
		return result{}
	}
	if c := renderFailed(h, b); c != nil {
		// The host took its config and got an error instead: say so
		// rather than wait silently for the boot timeout.
		msg := fmt.Sprintf("Host %s fetched its config and it could not be rendered: %s", h.Name, c.Message)
		if left := r.Options.BootTimeout - s.now.Sub(b.StartedAt.Time); left > 0 {
			setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonConfigRenderFailed, "%s", msg)
			return result{stop: true, after: left}
		}
		return r.timedOut(ctx, s, metalv1.ReasonConfigRenderFailed, msg)
	}
	if in := h.Status.Install; in != nil && in.BootRequestID == b.RequestID && h.Status.BootRequestID == b.RequestID && in.Outcome == metalv1.InstallFailed {
		msg := fmt.Sprintf("Host %s could not install the image of its class: %s: %s", h.Name, in.Reason, in.Message)
		if in.Reason == metalv1.InstallNoRootDevice {
			// Another boot sees the same disks: fix the hints or the Host.
			setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonInstallFailed, "%s", msg)
			return r.fail(m, metalv1.ReasonInstallFailed, "%s", msg)
		}
		return r.timedOut(ctx, s, metalv1.ReasonInstallFailed, msg)
	}
	if at, how := bootedAt(h, b); at != nil {
		markBooted(b, at.Time)
		setCondition(m, metalv1.ConditionInfrastructureReady, true, metalv1.ReasonBooted, "Host %s booted: %s", h.Name, how)
		return result{}
	}
	left := r.Options.BootTimeout - s.now.Sub(b.StartedAt.Time)
	if left <= 0 {
		return r.timedOut(ctx, s, metalv1.ReasonBootTimeout, fmt.Sprintf("Host %s did not boot within %s of the boot request (attempt %d)", h.Name, r.Options.BootTimeout, b.Attempt))
	}
	switch {
	case h.Status.BootRequestID != b.RequestID:
		msg := fmt.Sprintf("waiting for Host %s to take the one-time network boot", h.Name)
		if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionPowerSynced); c != nil && c.Status == metav1.ConditionFalse {
			msg += ": " + c.Message
		}
		setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonPoweringOn, "%s", msg)
	case installedIn(h, b):
		setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonInstalled,
			"Host %s: image written to %s; booting from its disk, waiting for it to fetch its config", h.Name, h.Status.Install.Device)
	default:
		setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonNetworkBooting,
			"Host %s is network booting (attempt %d of %d); waiting for it to fetch its config", h.Name, b.Attempt, r.Options.MaxBootAttempts)
	}
	// Host watches wake us on progress; the timer is for the timeout.
	return result{stop: true, after: left}
}

// bootedAt reports when the host first showed up from this boot: its
// config fetched with this boot's credential. (An agent report is no proof:
// the agent of the previous boot can still report until the reset lands.)
func bootedAt(h *metalv1.Host, b *metalv1.MachineBoot) (*metav1.Time, string) {
	if c := h.Status.BootCredential; c != nil && c.BootRequestID == b.RequestID && c.ConsumedAt != nil {
		return c.ConsumedAt, "it fetched its config"
	}
	return nil, ""
}

// installedIn reports whether the Host's installer wrote the image in
// this boot.
func installedIn(h *metalv1.Host, b *metalv1.MachineBoot) bool {
	in := h.Status.Install
	return in != nil && in.BootRequestID == b.RequestID && h.Status.BootRequestID == b.RequestID && in.Outcome == metalv1.InstallInstalled
}

// renderFailed is the Host's ConfigRendered=False condition written for
// this boot by the config endpoint, if any.
func renderFailed(h *metalv1.Host, b *metalv1.MachineBoot) *metav1.Condition {
	c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionConfigRendered)
	if c == nil || c.Status != metav1.ConditionFalse || c.ObservedGeneration != h.Generation || h.Status.BootRequestID != b.RequestID {
		return nil
	}
	return c
}

func markBooted(b *metalv1.MachineBoot, at time.Time) {
	if b.BootedAt == nil {
		t := metav1.NewTime(at)
		b.BootedAt = &t
	}
}

// join follows the kubelet: a Node with the Host's providerID, then Ready.
func (r *MachineReconciler) join(ctx context.Context, s *scope) result {
	m, h, n := s.m, s.host, s.node
	if h == nil {
		return result{stop: true}
	}
	if n == nil && s.targetErr != nil {
		return r.waitForTarget(ctx, s)
	}
	if n == nil {
		adopted, err := r.adoptNode(ctx, s)
		if err != nil {
			return result{err: err}
		}
		n, s.node = adopted, adopted
	}
	if n == nil {
		if m.Status.NodeRef != nil && wasRunning(m) {
			setCondition(m, metalv1.ConditionNodeReady, false, metalv1.ReasonNodeMissing, "Node %s was deleted; the Machine keeps its Host (delete the Machine to replace it)", m.Status.NodeRef.Name)
			return result{}
		}
		b := m.Status.Boot
		if b == nil || b.BootedAt == nil {
			return result{stop: true}
		}
		left := r.Options.JoinTimeout - s.now.Sub(b.BootedAt.Time)
		if left <= 0 {
			return r.timedOut(ctx, s, metalv1.ReasonJoinTimeout, fmt.Sprintf("no Node with providerID %s registered within %s of the boot", m.Status.ProviderID, r.Options.JoinTimeout))
		}
		if s.foreignNode != "" {
			setCondition(m, metalv1.ConditionNodeReady, false, ReasonNodeProviderIDMismatch, "%s", s.foreignNode)
		} else {
			setCondition(m, metalv1.ConditionNodeReady, false, metalv1.ReasonWaitingForNode, "Host %s booted; waiting for its kubelet to register (providerID %s)", h.Name, m.Status.ProviderID)
		}
		next, err := r.keepTokensAlive(ctx, s)
		if err != nil {
			return result{err: err}
		}
		if next > 0 && next < left {
			left = next
		}
		return result{stop: true, after: left}
	}
	m.Status.NodeRef = &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}
	m.Status.Addresses = m.Status.Addresses[:0]
	for _, a := range n.Status.Addresses {
		m.Status.Addresses = append(m.Status.Addresses, metalv1.MachineAddress{Type: a.Type, Address: a.Address})
	}
	if len(m.Status.Addresses) == 0 {
		m.Status.Addresses = nil
	}
	if v := n.Status.NodeInfo.KubeletVersion; v != "" && !upgradeInFlight(m.Status.Upgrade) {
		// During an in-place upgrade the version changes when the upgrade
		// is verified (upgradeVerify), in that write: following the
		// kubelet's restart cost a write per Machine that raced the
		// agent's outcome (the rollout benchmark of 5,000).
		m.Status.Version = v
	}
	if id := n.Status.NodeInfo.BootID; id != "" && id != m.Status.NodeBootID {
		if prev := m.Status.NodeBootID; prev != "" {
			// The host came back by itself (a power cycle, a crash, a
			// PDU): same Machine, same Node, no new install.
			m.Status.Reboots++
			r.event(m, corev1.EventTypeNormal, "Rebooted", "Observe", "Host %s rebooted: Node %s boot ID %s (was %s)", h.Name, n.Name, id, prev)
			s.rebooted = true
		}
		m.Status.NodeBootID = id
	}
	ready := nodeReady(n)
	if ready == nil || ready.Status != corev1.ConditionTrue {
		msg := "the kubelet has not posted Ready yet"
		if ready != nil && ready.Message != "" {
			msg = ready.Message
		}
		setCondition(m, metalv1.ConditionNodeReady, false, metalv1.ReasonNodeNotReady, "Node %s is not Ready: %s", n.Name, msg)
		if !wasRunning(m) && m.Status.Boot != nil && m.Status.Boot.BootedAt != nil {
			left := r.Options.JoinTimeout - s.now.Sub(m.Status.Boot.BootedAt.Time)
			if left <= 0 {
				return r.timedOut(ctx, s, metalv1.ReasonJoinTimeout, fmt.Sprintf("Node %s did not become Ready within %s of the boot", n.Name, r.Options.JoinTimeout))
			}
			return result{after: left}
		}
		return result{}
	}
	setCondition(m, metalv1.ConditionNodeReady, true, metalv1.ReasonNodeReady, "")
	if b := m.Status.Boot; b != nil && h.Annotations[metalv1.AnnotationProvisioned] != b.RequestID {
		// First time Ready on this boot: the join secrets are spent.
		if err := r.revokeTokens(ctx, s); err != nil {
			return result{err: err}
		}
		id := b.RequestID
		arm, err := r.firstRejoin(ctx, m, id)
		if err != nil {
			return result{err: err}
		}
		armed := ""
		if err := r.updateHost(ctx, h, m, func(h *metalv1.Host) {
			if h.Annotations == nil {
				h.Annotations = map[string]string{}
			}
			h.Annotations[metalv1.AnnotationProvisioned] = id
			armed = arm(h)
		}); err != nil {
			return result{err: fmt.Errorf("marking Host %s provisioned: %w", h.Name, err)}
		}
		if armed != "" {
			ctrl.LoggerFrom(ctx).V(1).Info("armed the Host's next network boot", "host", h.Name, "bootRequest", armed, "previous", id)
		}
		r.event(m, corev1.EventTypeNormal, "NodeJoined", "Provision", "Node %s joined from Host %s and is Ready", n.Name, h.Name)
	}
	return result{}
}

func nodeReady(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// timedOut reboots once more, or fails the Machine.
func (r *MachineReconciler) timedOut(ctx context.Context, s *scope, reason, msg string) result {
	m := s.m
	cond := metalv1.ConditionInfrastructureReady
	if reason == metalv1.ReasonJoinTimeout {
		cond = metalv1.ConditionNodeReady
	}
	attempt := nextAttempt(m.Status.Boot, metalv1.BootPurposeProvision)
	if attempt > r.Options.MaxBootAttempts {
		setCondition(m, cond, false, reason, "%s", msg)
		return r.fail(m, reason, "%s; gave up after %d attempts", msg, r.Options.MaxBootAttempts)
	}
	r.event(m, corev1.EventTypeWarning, reason, "Provision", "%s; rebooting (attempt %d of %d)", msg, attempt, r.Options.MaxBootAttempts)
	return r.requestBoot(ctx, s, attempt, msg+"; rebooting")
}

// requestBoot asks the Host for a new provisioning boot.
func (r *MachineReconciler) requestBoot(ctx context.Context, s *scope, attempt int32, why string) result {
	m, h := s.m, s.host
	id := bootID(m, metalv1.BootPurposeProvision, attempt)
	if err := r.updateHost(ctx, h, m, func(h *metalv1.Host) {
		h.Spec.BootRequest = &metalv1.BootRequest{ID: id, Purpose: metalv1.BootPurposeProvision}
		h.Spec.Online = true
		delete(h.Annotations, metalv1.AnnotationProvisioned)
	}); err != nil {
		return result{err: fmt.Errorf("asking Host %s for a network boot: %w", h.Name, err)}
	}
	if err := r.revokeTokens(ctx, s); err != nil { // the old boot's token must not outlive it
		return result{err: err}
	}
	m.Status.Boot = &metalv1.MachineBoot{RequestID: id, Purpose: metalv1.BootPurposeProvision, Attempt: attempt, StartedAt: metav1.NewTime(s.now)}
	meta.RemoveStatusCondition(&m.Status.Conditions, metalv1.ConditionNodeReady)
	setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonPoweringOn, "%s (attempt %d of %d)", why, attempt, r.Options.MaxBootAttempts)
	return result{stop: true, after: r.Options.BootTimeout}
}

func nextAttempt(b *metalv1.MachineBoot, purpose metalv1.BootPurpose) int32 {
	if b == nil || b.Purpose != purpose {
		return 1
	}
	return b.Attempt + 1
}

// attemptOf reads the attempt back from a boot ID made by bootID.
func attemptOf(id string) int32 {
	i := strings.LastIndexAny(id, "pd")
	if i < 0 {
		return 1
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 1 {
		return 1
	}
	return int32(n)
}

// keepTokensAlive extends the Machine's bootstrap tokens while its kubelet
// has not joined, so a slow join (a big kubelet download, a slow TLS
// bootstrap) does not outlive its token. It returns when to look again.
//
// A joining Machine is reconciled on every Host or Node event; the LIST of
// its tokens is done only when one may need extending (a token minted since
// has a later deadline), not on each of those reconciles.
func (r *MachineReconciler) keepTokensAlive(ctx context.Context, s *scope) (time.Duration, error) {
	if bootstrapped(s.m) {
		return 0, nil // its bootstrap data carries its own join credentials
	}
	now := r.Options.Now()
	if v, ok := r.tokenChecks.Load(s.m.UID); ok {
		if due := v.(time.Time); now.Before(due) {
			return due.Sub(now), nil
		}
	}
	next, err := r.extendTokens(ctx, s, now)
	if err != nil {
		return 0, err
	}
	look := next
	if look <= 0 {
		look = token.DefaultTTL / 4 // none yet: one minted now needs extending after TTL/2
	}
	r.tokenChecks.Store(s.m.UID, now.Add(look))
	return next, nil
}

func (r *MachineReconciler) extendTokens(ctx context.Context, s *scope, now time.Time) (time.Duration, error) {
	t, err := r.targetOf(ctx, s)
	if err != nil {
		return 0, err
	}
	infos, err := r.tokens(t).List(ctx, token.ListOptions{MachineUID: s.m.UID})
	if err != nil {
		return 0, err
	}
	var next time.Duration
	for _, inf := range infos {
		left := inf.Expiration.Sub(now)
		ttl := token.DefaultTTL
		if left <= 0 {
			continue // expired tokens are the token cleaner's business
		}
		if left < ttl/2 {
			if _, err := token.Refresh(ctx, t.Clientset, inf.ID, ttl); err != nil {
				ctrl.LoggerFrom(ctx).Info("could not extend bootstrap token", "tokenID", inf.ID, "error", err.Error())
				continue
			}
			left = ttl
		}
		if d := left - ttl/2; next == 0 || d < next {
			next = d
		}
	}
	return next, nil
}

// tokens looks up bootstrap tokens in t: from the informer for the
// management cluster when there is one, else with a LIST.
func (r *MachineReconciler) tokens(t *cluster.Target) token.Lister {
	if !t.Remote() && r.Tokens != nil {
		return r.Tokens
	}
	return token.Direct{Clientset: t.Clientset}
}

// revokeTokens deletes every bootstrap token minted for the Machine, in
// the cluster it joins.
func (r *MachineReconciler) revokeTokens(ctx context.Context, s *scope) error {
	r.tokenChecks.Delete(s.m.UID)
	if bootstrapped(s.m) {
		return nil // Anvil minted none for it
	}
	t, err := r.targetOf(ctx, s)
	if err != nil {
		return err
	}
	infos, err := r.tokens(t).List(ctx, token.ListOptions{MachineUID: s.m.UID})
	if err != nil {
		return err
	}
	for _, inf := range infos {
		revoke := func() error { return token.Revoke(ctx, t.Clientset, inf.ID) }
		if !t.Remote() && r.Tokens != nil {
			revoke = func() error { return r.Tokens.Revoke(ctx, inf.ID) } // forgets it too
		}
		if err := revoke(); err != nil {
			return fmt.Errorf("revoking bootstrap token %s: %w", inf.ID, err)
		}
	}
	if len(infos) > 0 {
		ctrl.LoggerFrom(ctx).Info("revoked bootstrap tokens", "count", len(infos))
	}
	return nil
}
