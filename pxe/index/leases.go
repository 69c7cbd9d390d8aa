package index

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts/status,verbs=patch,roleName=anvil-pxe

// LeaseStoreOptions configures a LeaseStore.
type LeaseStoreOptions struct {
	// Index supplies every Host's leases and static addresses. Required.
	Index *Index
	// Client writes Host status (merge patch). Required.
	Client client.Client
	// APIReader re-reads a Host after a write conflict (uncached, so the
	// retry does not hit the same stale copy). Default: Client.
	APIReader client.Reader
	// FieldOwner of the status writes (the field manager of
	// status.leases, api/v1alpha1/STATUS.md). Default "anvil-dhcp".
	FieldOwner string
	// ExpiryRounding rounds persisted expiry times up (at least to the
	// second, as the API stores them). A renewal that the persisted
	// expiry already covers needs no write, so the PXE ROM's, iPXE's and
	// the OS's DHCP exchanges within one rounding step cost one write.
	// Default 1 minute.
	ExpiryRounding time.Duration
	// ReuseThreshold: a Renew of the address a MAC already holds durably
	// writes nothing while the persisted lease has at least this fraction
	// of the asked TTL left; the DHCP server then ACKs with the time left
	// (as Kea's lease caching does), so the client renews at half of it,
	// before the persisted expiry. With the default 0.5 one boot (PXE ROM,
	// iPXE, the OS, each with its own DHCP exchange) costs one write, not
	// one per exchange: under a boot storm the lease writes are most of the
	// API server's load. 1 writes unless the persisted expiry covers
	// now+TTL (then only ExpiryRounding saves writes). Values outside
	// (0, 1] mean the default.
	ReuseThreshold float64
	// MaxConflictRetries bounds the re-read-and-retry loop. Default 5.
	MaxConflictRetries int
	Now                func() time.Time
	Logger             logr.Logger
}

// LeaseStore is a dhcp.LeaseStore that keeps leases in Host.status.leases,
// so a restarted (or another) DHCP server never hands an address to a
// second MAC.
//
// Decisions are made from memory: the Index's view of every Host's leases
// and static addresses, plus this store's own recent changes that the
// informer has not delivered yet. Which writes happen, and when:
//
//   - Allocate (DISCOVER, and INIT-REBOOT before the ACK) never writes: an
//     offer is a short hold kept in memory. Losing it in a restart only
//     means the client's REQUEST is checked again against the durable
//     leases.
//   - Renew (REQUEST, before the ACK) writes the lease to the Host's status
//     and returns only once the API server has accepted it: write-ahead,
//     so no ACK is ever sent for a lease that a restart could forget. The
//     DHCP server calls it for an offered address already when it sends
//     the OFFER (dhcp.OfferWriter, NeedsWrite), so the API round trip runs
//     while the PXE ROM collects offers; the REQUEST then finds the lease
//     durable, or waits for that write to end. A renewal of an address
//     whose persisted lease still has enough time left (ReuseThreshold) is
//     answered from memory with that lease, and its shorter expiry.
//   - Release (RELEASE/DECLINE, no reply) writes the expiry as now.
//
// Writes are JSON patches that test status.leases for the list the change
// was computed from and then replace it (see persist): a concurrent change
// of the leases (another boot MAC's lease, another server) fails the test
// instead of being lost, and the store re-reads the Host and retries with
// the resourceVersion as precondition; a concurrent write of any other
// field of the Host does not disturb it.
//
// Several DHCP servers on one segment (the DaemonSet on every node) see
// each other's leases through the informer only after a short delay. Two of
// them could offer one address to two MACs in that window; Renew refuses an
// address another MAC holds durably (the client gets a NAK and starts
// over), which catches most of it, but for dynamic ranges run one
// full-mode server per segment or give each its own range. Static
// addresses (Host.spec.network) are always safe.
type LeaseStore struct {
	opts LeaseStoreOptions
	ix   *Index
	log  logr.Logger

	mu       sync.Mutex
	local    map[string]*localLease // by MAC: offers, writes in flight, writes not yet seen by the informer
	localIPs map[netip.Addr]string  // address -> MAC of its local entry
}

type localLease struct {
	lease   dhcp.Lease
	durable bool // written to the API server
	pending bool // write in flight: the address is reserved, not yet durable
}

var (
	_ dhcp.LeaseStore  = (*LeaseStore)(nil)
	_ dhcp.OfferWriter = (*LeaseStore)(nil)
)

// NewLeaseStore returns a LeaseStore over the Index.
func NewLeaseStore(opts LeaseStoreOptions) (*LeaseStore, error) {
	if opts.Index == nil || opts.Client == nil {
		return nil, errors.New("index: LeaseStoreOptions needs Index and Client")
	}
	if opts.APIReader == nil {
		opts.APIReader = opts.Client
	}
	if opts.FieldOwner == "" {
		opts.FieldOwner = "anvil-dhcp"
	}
	if opts.ExpiryRounding < time.Second {
		opts.ExpiryRounding = time.Minute
	}
	if opts.MaxConflictRetries <= 0 {
		opts.MaxConflictRetries = 5
	}
	if opts.ReuseThreshold <= 0 || opts.ReuseThreshold > 1 {
		opts.ReuseThreshold = 0.5
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &LeaseStore{
		opts: opts, ix: opts.Index, log: opts.Logger.WithName("leases"),
		local: map[string]*localLease{}, localIPs: map[netip.Addr]string{},
	}, nil
}

// roundUp returns the first multiple of g at or after t.
func roundUp(t time.Time, g time.Duration) time.Time {
	r := t.Truncate(g)
	if r.Before(t) {
		r = r.Add(g)
	}
	return r
}

func copyLease(l dhcp.Lease) dhcp.Lease {
	l.MAC = slices.Clone(l.MAC)
	return l
}

// setLocalLocked replaces mac's local entry (nil removes it).
func (s *LeaseStore) setLocalLocked(mac string, e *localLease) {
	if old, ok := s.local[mac]; ok && s.localIPs[old.lease.IP] == mac {
		delete(s.localIPs, old.lease.IP)
	}
	if e == nil {
		delete(s.local, mac)
		return
	}
	// Another MAC's expired local entry on this address is void now.
	if other, ok := s.localIPs[e.lease.IP]; ok && other != mac {
		delete(s.local, other)
	}
	s.local[mac] = e
	s.localIPs[e.lease.IP] = mac
}

// effectiveLocked is mac's current lease: the local entry while it is
// newer than what the informer shows, else the Host status. Callers hold
// s.mu and s.ix.mu (read).
func (s *LeaseStore) effectiveLocked(mac string, now time.Time) (l dhcp.Lease, durable, ok bool) {
	d, dok := s.ix.durableLeaseLocked(mac)
	if e, ok := s.local[mac]; ok {
		switch {
		case e.pending:
			return e.lease, false, true
		case e.durable && dok && d.IP == e.lease.IP && !d.Expires.Before(e.lease.Expires):
			s.setLocalLocked(mac, nil) // the informer caught up
		case e.durable && dok && d.Expires.After(e.lease.Expires):
			s.setLocalLocked(mac, nil) // written since by someone else (another server): the API wins
		case !e.durable && dok && !e.lease.Expires.After(now):
			s.setLocalLocked(mac, nil) // an offer ran out; the durable lease stands
		default:
			return e.lease, e.durable, true
		}
	}
	if dok {
		return d, true, true
	}
	return dhcp.Lease{}, false, false
}

// otherLocalLocked reports whether another MAC has a local entry on ip, and
// until when.
func (s *LeaseStore) otherLocalLocked(ip netip.Addr, mac string) (until time.Time, held bool) {
	m, ok := s.localIPs[ip]
	if !ok || m == mac {
		return time.Time{}, false
	}
	e := s.local[m]
	return e.lease.Expires, true
}

// takenLocked reports whether ip is unavailable to mac: a static address,
// or another MAC's unexpired lease (durable or local).
func (s *LeaseStore) takenLocked(ip netip.Addr, mac string, now time.Time) bool {
	if s.ix.staticLocked(ip) || s.ix.heldByOtherLocked(ip, mac, now) {
		return true
	}
	until, held := s.otherLocalLocked(ip, mac)
	return held && until.After(now)
}

// readLocked runs f with s.mu and s.ix.mu (read) held: the reads that
// answer from memory.
func (s *LeaseStore) readLocked(f func(now time.Time)) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ix.mu.RLock()
	defer s.ix.mu.RUnlock()
	f(now)
}

// Get implements dhcp.LeaseStore.
func (s *LeaseStore) Get(_ context.Context, mac net.HardwareAddr) (l dhcp.Lease, err error) {
	key := pxe.MACKey(mac)
	s.readLocked(func(now time.Time) {
		cur, _, ok := s.effectiveLocked(key, now)
		if !ok {
			err = fmt.Errorf("%s: %w", key, dhcp.ErrNoLease)
			return
		}
		l = copyLease(cur)
	})
	return l, err
}

// Allocate implements dhcp.LeaseStore. It only reserves in memory (an
// offer); see LeaseStore.
func (s *LeaseStore) Allocate(_ context.Context, req dhcp.AllocateRequest) (dhcp.Lease, error) {
	if len(req.MAC) == 0 {
		return dhcp.Lease{}, errors.New("index: allocate: empty MAC")
	}
	if !req.Range.IsValid() || rangeSize(req.Range) > 1<<16 {
		return dhcp.Lease{}, fmt.Errorf("index: allocate: invalid range %v-%v", req.Range.Start, req.Range.End)
	}
	key := pxe.MACKey(req.MAC)
	hw := slices.Clone(req.MAC)
	now := s.opts.Now()
	until := now.Add(req.TTL)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ix.mu.RLock()
	defer s.ix.mu.RUnlock()

	excluded := func(ip netip.Addr) bool {
		return !req.Range.Contains(ip) || (req.Exclude != nil && req.Exclude(ip)) || s.ix.staticLocked(ip)
	}
	usable := func(ip netip.Addr) bool { return !excluded(ip) && !s.takenLocked(ip, key, now) }

	if cur, _, ok := s.effectiveLocked(key, now); ok && usable(cur.IP) {
		if cur.Expires.Before(until) {
			cur = dhcp.Lease{MAC: hw, IP: cur.IP, Expires: until}
			s.setLocalLocked(key, &localLease{lease: cur})
		}
		return copyLease(cur), nil
	}
	pick := netip.Addr{}
	if req.Preferred.IsValid() && usable(req.Preferred) {
		pick = req.Preferred
	}
	if !pick.IsValid() {
		// First choice: an address no other MAC ever held, so expired
		// leases stay with their previous owner as long as possible; else
		// the one that expired longest ago.
		var oldest netip.Addr
		var oldestUntil time.Time
		for ip, n := req.Range.Start, 0; n < rangeSize(req.Range); ip, n = ip.Next(), n+1 {
			if excluded(ip) {
				continue
			}
			until, held := s.heldUntilLocked(ip, key)
			if !held {
				pick = ip
				break
			}
			if !until.After(now) && (!oldest.IsValid() || until.Before(oldestUntil)) {
				oldest, oldestUntil = ip, until
			}
		}
		if !pick.IsValid() {
			pick = oldest
		}
	}
	if !pick.IsValid() {
		return dhcp.Lease{}, dhcp.ErrPoolExhausted
	}
	l := dhcp.Lease{MAC: hw, IP: pick, Expires: until}
	s.setLocalLocked(key, &localLease{lease: l})
	return copyLease(l), nil
}

// heldUntilLocked reports whether a MAC other than mac has (or had) ip,
// and the latest expiry.
func (s *LeaseStore) heldUntilLocked(ip netip.Addr, mac string) (time.Time, bool) {
	var latest time.Time
	held := false
	for _, r := range s.ix.leaseIPs[ip] {
		if r.mac != mac {
			held = true
			if r.expires.After(latest) {
				latest = r.expires
			}
		}
	}
	if until, ok := s.otherLocalLocked(ip, mac); ok {
		held = true
		if until.After(latest) {
			latest = until
		}
	}
	return latest, held
}

func rangeSize(r dhcp.Range) int {
	s, e := r.Start.As4(), r.End.As4()
	be := func(b [4]byte) uint32 { return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) }
	return int(be(e)-be(s)) + 1
}

// Renew implements dhcp.LeaseStore. It returns once the lease is durable in
// the Host's status, or at once with the persisted lease when that has at
// least ReuseThreshold of ttl left (its Expires may then be before
// now+ttl; the server ACKs with the time left).
func (s *LeaseStore) Renew(ctx context.Context, mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) (dhcp.Lease, error) {
	key := pxe.MACKey(mac)
	now := s.opts.Now()
	want := now.Add(ttl)
	s.mu.Lock()
	s.ix.mu.RLock()
	cur, _, ok := s.effectiveLocked(key, now)
	var conflict bool
	if ok && cur.IP == ip {
		// Another server may have given the address to another MAC
		// meanwhile (see LeaseStore): refuse rather than share it.
		conflict = s.takenLocked(ip, key, now)
	}
	owner := s.ix.ownerLocked(key)
	var base *metalv1.Host
	var hostKey types.NamespacedName
	if owner != nil {
		base, hostKey = owner.obj, owner.key
	}
	fresh, isFresh := s.freshLocked(key, ip, ttl, now)
	s.ix.mu.RUnlock()
	switch {
	case !ok || cur.IP != ip:
		s.mu.Unlock()
		return dhcp.Lease{}, fmt.Errorf("%s on %s: %w", ip, key, dhcp.ErrNoLease)
	case conflict:
		s.mu.Unlock()
		s.log.Info("address is leased to another MAC (another DHCP server?); refusing", "mac", key, "ip", ip.String())
		return dhcp.Lease{}, fmt.Errorf("%s on %s: held by another MAC: %w", ip, key, dhcp.ErrNoLease)
	case owner == nil:
		s.mu.Unlock()
		return dhcp.Lease{}, fmt.Errorf("index: no Host has boot MAC %s", key)
	}
	if isFresh {
		s.mu.Unlock()
		return fresh, nil
	}
	entry := &localLease{lease: dhcp.Lease{MAC: slices.Clone(mac), IP: ip, Expires: roundUp(want, s.opts.ExpiryRounding)}, pending: true}
	prev := s.local[key]
	s.setLocalLocked(key, entry) // reserves the address while the write is in flight
	s.mu.Unlock()

	err := s.persist(ctx, hostKey, base, key, ip, entry.lease.Expires)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.local[key] == entry {
		if err != nil {
			s.setLocalLocked(key, prev)
		} else {
			entry.pending, entry.durable = false, true
		}
	}
	if err != nil {
		return dhcp.Lease{}, err
	}
	return copyLease(entry.lease), nil
}

// RenewInMemory implements dhcp.MemoryRenewer: the lease Renew would return
// without a write (a durable lease on ip with ReuseThreshold of ttl left),
// so the DHCP server answers iPXE's and the OS's REQUESTs without queueing
// them behind other hosts' lease writes.
func (s *LeaseStore) RenewInMemory(mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) (l dhcp.Lease, ok bool) {
	key := pxe.MACKey(mac)
	s.readLocked(func(now time.Time) {
		cur, _, has := s.effectiveLocked(key, now)
		if !has || cur.IP != ip || s.takenLocked(ip, key, now) || s.ix.ownerLocked(key) == nil {
			return // Renew decides (and refuses)
		}
		l, ok = s.freshLocked(key, ip, ttl, now)
	})
	return l, ok
}

// NeedsWrite implements dhcp.OfferWriter: mac holds ip (the offer just
// made) and Renew would write it, because no durable lease of ip has
// ReuseThreshold of ttl left.
func (s *LeaseStore) NeedsWrite(mac net.HardwareAddr, ip netip.Addr, ttl time.Duration) (need bool) {
	key := pxe.MACKey(mac)
	s.readLocked(func(now time.Time) {
		cur, _, has := s.effectiveLocked(key, now)
		if !has || cur.IP != ip || s.takenLocked(ip, key, now) || s.ix.ownerLocked(key) == nil {
			return // Renew would refuse: nothing to write ahead
		}
		_, fresh := s.freshLocked(key, ip, ttl, now)
		need = !fresh
	})
	return need
}

// freshLocked returns mac's durable lease on ip (from the Host status, or
// this store's write the informer has not delivered yet) when it has at
// least ReuseThreshold of ttl left: a renewal then needs no write. Callers
// hold s.mu and s.ix.mu (read).
func (s *LeaseStore) freshLocked(key string, ip netip.Addr, ttl time.Duration, now time.Time) (dhcp.Lease, bool) {
	fresh := func(exp time.Time) bool {
		return float64(exp.Sub(now)) >= s.opts.ReuseThreshold*float64(ttl) && exp.After(now)
	}
	if d, ok := s.ix.durableLeaseLocked(key); ok && d.IP == ip && fresh(d.Expires) {
		return copyLease(d), true
	}
	if e, ok := s.local[key]; ok && e.durable && e.lease.IP == ip && fresh(e.lease.Expires) {
		return copyLease(e.lease), true
	}
	return dhcp.Lease{}, false
}

// Release implements dhcp.LeaseStore: the lease expires now (and stays
// with the MAC for stickiness).
func (s *LeaseStore) Release(ctx context.Context, mac net.HardwareAddr) error {
	key := pxe.MACKey(mac)
	now := s.opts.Now()
	s.mu.Lock()
	s.ix.mu.RLock()
	cur, durable, ok := s.effectiveLocked(key, now)
	owner := s.ix.ownerLocked(key)
	s.ix.mu.RUnlock()
	if !ok || !cur.Expires.After(now) {
		s.mu.Unlock()
		return nil
	}
	if !durable || owner == nil {
		// An offer (or a write in flight): memory only.
		if e, ok := s.local[key]; ok && !e.pending {
			e.lease.Expires = now
		}
		s.mu.Unlock()
		return nil
	}
	until := now.Truncate(time.Second) // the API keeps seconds; earlier is safe for a release
	entry := &localLease{lease: dhcp.Lease{MAC: slices.Clone(mac), IP: cur.IP, Expires: until}, pending: true}
	prev := s.local[key]
	s.setLocalLocked(key, entry)
	base, hostKey := owner.obj, owner.key
	s.mu.Unlock()

	err := s.persist(ctx, hostKey, base, key, cur.IP, until)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.local[key] == entry {
		if err != nil {
			s.setLocalLocked(key, prev)
		} else {
			entry.pending, entry.durable = false, true
		}
	}
	return err
}

// AddressOf returns the address mac is bound to: the Host's static address,
// else its unexpired durable lease. The config and agent endpoints use it to
// check that a request comes from the address DHCP gave that MAC.
func (s *LeaseStore) AddressOf(mac net.HardwareAddr) (netip.Addr, bool) {
	key := pxe.MACKey(mac)
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ix.mu.RLock()
	defer s.ix.mu.RUnlock()
	if o := s.ix.ownerLocked(key); o != nil && o.rec.IP.IsValid() {
		return o.rec.IP.Addr(), true
	}
	l, durable, ok := s.effectiveLocked(key, now)
	if !ok || !durable || !l.Expires.After(now) {
		return netip.Addr{}, false
	}
	return l.IP, true
}

// persist writes mac's lease into the Host's status. The write is a JSON
// patch that tests status.leases for the list it was computed from and
// replaces it: the API server applies it to the Host as it stands, so a
// concurrent write of any other field (the controllers' state and power
// updates, all through a boot storm) costs no conflict, no re-read and no
// second request, while a concurrent change of the leases themselves (a
// second DHCP server) still fails it (see statusapply.CASPatch). A failed
// test (422) falls back to the merge patch with the resourceVersion as
// precondition, re-reading the Host on each conflict.
func (s *LeaseStore) persist(ctx context.Context, key types.NamespacedName, base *metalv1.Host, mac string, ip netip.Addr, until time.Time) error {
	err := casWrite(ctx, s.opts.Client, s.opts.APIReader, base, "leases", s.opts.FieldOwner, s.opts.MaxConflictRetries, func(h *metalv1.Host) error {
		if !setLease(h, mac, ip, until) {
			return fmt.Errorf("index: Host %s no longer lists boot MAC %s", key, mac)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: writing the lease of %s to Host %s: %w", mac, key, err)
	}
	s.log.V(1).Info("lease written", "host", key.String(), "mac", mac, "ip", ip.String(), "expires", until.UTC().Format(time.RFC3339))
	return nil
}

// casWrite writes what set does to base's status member (a top-level
// field this writer owns) with statusapply.CASPatch: a JSON patch of that
// member alone that first tests that the Host still has base's value, so
// other writers' concurrent writes cost no conflict. A failed test (422)
// falls back to a merge patch with the resourceVersion as precondition,
// re-reading the Host on each conflict, at most retries times. An
// unchanged member is no write.
func casWrite(ctx context.Context, c client.Client, r client.Reader, base *metalv1.Host, member, owner string, retries int, set func(*metalv1.Host) error) error {
	key := client.ObjectKeyFromObject(base)
	tested := true
	for attempt := 0; ; attempt++ {
		h := base.DeepCopy()
		if err := set(h); err != nil {
			return err
		}
		var err error
		if tested {
			var p client.Patch
			var changed bool
			if p, changed, err = statusapply.CASPatch(base, h, []string{member}); err == nil && changed {
				err = c.Status().Patch(ctx, h, p, client.FieldOwner(owner))
			}
		} else {
			err = c.Status().Patch(ctx, h, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(owner))
		}
		if err == nil {
			return nil
		}
		retry := apierrors.IsConflict(err)
		if tested && apierrors.IsInvalid(err) {
			tested, retry = false, true
		}
		if !retry || attempt >= retries {
			return err
		}
		fresh := &metalv1.Host{}
		if err := r.Get(ctx, key, fresh); err != nil {
			return fmt.Errorf("re-reading Host %s after a conflict: %w", key, err)
		}
		base = fresh
	}
}

// bootMACSet is the Host's boot MACs, normalized.
func bootMACSet(h *metalv1.Host) map[string]bool {
	boot := map[string]bool{}
	for _, raw := range h.Spec.BootMACs {
		if m, err := inventory.NormalizeMAC(raw); err == nil {
			boot[m] = true
		}
	}
	return boot
}

// setLease sets mac's entry in h.status.leases and drops entries of MACs
// the Host no longer boots from. It reports false if mac is not one of
// the Host's boot MACs.
func setLease(h *metalv1.Host, mac string, ip netip.Addr, until time.Time) bool {
	boot := bootMACSet(h)
	if !boot[mac] {
		return false
	}
	out := make([]metalv1.DHCPLease, 0, len(h.Status.Leases)+1)
	for _, l := range h.Status.Leases {
		m, err := inventory.NormalizeMAC(l.MAC)
		if err != nil || !boot[m] || m == mac {
			continue
		}
		out = append(out, l)
	}
	out = append(out, metalv1.DHCPLease{MAC: mac, IP: ip.String(), ExpiresAt: metav1.NewTime(until)})
	slices.SortFunc(out, func(a, b metalv1.DHCPLease) int { return strings.Compare(a.MAC, b.MAC) })
	h.Status.Leases = out
	return true
}
