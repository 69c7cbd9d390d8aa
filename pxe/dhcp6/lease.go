package dhcp6

import (
	"errors"
	"hash/fnv"
	"net/netip"
	"sync"
	"time"
)

// errPoolFull: no free address in the range.
var errPoolFull = errors.New("dhcp6: no free address in the range")

// errReservedInUse: a Host's reserved address is leased to another MAC.
var errReservedInUse = errors.New("dhcp6: the reserved address is leased to another client")

// leaseStore keeps IA_NA leases in memory (not durable: a restart forgets
// them, and a client then gets its address again only if it is still free).
// A lease belongs to the host's MAC, so the firmware's DUID and iPXE's
// (DUID-UUID, a different one) get the same address; each client's
// DUID+IAID is remembered to find the MAC of a later message that carries
// no MAC (a Renew from a DUID-UUID client off-link).
type leaseStore struct {
	mu       sync.Mutex
	r        Range
	now      func() time.Time
	byMAC    map[string]*lease
	byAddr   map[netip.Addr]string
	byClient map[string]string // clientKey -> MAC
}

type lease struct {
	addr    netip.Addr
	expires time.Time
	clients []string // clientKeys that hold it
	// replied: a Reply (not only an Advertise) gave it, so the host
	// uses it; only then does AddressOf bind the MAC's boot to it.
	replied bool
	// reported is the address and expiry OnBound was last told of.
	reportedAddr netip.Addr
	reported     time.Time
}

func newLeaseStore(r Range, now func() time.Time) *leaseStore {
	return &leaseStore{r: r, now: now, byMAC: map[string]*lease{}, byAddr: map[netip.Addr]string{}, byClient: map[string]string{}}
}

// clientKey is a client's DUID and IAID, the identity RFC 8415 keys an
// IA_NA on.
func clientKey(duid []byte, iaid [4]byte) string {
	return string(duid) + "\x00" + string(iaid[:])
}

// macOf returns the MAC a DUID+IAID was last seen for.
func (s *leaseStore) macOf(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.byClient[key]
	return m, ok
}

// acquire returns the address of mac's lease, allocating one when it has
// none, and holds it for ttl (an Advertise holds it briefly, a Reply for
// the lease time). The search for a new address starts at a point hashed
// from the MAC, so a host tends to get the same address after a restart
// of the server. A valid reserved address (the Host's spec.network.address6)
// is the lease instead, replacing one of the range the MAC held.
func (s *leaseStore) acquire(mac, key string, ttl time.Duration, replied bool, reserved netip.Addr) (netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	l, ok := s.byMAC[mac]
	if reserved.IsValid() && (!ok || l.addr != reserved) {
		if owner, taken := s.byAddr[reserved]; taken && owner != mac {
			if o := s.byMAC[owner]; o != nil && !now.After(o.expires) {
				return netip.Addr{}, errReservedInUse
			}
			s.drop(owner)
		}
		if ok {
			s.drop(mac) // its address of the range goes back
		}
		l, ok = &lease{addr: reserved}, true
		s.byMAC[mac] = l
		s.byAddr[reserved] = mac
	}
	if !ok {
		a, err := s.allocate(mac, now)
		if err != nil {
			return netip.Addr{}, err
		}
		l = &lease{addr: a}
		s.byMAC[mac] = l
		s.byAddr[a] = mac
	}
	if exp := now.Add(ttl); exp.After(l.expires) {
		l.expires = exp
	}
	l.replied = l.replied || replied
	if old, ok := s.byClient[key]; !ok || old != mac {
		s.byClient[key] = mac
		l.clients = append(l.clients, key)
	}
	return l.addr, nil
}

// allocate picks a free (or expired) address; called with mu held.
func (s *leaseStore) allocate(mac string, now time.Time) (netip.Addr, error) {
	n := s.r.size()
	h := fnv.New32a()
	h.Write([]byte(mac))
	start := int(h.Sum32() % uint32(n))
	for i := range n {
		a := s.r.at((start + i) % n)
		owner, taken := s.byAddr[a]
		if !taken {
			return a, nil
		}
		if l := s.byMAC[owner]; l == nil || now.After(l.expires) {
			s.drop(owner)
			return a, nil
		}
	}
	return netip.Addr{}, errPoolFull
}

// drop removes mac's lease; called with mu held.
func (s *leaseStore) drop(mac string) {
	l, ok := s.byMAC[mac]
	if !ok {
		return
	}
	for _, k := range l.clients {
		if s.byClient[k] == mac {
			delete(s.byClient, k)
		}
	}
	delete(s.byAddr, l.addr)
	delete(s.byMAC, mac)
}

// owns reports whether a is mac's unexpired lease.
func (s *leaseStore) owns(mac string, a netip.Addr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.byMAC[mac]
	return ok && l.addr == a && !s.now().After(l.expires)
}

// seed restores a lease (Options.Restore) as replied and reported; it
// reports whether it was taken.
func (s *leaseStore) seed(mac string, a netip.Addr, expires time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.r.Contains(a) || !expires.After(s.now()) {
		return false
	}
	if _, taken := s.byAddr[a]; taken {
		return false
	}
	if _, has := s.byMAC[mac]; has {
		return false
	}
	s.byMAC[mac] = &lease{addr: a, expires: expires, replied: true, reportedAddr: a, reported: expires}
	s.byAddr[a] = mac
	return true
}

// toReport returns mac's replied lease if OnBound should hear of it: new,
// moved, or its expiry moved by more than quantum since last reported. It
// marks it reported.
func (s *leaseStore) toReport(mac string, quantum time.Duration) (netip.Addr, time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.byMAC[mac]
	if !ok || !l.replied {
		return netip.Addr{}, time.Time{}, false
	}
	d := l.expires.Sub(l.reported)
	if l.reportedAddr == l.addr && d <= quantum && d >= -quantum {
		return netip.Addr{}, time.Time{}, false
	}
	l.reportedAddr, l.reported = l.addr, l.expires
	return l.addr, l.expires, true
}

// addressOf returns mac's unexpired lease that a Reply gave.
func (s *leaseStore) addressOf(mac string) (netip.Addr, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.byMAC[mac]
	if !ok || !l.replied || s.now().After(l.expires) {
		return netip.Addr{}, false
	}
	return l.addr, true
}

// release ends mac's lease of a (a Release).
func (s *leaseStore) release(mac string, a netip.Addr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.byMAC[mac]; ok && l.addr == a {
		s.drop(mac)
		return true
	}
	return false
}
