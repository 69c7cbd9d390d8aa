package inventory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/mediatoken"
)

// MediaOptions configure spec.bootMethod VirtualMedia boots.
type MediaOptions struct {
	// BaseURL is the boot HTTP server as BMCs reach it (anvil serve
	// --http-base-url): the ISO's URL is BaseURL/media/<token>.iso. Empty:
	// VirtualMedia Hosts are not booted, and their VirtualMedia condition
	// says to set it.
	BaseURL string
}

// mediaTokens holds each Host's minted, not yet inserted token between
// the reconcile that records its hash in status and the one that has the
// BMC insert it (the boot server serves only hashes it finds in status, and
// a BMC may fetch the ISO as soon as it is inserted). In memory only: after
// a restart a new token is minted.
type mediaTokens struct {
	mu sync.Mutex
	m  map[string]string // Host UID -> token
}

func (t *mediaTokens) take(uid, hash string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.m[uid]
	if !ok || mediatoken.Hash(tok) != hash {
		return "", false
	}
	return tok, true
}

func (t *mediaTokens) put(uid, tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]string{}
	}
	t.m[uid] = tok
}

func (t *mediaTokens) drop(uid string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, uid)
}

// virtualMediaBoot reports whether h boots by virtual media.
func virtualMediaBoot(h *metalv1.Host) bool {
	return h.Spec.BootMethod == metalv1.BootMethodVirtualMedia
}

// bootDevice is the one-time boot device of a new boot request: the CD
// for VirtualMedia, UEFI HTTP boot for HTTPBoot, else PXE. IPMI has no HTTP
// boot selector, so an HTTPBoot Host with an IPMI BMC is asked for PXE, as
// before HTTP boot targets existed; Anvil's DHCP still answers its PXE
// client (pxe.BootMethod.Serves).
func bootDevice(h *metalv1.Host) bmc.BootDevice {
	switch {
	case virtualMediaBoot(h):
		return bmc.BootCD
	case h.Spec.BootMethod == metalv1.BootMethodHTTPBoot:
		if a, err := bmc.ParseAddress(h.Spec.BMC.Address); err == nil && a.Scheme == "ipmi" {
			return bmc.BootPXE
		}
		return bmc.BootHTTP
	}
	return bmc.BootPXE
}

// httpBootUnsupported reports a BMC that refused the one-time UEFI HTTP
// boot (its system does not list UefiHttp): nothing was powered, and
// retrying cannot help until the firmware or spec.bootMethod changes.
func (r *HostReconciler) httpBootUnsupported(h *metalv1.Host, err error) {
	msg := "spec.bootMethod HTTPBoot: the BMC offers no one-time UEFI HTTP boot (Redfish BootSourceOverrideTarget UefiHttp), so the boot was not attempted: " +
		"enable UEFI HTTP boot in the server's firmware settings (its BMC then lists UefiHttp), or set spec.bootMethod PXE (" + err.Error() + ")"
	if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionPowerSynced); c == nil || c.Message != msg {
		r.event(h, corev1.EventTypeWarning, metalv1.ReasonUnsupported, "Power", "%s", msg)
	}
	setCondition(h, metalv1.ConditionPowerSynced, false, metalv1.ReasonUnsupported, msg)
}

// mediaBootOver: the inserted ISO's boot no longer needs it (its
// credential was used, or its boot request is gone or replaced).
func mediaBootOver(h *metalv1.Host) bool {
	vm := h.Status.VirtualMedia
	if vm == nil {
		return false
	}
	if br := h.Spec.BootRequest; br == nil || br.ID != vm.BootRequestID || !virtualMediaBoot(h) {
		return true
	}
	c := h.Status.BootCredential
	return c != nil && c.BootRequestID == vm.BootRequestID && c.ConsumedAt != nil
}

// ejectAfterBoot ejects an inserted ISO whose boot is over. It reports
// whether it made a BMC call (and its result).
func (r *HostReconciler) ejectAfterBoot(ctx context.Context, h *metalv1.Host) (stepResult, bool) {
	vm := h.Status.VirtualMedia
	if vm == nil || vm.InsertedAt == nil || vm.EjectedAt != nil || !mediaBootOver(h) {
		return stepResult{}, false
	}
	wait, err := r.bmcCall(ctx, h, "eject virtual media", func(ctx context.Context, d bmc.Driver) error {
		m, err := bmc.VirtualMediaOf(d, h.Spec.BMC.Address)
		if err != nil {
			return err
		}
		return m.EjectMedia(ctx)
	})
	if err != nil {
		setCondition(h, metalv1.ConditionVirtualMedia, false, metalv1.ReasonMediaError, "ejecting the ISO after the boot failed: "+err.Error())
		if wait == 0 {
			return stepResult{err: err}, true
		}
		return stepResult{requeueAfter: wait}, true
	}
	now := metav1.NewTime(r.now())
	h.Status.VirtualMedia = &metalv1.HostVirtualMedia{TokenHash: vm.TokenHash, BootRequestID: vm.BootRequestID, InsertedAt: vm.InsertedAt, EjectedAt: &now}
	r.tokens.drop(string(h.UID))
	setCondition(h, metalv1.ConditionVirtualMedia, true, metalv1.ReasonMediaEjected, fmt.Sprintf("ISO of boot request %s ejected after the boot", vm.BootRequestID))
	r.event(h, corev1.EventTypeNormal, metalv1.ReasonMediaEjected, "VirtualMedia", "ISO of boot request %s ejected after the boot", vm.BootRequestID)
	return stepResult{requeueAfter: time.Millisecond}, true
}

// prepareMedia gets a VirtualMedia Host's boot request ready for the BMC:
// the first pass mints a token and records its hash (the caller writes
// status and comes back); the next returns the ISO URL to insert. ok false
// means no boot now (result says when to look again).
func (r *HostReconciler) prepareMedia(h *metalv1.Host) (url string, res stepResult, ok bool) {
	if r.Media.BaseURL == "" {
		msg := "spec.bootMethod VirtualMedia: the BMC needs a URL to fetch the ISO from; start anvil serve with --http-base-url (the boot HTTP server as BMCs reach it)"
		if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionVirtualMedia); c == nil || c.Message != msg {
			r.event(h, corev1.EventTypeWarning, metalv1.ReasonMediaError, "VirtualMedia", "%s", msg)
		}
		setCondition(h, metalv1.ConditionVirtualMedia, false, metalv1.ReasonMediaError, msg)
		return "", stepResult{requeueAfter: r.Power.BackoffMax}, false
	}
	id := h.Spec.BootRequest.ID
	if vm := h.Status.VirtualMedia; vm != nil && vm.BootRequestID == id && vm.EjectedAt == nil {
		if tok, ok := r.tokens.take(string(h.UID), vm.TokenHash); ok {
			return strings.TrimSuffix(r.Media.BaseURL, "/") + mediatoken.Path(tok), stepResult{}, true
		}
	}
	tok, hash, err := mediatoken.New()
	if err != nil {
		return "", stepResult{err: err}, false
	}
	r.tokens.put(string(h.UID), tok)
	h.Status.VirtualMedia = &metalv1.HostVirtualMedia{TokenHash: hash, BootRequestID: id}
	return "", stepResult{requeueAfter: time.Millisecond}, false
}

// insertMedia has the BMC insert url (ejecting whatever is in) as part of
// a boot's BMC call. The URL never reaches a log, event or status.
func insertMedia(ctx context.Context, h *metalv1.Host, d bmc.Driver, url string) error {
	m, err := bmc.VirtualMediaOf(d, h.Spec.BMC.Address)
	if err != nil {
		return err
	}
	st, err := m.MediaState(ctx)
	if err != nil {
		return err
	}
	if st.Inserted || st.Image != "" {
		if err := m.EjectMedia(ctx); err != nil {
			return err
		}
	}
	return m.InsertMedia(ctx, url)
}

// mediaFailed records why a virtual media boot did not start.
func (r *HostReconciler) mediaFailed(h *metalv1.Host, err error) {
	reason, msg := metalv1.ReasonMediaError, "inserting the ISO failed: "+err.Error()
	if errors.Is(err, bmc.ErrNoVirtualMedia) {
		reason = metalv1.ReasonNoVirtualMedia
		msg = "the BMC has no virtual media, so the boot was not attempted: use spec.bootMethod PXE, or a BMC with Redfish VirtualMedia (" + err.Error() + ")"
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionVirtualMedia); c == nil || c.Reason != reason {
		r.event(h, corev1.EventTypeWarning, reason, "VirtualMedia", "%s", msg)
	}
	setCondition(h, metalv1.ConditionVirtualMedia, false, reason, msg)
}

// mediaInserted records the inserted ISO (by hash) of the boot sent.
func (r *HostReconciler) mediaInserted(h *metalv1.Host) {
	vm := h.Status.VirtualMedia
	now := metav1.NewTime(r.now())
	h.Status.VirtualMedia = &metalv1.HostVirtualMedia{TokenHash: vm.TokenHash, BootRequestID: vm.BootRequestID, InsertedAt: &now}
	setCondition(h, metalv1.ConditionVirtualMedia, true, metalv1.ReasonMediaInserted, fmt.Sprintf("ISO for boot request %s inserted; one-time boot from CD", vm.BootRequestID))
}
