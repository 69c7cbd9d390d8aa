package index

import (
	"net/netip"
	"strings"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
)

// BootDecision is what the boot services may do for a Host right now. This
// is the one place the rule lives:
//
//   - Accepted: the Host has a BMC address and is not in state Discovered.
//     A Host created by PXE discovery has no BMC address, so it is never
//     accepted: it gets no DHCP answer, no boot file and no iPXE script
//     until an administrator adds its BMC (and the Host controller moves
//     it out of Discovered).
//   - PXE (network boot now): Accepted, spec.bootRequest is set,
//     status.bootRequestID equals spec.bootRequest.id (the Host controller
//     has acted on exactly this request: one-time PXE boot set and power
//     applied), and the state is Provisioning or Deprovisioning (the
//     Host is being installed for its Machine, or wiped before release),
//     or the state is Provisioned and the request is a Rejoin (a
//     diskless Host running its Machine's node: whenever it next
//     network-boots, it boots its class again and rejoins).
//   - Method (how the firmware fetches iPXE): UEFI HTTP boot for
//     spec.bootMethod HTTPBoot, else PXE. DHCP answers UEFI HTTP boot
//     clients only for HTTPBoot, PXE clients for both (the BMC's one-time
//     override is PXE) and iPXE always (pxe.BootMethod.Serves). VirtualMedia counts as PXE until its ISO
//     boot is built: such a Host boots as it did before the field existed.
//   - Otherwise the Host boots from its disk: DHCP still hands out its
//     address but no boot file, and /boot/<mac>.ipxe answers "exit".
//
// An unacknowledged request never netboots: the Host controller may not
// have set the one-time boot override yet, and a Host that is Provisioned
// or Available must come up from its disk even if someone left a stale
// request in its spec.
type BootDecision struct {
	Accepted bool
	PXE      bool
	Method   pxe.BootMethod
}

// Decide applies the rule above to one Host.
func Decide(h *metalv1.Host) BootDecision {
	d := BootDecision{Accepted: h.Spec.BMC.Address != "" && h.Status.State != metalv1.HostDiscovered}
	br := h.Spec.BootRequest
	acked := br != nil && br.ID != "" && h.Status.BootRequestID == br.ID
	booting := h.Status.State == metalv1.HostProvisioning || h.Status.State == metalv1.HostDeprovisioning ||
		h.Status.State == metalv1.HostProvisioned && br != nil && br.Purpose == metalv1.BootPurposeRejoin
	d.PXE = d.Accepted && acked && booting
	if h.Spec.BootMethod == metalv1.BootMethodHTTPBoot {
		d.Method = pxe.BootMethodHTTP
	}
	return d
}

// hostLess orders Hosts that claim the same boot MAC; the first one owns
// it. The rule is the inventory package's (inventory.MACClaim; the Host
// controller marks the others DuplicateBootMAC).
func hostLess(a, b *hostEntry) bool { return a.claim.Before(b.claim) }

// hostRecord builds the record the boot services answer from (without the
// MAC, which is set per lookup). Unparseable network fields are left out:
// the Host controller reports them with the Valid condition.
func hostRecord(h *metalv1.Host) pxe.HostRecord {
	d := Decide(h)
	r := pxe.HostRecord{
		Name:       h.Name,
		Namespace:  h.Namespace,
		Hostname:   h.Name,
		Arch:       h.Spec.Architecture,
		UEFI:       h.Spec.BootMode != "Legacy",
		PXE:        d.PXE,
		BootMethod: d.Method,
		Accepted:   d.Accepted,
	}
	if r.Arch == "" {
		r.Arch = "x86_64" // the CRD default
	}
	if n := h.Spec.Network; n != nil {
		if n.Hostname != "" {
			r.Hostname = n.Hostname
		}
		if p, err := netip.ParsePrefix(strings.TrimSpace(n.Address)); err == nil && p.Addr().Is4() {
			r.IP = p
		}
		if p, err := netip.ParsePrefix(strings.TrimSpace(n.Address6)); err == nil && p.Addr().Is6() && !p.Addr().Is4In6() {
			r.IP6 = p
		}
		if g, err := netip.ParseAddr(strings.TrimSpace(n.Gateway)); err == nil && g.Is4() {
			r.Gateway = g
		}
		for _, s := range n.DNS {
			if a, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil && a.Is4() {
				r.DNS = append(r.DNS, a)
			}
		}
	}
	return r
}
