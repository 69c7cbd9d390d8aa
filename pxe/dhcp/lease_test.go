package dhcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func mac(t testing.TB, s string) net.HardwareAddr {
	t.Helper()
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var testRange = Range{Start: netip.MustParseAddr("10.0.0.10"), End: netip.MustParseAddr("10.0.0.12")}

// storeFactories lets every behavioural test run against both stores.
func storeFactories(t *testing.T) map[string]func(clk *fakeClock) LeaseStore {
	dir := t.TempDir()
	n := 0
	return map[string]func(clk *fakeClock) LeaseStore{
		"memory": func(clk *fakeClock) LeaseStore { return NewMemoryLeaseStore(LeaseStoreOptions{Now: clk.Now}) },
		"file": func(clk *fakeClock) LeaseStore {
			n++
			s, err := NewFileLeaseStore(filepath.Join(dir, "leases-"+string(rune('a'+n))+".json"), LeaseStoreOptions{Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

func TestLeaseStoreBehaviour(t *testing.T) {
	ctx := context.Background()
	for name, newStore := range storeFactories(t) {
		t.Run(name, func(t *testing.T) {
			clk := newFakeClock()
			s := newStore(clk)
			a, b, c, d := mac(t, "02:00:00:00:00:0a"), mac(t, "02:00:00:00:00:0b"), mac(t, "02:00:00:00:00:0c"), mac(t, "02:00:00:00:00:0d")
			alloc := func(m net.HardwareAddr, pref string) (Lease, error) {
				req := AllocateRequest{MAC: m, Range: testRange, TTL: time.Minute}
				if pref != "" {
					req.Preferred = netip.MustParseAddr(pref)
				}
				return s.Allocate(ctx, req)
			}
			if _, err := s.Get(ctx, a); !errors.Is(err, ErrNoLease) {
				t.Fatalf("Get on empty store: %v", err)
			}
			la, err := alloc(a, "")
			if err != nil || la.IP != testRange.Start {
				t.Fatalf("first allocation = %v, %v", la, err)
			}
			// Same MAC again: same address (sticky), even with another preference.
			if again, err := alloc(a, "10.0.0.12"); err != nil || again.IP != la.IP {
				t.Fatalf("re-allocation = %v, %v", again, err)
			}
			// Preferred address is honoured when free.
			lb, err := alloc(b, "10.0.0.12")
			if err != nil || lb.IP != netip.MustParseAddr("10.0.0.12") {
				t.Fatalf("preferred allocation = %v, %v", lb, err)
			}
			// Preferred address held by someone else is not given away.
			lc, err := alloc(c, la.IP.String())
			if err != nil || lc.IP != netip.MustParseAddr("10.0.0.11") {
				t.Fatalf("allocation with taken preference = %v, %v", lc, err)
			}
			if _, err := alloc(d, ""); !errors.Is(err, ErrPoolExhausted) {
				t.Fatalf("full pool: err = %v", err)
			}
			// Renew only the MAC's own address.
			if _, err := s.Renew(ctx, a, lb.IP, time.Hour); !errors.Is(err, ErrNoLease) {
				t.Fatalf("renew of another MAC's address: err = %v", err)
			}
			if l, err := s.Renew(ctx, a, la.IP, time.Hour); err != nil || !l.Expires.Equal(clk.Now().Add(time.Hour)) {
				t.Fatalf("renew = %v, %v", l, err)
			}
			// Released address goes to a new MAC when nothing else is free.
			if err := s.Release(ctx, c); err != nil {
				t.Fatal(err)
			}
			ld, err := alloc(d, "")
			if err != nil || ld.IP != lc.IP {
				t.Fatalf("allocation after release = %v, %v", ld, err)
			}
			if _, err := s.Renew(ctx, c, lc.IP, time.Hour); !errors.Is(err, ErrNoLease) {
				t.Fatalf("renew of a lost lease: err = %v", err)
			}
			if _, err := s.Renew(ctx, d, ld.IP, time.Hour); err != nil {
				t.Fatal(err)
			}
			// Expiry frees b's address (a was renewed for an hour).
			clk.Advance(2 * time.Minute)
			if l, err := alloc(c, ""); err != nil || l.IP != lb.IP {
				t.Fatalf("allocation after expiry = %v, %v", l, err)
			}
			// Exclude is honoured.
			clk.Advance(2 * time.Minute)
			e := mac(t, "02:00:00:00:00:0e")
			l, err := s.Allocate(ctx, AllocateRequest{MAC: e, Range: testRange, TTL: time.Minute,
				Exclude: func(ip netip.Addr) bool { return ip != netip.MustParseAddr("10.0.0.12") }})
			if err != nil || l.IP != netip.MustParseAddr("10.0.0.12") {
				t.Fatalf("allocation with exclude = %v, %v", l, err)
			}
		})
	}
}

func TestFileLeaseStoreDurable(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "leases.json")
	s1, err := NewFileLeaseStore(path, LeaseStoreOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	a, b := mac(t, "02:00:00:00:00:0a"), mac(t, "02:00:00:00:00:0b")
	la, err := s1.Allocate(ctx, AllocateRequest{MAC: a, Range: testRange, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// "Restart": a new store on the same file must know a's lease.
	s2, err := NewFileLeaseStore(path, LeaseStoreOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s2.Get(ctx, a)
	if err != nil || got.IP != la.IP || !got.Expires.Equal(la.Expires) {
		t.Fatalf("after reopen Get = %v, %v; want %v", got, err, la)
	}
	lb, err := s2.Allocate(ctx, AllocateRequest{MAC: b, Range: testRange, TTL: time.Hour, Preferred: la.IP})
	if err != nil || lb.IP == la.IP {
		t.Fatalf("second MAC got %v (%v), first holds %v", lb.IP, err, la.IP)
	}
}

func TestFileLeaseStoreRejectsCorruptFile(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"garbage":    "{not json",
		"version":    `{"version":2,"leases":[]}`,
		"bad mac":    `{"version":1,"leases":[{"mac":"zz","ip":"10.0.0.1","expires":"2026-01-01T00:00:00Z"}]}`,
		"double ip":  `{"version":1,"leases":[{"mac":"02:00:00:00:00:01","ip":"10.0.0.1","expires":"2026-01-01T00:00:00Z"},{"mac":"02:00:00:00:00:02","ip":"10.0.0.1","expires":"2026-01-01T00:00:00Z"}]}`,
		"ipv6 lease": `{"version":1,"leases":[{"mac":"02:00:00:00:00:01","ip":"::1","expires":"2026-01-01T00:00:00Z"}]}`,
	}
	for name, content := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := NewFileLeaseStore(p, LeaseStoreOptions{}); err == nil {
			t.Errorf("%s: NewFileLeaseStore accepted a corrupt file", name)
		}
	}
}

func TestFileLeaseStoreWriteFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "leases.json")
	s, err := NewFileLeaseStore(path, LeaseStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A non-empty directory where the file should be makes every save fail
	// (also for root, who would ignore permission bits).
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a := mac(t, "02:00:00:00:00:0a")
	if _, err := s.Allocate(ctx, AllocateRequest{MAC: a, Range: testRange, TTL: time.Hour}); err == nil {
		t.Fatal("Allocate succeeded although the lease could not be written")
	}
	if _, err := s.Get(ctx, a); !errors.Is(err, ErrNoLease) {
		t.Fatalf("failed allocation left a lease behind: %v", err)
	}
}
