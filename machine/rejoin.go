package machine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// rejoin keeps the next network boot of a joined diskless Host armed. A
// live class has nothing on the disk, so a host that reboots must
// network-boot its class again, and the boot services answer from memory
// and never write the API first: so its Host always carries a Rejoin boot
// request the Host controller acknowledged, which lets the boot services
// hand out one fresh credential for that request ID (pxe/index.Decide,
// boot/delivery). Once that credential went out and either was spent or
// the Node came back with a new boot ID, the request gets a new ID, so
// every reboot has its own credential. Classes with spec.image boot from
// their disk and get no Rejoin request; a wipe or a release replaces it.
func (r *MachineReconciler) rejoin(ctx context.Context, s *scope) result {
	m, h := s.m, s.host
	if h == nil || !m.DeletionTimestamp.IsZero() || m.Status.FailureReason != "" || m.Status.Replacement != nil {
		return result{}
	}
	br := h.Spec.BootRequest
	switch {
	case br == nil:
		return result{}
	case br.Purpose == metalv1.BootPurposeProvision:
		// The first arming: this boot joined (its Node was Ready).
		if s.node == nil || h.Annotations[metalv1.AnnotationProvisioned] != br.ID {
			return result{}
		}
	case br.Purpose != metalv1.BootPurposeRejoin:
		return result{}
	}
	live, err := r.liveClass(ctx, m)
	if err != nil || !live {
		return result{err: err}
	}
	if br.Purpose == metalv1.BootPurposeRejoin {
		if s.rebooted {
			// The kubelet that posted the new boot ID holds its
			// certificate: the token its rejoin config carried is spent.
			if err := r.revokeTokens(ctx, s); err != nil {
				return result{err: err}
			}
		}
		// A reboot re-arms at once, but only a request whose script went
		// out: one never served is still fresh (and a reconcile on a cache
		// that has not seen our last status write sees the reboot again).
		wait, due := rearmDue(h, br, s.now)
		if !due && !(s.rebooted && served(h, br)) {
			return result{after: wait}
		}
	}
	id := bootID(m, metalv1.BootPurposeRejoin, nextRejoin(br))
	if err := r.updateHost(ctx, h, m, func(h *metalv1.Host) { armRejoin(h, br.ID, id) }); err != nil {
		if errors.Is(err, errNotOurs) || apierrors.IsNotFound(err) {
			return result{}
		}
		return result{err: fmt.Errorf("arming the next network boot of Host %s (spec.bootRequest): %w", h.Name, err)}
	}
	ctrl.LoggerFrom(ctx).V(1).Info("armed the Host's next network boot", "host", h.Name, "bootRequest", id, "previous", br.ID)
	return result{}
}

// rearmDue says whether the armed request's credential is used up: its
// script went out and the credential was consumed and its grace is over,
// or it expired unused. Until then the config fetches of that boot still
// need it; an armed request whose script never went out stays as it is.
func rearmDue(h *metalv1.Host, br *metalv1.BootRequest, now time.Time) (time.Duration, bool) {
	if !served(h, br) {
		return 0, false
	}
	bc := h.Status.BootCredential
	spent := bc.ExpiresAt.Time
	if bc.ConsumedAt != nil {
		spent = bc.ConsumedAt.Add(time.Duration(bc.GraceSeconds) * time.Second)
	}
	if now.Before(spent) {
		return spent.Sub(now) + time.Second, false
	}
	return 0, true
}

// served: the script of the armed request went out with its credential.
func served(h *metalv1.Host, br *metalv1.BootRequest) bool {
	bc := h.Status.BootCredential
	return h.Status.BootRequestID == br.ID && bc != nil && bc.BootRequestID == br.ID && bc.ScriptServedAt != nil
}

// nextRejoin numbers the Rejoin requests of one install: one more than
// the current one (bootID ends them in "j<n>").
func nextRejoin(br *metalv1.BootRequest) int32 {
	if br.Purpose != metalv1.BootPurposeRejoin {
		return 1
	}
	i := strings.LastIndexByte(br.ID, 'j')
	n, err := strconv.Atoi(br.ID[i+1:])
	if i < 0 || err != nil || n < 1 {
		return 1
	}
	return int32(n) + 1
}

// firstRejoin gives the first arming to the join's own Host write, so a
// joining Machine of a live class costs one Host update, not two: the
// mutation replaces the provisioning request that joined (ID provisioned)
// by the first Rejoin request and returns its ID ("" when it armed
// nothing). The rejoin phase still arms whatever this did not.
func (r *MachineReconciler) firstRejoin(ctx context.Context, m *metalv1.Machine, provisioned string) (func(*metalv1.Host) string, error) {
	none := func(*metalv1.Host) string { return "" }
	if m.Status.FailureReason != "" || m.Status.Replacement != nil {
		return none, nil
	}
	live, err := r.liveClass(ctx, m)
	if err != nil || !live {
		return none, err
	}
	id := bootID(m, metalv1.BootPurposeRejoin, 1)
	return func(h *metalv1.Host) string {
		if armRejoin(h, provisioned, id) {
			return id
		}
		return ""
	}, nil
}

// armRejoin replaces the Host's boot request decided on (ID over) by the
// Rejoin request id, and only that one: a wipe or a new boot that came
// meanwhile stays. It reports whether it did.
func armRejoin(h *metalv1.Host, over, id string) bool {
	if cur := h.Spec.BootRequest; cur == nil || cur.ID != over {
		return false
	}
	h.Spec.BootRequest = &metalv1.BootRequest{ID: id, Purpose: metalv1.BootPurposeRejoin}
	return true
}

// liveClass reports whether the class the Host was booted from installs
// nothing to disk (no spec.image).
func (r *MachineReconciler) liveClass(ctx context.Context, m *metalv1.Machine) (bool, error) {
	name := m.Status.InstalledClass
	if name == "" {
		name = m.Spec.MachineClassRef.Name
	}
	c := &metalv1.MachineClass{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			// Without the class nothing could be served anyway.
			return false, nil
		}
		return false, err
	}
	return c.Spec.Image == nil, nil
}
