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

// flight is one MAC's lease write, from the moment it is queued until it
// returns. A REQUEST for the same address that arrives meanwhile (the
// client's retransmission, or the firmware's REQUEST after the write its
// OFFER started) starts no second write and takes no queue slot: it waits
// here, only the latest copy, and is answered when the write returns,
// from memory if the write succeeded, else by a write of its own.
type flight struct {
	ip     netip.Addr
	parked *packet
}

// beginWrite registers a lease write of ip for mac. It reports false when
// mac has a write queued or in flight already.
func (s *Server) beginWrite(mac string, ip netip.Addr) bool {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, busy := s.writing[mac]; busy {
		return false
	}
	s.writing[mac] = &flight{ip: ip}
	return true
}

// joinWrite parks p on mac's write of ip if one is queued or in flight
// and reports whether it did; replaced is the older copy it displaced.
func (s *Server) joinWrite(mac string, ip netip.Addr, p packet) (joined bool, replaced *packet) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	f, busy := s.writing[mac]
	if !busy || f.ip != ip {
		return false, nil
	}
	p.flight = ""
	replaced, f.parked = f.parked, &p
	return true, replaced
}

// endWrite ends mac's write and returns the REQUEST parked on it, if any.
func (s *Server) endWrite(mac string) *packet {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	f := s.writing[mac]
	delete(s.writing, mac)
	if f == nil {
		return nil
	}
	return f.parked
}
