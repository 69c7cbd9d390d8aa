package ratelimit

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLimiter(t *testing.T) {
	a := netip.MustParseAddr("192.0.2.1")
	b := netip.MustParseAddr("192.0.2.2")
	tests := []struct {
		name string
		run  func(t *testing.T, l *Limiter, c *clock)
	}{
		{"burst failures then refused", func(t *testing.T, l *Limiter, c *clock) {
			for i := 0; i < 3; i++ {
				if !l.Allow(a) {
					t.Fatalf("refused after %d failures, burst is 3", i)
				}
				l.Failure(a)
			}
			if l.Allow(a) {
				t.Fatal("allowed after the burst was used up")
			}
			if !l.Allow(b) {
				t.Fatal("another address was refused")
			}
		}},
		{"refills over time", func(t *testing.T, l *Limiter, c *clock) {
			for i := 0; i < 3; i++ {
				l.Failure(a)
			}
			c.t = c.t.Add(5 * time.Second)
			if l.Allow(a) {
				t.Fatal("allowed before one token refilled")
			}
			c.t = c.t.Add(5 * time.Second)
			if !l.Allow(a) {
				t.Fatal("refused after one refill period")
			}
			l.Failure(a)
			if l.Allow(a) {
				t.Fatal("allowed after using the refilled token")
			}
		}},
		{"full buckets are forgotten", func(t *testing.T, l *Limiter, c *clock) {
			l.Failure(a)
			if l.Len() != 1 {
				t.Fatalf("Len %d", l.Len())
			}
			c.t = c.t.Add(time.Minute)
			l.Allow(a)
			if l.Len() != 0 {
				t.Fatalf("refilled bucket kept: Len %d", l.Len())
			}
		}},
		{"IPv4-mapped IPv6 is the same client", func(t *testing.T, l *Limiter, c *clock) {
			for i := 0; i < 3; i++ {
				l.Failure(netip.MustParseAddr("::ffff:192.0.2.1"))
			}
			if l.Allow(a) {
				t.Fatal("mapped address not limited as the IPv4 address")
			}
		}},
		{"IPv6 /64 is one client", func(t *testing.T, l *Limiter, c *clock) {
			for i := 0; i < 3; i++ {
				l.Failure(netip.MustParseAddr(fmt.Sprintf("2001:db8:1:2::%x", i+1)))
			}
			if l.Allow(netip.MustParseAddr("2001:db8:1:2::ffff")) {
				t.Fatal("address in the same /64 not limited")
			}
			if !l.Allow(netip.MustParseAddr("2001:db8:1:3::1")) {
				t.Fatal("another /64 limited")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1_000_000, 0)}
			tc.run(t, New(Options{Burst: 3, Refill: 10 * time.Second, Now: c.now}), c)
		})
	}
}

func TestLimiterBoundedMemory(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	l := New(Options{Burst: 1, MaxEntries: 100, Now: c.now})
	for i := 0; i < 1000; i++ {
		l.Failure(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}))
	}
	if l.Len() != 100 {
		t.Fatalf("tracking %d addresses, bound is 100", l.Len())
	}
	// The most recent offenders are still limited, the oldest forgotten.
	if l.Allow(netip.AddrFrom4([4]byte{10, 0, 3, 231})) {
		t.Fatal("most recent address not limited")
	}
	if !l.Allow(netip.AddrFrom4([4]byte{10, 0, 0, 0})) {
		t.Fatal("oldest address still tracked")
	}
}

func TestTake(t *testing.T) {
	a := netip.MustParseAddr("192.0.2.1")
	b := netip.MustParseAddr("192.0.2.2")
	c := &clock{t: time.Unix(1000, 0)}
	l := New(Options{Burst: 2, Refill: time.Second, Now: c.now})
	if first, second := l.Take(a), l.Take(a); !first || !second {
		t.Fatal("refused within the burst")
	}
	if l.Take(a) {
		t.Fatal("took a third token of a burst of two")
	}
	if !l.Take(b) {
		t.Fatal("another address was refused")
	}
	c.t = c.t.Add(time.Second)
	if !l.Take(a) {
		t.Fatal("refused after a refill period")
	}
	if l.Take(a) {
		t.Fatal("took more than refilled")
	}
}
