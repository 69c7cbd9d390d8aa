package dhcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"anvil.dev/anvil/pxe"
)

// Errors returned by LeaseStore implementations.
var (
	// ErrNoLease: the MAC holds no lease, or not the address asked about.
	ErrNoLease = errors.New("dhcp: no such lease")
	// ErrPoolExhausted: every address of the range is leased or excluded.
	ErrPoolExhausted = errors.New("dhcp: address pool exhausted")
)

// Range is an inclusive range of IPv4 addresses, e.g. 10.0.0.100-10.0.0.199.
type Range struct {
	Start, End netip.Addr
}

// IsValid reports whether r is a non-empty IPv4 range.
func (r Range) IsValid() bool {
	return r.Start.Is4() && r.End.Is4() && r.Start.Compare(r.End) <= 0
}

// Contains reports whether a lies in r.
func (r Range) Contains(a netip.Addr) bool {
	return r.IsValid() && a.Is4() && r.Start.Compare(a) <= 0 && a.Compare(r.End) <= 0
}

// maxRangeSize bounds the linear scans of the reference stores.
const maxRangeSize = 1 << 16

func (r Range) size() int {
	s, e := r.Start.As4(), r.End.As4()
	return int(be32(e)-be32(s)) + 1
}

func be32(b [4]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Lease is one MAC's hold on one address.
type Lease struct {
	MAC     net.HardwareAddr
	IP      netip.Addr
	Expires time.Time
}

// AllocateRequest asks a LeaseStore for an address.
type AllocateRequest struct {
	MAC net.HardwareAddr
	// Range is the pool to allocate from.
	Range Range
	// Preferred is the address the client asked for (option 50) or had
	// before; honoured when it is in Range, not excluded and free.
	Preferred netip.Addr
	// TTL is how long the lease holds from now. The server asks for a
	// short hold when offering and the full lease time when acknowledging.
	TTL time.Duration
	// Exclude reports addresses that must never be handed out (the server
	// itself, the router, declined addresses). May be nil.
	Exclude func(netip.Addr) bool
}

// LeaseStore keeps dynamic leases, keyed by MAC. The DHCP server calls it on
// the hot path for hosts without a static address, and relies on these
// rules (implementations for other storage, e.g. the Kubernetes API, must
// keep them):
//
//   - One MAC holds at most one lease; one address is leased to at most one
//     MAC at a time. An address whose lease expired may be given to another
//     MAC; until then a MAC gets its old address back ("sticky" leases).
//   - A successful Allocate/Renew/Release is durable before it returns if
//     the store claims durability: after a restart no address is handed out
//     twice.
//   - All methods are safe for concurrent use.
type LeaseStore interface {
	// Get returns mac's lease, expired or not, or an error wrapping
	// ErrNoLease.
	Get(ctx context.Context, mac net.HardwareAddr) (Lease, error)
	// Allocate returns mac's current address if it lies in req.Range (its
	// expiry extended to at least now+TTL), otherwise reserves a free
	// address of the range for now+TTL. ErrPoolExhausted if none is free.
	Allocate(ctx context.Context, req AllocateRequest) (Lease, error)
	// Renew extends mac's lease on ip to now+ttl. It fails with ErrNoLease
	// unless ip is mac's leased address. A store may instead return the
	// lease it already holds durably when that ends sooner but still has a
	// good part of ttl left (index.LeaseStore skips the write then); the
	// server ACKs with the time the returned lease has left.
	Renew(ctx context.Context, mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) (Lease, error)
	// Release ends mac's lease now (the address stays associated with the
	// MAC for stickiness but may be given to others). No lease: no error.
	Release(ctx context.Context, mac net.HardwareAddr) error
}

// MemoryRenewer is implemented by lease stores that can answer some
// renewals without a durable write (index.LeaseStore: a persisted lease
// with enough time left; MemoryLeaseStore: every renewal). The server asks
// it first, on the workers that answer from memory, so that a REQUEST
// needing no write never queues behind other hosts' lease writes; only
// when it reports false does the REQUEST go to the write queue and Renew.
type MemoryRenewer interface {
	// RenewInMemory renews mac's lease on ip for ttl when that needs no
	// durable write and returns the lease (its Expires may be before
	// now+ttl, as with Renew). It reports false when Renew would write or
	// fail; it must not block on I/O.
	RenewInMemory(mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) (Lease, bool)
}

// OfferWriter is implemented by lease stores whose Renew waits for a slow
// durable write (index.LeaseStore: an API round trip). The server then
// starts that write as soon as it sends the OFFER, in the background on the
// write queue, instead of when the REQUEST comes: a PXE ROM collects offers
// for seconds before it asks, and under a boot storm those seconds are the
// difference between an ACK in time and a client giving up. The REQUEST
// waits for that write (it is parked, not queued again) and is then
// answered from memory. The cost: a client that takes another server's
// offer leaves a lease written for the TTL; its address stays sticky to its
// MAC, as it would after any boot.
type OfferWriter interface {
	// NeedsWrite reports whether Renew(mac, ip, ttl) would write now (mac
	// holds the offer of ip and no durable lease with enough time left).
	// It must not block on I/O.
	NeedsWrite(mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) bool
}

// LeaseStoreOptions configures the reference lease stores.
type LeaseStoreOptions struct {
	// Now returns the current time; default time.Now (tests inject a clock).
	Now func() time.Time
}

// leaseTable is the allocation logic shared by the memory and file stores.
// It is not synchronized; callers hold a lock.
type leaseTable struct {
	byMAC map[string]*Lease
	byIP  map[netip.Addr]*Lease
}

func newLeaseTable() *leaseTable {
	return &leaseTable{byMAC: map[string]*Lease{}, byIP: map[netip.Addr]*Lease{}}
}

func (t *leaseTable) clone() *leaseTable {
	c := newLeaseTable()
	for _, l := range t.byMAC {
		c.put(copyLease(*l))
	}
	return c
}

func copyLease(l Lease) Lease {
	l.MAC = append(net.HardwareAddr(nil), l.MAC...)
	return l
}

func (t *leaseTable) put(l Lease) {
	p := &l
	t.byMAC[pxe.MACKey(l.MAC)] = p
	t.byIP[l.IP] = p
}

func (t *leaseTable) remove(l *Lease) {
	delete(t.byMAC, pxe.MACKey(l.MAC))
	if t.byIP[l.IP] == l {
		delete(t.byIP, l.IP)
	}
}

func (t *leaseTable) get(mac net.HardwareAddr) (Lease, error) {
	l, ok := t.byMAC[pxe.MACKey(mac)]
	if !ok {
		return Lease{}, fmt.Errorf("%s: %w", mac, ErrNoLease)
	}
	return copyLease(*l), nil
}

// usable reports whether mac may take ip now.
func (t *leaseTable) usable(ip netip.Addr, mac net.HardwareAddr, req AllocateRequest, now time.Time) bool {
	if !req.Range.Contains(ip) || (req.Exclude != nil && req.Exclude(ip)) {
		return false
	}
	l, ok := t.byIP[ip]
	return !ok || pxe.MACKey(l.MAC) == pxe.MACKey(mac) || !l.Expires.After(now)
}

func (t *leaseTable) allocate(req AllocateRequest, now time.Time) (Lease, bool, error) {
	if len(req.MAC) == 0 {
		return Lease{}, false, errors.New("dhcp: allocate: empty MAC")
	}
	if !req.Range.IsValid() || req.Range.size() > maxRangeSize {
		return Lease{}, false, fmt.Errorf("dhcp: allocate: invalid range %v-%v", req.Range.Start, req.Range.End)
	}
	until := now.Add(req.TTL)
	if cur, ok := t.byMAC[pxe.MACKey(req.MAC)]; ok && t.usable(cur.IP, req.MAC, req, now) {
		changed := false
		if cur.Expires.Before(until) {
			cur.Expires = until
			changed = true
		}
		return copyLease(*cur), changed, nil
	}
	pick := netip.Addr{}
	if req.Preferred.IsValid() && t.usable(req.Preferred, req.MAC, req, now) {
		pick = req.Preferred
	}
	if !pick.IsValid() {
		// First choice: an address nobody ever held, so expired leases stay
		// with their previous owner as long as possible.
		var oldest *Lease
		for ip, n := req.Range.Start, 0; n < req.Range.size(); ip, n = ip.Next(), n+1 {
			if req.Exclude != nil && req.Exclude(ip) {
				continue
			}
			l, ok := t.byIP[ip]
			if !ok {
				pick = ip
				break
			}
			if !l.Expires.After(now) && (oldest == nil || l.Expires.Before(oldest.Expires)) {
				oldest = l
			}
		}
		if !pick.IsValid() && oldest != nil {
			pick = oldest.IP
		}
	}
	if !pick.IsValid() {
		return Lease{}, false, ErrPoolExhausted
	}
	if prev, ok := t.byIP[pick]; ok {
		t.remove(prev) // expired lease of another MAC, or our own
	}
	if cur, ok := t.byMAC[pxe.MACKey(req.MAC)]; ok {
		t.remove(cur)
	}
	l := Lease{MAC: append(net.HardwareAddr(nil), req.MAC...), IP: pick, Expires: until}
	t.put(l)
	return copyLease(l), true, nil
}

func (t *leaseTable) renew(mac net.HardwareAddr, ip netip.Addr, ttl time.Duration, now time.Time) (Lease, error) {
	cur, ok := t.byMAC[pxe.MACKey(mac)]
	if !ok || cur.IP != ip || t.byIP[ip] != cur {
		return Lease{}, fmt.Errorf("%s on %s: %w", ip, mac, ErrNoLease)
	}
	cur.Expires = now.Add(ttl)
	return copyLease(*cur), nil
}

func (t *leaseTable) release(mac net.HardwareAddr, now time.Time) bool {
	cur, ok := t.byMAC[pxe.MACKey(mac)]
	if !ok || !cur.Expires.After(now) {
		return false
	}
	cur.Expires = now
	return true
}

// MemoryLeaseStore is a LeaseStore in memory: fast, not durable. Use it for
// tests or when every host has a static address.
type MemoryLeaseStore struct {
	mu  sync.Mutex
	now func() time.Time
	t   *leaseTable
}

// NewMemoryLeaseStore returns an empty in-memory store.
func NewMemoryLeaseStore(opts LeaseStoreOptions) *MemoryLeaseStore {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &MemoryLeaseStore{now: opts.Now, t: newLeaseTable()}
}

// Get implements LeaseStore.
func (m *MemoryLeaseStore) Get(_ context.Context, mac net.HardwareAddr) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.get(mac)
}

// Allocate implements LeaseStore.
func (m *MemoryLeaseStore) Allocate(_ context.Context, req AllocateRequest) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, _, err := m.t.allocate(req, m.now())
	return l, err
}

// Renew implements LeaseStore.
func (m *MemoryLeaseStore) Renew(_ context.Context, mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.renew(mac, ip, ttl, m.now())
}

// RenewInMemory implements MemoryRenewer: nothing here is durable, so every
// valid renewal is answered.
func (m *MemoryLeaseStore) RenewInMemory(mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) (Lease, bool) {
	l, err := m.Renew(context.Background(), mac, ip, ttl)
	return l, err == nil
}

// Release implements LeaseStore.
func (m *MemoryLeaseStore) Release(_ context.Context, mac net.HardwareAddr) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.t.release(mac, m.now())
	return nil
}
