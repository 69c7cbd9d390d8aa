package machine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/inventory"
)

// ProviderIDPrefix starts every providerID: anvil://<host-uid>.
const ProviderIDPrefix = metalv1.ProviderIDPrefix

// ConditionHardwareRequest is False with reason Rejected when the admins
// turned down the Machine's hardware request (a ticket callback).
const (
	ConditionHardwareRequest = "HardwareRequest"
	HardwareRequestRejected  = "Rejected"
	// HardwareRequestFulfilling (condition True): the Machine got a Host
	// after asking for hardware, and hardware.fulfilled is not in the
	// ticket outbox yet; every reconcile files it until it is.
	HardwareRequestFulfilling = "Fulfilling"
)

// findHost loads the Host the Machine holds (by the consumer index), and
// its Node (by providerID).
func (r *MachineReconciler) findHost(ctx context.Context, s *scope) result {
	m := s.m
	var list metalv1.HostList
	if err := r.Client.List(ctx, &list, client.InNamespace(m.Namespace), client.MatchingFields{IndexHostConsumer: string(m.UID)}); err != nil {
		return result{err: err}
	}
	hosts := list.Items
	if len(hosts) > 1 {
		// Two claims by one Machine can only come from a race between
		// controller replicas; keep the one it recorded (or the first).
		sort.Slice(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
		keep := 0
		for i := range hosts {
			if m.Status.HostRef != nil && hosts[i].Name == m.Status.HostRef.Name {
				keep = i
			}
		}
		for i := range hosts {
			if i != keep {
				r.event(m, corev1.EventTypeWarning, "DuplicateClaim", "Claim", "releasing Host %s: this Machine already holds %s", hosts[i].Name, hosts[keep].Name)
				if err := r.release(ctx, &hosts[i], m); err != nil {
					return result{err: err}
				}
			}
		}
		hosts = hosts[keep : keep+1]
	}
	if len(hosts) == 1 {
		r.forgetClaim(m)
		s.host = hosts[0].DeepCopy()
		m.Status.HostRef = &metalv1.LocalObjectReference{Name: s.host.Name}
		m.Status.ProviderID = ProviderIDPrefix + string(s.host.UID)
	} else if m.Status.HostRef != nil && m.Status.Boot != nil && m.DeletionTimestamp.IsZero() && m.Status.FailureReason == "" &&
		m.Status.Replacement == nil {
		// Not during a replacement: it gives its Host back, so a Host it no
		// longer holds was released by a reconcile whose status write was
		// lost (a conflict), and the last branch lets it claim again.
		if r.pendingClaim(ctx, m) {
			return result{stop: true, after: claimSettle} // our own claim is not in the cache yet
		}
		// The Host was deleted or taken from under a booted Machine.
		setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonHostLost, "Host %s is gone or no longer held by this Machine", m.Status.HostRef.Name)
		return r.fail(m, metalv1.ReasonHostLost, "Host %s is gone or no longer held by this Machine; delete the Machine to get a new one", m.Status.HostRef.Name)
	} else if m.Status.HostRef != nil && !r.pendingClaim(ctx, m) {
		m.Status.HostRef = nil
		m.Status.ProviderID = ""
	}
	if pid := m.Status.ProviderID; pid != "" {
		n, err := r.nodeByProviderID(ctx, s, pid) // in the cluster the Machine joins
		if err != nil {
			return r.unavailableTarget(s, err)
		}
		s.node = n
	}
	return result{}
}

// claimHost claims a matching free Host for a Machine that holds none.
func (r *MachineReconciler) claimHost(ctx context.Context, s *scope) result {
	m := s.m
	if s.host != nil || m.Status.FailureReason != "" {
		return r.fileFulfilled(ctx, s)
	}
	if r.pendingClaim(ctx, m) {
		return result{stop: true, after: claimSettle}
	}
	class, why, err := r.readyClass(ctx, m)
	if err != nil {
		return result{err: err}
	}
	if class == nil {
		setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonClassNotReady, "%s", why)
		return result{stop: true}
	}
	s.class = class
	free, busy, err := r.candidates(ctx, m)
	if err != nil {
		return result{err: err}
	}
	if len(free) == 0 {
		return r.waitForHardware(ctx, m, busy)
	}
	// A claim of ours the cache does not show yet is in the claim memo
	// (pendingClaim above, checked against the API server once it is old);
	// no LIST of the namespace's Hosts per claim, which costs the API
	// server O(Hosts) each time.
	// Machines start at different points of the list, so replicas and
	// workers racing for Hosts mostly pick different ones.
	start := int(hash(string(m.UID)) % uint32(len(free)))
	pick := free[start]
	attempt := int32(1)
	if b := m.Status.Boot; b != nil && b.Purpose == metalv1.BootPurposeProvision {
		attempt = b.Attempt + 1
	}
	id := bootID(m, metalv1.BootPurposeProvision, attempt)
	h := pick.DeepCopy()
	h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: metalv1.GroupVersion.String(), Kind: "Machine", Namespace: m.Namespace, Name: m.Name, UID: m.UID}
	h.Spec.BootRequest = &metalv1.BootRequest{ID: id, Purpose: metalv1.BootPurposeProvision}
	h.Spec.Online = true
	if h.Labels == nil {
		h.Labels = map[string]string{}
	}
	h.Labels[metalv1.LabelConsumerUID] = string(m.UID)
	delete(h.Annotations, metalv1.AnnotationProvisioned)
	// Update carries the resourceVersion we read: if anyone changed the
	// Host since (another Machine claimed it), this fails with Conflict.
	if err := r.Client.Update(ctx, h); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).V(1).Info("lost the race for a Host, trying again", "host", pick.Name)
			return result{stop: true, after: claimRetry}
		}
		return result{err: fmt.Errorf("claiming Host %s: %w", pick.Name, err)}
	}
	r.rememberClaim(m, h.Name)
	wasWaiting := waiting(m)
	s.host = h
	m.Status.HostRef = &metalv1.LocalObjectReference{Name: h.Name}
	m.Status.ProviderID = ProviderIDPrefix + string(h.UID)
	m.Status.Boot = &metalv1.MachineBoot{RequestID: id, Purpose: metalv1.BootPurposeProvision, Attempt: attempt, StartedAt: metav1.NewTime(s.now)}
	m.Status.InstalledClass = m.Spec.MachineClassRef.Name
	setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonPoweringOn, "claimed Host %s; asking its BMC for a one-time network boot", h.Name)
	r.event(m, corev1.EventTypeNormal, "HostClaimed", "Claim", "claimed Host %s", h.Name)
	meta.RemoveStatusCondition(&m.Status.Conditions, ConditionHardwareRequest)
	if (wasWaiting || m.Status.HardwareRequest != nil) && r.Notifier != nil {
		// Cleared once the outbox has the event.
		setCondition(m, ConditionHardwareRequest, true, HardwareRequestFulfilling, "claimed Host %s; filing hardware.fulfilled", h.Name)
	}
	return r.fileFulfilled(ctx, s)
}

// fileFulfilled files hardware.fulfilled for a Machine that got a Host
// after asking for hardware, and returns the error until the outbox has it
// (Notify is idempotent: one delivery per event and endpoint, by name). The
// claim's Host update comes first; a crash or a failed outbox write after
// it leaves either the Fulfilling condition or, when the Machine's status
// write was lost too, the Machine's status still waiting for hardware while
// it holds a Host: both bring the next reconcile here.
func (r *MachineReconciler) fileFulfilled(ctx context.Context, s *scope) result {
	m, h := s.m, s.host
	if h == nil || r.Notifier == nil || !m.DeletionTimestamp.IsZero() {
		return result{}
	}
	c := meta.FindStatusCondition(m.Status.Conditions, ConditionHardwareRequest)
	if !waiting(m) && (c == nil || c.Reason != HardwareRequestFulfilling) {
		return result{}
	}
	if err := r.notify(ctx, Event{Type: EventHardwareFulfilled, Machine: m, Host: h}); err != nil {
		setCondition(m, ConditionHardwareRequest, true, HardwareRequestFulfilling, "claimed Host %s; filing hardware.fulfilled failed, retrying: %v", h.Name, err)
		return result{err: err}
	}
	meta.RemoveStatusCondition(&m.Status.Conditions, ConditionHardwareRequest)
	return result{}
}

func waiting(m *metalv1.Machine) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionInfrastructureReady)
	return c != nil && c.Reason == metalv1.ReasonWaitingForHardware
}

// readyClass returns the Machine's class if a Host can be booted with it,
// else why not.
func (r *MachineReconciler) readyClass(ctx context.Context, m *metalv1.Machine) (*metalv1.MachineClass, string, error) {
	c := &metalv1.MachineClass{}
	key := types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.MachineClassRef.Name}
	if err := r.Client.Get(ctx, key, c); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("MachineClass %s not found in namespace %s", key.Name, key.Namespace), nil
		}
		return nil, "", err
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, metalv1.ConditionConfigValid); cond == nil || cond.Status != metav1.ConditionTrue {
		msg := "not checked yet"
		if cond != nil {
			msg = cond.Message
		}
		return nil, fmt.Sprintf("MachineClass %s: config is not valid: %s", key.Name, msg), nil
	}
	// Its artifacts would never be fetched: a booted Host would only get 503s.
	if cond := meta.FindStatusCondition(c.Status.Conditions, metalv1.ConditionArtifactURLsAllowed); cond != nil && cond.Status == metav1.ConditionFalse {
		return nil, fmt.Sprintf("MachineClass %s: artifact URLs refused: %s", key.Name, cond.Message), nil
	}
	for _, k := range c.Spec.Kubelets {
		if k.Version == m.Spec.Version {
			return c, "", nil
		}
	}
	return nil, fmt.Sprintf("MachineClass %s lists no kubelet for version %s (spec.kubelets)", key.Name, m.Spec.Version), nil
}

// maxCandidates bounds the free Hosts one claim reads. Each read copies
// the Host structs into the list; reading all 5,000 free Hosts per claim
// was a third of the controller's CPU in a 5,000-Machine scale-up. The
// index returns them in no fixed order, and the pick hashes the Machine's
// UID over them, so racing workers still mostly pick different Hosts.
const maxCandidates = 64

// candidates returns free Hosts the Machine may claim (at most
// maxCandidates, sorted by name), or, when there are none, a count of the
// matching Hosts that are busy, by state.
func (r *MachineReconciler) candidates(ctx context.Context, m *metalv1.Machine) ([]*metalv1.Host, map[metalv1.HostState]int, error) {
	sel, err := metav1.LabelSelectorAsSelector(&m.Spec.HostSelector)
	if err != nil {
		return nil, nil, fmt.Errorf("spec.hostSelector: %w", err)
	}
	if m.Spec.FailureDomain != "" {
		req, err := labels.NewRequirement(metalv1.LabelFailureDomain, "=", []string{m.Spec.FailureDomain})
		if err != nil {
			return nil, nil, fmt.Errorf("spec.failureDomain: %w", err)
		}
		sel = sel.Add(*req)
	}
	assigned := m.Annotations[metalv1.AnnotationAssignedHost]
	// The cache's own objects, not copies: read only; the claim copies the
	// one Host it takes.
	var list metalv1.HostList
	opts := []client.ListOption{client.InNamespace(m.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy}
	if assigned == "" {
		if err := r.Client.List(ctx, &list, append(opts, client.MatchingFields{IndexHostClaimable: "true"}, client.Limit(maxCandidates))...); err != nil {
			return nil, nil, err
		}
	}
	if len(list.Items) == 0 {
		// None free (or one assigned Host): all matching Hosts, to say
		// what they are busy with.
		if err := r.Client.List(ctx, &list, opts...); err != nil {
			return nil, nil, err
		}
	}
	var free []*metalv1.Host
	busy := map[metalv1.HostState]int{}
	for i := range list.Items {
		h := &list.Items[i]
		if assigned != "" && h.Name != assigned {
			continue
		}
		if claimable(h) {
			free = append(free, h)
		} else {
			busy[h.Status.State]++
		}
	}
	sort.Slice(free, func(i, j int) bool { return free[i].Name < free[j].Name })
	return free, busy, nil
}

// claimable: Available in status and in spec, valid, and being deleted by
// no one.
func claimable(h *metalv1.Host) bool {
	if h.Status.State != metalv1.HostAvailable || h.Spec.ConsumerRef != nil || !h.DeletionTimestamp.IsZero() {
		return false
	}
	if inventory.ClaimState(h) != metalv1.HostAvailable {
		return false
	}
	c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionValid)
	return c != nil && c.Status == metav1.ConditionTrue
}

func (r *MachineReconciler) waitForHardware(ctx context.Context, m *metalv1.Machine, busy map[metalv1.HostState]int) result {
	what := []string{}
	if s, err := metav1.LabelSelectorAsSelector(&m.Spec.HostSelector); err == nil && !s.Empty() {
		what = append(what, "selector "+s.String())
	}
	if m.Spec.FailureDomain != "" {
		what = append(what, "failure domain "+m.Spec.FailureDomain)
	}
	if a := m.Annotations[metalv1.AnnotationAssignedHost]; a != "" {
		what = append(what, "assigned Host "+a)
	}
	if len(what) == 0 {
		what = append(what, "any Host")
	}
	total := 0
	states := make([]string, 0, len(busy))
	for st, n := range busy {
		total += n
		states = append(states, fmt.Sprintf("%s %d", st, n))
	}
	sort.Strings(states)
	msg := fmt.Sprintf("no Available Host in namespace %s matches %s", m.Namespace, strings.Join(what, ", "))
	if total > 0 {
		msg += fmt.Sprintf("; %d match but are busy (%s)", total, strings.Join(states, ", "))
	}
	after := hardwareRecheck
	if !waiting(m) {
		r.event(m, corev1.EventTypeNormal, metalv1.ReasonWaitingForHardware, "Claim", "%s", msg)
		after = claimSettle
	}
	setCondition(m, metalv1.ConditionInfrastructureReady, false, metalv1.ReasonWaitingForHardware, "%s", msg)
	if hr := m.Status.HardwareRequest; hr != nil && hr.State == HardwareRequestRejected {
		setCondition(m, ConditionHardwareRequest, false, HardwareRequestRejected, "the admins rejected the hardware request: %s", hr.LastError)
	}
	// Woken by Host watches; the rechecks only cover a Host freed while
	// this status was on its way to the cache (the watch wakes only
	// Machines the cache shows waiting, see machinesForHost). That race is
	// likeliest right after a Host is given back, as a replacement does:
	// the Host controller makes it Available just as this Machine starts
	// waiting, so the first recheck comes soon.
	return result{stop: true, after: after, err: r.notify(ctx, Event{Type: EventHardwareRequested, Machine: m, Data: map[string]any{"busyHosts": total}})}
}

// hardwareRecheck is how often a Machine waiting for hardware looks again
// without a Host event.
const hardwareRecheck = 2 * time.Minute

// notify files a hardware event. A failure is logged and returned; the
// next reconcile repeats it (Notify is idempotent).
func (r *MachineReconciler) notify(ctx context.Context, ev Event) error {
	if r.Notifier == nil {
		return nil
	}
	if err := r.Notifier.Notify(ctx, ev); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "filing hardware event", "type", ev.Type)
		return fmt.Errorf("filing %s: %w", ev.Type, err)
	}
	return nil
}

// updateHost applies mutate to the Host and writes what it changed (spec,
// labels, annotations) as a compare-and-swap JSON patch, as long as the
// Host is still held by m: each changed member is tested for the value
// mutate saw. A status write by another process since the cache's copy
// (the boot services write a Host's status at each step of a boot) is then
// no conflict, where an Update's resourceVersion made it one, and a GET,
// and a second Update. A change meanwhile of a member this write changes,
// or of the holder, fails its test (422) and the write is decided again on
// a fresh read.
func (r *MachineReconciler) updateHost(ctx context.Context, h *metalv1.Host, m *metalv1.Machine, mutate func(*metalv1.Host)) error {
	first := true
	return retry.OnError(retry.DefaultRetry, apierrors.IsInvalid, func() error {
		if !first {
			fresh := &metalv1.Host{}
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(h), fresh); err != nil {
				return err
			}
			*h = *fresh
		}
		first = false
		if h.Spec.ConsumerRef == nil || h.Spec.ConsumerRef.UID != m.UID {
			return errNotOurs
		}
		before := h.DeepCopy()
		mutate(h)
		p, changed, err := statusapply.CASPatchOf(before, h, hostParts, "/metadata/uid", "/spec/consumerRef/uid")
		if err != nil || !changed {
			return err
		}
		return r.Client.Patch(ctx, h, p)
	})
}

// hostParts are what the Machine controller writes of a Host it holds.
var hostParts = []statusapply.Part{{Path: "/spec"}, {Path: "/metadata/labels"}, {Path: "/metadata/annotations"}}

var errNotOurs = errors.New("the Host is no longer held by this Machine")

// release frees a Host: no consumer, no boot request, powered off.
func (r *MachineReconciler) release(ctx context.Context, h *metalv1.Host, m *metalv1.Machine) error {
	err := r.updateHost(ctx, h, m, func(h *metalv1.Host) {
		h.Spec.ConsumerRef = nil
		h.Spec.BootRequest = nil
		h.Spec.Online = false
		delete(h.Labels, metalv1.LabelConsumerUID)
		delete(h.Annotations, metalv1.AnnotationProvisioned)
	})
	if errors.Is(err, errNotOurs) || apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("releasing Host %s: %w", h.Name, err)
	}
	r.forgetClaim(m)
	return nil
}

// bootID names one network boot of a Machine's Host. It differs per
// Machine, replacement, purpose and attempt, so the Host controller sees a
// new request (a replaced Machine may claim the same Host again).
func bootID(m *metalv1.Machine, purpose metalv1.BootPurpose, attempt int32) string {
	uid := strings.ReplaceAll(string(m.UID), "-", "")
	if len(uid) > 12 {
		uid = uid[:12]
	}
	p := "p"
	switch purpose {
	case metalv1.BootPurposeWipe:
		p = "d"
	case metalv1.BootPurposeRejoin:
		p = "j"
	}
	if n := m.Status.Replacements; n > 0 {
		return fmt.Sprintf("%s-r%d%s%d", uid, n, p, attempt)
	}
	return fmt.Sprintf("%s-%s%d", uid, p, attempt)
}

func hash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}
