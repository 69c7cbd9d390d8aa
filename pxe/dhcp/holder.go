package dhcp

import (
	"bytes"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"anvil.dev/anvil/pxe"
)

// What binds a RELEASE or DECLINE to the client that holds the lease.
//
// DHCP has no authentication: chaddr, ciaddr, xid and the server
// identifier are all fields anyone on the segment can fill in, and xid
// cannot bind either message anyway (RFC 2131 lets the client pick a new
// one for both, and udhcpc and dhclient do). What the server can check is
// where the frame came from:
//
//   - RELEASE is honoured only when its Ethernet frame, as the server's own
//     interface received it (a packet socket, frameConn), has chaddr as
//     its source address, it was not relayed (giaddr unset), ciaddr is the
//     address leased to chaddr and the server identifier, if present, is
//     ours. Anything else (another MAC, a relay or router in between, no
//     packet socket) is dropped and counted
//     (anvil_dhcp_packets_dropped_total{reason="release_not_from_holder"});
//     the lease then simply runs until it expires, which costs an address
//     for at most the lease time and nothing else: leases stay with their
//     MAC anyway.
//   - DECLINE is honoured only for the address this server offered or
//     acknowledged to chaddr in its latest exchange, within declineWindow
//     of it, once per exchange, from the same source: a frame from chaddr
//     on a direct segment, the same relay (giaddr) on a relayed one. It
//     never ends the lease (a boot's binding stays until the client itself
//     moves to another address); it only keeps the address out of the pool
//     for declineHoldTime, at most maxDeclinesPerClient addresses per MAC
//     and a quarter of the range in all (the oldest hold gives way).
//
// What a spoofer can still do: one that also forges its Ethernet source
// address (takes the victim's MAC) is the victim as far as DHCP can tell,
// and can release its lease or decline its address; behind a relay the
// relay's address is all there is, so any host behind the same relay can
// decline the address of an exchange it saw. Neither hands the victim's
// address to anyone else before its lease runs out.
const (
	declineWindow        = time.Minute
	maxDeclinesPerClient = 2
	// maxExchanges bounds the table of latest exchanges (one per MAC the
	// server answered; only accepted Hosts' MACs get answers).
	maxExchanges = 1 << 16
)

// lastExchange is the latest OFFER or ACK of an address to a MAC.
type lastExchange struct {
	ip       netip.Addr
	relay    netip.Addr // giaddr of the exchange; zero when direct
	at       time.Time
	declined bool
}

// declined is an address held out of the pool after a DECLINE.
type declined struct {
	until time.Time
	mac   string
}

func giaddr(req *dhcpv4.DHCPv4) netip.Addr {
	if !isSet(req.GatewayIPAddr) {
		return netip.Addr{}
	}
	a, _ := netip.AddrFromSlice(req.GatewayIPAddr.To4())
	return a
}

// noteExchange records that ip was offered or acknowledged to the client
// of req (see declineFrom).
func (s *Server) noteExchange(req *dhcpv4.DHCPv4, ip netip.Addr) {
	now := s.opts.Now()
	key := pxe.MACKey(req.ClientHWAddr)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.exchanges[key]; !ok && len(s.exchanges) >= maxExchanges {
		for k, e := range s.exchanges {
			if now.Sub(e.at) > declineWindow {
				delete(s.exchanges, k)
			}
		}
		if len(s.exchanges) >= maxExchanges {
			return // its DECLINE will be refused; nothing else depends on it
		}
	}
	s.exchanges[key] = lastExchange{ip: ip, relay: giaddr(req), at: now}
}

// frameFromClient reports whether a message came, in an Ethernet frame the
// server received itself, from chaddr and not through a relay.
func frameFromClient(req *dhcpv4.DHCPv4, l2src net.HardwareAddr) bool {
	return l2src != nil && !isSet(req.GatewayIPAddr) && bytes.Equal(l2src, req.ClientHWAddr)
}

// releaseFrom returns "" when a RELEASE can be bound to the client holding
// chaddr's lease (see above), else the drop reason.
func (s *Server) releaseFrom(req *dhcpv4.DHCPv4, l2src net.HardwareAddr) string {
	if !frameFromClient(req, l2src) {
		return "release_not_from_holder"
	}
	return ""
}

// declineFrom returns "" and consumes the exchange when a DECLINE of ip
// matches chaddr's latest exchange (see above), else the drop reason.
func (s *Server) declineFrom(req *dhcpv4.DHCPv4, ip netip.Addr, l2src net.HardwareAddr) string {
	now := s.opts.Now()
	key := pxe.MACKey(req.ClientHWAddr)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.exchanges[key]
	if !ok || e.ip != ip || e.declined || now.Sub(e.at) > declineWindow {
		return "decline_not_offered"
	}
	switch {
	case isSet(req.GatewayIPAddr) || e.relay.IsValid():
		if giaddr(req) != e.relay {
			return "decline_not_from_client"
		}
	case s.frames != nil && !frameFromClient(req, l2src):
		// Without a packet socket (not Linux, no CAP_NET_RAW) the exchange
		// is all there is to check.
		return "decline_not_from_client"
	}
	e.declined = true
	s.exchanges[key] = e
	return ""
}

// holdDeclined keeps ip out of sn's pool for declineHoldTime, within the
// bounds above.
func (s *Server) holdDeclined(ip netip.Addr, mac string, sn Subnet) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for a, d := range s.declined {
		if !now.Before(d.until) || a == ip {
			delete(s.declined, a)
		}
	}
	s.evictOldestLocked(maxDeclinesPerClient, func(_ netip.Addr, d declined) bool { return d.mac == mac })
	s.evictOldestLocked(max(1, sn.Range.size()/4), func(a netip.Addr, _ declined) bool { return sn.Range.Contains(a) })
	s.declined[ip] = declined{until: now.Add(declineHoldTime), mac: mac}
}

// evictOldestLocked drops the oldest holds matching f until fewer than
// limit match.
func (s *Server) evictOldestLocked(limit int, f func(netip.Addr, declined) bool) {
	for {
		n, oldest := 0, netip.Addr{}
		for a, d := range s.declined {
			if f(a, d) {
				n++
				if !oldest.IsValid() || d.until.Before(s.declined[oldest].until) {
					oldest = a
				}
			}
		}
		if n < limit {
			return
		}
		delete(s.declined, oldest)
	}
}
