package inventory

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/netguard"
)

// Field indexes the Host controller (and anyone sharing its cache) uses.
const (
	// IndexBootMAC indexes Hosts by each normalised boot MAC.
	IndexBootMAC = "spec.bootMACs"
	// IndexCredentials indexes Hosts by their credentials Secret name.
	IndexCredentials = "spec.bmc.credentialsName"
)

// SupportedSchemes are the BMC URL schemes Anvil has drivers for.
var SupportedSchemes = []string{"redfish+https", "redfish+http", "ipmi", "manual"}

// Problem is why a Host spec cannot be used. Message never holds secret values.
type Problem struct {
	Reason  string
	Message string
}

func (p *Problem) Error() string { return p.Message }

// NormalizeMAC returns the lower-case colon form of a MAC, or an error.
func NormalizeMAC(s string) (string, error) {
	hw, err := net.ParseMAC(strings.TrimSpace(s))
	if err != nil || len(hw) != 6 {
		return "", fmt.Errorf("%q is not a 48-bit MAC address such as 52:54:00:12:34:56", s)
	}
	return hw.String(), nil
}

// ParseBMCAddress checks a BMC address the way the drivers will read it.
// It never echoes userinfo back, in case someone put a password there.
func ParseBMCAddress(addr string) (*url.URL, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("BMC address is not a URL")
	}
	if u.User != nil {
		return nil, fmt.Errorf("BMC address must not carry credentials; use the credentials Secret")
	}
	supported := false
	for _, s := range SupportedSchemes {
		if u.Scheme == s {
			supported = true
		}
	}
	if !supported {
		return nil, fmt.Errorf("BMC scheme %q is not supported (use one of %s)", u.Scheme, strings.Join(SupportedSchemes, ", "))
	}
	if u.Scheme != "manual" && u.Hostname() == "" {
		return nil, fmt.Errorf("BMC address %q has no host", u.Scheme+"://")
	}
	return u, nil
}

// validateSpec checks what needs no API call.
func validateSpec(h *metalv1.Host) *Problem {
	if h.Spec.BMC.Address != "" {
		if _, err := ParseBMCAddress(h.Spec.BMC.Address); err != nil {
			return &Problem{metalv1.ReasonInvalidAddress, err.Error()}
		}
	}
	if p := bootMethodProblem(h); p != nil {
		return p
	}
	for _, m := range h.Spec.BootMACs {
		if _, err := NormalizeMAC(m); err != nil {
			return &Problem{metalv1.ReasonInvalidAddress, "boot MAC " + err.Error()}
		}
	}
	if n := h.Spec.Network; n != nil {
		if n.Address != "" {
			if _, err := netip.ParsePrefix(n.Address); err != nil {
				return &Problem{metalv1.ReasonInvalidAddress, fmt.Sprintf("network.address %q is not a CIDR such as 10.0.0.21/24", n.Address)}
			}
		}
		if n.Gateway != "" {
			if _, err := netip.ParseAddr(n.Gateway); err != nil {
				return &Problem{metalv1.ReasonInvalidAddress, fmt.Sprintf("network.gateway %q is not an IP address", n.Gateway)}
			}
		}
		for _, d := range n.DNS {
			if _, err := netip.ParseAddr(d); err != nil {
				return &Problem{metalv1.ReasonInvalidAddress, fmt.Sprintf("network.dns entry %q is not an IP address", d)}
			}
		}
	}
	return nil
}

// bootMethodProblem refuses a boot method the kind of BMC cannot do:
// VirtualMedia needs a Redfish BMC. (Whether a Redfish BMC has virtual media
// only a BMC call tells.)
func bootMethodProblem(h *metalv1.Host) *Problem {
	if h.Spec.BootMethod != metalv1.BootMethodVirtualMedia {
		return nil
	}
	if h.Spec.Network == nil || h.Spec.Network.Address == "" {
		// The ISO's script and the kernel's ip= argument configure the
		// boot NIC statically: nothing answers DHCP for this boot.
		return &Problem{metalv1.ReasonBootMethodUnsupported, "spec.bootMethod VirtualMedia needs spec.network.address (the boot NIC's static IPv4 address, e.g. 10.0.0.21/24, with spec.network.gateway and dns as needed): the virtual media boot uses no DHCP"}
	}
	if h.Spec.BMC.Address == "" {
		return nil
	}
	a, err := bmc.ParseAddress(h.Spec.BMC.Address)
	if err != nil {
		return nil // reported as an invalid address
	}
	var why string
	switch a.Scheme {
	case "ipmi":
		why = "IPMI has no standard virtual media: use the BMC's redfish+https:// address, or spec.bootMethod PXE"
	case "manual":
		why = "Anvil cannot insert media through a manual:// BMC: use spec.bootMethod PXE"
	default:
		return nil
	}
	return &Problem{metalv1.ReasonBootMethodUnsupported, fmt.Sprintf("spec.bootMethod VirtualMedia needs a Redfish BMC, and spec.bmc.address is %s://; %s", a.Scheme, why)}
}

// bmcGuard is the request-forgery guard BMC addresses are checked with:
// the one the pool's drivers dial through, so validation and dialling agree.
// Without a pool nothing is dialled, and the strict default applies.
func (r *HostReconciler) bmcGuard() netguard.Guard {
	if r.Power.Pool != nil {
		return r.Power.Pool.Guard()
	}
	return netguard.Guard{}
}

// checkBMCTarget refuses a BMC address that would carry the credentials
// somewhere unsafe: to a loopback, link-local or cloud metadata address
// (an API user could otherwise point Anvil at its own services or the
// metadata service, with the Secret's password attached), or over plain
// HTTP without the Host's opt-in. The drivers check the same again, on
// every address they dial.
func checkBMCTarget(h *metalv1.Host, g netguard.Guard) *Problem {
	a, err := bmc.ParseAddress(h.Spec.BMC.Address)
	if err != nil || a.Scheme == "manual" {
		return nil // validateSpec reports bad addresses; manual:// dials nothing
	}
	if err := g.CheckHost(a.Host); err != nil {
		return &Problem{metalv1.ReasonAddressNotAllowed, fmt.Sprintf("spec.bmc.address %s is refused (%v); if that really is the BMC, an admin can allow it with anvil serve %s=<cidr>", a.String(), err, bmc.AllowFlag)}
	}
	if a.Scheme == "redfish+http" && !h.Spec.BMC.AllowPlainHTTP {
		return &Problem{metalv1.ReasonPlainHTTPNotAllowed, "spec.bmc.address is redfish+http://, which sends the BMC credentials unencrypted: use redfish+https://, or set spec.bmc.allowPlainHTTP: true if the BMC network is trusted"}
	}
	return nil
}

// needsCredentials reports whether the Host's driver logs in to a BMC.
func needsCredentials(h *metalv1.Host) bool {
	a := h.Spec.BMC.Address
	return a != "" && !strings.HasPrefix(a, "manual:")
}

// LabelDiscovered marks Hosts that PXE discovery created for a MAC it saw
// on the network (pxe/index.Discoverer).
const LabelDiscovered = "metal.anvil.dev/discovered"

// YieldsMAC reports whether h is a discovered Host nobody has accepted yet
// (labelled by discovery, no BMC address). Such a Host only records that a
// DHCP request with its MAC was seen, which anyone on the provisioning
// segment can send, so it never keeps a MAC from a Host an administrator
// registers (see macOwner); pxe/index deletes it then.
func YieldsMAC(h *metalv1.Host) bool {
	return h.Labels[LabelDiscovered] == "true" && h.Spec.BMC.Address == ""
}

// MACClaim is what decides which of the Hosts that share a boot MAC keeps
// it. The Host controller (macOwner) and the boot index (pxe/index) both
// order by it, so they never disagree on the owner.
type MACClaim struct {
	Yields          bool // YieldsMAC
	Valid           bool // the Valid condition is True
	Created         time.Time
	Namespace, Name string
}

// ClaimOf is h's claim on its boot MACs.
func ClaimOf(h *metalv1.Host) MACClaim {
	return MACClaim{
		Yields:    YieldsMAC(h),
		Valid:     meta.IsStatusConditionTrue(h.Status.Conditions, metalv1.ConditionValid),
		Created:   h.CreationTimestamp.Time,
		Namespace: h.Namespace, Name: h.Name,
	}
}

// Before reports whether a keeps a shared MAC from b: any Host before a
// discovered, unaccepted one (YieldsMAC: a spoofed DISCOVER must not squat
// a MAC), then one already validated (so a working Host never loses its
// MAC to a newcomer), then the oldest, then by namespace/name.
func (a MACClaim) Before(b MACClaim) bool {
	if a.Yields != b.Yields {
		return b.Yields
	}
	if a.Valid != b.Valid {
		return a.Valid
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// macOwner is the Host that keeps a MAC the hosts share (MACClaim.Before);
// the others get a condition.
func macOwner(hosts []metalv1.Host) *metalv1.Host {
	var owner *metalv1.Host
	var best MACClaim
	for i := range hosts {
		if c := ClaimOf(&hosts[i]); owner == nil || c.Before(best) {
			owner, best = &hosts[i], c
		}
	}
	return owner
}

// checkDuplicateMACs finds a boot MAC of h already owned by another Host.
func checkDuplicateMACs(ctx context.Context, c client.Reader, h *metalv1.Host) (*Problem, error) {
	for _, raw := range h.Spec.BootMACs {
		mac, err := NormalizeMAC(raw)
		if err != nil {
			continue // reported by validateSpec
		}
		var list metalv1.HostList
		if err := c.List(ctx, &list, client.MatchingFields{IndexBootMAC: mac}); err != nil {
			return nil, fmt.Errorf("listing Hosts by MAC: %w", err)
		}
		owner := macOwner(list.Items)
		if owner != nil && (owner.Namespace != h.Namespace || owner.Name != h.Name) {
			return &Problem{metalv1.ReasonDuplicateMAC, fmt.Sprintf("boot MAC %s is already registered to Host %s/%s", mac, owner.Namespace, owner.Name)}, nil
		}
	}
	return nil, nil
}

// IndexHostMACs is the indexer function for IndexBootMAC.
func IndexHostMACs(o client.Object) []string {
	h, ok := o.(*metalv1.Host)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(h.Spec.BootMACs))
	for _, m := range h.Spec.BootMACs {
		if n, err := NormalizeMAC(m); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// IndexHostCredentials is the indexer function for IndexCredentials.
func IndexHostCredentials(o client.Object) []string {
	h, ok := o.(*metalv1.Host)
	if !ok || h.Spec.BMC.CredentialsName == "" {
		return nil
	}
	return []string{h.Spec.BMC.CredentialsName}
}
