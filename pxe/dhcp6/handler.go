package dhcp6

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"

	"anvil.dev/anvil/pxe"
)

// enterprisePXE is the enterprise number EDK2 and the PXE spec put in
// option 16 (vendor class) with "PXEClient:..." or "HTTPClient:...".
const enterprisePXE = 343

// maxRelayDepth bounds Relay-forw nesting (RFC 8415's HOP_COUNT_LIMIT is 8).
const maxRelayDepth = 8

// offerHold is how long an Advertise keeps its address for the Request.
const offerHold = 2 * time.Minute

// result is what the handler decided for one packet.
type result struct {
	reply dhcpv6.DHCPv6
	mtype string // the client message's type, for the metric
	drop  string // non-empty: not answered, the reason
}

func dropped(mt, reason string) result { return result{mtype: mt, drop: reason} }

// request is one client message with what its relays said about it.
type request struct {
	msg   *dhcpv6.Message
	outer *dhcpv6.RelayMessage // nil: not relayed
	// peer is the client's address: the packet's source, or the
	// innermost relay's peer-address.
	peer netip.Addr
	// relayMAC is option 79 from the innermost relay.
	relayMAC net.HardwareAddr
}

// unwrap decapsulates Relay-forw messages.
func unwrap(m dhcpv6.DHCPv6, src netip.Addr) (request, error) {
	r := request{peer: src}
	for depth := 0; m.IsRelay(); depth++ {
		rm, ok := m.(*dhcpv6.RelayMessage)
		if !ok || rm.MessageType != dhcpv6.MessageTypeRelayForward || depth >= maxRelayDepth {
			return r, errors.New("not a Relay-forw, or nested too deep")
		}
		if r.outer == nil {
			r.outer = rm
		}
		if a, ok := netip.AddrFromSlice(rm.PeerAddr); ok {
			r.peer = a
		}
		r.relayMAC = nil
		if ht, mac := rm.Options.ClientLinkLayerAddress(); ht == iana.HWTypeEthernet && len(mac) == 6 {
			r.relayMAC = mac
		}
		if m = rm.Options.RelayMessage(); m == nil {
			return r, errors.New("a Relay-forw without a relay message")
		}
	}
	msg, ok := m.(*dhcpv6.Message)
	if !ok {
		return r, errors.New("not a client message")
	}
	r.msg = msg
	return r, nil
}

// macFromDUID returns the MAC in a DUID-LL or DUID-LLT of an Ethernet
// interface (firmware builds them from the boot NIC's MAC).
func macFromDUID(d dhcpv6.DUID) net.HardwareAddr {
	switch d := d.(type) {
	case *dhcpv6.DUIDLL:
		if d.HWType == iana.HWTypeEthernet && len(d.LinkLayerAddr) == 6 {
			return d.LinkLayerAddr
		}
	case *dhcpv6.DUIDLLT:
		if d.HWType == iana.HWTypeEthernet && len(d.LinkLayerAddr) == 6 {
			return d.LinkLayerAddr
		}
	}
	return nil
}

// macFromEUI64 returns the MAC a link-local address was formed from
// (modified EUI-64: ff:fe in the middle, the U/L bit flipped). EDK2 and
// iPXE both form their link-local address this way, and iPXE's DUID is a
// DUID-UUID that names no MAC.
func macFromEUI64(a netip.Addr) net.HardwareAddr {
	if !a.Is6() || !a.IsLinkLocalUnicast() {
		return nil
	}
	b := a.As16()
	if b[11] != 0xff || b[12] != 0xfe {
		return nil
	}
	return net.HardwareAddr{b[8] ^ 0x02, b[9], b[10], b[13], b[14], b[15]}
}

// clientMAC finds the boot NIC's MAC: option 79 from a relay, a DUID-LL(T),
// a DUID+IAID seen before, or the EUI-64 of the client's link-local
// address, in that order.
func (s *Server) clientMAC(r request) net.HardwareAddr {
	if r.relayMAC != nil {
		return r.relayMAC
	}
	duid := r.msg.Options.ClientID()
	if mac := macFromDUID(duid); mac != nil {
		return mac
	}
	if duid != nil {
		for _, ia := range r.msg.Options.IANA() {
			if m, ok := s.leases.macOf(clientKey(duid.ToBytes(), ia.IaId)); ok {
				if mac, err := net.ParseMAC(m); err == nil {
					return mac
				}
			}
		}
	}
	return macFromEUI64(r.peer)
}

// classify tells which boot client sent msg, like pxe/dhcp's classify:
// iPXE first (user class "iPXE"; pxe/ipxebin's builds, tinkerbell's, set
// "Tinkerbell" in their embedded script), then UEFI HTTP boot (vendor
// class HTTPClient or arch 15/16/18/19), then firmware PXE (an arch type
// option or vendor class PXEClient).
func classify(msg *dhcpv6.Message) (pxe.BootClient, pxe.Arch) {
	arch := pxe.ArchUnknown
	archs := msg.Options.ArchTypes()
	if len(archs) > 0 {
		arch = pxe.ArchFromOption93(uint16(archs[0]))
	}
	vc := ""
	for _, d := range msg.Options.VendorClass(enterprisePXE) {
		vc = string(d)
		break
	}
	if arch == pxe.ArchUnknown {
		if a, ok := pxe.ArchFromVendorClass(vc); ok {
			arch = a
		}
	}
	for _, uc := range msg.Options.UserClasses() {
		if bytes.Contains(uc, []byte("iPXE")) || string(uc) == "Tinkerbell" {
			return pxe.ClientIPXE, arch
		}
	}
	switch {
	case strings.HasPrefix(vc, "HTTPClient") || arch.HTTPBoot():
		return pxe.ClientHTTP, arch
	case len(archs) > 0 || strings.HasPrefix(vc, "PXEClient"):
		return pxe.ClientPXE, arch
	}
	return pxe.ClientNone, arch
}

// bootURL is option 59 for a client, or "" when it gets none.
func (s *Server) bootURL(client pxe.BootClient, arch pxe.Arch, rec pxe.HostRecord) string {
	if !rec.PXE || !rec.BootMethod.Serves(client) {
		return ""
	}
	b := s.opts.Boot
	if client == pxe.ClientIPXE {
		return b.HTTPBaseURL + "/boot/" + pxe.MACKey(rec.MAC) + ".ipxe"
	}
	file := ""
	switch arch {
	case pxe.ArchX8664UEFI, pxe.ArchX8664UEFIHTTP:
		file = b.UEFIX8664File
	case pxe.ArchARM64UEFI, pxe.ArchARM64UEFIHTTP:
		file = b.UEFIARM64File
	}
	switch {
	case file == "":
		return ""
	case client == pxe.ClientHTTP:
		return b.HTTPBaseURL + "/ipxe6/" + file
	}
	return b.TFTPBaseURL + "/" + file
}

// handle decides the answer to one parsed packet from src. It never
// panics on any input.
func (s *Server) handle(ctx context.Context, m dhcpv6.DHCPv6, src netip.Addr) result {
	r, err := unwrap(m, src)
	if err != nil {
		return dropped("invalid", "invalid")
	}
	msg := r.msg
	mt := strings.ToLower(msg.MessageType.String())
	switch msg.MessageType {
	case dhcpv6.MessageTypeSolicit, dhcpv6.MessageTypeRequest, dhcpv6.MessageTypeConfirm, dhcpv6.MessageTypeRenew,
		dhcpv6.MessageTypeRebind, dhcpv6.MessageTypeRelease, dhcpv6.MessageTypeDecline, dhcpv6.MessageTypeInformationRequest:
	default:
		return dropped("other", "not_client_message")
	}
	cid := msg.Options.ClientID()
	if cid == nil && msg.MessageType != dhcpv6.MessageTypeInformationRequest {
		return dropped(mt, "invalid")
	}
	// RFC 8415 18.4: which messages must, may or must not name a server.
	sid := msg.Options.ServerID()
	switch msg.MessageType {
	case dhcpv6.MessageTypeSolicit, dhcpv6.MessageTypeConfirm, dhcpv6.MessageTypeRebind:
		if sid != nil {
			return dropped(mt, "invalid")
		}
	case dhcpv6.MessageTypeInformationRequest:
		if sid != nil && !bytes.Equal(sid.ToBytes(), s.opts.ServerDUID) {
			return dropped(mt, "other_server")
		}
	default:
		if sid == nil || !bytes.Equal(sid.ToBytes(), s.opts.ServerDUID) {
			return dropped(mt, "other_server")
		}
	}
	mac := s.clientMAC(r)
	if mac == nil {
		return dropped(mt, "no_mac")
	}
	lctx, cancel := context.WithTimeout(ctx, s.opts.LookupTimeout)
	rec, err := s.opts.Backend.Lookup(lctx, mac)
	cancel()
	if err != nil || !rec.Accepted {
		return dropped(mt, "unknown_host")
	}
	rec.MAC = mac
	reply, reason := s.answer(msg, rec)
	if reply == nil {
		return dropped(mt, reason)
	}
	if r.outer == nil {
		return result{reply: reply, mtype: mt}
	}
	rr, err := dhcpv6.NewRelayReplFromRelayForw(r.outer, reply)
	if err != nil {
		return dropped(mt, "invalid")
	}
	return result{reply: rr, mtype: mt}
}

// answer builds the Advertise or Reply for a known, accepted host.
func (s *Server) answer(msg *dhcpv6.Message, rec pxe.HostRecord) (*dhcpv6.Message, string) {
	reply := &dhcpv6.Message{MessageType: dhcpv6.MessageTypeReply, TransactionID: msg.TransactionID}
	if msg.MessageType == dhcpv6.MessageTypeSolicit && msg.GetOneOption(dhcpv6.OptionRapidCommit) == nil {
		reply.MessageType = dhcpv6.MessageTypeAdvertise
	}
	if cid := msg.GetOneOption(dhcpv6.OptionClientID); cid != nil {
		reply.AddOption(cid)
	}
	reply.AddOption(dhcpv6.OptServerID(serverDUID(s.opts.ServerDUID)))
	mac := pxe.MACKey(rec.MAC)
	var duid []byte
	if d := msg.Options.ClientID(); d != nil {
		duid = d.ToBytes()
	}
	switch msg.MessageType {
	case dhcpv6.MessageTypeSolicit, dhcpv6.MessageTypeRequest, dhcpv6.MessageTypeRenew, dhcpv6.MessageTypeRebind:
		if msg.GetOneOption(dhcpv6.OptionRapidCommit) != nil && msg.MessageType == dhcpv6.MessageTypeSolicit {
			reply.AddOption(&dhcpv6.OptionGeneric{OptionCode: dhcpv6.OptionRapidCommit})
		}
		hold := s.opts.LeaseTime
		if reply.MessageType == dhcpv6.MessageTypeAdvertise {
			hold = min(offerHold, hold)
		}
		for i, ia := range msg.Options.IANA() {
			out := &dhcpv6.OptIANA{IaId: ia.IaId}
			if i > 0 { // one address per host: the boot NIC's
				out.Options.Add(&dhcpv6.OptStatusCode{StatusCode: iana.StatusNoAddrsAvail, StatusMessage: "one address per host"})
				reply.AddOption(out)
				continue
			}
			a, err := s.leases.acquire(mac, clientKey(duid, ia.IaId), hold, reply.MessageType == dhcpv6.MessageTypeReply, rec.IP6.Addr())
			if err != nil {
				text := "pool full"
				if errors.Is(err, errReservedInUse) {
					text = "reserved address in use"
					s.log.Info("the Host's reserved IPv6 address is leased to another client: not handed out", "host", rec.Namespace+"/"+rec.Name, "mac", mac, "address", rec.IP6.Addr().String())
				}
				out.Options.Add(&dhcpv6.OptStatusCode{StatusCode: iana.StatusNoAddrsAvail, StatusMessage: text})
				reply.AddOption(out)
				continue
			}
			if reply.MessageType == dhcpv6.MessageTypeReply && s.opts.OnBound != nil {
				if addr, exp, ok := s.leases.toReport(mac, s.opts.LeaseTime/4); ok {
					s.opts.OnBound(Lease{MAC: rec.MAC, Addr: addr, DUID: duid, Expires: exp})
				}
			}
			out.T1, out.T2 = s.opts.LeaseTime/2, s.opts.LeaseTime*4/5
			out.Options.Add(&dhcpv6.OptIAAddress{IPv6Addr: net.IP(a.AsSlice()), PreferredLifetime: s.opts.LeaseTime, ValidLifetime: s.opts.LeaseTime})
			reply.AddOption(out)
		}
	case dhcpv6.MessageTypeConfirm:
		code, text := iana.StatusSuccess, "on link"
		for _, ia := range msg.Options.IANA() {
			for _, ad := range ia.Options.Addresses() {
				if a, ok := netip.AddrFromSlice(ad.IPv6Addr); !ok || !(s.opts.Range.Contains(a) || rec.IP6.IsValid() && rec.IP6.Contains(a)) {
					code, text = iana.StatusNotOnLink, "not on this link"
				}
			}
		}
		reply.AddOption(&dhcpv6.OptStatusCode{StatusCode: code, StatusMessage: text})
	case dhcpv6.MessageTypeRelease, dhcpv6.MessageTypeDecline:
		for _, ia := range msg.Options.IANA() {
			for _, ad := range ia.Options.Addresses() {
				if a, ok := netip.AddrFromSlice(ad.IPv6Addr); ok {
					s.leases.release(mac, a)
				}
			}
		}
		reply.AddOption(&dhcpv6.OptStatusCode{StatusCode: iana.StatusSuccess, StatusMessage: "released"})
		return reply, ""
	}
	if len(s.opts.DNS) > 0 {
		ips := make([]net.IP, len(s.opts.DNS))
		for i, a := range s.opts.DNS {
			ips[i] = a.AsSlice()
		}
		reply.AddOption(dhcpv6.OptDNS(ips...))
	}
	client, arch := classify(msg)
	if url := s.bootURL(client, arch, rec); url != "" {
		reply.AddOption(dhcpv6.OptBootFileURL(url))
		if client == pxe.ClientHTTP {
			// EDK2's HttpBootDxe takes only an answer naming HTTPClient
			// (as over IPv4, option 60).
			reply.AddOption(&dhcpv6.OptVendorClass{EnterpriseNumber: enterprisePXE, Data: [][]byte{[]byte("HTTPClient")}})
		}
	}
	return reply, ""
}

// serverDUID wraps the configured DUID bytes for OptServerID.
func serverDUID(b []byte) dhcpv6.DUID {
	if d, err := dhcpv6.DUIDFromBytes(b); err == nil {
		return d
	}
	return &dhcpv6.DUIDOpaque{Type: dhcpv6.DUIDType(uint16(b[0])<<8 | uint16(b[1])), Data: b[2:]}
}
