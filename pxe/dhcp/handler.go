package dhcp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"anvil.dev/anvil/pxe"
)

// Client and server ports (RFC 2131) and the option codes the library does
// not name.
const (
	clientPort = 68
	serverPort = 67

	optIPXEEncap = 175 // iPXE's encapsulated options: present only in iPXE
)

// declineHoldTime is how long an address a client DECLINEd (found in use
// on the wire) is kept out of the pool (see holder.go for which DECLINEs
// count).
const declineHoldTime = 10 * time.Minute

// result is what the handler decided for one packet.
type result struct {
	reply *dhcpv4.DHCPv4
	dst   *net.UDPAddr
	drop  string // non-empty: not answered, reason for the metric
	// write: the memory pass could not answer (the REQUEST needs a lease
	// write of wip); the packet goes on to the write queue.
	write bool
	wip   netip.Addr
	// ahead: an OFFER whose lease the store wants written before the
	// REQUEST (OfferWriter); the server starts that write after sending.
	ahead *aheadWrite
}

// pass says what a handler run may do.
type pass uint8

const (
	passAny    pass = iota // may write leases (the write workers)
	passMemory             // must not: answers what needs no write, else result.write
)

func dropped(reason string) result { return result{drop: reason} }

// clientInfo is what the request says about the client's boot firmware.
type clientInfo struct {
	arch        pxe.Arch
	vendorClass string
	client      pxe.BootClient
}

// bootClient reports whether the request came from any network boot client.
func (ci clientInfo) bootClient() bool { return ci.client != pxe.ClientNone }

func classify(req *dhcpv4.DHCPv4) clientInfo {
	ci := clientInfo{vendorClass: req.ClassIdentifier(), arch: pxe.ArchUnknown}
	hasArch := false
	if raw := req.Options.Get(dhcpv4.OptionClientSystemArchitectureType); len(raw) >= 2 {
		hasArch = true
		ci.arch = pxe.ArchFromOption93(uint16(raw[0])<<8 | uint16(raw[1]))
	}
	if ci.arch == pxe.ArchUnknown {
		if a, ok := pxe.ArchFromVendorClass(ci.vendorClass); ok {
			ci.arch = a
		}
	}
	// iPXE sends option 77 as a bare string, not in RFC 3004 form, so look
	// for the bytes rather than parsing.
	uc := req.Options.Get(dhcpv4.OptionUserClassInformation)
	// iPXE first: it announces itself with PXEClient and option 93 too.
	switch {
	case bytes.Contains(uc, []byte("iPXE")) || req.Options.Has(dhcpv4.GenericOptionCode(optIPXEEncap)):
		ci.client = pxe.ClientIPXE
	case strings.HasPrefix(ci.vendorClass, "HTTPClient") || ci.arch.HTTPBoot():
		ci.client = pxe.ClientHTTP
	case hasArch || strings.HasPrefix(ci.vendorClass, "PXEClient"):
		ci.client = pxe.ClientPXE
	}
	return ci
}

// bootFile returns the boot file (a TFTP path or, for iPXE and UEFI HTTP
// boot, a URL) for a client, or "" when there is none for its architecture.
func (s *Server) bootFile(ci clientInfo, mac net.HardwareAddr) string {
	b := s.opts.Boot
	if ci.client == pxe.ClientIPXE {
		return b.HTTPBaseURL + "/boot/" + pxe.MACKey(mac) + ".ipxe"
	}
	file := ""
	switch ci.arch {
	case pxe.ArchX86BIOS:
		file = b.BIOSFile
	case pxe.ArchX8664UEFI, pxe.ArchX8664UEFIHTTP:
		file = b.UEFIX8664File
	case pxe.ArchARM64UEFI, pxe.ArchARM64UEFIHTTP:
		file = b.UEFIARM64File
	case pxe.ArchIA32UEFI, pxe.ArchIA32UEFIHTTP:
		file = b.UEFIIA32File
	}
	if file == "" {
		return ""
	}
	if ci.client == pxe.ClientHTTP {
		return b.HTTPBaseURL + "/ipxe/" + file
	}
	return file
}

// withBootOptions adds next-server, boot file and the PXE/HTTPClient vendor
// options. It reports false when the client gets no boot file: the host is
// not meant to network boot now, or not with this client (rec.BootMethod).
func (s *Server) withBootOptions(resp, req *dhcpv4.DHCPv4, ci clientInfo, rec pxe.HostRecord) bool {
	if !rec.PXE || !rec.BootMethod.Serves(ci.client) {
		return false
	}
	file := s.bootFile(ci, req.ClientHWAddr)
	if file == "" {
		return false
	}
	next := s.opts.Boot.NextServer.AsSlice()
	resp.ServerIPAddr = net.IP(next)
	resp.UpdateOption(dhcpv4.OptTFTPServerName(s.opts.Boot.NextServer.String()))
	resp.UpdateOption(dhcpv4.OptBootFileName(file))
	if len(file) <= 127 {
		resp.BootFileName = file
	}
	switch {
	case ci.client == pxe.ClientHTTP:
		// EDK2's HttpBootDxe ignores an offer without option 60
		// HTTPClient (HttpBootParseDhcp4Packet); with yiaddr it is a full
		// offer, without (proxy mode) a proxy offer it pairs with another
		// server's address offer.
		resp.UpdateOption(dhcpv4.OptClassIdentifier("HTTPClient"))
	case strings.HasPrefix(ci.vendorClass, "PXEClient"):
		resp.UpdateOption(dhcpv4.OptClassIdentifier("PXEClient"))
		// PXE vendor options: discovery control (6) = 8, "boot file in
		// this packet, skip boot server discovery".
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, []byte{6, 1, 8, 255}))
	}
	// PXE clients expect their machine identifier (option 97) echoed.
	if guid := req.Options.Get(dhcpv4.OptionClientMachineIdentifier); guid != nil {
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionClientMachineIdentifier, guid))
	}
	return true
}

// handle decides the answer to one parsed packet. peer is the sender and on
// the socket it arrived on. It must never panic on any input (see
// FuzzHandle).
func (s *Server) handle(ctx context.Context, req *dhcpv4.DHCPv4, peer *net.UDPAddr, on listener) result {
	return s.handlePass(ctx, req, peer, on, passAny)
}

// handlePass is handle for one pass (see queueFor): the memory workers
// run passMemory, the write workers passAny.
func (s *Server) handlePass(ctx context.Context, req *dhcpv4.DHCPv4, peer *net.UDPAddr, on listener, ps pass) result {
	return s.handleFrame(ctx, req, peer, on, ps, nil)
}

// handleFrame is handlePass for a packet whose Ethernet source l2src the
// server saw (the packet socket's RELEASEs and DECLINEs); nil: unknown.
func (s *Server) handleFrame(ctx context.Context, req *dhcpv4.DHCPv4, peer *net.UDPAddr, on listener, ps pass, l2src net.HardwareAddr) result {
	if req.OpCode != dhcpv4.OpcodeBootRequest {
		return dropped("not_request")
	}
	if req.HWType != iana.HWTypeEthernet || len(req.ClientHWAddr) != 6 {
		return dropped("invalid")
	}
	mt := req.MessageType()
	if mt == dhcpv4.MessageTypeNone {
		return dropped("invalid") // BOOTP is not served
	}
	ci := classify(req)
	rec, ok := s.lookupHost(ctx, req, ci, mt)
	if !ok {
		return dropped("unknown_host")
	}
	if s.opts.Mode == ModeProxy {
		return s.handleProxy(req, peer, on, ci, rec, mt)
	}
	if on != listenDHCP {
		return dropped("wrong_port")
	}
	return s.handleFull(ctx, req, peer, ci, rec, mt, ps, l2src)
}

// lookupHost returns the host record if the MAC is known and accepted, and
// reports everything else to discovery.
func (s *Server) lookupHost(ctx context.Context, req *dhcpv4.DHCPv4, ci clientInfo, mt dhcpv4.MessageType) (pxe.HostRecord, bool) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.LookupTimeout)
	defer cancel()
	rec, err := s.opts.Backend.Lookup(ctx, req.ClientHWAddr)
	switch {
	case err == nil && rec.Accepted:
		return rec, true
	case err != nil && !errors.Is(err, pxe.ErrNotFound):
		s.log.Error(err, "backend lookup failed", "mac", req.ClientHWAddr.String())
		return rec, false
	}
	if mt == dhcpv4.MessageTypeDiscover {
		s.disc.report(req.ClientHWAddr, ci.arch, ci.vendorClass)
	}
	return rec, false
}

// handleProxy answers PXE clients with boot options only (no address).
func (s *Server) handleProxy(req *dhcpv4.DHCPv4, peer *net.UDPAddr, on listener, ci clientInfo, rec pxe.HostRecord, mt dhcpv4.MessageType) result {
	if !ci.bootClient() {
		return dropped("not_pxe_client")
	}
	if !rec.PXE {
		return dropped("not_pxe_boot")
	}
	if !rec.BootMethod.Serves(ci.client) {
		return dropped("other_boot_method")
	}
	var replyType dhcpv4.MessageType
	switch {
	case on == listenDHCP && mt == dhcpv4.MessageTypeDiscover:
		replyType = dhcpv4.MessageTypeOffer
	case on == listenPXE && (mt == dhcpv4.MessageTypeRequest || mt == dhcpv4.MessageTypeInform):
		replyType = dhcpv4.MessageTypeAck
	default:
		return dropped("proxy_ignored")
	}
	resp, err := dhcpv4.NewReplyFromRequest(req)
	if err != nil {
		return dropped("internal")
	}
	resp.UpdateOption(dhcpv4.OptMessageType(replyType))
	resp.UpdateOption(dhcpv4.OptServerIdentifier(net.IP(s.opts.ServerIP.AsSlice())))
	if !s.withBootOptions(resp, req, ci, rec) {
		return dropped("no_boot_file")
	}
	if ci.client != pxe.ClientHTTP {
		// A ProxyDHCP offer must say PXEClient, or PXE ROMs ignore it.
		resp.UpdateOption(dhcpv4.OptClassIdentifier("PXEClient"))
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, []byte{6, 1, 8, 255}))
	}
	var dst *net.UDPAddr
	switch {
	case on == listenPXE:
		dst = peer // boot server reply: unicast back to the asking socket
	case isSet(req.GatewayIPAddr):
		dst = &net.UDPAddr{IP: req.GatewayIPAddr, Port: serverPort}
	default:
		dst = &net.UDPAddr{IP: net.IPv4bcast, Port: clientPort}
	}
	return result{reply: resp, dst: dst}
}

// handleFull is the address-assigning server.
func (s *Server) handleFull(ctx context.Context, req *dhcpv4.DHCPv4, peer *net.UDPAddr, ci clientInfo, rec pxe.HostRecord, mt dhcpv4.MessageType, ps pass, l2src net.HardwareAddr) result {
	sn, ok := s.subnetFor(req)
	if !ok {
		return dropped("no_subnet")
	}
	// Reads get LookupTimeout; writes (Renew, Release) their own, longer
	// deadline (Options.LeaseWriteTimeout).
	wctx, wcancel := context.WithTimeout(ctx, s.opts.LeaseWriteTimeout)
	defer wcancel()
	ctx, cancel := context.WithTimeout(ctx, s.opts.LookupTimeout)
	defer cancel()
	static := rec.IP.IsValid() && rec.IP.Addr().Is4()
	if !static && !sn.Range.IsValid() {
		return dropped("no_address")
	}
	leaseTime := s.opts.LeaseTime
	if sn.LeaseTime > 0 {
		leaseTime = sn.LeaseTime
	}

	switch mt {
	case dhcpv4.MessageTypeDiscover:
		ip := netip.Addr{}
		if static {
			ip = rec.IP.Addr()
		} else {
			preferred, _ := netip.AddrFromSlice(req.RequestedIPAddress().To4())
			l, err := s.opts.Leases.Allocate(ctx, AllocateRequest{
				MAC: req.ClientHWAddr, Range: sn.Range, Preferred: preferred, TTL: s.opts.OfferHold, Exclude: s.excluded(sn),
			})
			if err != nil {
				s.log.Error(err, "allocate", "mac", req.ClientHWAddr.String(), "subnet", sn.Prefix.String())
				return dropped("pool_exhausted")
			}
			ip = l.IP
		}
		res := s.ack(req, peer, ci, rec, sn, ip, leaseTime, dhcpv4.MessageTypeOffer)
		if ow, ok := s.opts.Leases.(OfferWriter); ok && !static && res.reply != nil && ow.NeedsWrite(req.ClientHWAddr, ip, leaseTime) {
			res.ahead = &aheadWrite{mac: req.ClientHWAddr, ip: ip, ttl: leaseTime}
		}
		return res

	case dhcpv4.MessageTypeRequest:
		if sid := req.ServerIdentifier(); isSet(sid) && !sid.Equal(net.IP(s.opts.ServerIP.AsSlice())) {
			return dropped("other_server") // the client chose another server's offer
		}
		want, _ := netip.AddrFromSlice(req.RequestedIPAddress().To4())
		if !want.IsValid() || want.IsUnspecified() {
			want, _ = netip.AddrFromSlice(req.ClientIPAddr.To4())
		}
		if !want.IsValid() || want.IsUnspecified() {
			return dropped("invalid")
		}
		if static {
			if want != rec.IP.Addr() {
				return s.nak(req, "address not reserved for this client")
			}
			return s.ack(req, peer, ci, rec, sn, want, leaseTime, dhcpv4.MessageTypeAck)
		}
		if !sn.Range.Contains(want) {
			return s.nak(req, "address not on this network")
		}
		if l, err := s.opts.Leases.Get(ctx, req.ClientHWAddr); err == nil {
			if l.IP != want {
				return s.nak(req, "address not leased to this client")
			}
		} else if !errors.Is(err, ErrNoLease) {
			s.log.Error(err, "lease lookup", "mac", req.ClientHWAddr.String())
			return dropped("lease_error")
		} else if ps == passMemory {
			return result{write: true, wip: want} // INIT-REBOOT: Allocate may write (FileLeaseStore)
		} else {
			// INIT-REBOOT after we lost (or never had) the lease: take the
			// address if it is free, else NAK.
			l, err := s.opts.Leases.Allocate(ctx, AllocateRequest{
				MAC: req.ClientHWAddr, Range: sn.Range, Preferred: want, TTL: s.opts.OfferHold, Exclude: s.excluded(sn),
			})
			if err != nil || l.IP != want {
				if err == nil {
					_ = s.opts.Leases.Release(wctx, req.ClientHWAddr)
				}
				return s.nak(req, "address not available")
			}
		}
		if ps == passMemory {
			return s.renewInMemory(req, peer, ci, rec, sn, want, leaseTime)
		}
		now := s.opts.Now()
		l, err := s.opts.Leases.Renew(wctx, req.ClientHWAddr, want, leaseTime)
		if err != nil {
			if errors.Is(err, ErrNoLease) {
				return s.nak(req, "address not leased to this client")
			}
			s.log.Error(err, "renew lease", "mac", req.ClientHWAddr.String(), "timeout", s.opts.LeaseWriteTimeout.String())
			return dropped("lease_error")
		}
		return s.ack(req, peer, ci, rec, sn, want, ackLeaseTime(l, now, leaseTime), dhcpv4.MessageTypeAck)

	case dhcpv4.MessageTypeRelease:
		if static {
			return result{}
		}
		if why := s.releaseFrom(req, l2src); why != "" {
			s.log.V(1).Info("RELEASE not bound to the lease holder; ignored", "mac", req.ClientHWAddr.String(), "frameSource", l2src.String(), "giaddr", req.GatewayIPAddr.String())
			return dropped(why)
		}
		if sid := req.ServerIdentifier(); isSet(sid) && !sid.Equal(net.IP(s.opts.ServerIP.AsSlice())) {
			return dropped("other_server")
		}
		ciaddr, _ := netip.AddrFromSlice(req.ClientIPAddr.To4())
		if l, err := s.opts.Leases.Get(ctx, req.ClientHWAddr); err == nil && l.IP == ciaddr {
			if err := s.opts.Leases.Release(wctx, req.ClientHWAddr); err != nil {
				s.log.Error(err, "release lease", "mac", req.ClientHWAddr.String())
			}
		}
		return result{}

	case dhcpv4.MessageTypeDecline:
		ip, _ := netip.AddrFromSlice(req.RequestedIPAddress().To4())
		if !ip.IsValid() {
			return dropped("invalid")
		}
		if sid := req.ServerIdentifier(); isSet(sid) && !sid.Equal(net.IP(s.opts.ServerIP.AsSlice())) {
			return dropped("other_server")
		}
		if static {
			s.log.Info("client declined its static address (in use by another machine?)", "mac", req.ClientHWAddr.String(), "ip", ip.String(), "host", rec.Name)
			return result{} // a conflicting static address needs a human
		}
		if why := s.declineFrom(req, ip, l2src); why != "" {
			s.log.V(1).Info("DECLINE not bound to an exchange with this client; ignored", "mac", req.ClientHWAddr.String(), "ip", ip.String(), "reason", why)
			return dropped(why)
		}
		s.log.Info("client declined address (in use by another machine?)", "mac", req.ClientHWAddr.String(), "ip", ip.String(), "host", rec.Name)
		// The lease stays: the client's next DISCOVER gets another address
		// (this one is excluded) and its REQUEST replaces the lease.
		s.holdDeclined(ip, pxe.MACKey(req.ClientHWAddr), sn)
		return result{}

	case dhcpv4.MessageTypeInform:
		if !isSet(req.ClientIPAddr) {
			return dropped("invalid")
		}
		return s.ack(req, peer, ci, rec, sn, netip.Addr{}, 0, dhcpv4.MessageTypeAck)
	}
	return dropped("unsupported_type")
}

// renewInMemory answers a REQUEST for want, the address the client holds,
// when the lease store can renew it without a write (iPXE's and the OS's
// REQUESTs right after the firmware's wrote the lease). Otherwise the
// REQUEST goes on to the write queue, or waits for the write of the same
// lease already queued or in flight (Server.handOn).
func (s *Server) renewInMemory(req *dhcpv4.DHCPv4, peer *net.UDPAddr, ci clientInfo, rec pxe.HostRecord, sn Subnet, want netip.Addr, leaseTime time.Duration) result {
	mr, ok := s.opts.Leases.(MemoryRenewer)
	if !ok {
		return result{write: true, wip: want}
	}
	now := s.opts.Now()
	l, ok := mr.RenewInMemory(req.ClientHWAddr, want, leaseTime)
	if !ok {
		return result{write: true, wip: want}
	}
	s.metrics.memoryRenewals.Inc()
	return s.ack(req, peer, ci, rec, sn, want, ackLeaseTime(l, now, leaseTime), dhcpv4.MessageTypeAck)
}

// ackLeaseTime is the lease time an ACK carries: the full leaseTime,
// unless the store answered from a persisted lease that ends sooner (see
// index.LeaseStoreOptions.ReuseThreshold); then the time that lease has
// left, so the client renews (at half of it) before it runs out, as
// Kea's lease caching does.
func ackLeaseTime(l Lease, now time.Time, leaseTime time.Duration) time.Duration {
	if left := l.Expires.Sub(now).Truncate(time.Second); left >= time.Second && left < leaseTime {
		return left
	}
	return leaseTime
}

// ack builds an OFFER or ACK. ip invalid means INFORM (no address, no lease
// time).
func (s *Server) ack(req *dhcpv4.DHCPv4, peer *net.UDPAddr, ci clientInfo, rec pxe.HostRecord, sn Subnet, ip netip.Addr, leaseTime time.Duration, mt dhcpv4.MessageType) result {
	resp, err := dhcpv4.NewReplyFromRequest(req)
	if err != nil {
		return dropped("internal")
	}
	resp.UpdateOption(dhcpv4.OptMessageType(mt))
	resp.UpdateOption(dhcpv4.OptServerIdentifier(net.IP(s.opts.ServerIP.AsSlice())))

	prefix, router, dns := sn.Prefix, sn.Router, sn.DNS
	if rec.IP.IsValid() {
		prefix = rec.IP.Masked()
		if !prefix.Contains(router) {
			router = netip.Addr{}
		}
	}
	if rec.Gateway.IsValid() {
		router = rec.Gateway
	}
	if len(rec.DNS) > 0 {
		dns = rec.DNS
	}
	if ip.IsValid() {
		resp.YourIPAddr = net.IP(ip.AsSlice())
		resp.UpdateOption(dhcpv4.OptIPAddressLeaseTime(leaseTime))
		resp.UpdateOption(dhcpv4.OptRenewTimeValue(leaseTime / 2))
		resp.UpdateOption(dhcpv4.OptRebindingTimeValue(leaseTime * 7 / 8))
	} else {
		resp.ClientIPAddr = req.ClientIPAddr
	}
	resp.UpdateOption(dhcpv4.OptSubnetMask(net.CIDRMask(prefix.Bits(), 32)))
	if router.Is4() {
		resp.UpdateOption(dhcpv4.OptRouter(net.IP(router.AsSlice())))
	}
	if len(dns) > 0 {
		ips := make([]net.IP, 0, len(dns))
		for _, d := range dns {
			if d.Is4() {
				ips = append(ips, net.IP(d.AsSlice()))
			}
		}
		if len(ips) > 0 {
			resp.UpdateOption(dhcpv4.OptDNS(ips...))
		}
	}
	if rec.Hostname != "" {
		resp.UpdateOption(dhcpv4.OptHostName(rec.Hostname))
	}
	// Boot options only while the host is meant to network boot, and only
	// to the boot clients of its method (never the installed OS's DHCP
	// client): everyone else still gets the address.
	s.withBootOptions(resp, req, ci, rec)
	if ip.IsValid() {
		s.noteExchange(req, ip)
	}
	return result{reply: resp, dst: replyDest(req, peer, mt)}
}

func (s *Server) nak(req *dhcpv4.DHCPv4, msg string) result {
	resp, err := dhcpv4.NewReplyFromRequest(req)
	if err != nil {
		return dropped("internal")
	}
	resp.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeNak))
	resp.UpdateOption(dhcpv4.OptServerIdentifier(net.IP(s.opts.ServerIP.AsSlice())))
	resp.UpdateOption(dhcpv4.OptMessage(msg))
	if isSet(req.GatewayIPAddr) {
		resp.SetBroadcast() // RFC 2131 4.3.2: the relay must broadcast a NAK
	}
	return result{reply: resp, dst: replyDest(req, nil, dhcpv4.MessageTypeNak)}
}

// replyDest implements RFC 2131 4.1: to the relay if there is one, NAKs
// broadcast, to ciaddr when the client has an address, else broadcast
// (unicasting to yiaddr would need an ARP entry a UDP socket cannot add).
func replyDest(req *dhcpv4.DHCPv4, peer *net.UDPAddr, mt dhcpv4.MessageType) *net.UDPAddr {
	switch {
	case isSet(req.GatewayIPAddr):
		return &net.UDPAddr{IP: req.GatewayIPAddr.To4(), Port: serverPort}
	case mt == dhcpv4.MessageTypeNak:
		return &net.UDPAddr{IP: net.IPv4bcast, Port: clientPort}
	case isSet(req.ClientIPAddr):
		port := clientPort
		if peer != nil && peer.Port != 0 && peer.IP.Equal(req.ClientIPAddr) {
			port = peer.Port
		}
		return &net.UDPAddr{IP: req.ClientIPAddr.To4(), Port: port}
	}
	return &net.UDPAddr{IP: net.IPv4bcast, Port: clientPort}
}

// subnetFor picks the subnet: the one containing giaddr for relayed
// packets, else the one containing the server's own address.
func (s *Server) subnetFor(req *dhcpv4.DHCPv4) (Subnet, bool) {
	key := s.opts.ServerIP
	if isSet(req.GatewayIPAddr) {
		key, _ = netip.AddrFromSlice(req.GatewayIPAddr.To4())
	}
	for _, sn := range s.opts.Subnets {
		if sn.Prefix.Contains(key) {
			return sn, true
		}
	}
	return Subnet{}, false
}

// excluded returns the Exclude function for a subnet's allocations.
func (s *Server) excluded(sn Subnet) func(netip.Addr) bool {
	now := s.opts.Now()
	return func(a netip.Addr) bool {
		if a == s.opts.ServerIP || a == sn.Router || a == sn.Prefix.Addr() {
			return true
		}
		if sn.Prefix.Bits() < 31 && a == lastAddr(sn.Prefix) {
			return true // broadcast address
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		d, ok := s.declined[a]
		if ok && !now.Before(d.until) {
			delete(s.declined, a)
			return false
		}
		return ok
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := be32(b) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func isSet(ip net.IP) bool {
	return ip != nil && !ip.IsUnspecified() && ip.To4() != nil
}
