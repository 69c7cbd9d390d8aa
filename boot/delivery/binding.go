package delivery

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/configserver"
)

// Bindings of boot credentials to addresses (WireOptions.Binding, anvil
// serve --boot-credential-binding): what decides that a script request, and
// then a config request, comes from the Host.
const (
	// BindAddress: a credential goes only to the address the MAC is bound
	// to, and its config is served only there: the MAC's DHCP lease (full
	// DHCP mode) or its Host's static address (spec.network.address, in
	// either mode). A MAC with neither gets no credential: in proxy-DHCP
	// mode, where another server owns the addresses, only Hosts with a
	// static address get configs. The default.
	BindAddress = "address"
	// BindFirstRequest: as BindAddress, except that in proxy-DHCP mode a
	// Host without a static address gets its credential in the first
	// script request of its boot, whatever address it comes from, and the
	// config then only to the address that used the credential first. For
	// proxy-DHCP segments whose addresses Anvil cannot know in advance; an
	// attacker on the segment who asks first wins (see the README's
	// Security section). In full DHCP mode it is BindAddress.
	BindFirstRequest = "first-request"
)

// ParseBinding checks a binding name ("" is BindAddress).
func ParseBinding(s string) (string, error) {
	switch s {
	case "", BindAddress:
		return BindAddress, nil
	case BindFirstRequest:
		return BindFirstRequest, nil
	}
	return "", fmt.Errorf("unknown boot credential binding %q: want %q or %q", s, BindAddress, BindFirstRequest)
}

// binding answers, for both the scripts and the config endpoint, which
// address a MAC is bound to.
type binding struct {
	// leases is the full-mode lease store; nil in proxy-DHCP mode.
	leases AddressSource
	// leases6 are the DHCPv6 server's leases (nil without DHCPv6): an
	// IPv6 request is bound to the MAC's DHCPv6 address, an IPv4 one to
	// its DHCPv4 lease or static address.
	leases6 AddressSource
	// hosts finds a MAC's Host for its static address in proxy mode.
	hosts func(net.HardwareAddr) (*metalv1.Host, bool)
	mode  string
}

// bound returns the address mac (of Host h, nil if unknown) is bound to
// for a request over IPv6 (v6) or IPv4. required is false only where
// BindFirstRequest lets a MAC without one through: then the first request
// is trusted.
func (b binding) bound(mac net.HardwareAddr, h *metalv1.Host, v6 bool) (addr netip.Addr, ok, required bool) {
	if v6 {
		if b.leases6 != nil {
			if addr, ok = b.leases6.AddressOf(mac); ok {
				return addr, true, true
			}
		}
		if h == nil && b.hosts != nil {
			h, _ = b.hosts(mac)
		}
		if a, ok := staticAddress6(h); ok {
			return a, true, true
		}
		if b.leases6 != nil {
			return netip.Addr{}, false, true
		}
	}
	if b.leases != nil {
		addr, ok = b.leases.AddressOf(mac)
		return addr.Unmap(), ok, true
	}
	if h == nil && b.hosts != nil {
		h, _ = b.hosts(mac)
	}
	if a, ok := staticAddress(h); ok {
		return a, true, true
	}
	return netip.Addr{}, false, b.mode != BindFirstRequest
}

// staticAddress is the Host's spec.network.address, as the boot index reads
// it (IPv4 only).
func staticAddress(h *metalv1.Host) (netip.Addr, bool) {
	if h == nil || h.Spec.Network == nil {
		return netip.Addr{}, false
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(h.Spec.Network.Address))
	if err != nil || !p.Addr().Is4() {
		return netip.Addr{}, false
	}
	return p.Addr(), true
}

// staticAddress6 is the Host's spec.network.address6.
func staticAddress6(h *metalv1.Host) (netip.Addr, bool) {
	if h == nil || h.Spec.Network == nil {
		return netip.Addr{}, false
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(h.Spec.Network.Address6))
	if err != nil || !p.Addr().Is6() || p.Addr().Is4In6() {
		return netip.Addr{}, false
	}
	return p.Addr(), true
}

// configBinding adapts binding (known only once netboot runs and says
// whether DHCP is in full mode) to configserver.RequiredBinding.
type configBinding struct {
	b atomic.Pointer[binding]
}

var _ configserver.RequiredBinding = (*configBinding)(nil)

func (c *configBinding) set(b binding) { c.b.Store(&b) }

func (c *configBinding) lookup(mac string, v6 bool) (netip.Addr, bool, bool) {
	b := c.b.Load()
	if b == nil {
		// Not wired into netboot: nothing is known, nothing is served.
		return netip.Addr{}, false, true
	}
	hw, err := net.ParseMAC(mac)
	if err != nil {
		return netip.Addr{}, false, true
	}
	return b.bound(hw, nil, v6)
}

// LeasedAddress implements configserver.AddressBinding.
func (c *configBinding) LeasedAddress(mac string, v6 bool) (netip.Addr, bool) {
	a, ok, _ := c.lookup(mac, v6)
	return a, ok
}

// AddressRequired implements configserver.RequiredBinding.
func (c *configBinding) AddressRequired(mac string, v6 bool) bool {
	_, _, required := c.lookup(mac, v6)
	return required
}
