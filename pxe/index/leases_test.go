package index_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/test/envtest"
)

func newStore(t testing.TB, x *index.Index, c client.Client, mutate ...func(*index.LeaseStoreOptions)) *index.LeaseStore {
	t.Helper()
	o := index.LeaseStoreOptions{Index: x, Client: c, APIReader: env.Client, Logger: testLogger}
	for _, m := range mutate {
		m(&o)
	}
	s, err := index.NewLeaseStore(o)
	must(t, err)
	return s
}

// storedLeases reads a Host's leases straight from the API server.
func storedLeases(t testing.TB, key client.ObjectKey) map[string]metalv1.DHCPLease {
	t.Helper()
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), key, h))
	out := map[string]metalv1.DHCPLease{}
	for _, l := range h.Status.Leases {
		out[l.MAC] = l
	}
	return out
}

// waitIndexed waits until the index serves every MAC.
func waitIndexed(t testing.TB, x *index.Index, macs ...string) {
	t.Helper()
	for _, m := range macs {
		eventually(t, "MAC "+m+" is indexed", func() bool { _, err := x.Lookup(context.Background(), hw(t, m)); return err == nil })
	}
}

func TestLeaseLifecycleIsPersisted(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	p := testSubnet()
	rng := dhcp.Range{Start: addr(p, 100), End: addr(p, 110)}
	m1, m2 := randMAC(t), randMAC(t)
	h := newHost(t, ns, "two-nics", []string{m1, m2})
	key := client.ObjectKeyFromObject(h)
	waitIndexed(t, ix, m1, m2)
	s := newStore(t, ix, mgrClient)

	// DISCOVER: an offer, held in memory only.
	offer, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, m1), Range: rng, TTL: time.Minute})
	must(t, err)
	if offer.IP != addr(p, 100) {
		t.Fatalf("offer %v, want the first address of the range", offer.IP)
	}
	if got := storedLeases(t, key); len(got) != 0 {
		t.Fatalf("an offer was written to the API: %v", got)
	}
	if l, err := s.Get(ctx, hw(t, m1)); err != nil || l.IP != offer.IP {
		t.Fatalf("Get after offer: %v %v", l, err)
	}

	// REQUEST: durable before Renew returns.
	start := time.Now()
	l1, err := s.Renew(ctx, hw(t, m1), offer.IP, time.Hour)
	must(t, err)
	got := storedLeases(t, key)[m1]
	if got.IP != offer.IP.String() || got.ExpiresAt.Time.Before(start.Add(time.Hour)) {
		t.Fatalf("stored lease %+v, want %v until at least %v", got, offer.IP, start.Add(time.Hour))
	}
	if !l1.Expires.Equal(got.ExpiresAt.Time) {
		t.Fatalf("Renew returned expiry %v, stored %v", l1.Expires, got.ExpiresAt.Time)
	}

	// The second NIC of the same Host gets another address, and both
	// entries survive in the one leases list.
	o2, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, m2), Range: rng, Preferred: offer.IP, TTL: time.Minute})
	must(t, err)
	if o2.IP == offer.IP {
		t.Fatalf("second MAC was offered the first MAC's address %v", o2.IP)
	}
	_, err = s.Renew(ctx, hw(t, m2), o2.IP, time.Hour)
	must(t, err)
	all := storedLeases(t, key)
	if all[m1].IP != offer.IP.String() || all[m2].IP != o2.IP.String() {
		t.Fatalf("stored leases %+v", all)
	}

	// Renewing an address the MAC does not hold fails.
	if _, err := s.Renew(ctx, hw(t, m1), o2.IP, time.Hour); !errors.Is(err, dhcp.ErrNoLease) {
		t.Fatalf("Renew of another MAC's address: %v", err)
	}

	// RELEASE: the expiry is written as now; the address stays with m1.
	must(t, s.Release(ctx, hw(t, m1)))
	if rel := storedLeases(t, key)[m1]; rel.IP != offer.IP.String() || rel.ExpiresAt.Time.After(time.Now()) {
		t.Fatalf("after release: %+v", rel)
	}
	again, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, m1), Range: rng, TTL: time.Minute})
	if err != nil || again.IP != offer.IP {
		t.Fatalf("m1 after release got %v (%v), want its old address %v", again.IP, err, offer.IP)
	}
	if a, ok := s.AddressOf(hw(t, m2)); !ok || a != o2.IP {
		t.Fatalf("AddressOf(m2) = %v %v", a, ok)
	}
}

func TestStaticAddressesAreNeverLeased(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	p := testSubnet()
	static := addr(p, 103)
	ms, md := randMAC(t), randMAC(t)
	newHost(t, ns, "static", []string{ms}, func(h *metalv1.Host) {
		h.Spec.Network = &metalv1.HostNetwork{Address: netip.PrefixFrom(static, 24).String()}
	})
	newHost(t, ns, "dynamic", []string{md})
	waitIndexed(t, ix, ms, md)
	s := newStore(t, ix, mgrClient)
	tests := []struct {
		name      string
		rng       dhcp.Range
		preferred netip.Addr
		wantErr   error
	}{
		{"preferred static address", dhcp.Range{Start: addr(p, 100), End: addr(p, 110)}, static, nil},
		{"range starting at the static address", dhcp.Range{Start: static, End: addr(p, 104)}, netip.Addr{}, nil},
		{"range of only the static address", dhcp.Range{Start: static, End: static}, netip.Addr{}, dhcp.ErrPoolExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, md), Range: tt.rng, Preferred: tt.preferred, TTL: time.Minute})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if err == nil && l.IP == static {
				t.Fatalf("handed out the static address %v", static)
			}
		})
	}
}

// Many hosts booting at once, each DISCOVER+REQUEST concurrently: every one
// gets its own address, in memory and in the API.
func TestConcurrentAllocationsNeverShareAnAddress(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	p := testSubnet()
	rng := dhcp.Range{Start: addr(p, 10), End: addr(p, 34)}
	const n = 20
	macs := make([]string, n)
	for i := range macs {
		macs[i] = randMAC(t)
		newHost(t, ns, fmt.Sprintf("h%02d", i), []string{macs[i]})
	}
	waitIndexed(t, ix, macs...)
	s := newStore(t, ix, mgrClient)
	ips := make([]netip.Addr, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			// Everyone prefers the same address, the worst case.
			l, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, macs[i]), Range: rng, Preferred: rng.Start, TTL: time.Minute})
			if err == nil {
				l, err = s.Renew(ctx, hw(t, macs[i]), l.IP, time.Hour)
			}
			if err != nil {
				errs <- err
				return
			}
			ips[i] = l.IP
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[netip.Addr]int{}
	for i := range n {
		if prev, dup := seen[ips[i]]; dup {
			t.Fatalf("hosts %d and %d share %v", prev, i, ips[i])
		}
		seen[ips[i]] = i
		got := storedLeases(t, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("h%02d", i)})[macs[i]]
		if got.IP != ips[i].String() {
			t.Fatalf("host %d: stored %q, allocated %v", i, got.IP, ips[i])
		}
	}
}

// A restart (a new manager, index and store over the same API server) knows
// every lease: another MAC asking for a leased address does not get it,
// and the owner gets it back.
func TestLeasesSurviveARestart(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	p := testSubnet()
	rng := dhcp.Range{Start: addr(p, 50), End: addr(p, 60)}
	ma, mb := randMAC(t), randMAC(t)
	newHost(t, ns, "a", []string{ma})
	newHost(t, ns, "b", []string{mb})
	waitIndexed(t, ix, ma, mb)
	first := newStore(t, ix, mgrClient)
	offer, err := first.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, ma), Range: rng, TTL: time.Minute})
	must(t, err)
	_, err = first.Renew(ctx, hw(t, ma), offer.IP, time.Hour)
	must(t, err)

	// "Restart": nothing of the first store's memory is carried over.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var calls atomic.Int64
	mgr2, ix2, err := startManager(rctx, env, &calls)
	must(t, err)
	defer ix2.Close()
	second := newStore(t, ix2, mgr2.GetClient())
	l, err := second.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, mb), Range: rng, Preferred: offer.IP, TTL: time.Minute})
	must(t, err)
	if l.IP == offer.IP {
		t.Fatalf("after the restart another MAC was offered %v, leased to %s", l.IP, ma)
	}
	if _, err := second.Renew(ctx, hw(t, mb), offer.IP, time.Hour); !errors.Is(err, dhcp.ErrNoLease) {
		t.Fatalf("after the restart another MAC could renew the leased address: %v", err)
	}
	back, err := second.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, ma), Range: rng, TTL: time.Minute})
	if err != nil || back.IP != offer.IP {
		t.Fatalf("the owner got %v (%v) after the restart, want %v", back.IP, err, offer.IP)
	}
}

// The Host changes between the informer's copy and the write: the merge
// patch with the old resourceVersion conflicts, the store re-reads and
// TestLeaseWriteUnderConcurrentWrites: a write of another status field
// between the store's read and its lease write (the controllers, all
// through a boot storm) costs no conflict and no second request; a
// concurrent change of the leases themselves (a second DHCP server) fails
// the write's test, and the store re-reads and writes again. Nothing is
// lost either way.
func TestLeaseWriteUnderConcurrentWrites(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     bool // the Host has a status before the write
		concurrent bool // a write comes between the store's read and its write
		leases     bool // ...of another MAC's lease
		patches    int32
	}{
		{"another field", true, true, false, 1},
		{"the leases", true, true, true, 2},
		{"a Host without status yet", false, false, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			p := testSubnet()
			rng := dhcp.Range{Start: addr(p, 20), End: addr(p, 30)}
			m, m2 := randMAC(t), randMAC(t)
			h := newHost(t, ns, "busy", []string{m, m2})
			key := client.ObjectKeyFromObject(h)
			waitIndexed(t, ix, m)
			if tc.status {
				updateHost(t, key, true, func(h *metalv1.Host) { h.Status.State = metalv1.HostProvisioning })
				eventually(t, "the index has the Host's status", func() bool {
					got, ok := ix.Host(hw(t, m))
					return ok && got.Status.State != ""
				})
			}
			other := metalv1.DHCPLease{MAC: m2, IP: addr(p, 31).String(), ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))}
			pc := &envtest.PatchCounter{Client: mgrClient, BeforeFirst: func() {
				if !tc.concurrent {
					return
				}
				updateHost(t, key, true, func(h *metalv1.Host) {
					if tc.leases {
						h.Status.Leases = append(h.Status.Leases, other)
						return
					}
					meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{Type: "Concurrent", Status: metav1.ConditionTrue, Reason: "Test"})
				})
			}}
			s := newStore(t, ix, pc)
			offer, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, m), Range: rng, TTL: time.Minute})
			must(t, err)
			if _, err := s.Renew(ctx, hw(t, m), offer.IP, time.Hour); err != nil {
				t.Fatalf("Renew with a concurrent write: %v", err)
			}
			if n := pc.Patches.Load(); n != tc.patches {
				t.Fatalf("%d status patches, want %d", n, tc.patches)
			}
			got := &metalv1.Host{}
			must(t, env.Client.Get(ctx, key, got))
			leases := map[string]string{}
			for _, l := range got.Status.Leases {
				leases[l.MAC] = l.IP
			}
			if leases[m] != offer.IP.String() {
				t.Fatalf("leases %+v: the write is missing", got.Status.Leases)
			}
			if tc.leases && leases[m2] != other.IP {
				t.Fatalf("leases %+v: the other server's lease was lost", got.Status.Leases)
			}
			if tc.concurrent && !tc.leases && !meta.IsStatusConditionTrue(got.Status.Conditions, "Concurrent") {
				t.Fatal("the concurrent status change was lost")
			}
		})
	}
}

// Another DHCP server (another replica) leased an address to another MAC;
// it shows up through the informer: it is not offered, and a REQUEST for it
// from a MAC that held an offer here is refused (the client gets a NAK).
func TestAddressLeasedElsewhereIsRefused(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	p := testSubnet()
	rng := dhcp.Range{Start: addr(p, 40), End: addr(p, 49)}
	ma, mb := randMAC(t), randMAC(t)
	newHost(t, ns, "a", []string{ma})
	hb := newHost(t, ns, "b", []string{mb})
	waitIndexed(t, ix, ma, mb)
	s := newStore(t, ix, mgrClient)

	offer, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, ma), Range: rng, TTL: time.Minute})
	must(t, err)
	// The other server writes b's lease on the same address.
	updateHost(t, client.ObjectKeyFromObject(hb), true, func(h *metalv1.Host) {
		h.Status.Leases = []metalv1.DHCPLease{{MAC: mb, IP: offer.IP.String(), ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour))}}
	})
	eventually(t, "b's lease reaches the index", func() bool {
		o, ok := ix.Host(hw(t, mb))
		return ok && len(o.Status.Leases) == 1
	})
	if l, ok := s.RenewInMemory(hw(t, ma), offer.IP, time.Hour); ok {
		t.Fatalf("RenewInMemory of an address leased elsewhere: %v", l)
	}
	if _, err := s.Renew(ctx, hw(t, ma), offer.IP, time.Hour); !errors.Is(err, dhcp.ErrNoLease) {
		t.Fatalf("Renew of an address leased elsewhere: %v, want ErrNoLease", err)
	}
	l, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, ma), Range: rng, Preferred: offer.IP, TTL: time.Minute})
	if err != nil || l.IP == offer.IP {
		t.Fatalf("offered %v (%v), which b holds", l.IP, err)
	}
	if _, ok := s.AddressOf(hw(t, ma)); ok {
		t.Fatal("AddressOf reports an address for a MAC that holds only an offer")
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Expiry times are rounded up, so renewals the stored lease already covers
// (iPXE and the OS asking again right after the PXE ROM) cost no write.
func TestRenewWithinTheRoundedExpiryWritesNothing(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	p := testSubnet()
	rng := dhcp.Range{Start: addr(p, 60), End: addr(p, 69)}
	m := randMAC(t)
	h := newHost(t, ns, "r", []string{m})
	waitIndexed(t, ix, m)
	clk := &fakeClock{t: time.Now().Truncate(time.Minute).Add(10 * time.Second)}
	pc := &envtest.PatchCounter{Client: mgrClient}
	// ReuseThreshold 1: only the rounding saves writes (the default's
	// reuse is TestRenewReusesAFreshLease).
	s := newStore(t, ix, pc, func(o *index.LeaseStoreOptions) { o.Now = clk.Now; o.ReuseThreshold = 1 })
	offer, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, m), Range: rng, TTL: time.Minute})
	must(t, err)
	steps := []struct {
		advance     time.Duration
		wantPatches int32
	}{
		{0, 1},                // first REQUEST: written, expiry rounded up to the minute
		{5 * time.Second, 1},  // covered by the stored expiry
		{40 * time.Second, 1}, // still covered (10s+40s < 60s)
		{20 * time.Second, 2}, // past the rounded minute: written again
	}
	for i, st := range steps {
		clk.Add(st.advance)
		l, err := s.Renew(ctx, hw(t, m), offer.IP, time.Hour)
		must(t, err)
		if l.Expires.Before(clk.Now().Add(time.Hour)) {
			t.Fatalf("step %d: lease expires %v, before now+ttl", i, l.Expires)
		}
		if n := pc.Patches.Load(); n != st.wantPatches {
			t.Fatalf("step %d: %d writes, want %d", i, n, st.wantPatches)
		}
		stored := storedLeases(t, client.ObjectKeyFromObject(h))[m]
		if stored.ExpiresAt.Time.Before(clk.Now().Add(time.Hour)) {
			t.Fatalf("step %d: stored expiry %v is earlier than promised %v", i, stored.ExpiresAt.Time, clk.Now().Add(time.Hour))
		}
	}
}

// A REQUEST whose persisted lease on the same address still has half the
// TTL left writes nothing (one write per boot, not one per DHCP exchange);
// the store returns the persisted lease, so the server ACKs the time left.
// RenewInMemory (the DHCP server's memory pass) answers exactly the steps
// that write nothing, with the same lease.
func TestRenewReusesAFreshLease(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	p := testSubnet()
	rng := dhcp.Range{Start: addr(p, 70), End: addr(p, 79)}
	m := randMAC(t)
	h := newHost(t, ns, "reuse", []string{m})
	waitIndexed(t, ix, m)
	// 10 s past a minute: the first write's expiry rounds up to M+61m.
	clk := &fakeClock{t: time.Now().Truncate(time.Minute).Add(10 * time.Second)}
	pc := &envtest.PatchCounter{Client: mgrClient}
	s := newStore(t, ix, pc, func(o *index.LeaseStoreOptions) { o.Now = clk.Now })
	offer, err := s.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, m), Range: rng, TTL: time.Minute})
	must(t, err)
	if l, ok := s.RenewInMemory(hw(t, m), offer.IP, time.Hour); ok {
		t.Fatalf("RenewInMemory answered an offer that was never written: %v", l)
	}
	if !s.NeedsWrite(hw(t, m), offer.IP, time.Hour) {
		t.Fatal("NeedsWrite = false for an offer never written: the OFFER would not start its write")
	}
	other := addr(p, 79)
	if other == offer.IP {
		other = addr(p, 78)
	}
	if s.NeedsWrite(hw(t, m), other, time.Hour) {
		t.Fatal("NeedsWrite = true for an address the MAC was not offered")
	}
	prev := int32(0)
	for i, st := range []struct {
		name        string
		advance     time.Duration
		ttl         time.Duration
		wantPatches int32
	}{
		{"first REQUEST (PXE ROM): written", 0, time.Hour, 1},
		{"iPXE right after: reused", 20 * time.Second, time.Hour, 1},
		{"the OS: 31m50s of 1h left, reused", 28*time.Minute + 40*time.Second, time.Hour, 1},
		{"29m50s of 1h left: written", 2 * time.Minute, time.Hour, 2},
		{"a longer TTL than half the lease left: written", 0, 3 * time.Hour, 3},
	} {
		clk.Add(st.advance)
		mem, memOK := s.RenewInMemory(hw(t, m), offer.IP, st.ttl)
		if need := s.NeedsWrite(hw(t, m), offer.IP, st.ttl); need == memOK {
			t.Fatalf("step %d (%s): NeedsWrite=%v and RenewInMemory ok=%v: exactly one must hold", i, st.name, need, memOK)
		}
		l, err := s.Renew(ctx, hw(t, m), offer.IP, st.ttl)
		must(t, err)
		if wrote := st.wantPatches != prev; memOK == wrote {
			t.Fatalf("step %d (%s): RenewInMemory ok=%v, but Renew wrote=%v", i, st.name, memOK, wrote)
		}
		if memOK && (mem.IP != l.IP || !mem.Expires.Equal(l.Expires)) {
			t.Fatalf("step %d (%s): RenewInMemory %v until %v, Renew %v until %v", i, st.name, mem.IP, mem.Expires, l.IP, l.Expires)
		}
		prev = st.wantPatches
		// Accepted writes: a write right after another may conflict (the
		// informer has not delivered the first) and be retried.
		if n := pc.Written.Load(); n != st.wantPatches {
			t.Fatalf("step %d (%s): %d writes, want %d", i, st.name, n, st.wantPatches)
		}
		stored := storedLeases(t, client.ObjectKeyFromObject(h))[m]
		if !l.Expires.Equal(stored.ExpiresAt.Time) || l.IP != offer.IP {
			t.Fatalf("step %d (%s): Renew returned %v until %v, stored %s until %v: the ACK must not promise more than is stored",
				i, st.name, l.IP, l.Expires, stored.IP, stored.ExpiresAt.Time)
		}
		if left := l.Expires.Sub(clk.Now()); left < st.ttl/2 {
			t.Fatalf("step %d (%s): %v left, less than half the TTL", i, st.name, left)
		}
	}
}

// The static address is the bound address of a static Host.
func TestAddressOfStaticHost(t *testing.T) {
	ns := env.Namespace(t)
	m := randMAC(t)
	newHost(t, ns, "s", []string{m}, func(h *metalv1.Host) { h.Spec.Network = &metalv1.HostNetwork{Address: "10.199.0.7/24"} })
	waitIndexed(t, ix, m)
	s := newStore(t, ix, mgrClient)
	if a, ok := s.AddressOf(hw(t, m)); !ok || a != netip.MustParseAddr("10.199.0.7") {
		t.Fatalf("AddressOf = %v %v", a, ok)
	}
	if _, ok := s.AddressOf(hw(t, randMAC(t))); ok {
		t.Fatal("AddressOf an unknown MAC")
	}
}
