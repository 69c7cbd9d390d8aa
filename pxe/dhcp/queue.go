package dhcp

import (
	"net/netip"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// queueKind names the two worker pools (see Options.Workers).
type queueKind string

const (
	// DISCOVER, INFORM, REQUEST, proxy mode: answered from memory. A
	// REQUEST that needs a lease write moves on to the write queue.
	queueMemory queueKind = "memory"
	// RELEASE, DECLINE, unknown, and REQUESTs that need a lease write.
	queueWrite queueKind = "write"
)

// peekType returns the DHCP message type (option 53) of a raw packet
// without parsing it, so the read loop can pick a queue cheaply. It returns
// MessageTypeNone when the packet is too short, lacks the magic cookie or
// carries option 53 only in an overloaded sname/file field; such packets
// go to the write queue, whose workers handle every type.
func peekType(b []byte) dhcpv4.MessageType {
	const optStart = 240 // fixed BOOTP header (236) + magic cookie (4)
	if len(b) < optStart || b[236] != 99 || b[237] != 130 || b[238] != 83 || b[239] != 99 {
		return dhcpv4.MessageTypeNone
	}
	for i := optStart; i < len(b); {
		code := b[i]
		switch code {
		case 0: // pad
			i++
			continue
		case 255: // end
			return dhcpv4.MessageTypeNone
		}
		if i+1 >= len(b) {
			return dhcpv4.MessageTypeNone
		}
		n := int(b[i+1])
		if i+2+n > len(b) {
			return dhcpv4.MessageTypeNone
		}
		if code == 53 && n == 1 {
			return dhcpv4.MessageType(b[i+2])
		}
		i += 2 + n
	}
	return dhcpv4.MessageTypeNone
}

// queueFor picks the pool for a packet of type mt.
func (s *Server) queueFor(mt dhcpv4.MessageType) queueKind {
	if s.opts.Mode == ModeProxy {
		return queueMemory // proxy mode hands out no addresses: nothing is written
	}
	switch mt {
	case dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeInform, dhcpv4.MessageTypeRequest:
		return queueMemory
	}
	return queueWrite
}

// writingNow reports whether mac's lease write of ip is in flight.
func (s *Server) writingNow(mac string, ip netip.Addr) bool {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	cur, busy := s.writing[mac]
	return busy && cur == ip
}

// beginWrite marks mac's lease write of ip as in flight. It reports false
// when a write of the same address for the same MAC is already in flight:
// the caller then drops its packet (a retransmission; the first write's
// ACK answers it), so a client's retries never stack writes on a slow API
// server. done must be called when the write returns.
func (s *Server) beginWrite(mac string, ip netip.Addr) (done func(), ok bool) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if cur, busy := s.writing[mac]; busy && cur == ip {
		return nil, false
	}
	s.writing[mac] = ip
	return func() {
		s.wmu.Lock()
		defer s.wmu.Unlock()
		if s.writing[mac] == ip {
			delete(s.writing, mac)
		}
	}, true
}
