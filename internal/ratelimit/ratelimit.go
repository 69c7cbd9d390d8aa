// Package ratelimit is a per-client-address failure limiter: a token bucket
// per address (IPv6 addresses grouped by prefix), where each failure takes a
// token and an address with an empty bucket is refused until it refills.
// Memory is bounded: the least recently seen addresses are forgotten first,
// and a bucket that has refilled completely is dropped (it is equivalent to
// no entry at all).
//
// Anvil's config endpoints use it so that guessing boot credentials from
// one address is slow; the DHCP, TFTP and HTTP boot services can reuse it.
package ratelimit

import (
	"net/netip"
	"sync"
	"time"

	"k8s.io/utils/lru"
)

// Options configure a Limiter. Zero values take the defaults.
type Options struct {
	// Burst is how many failures an address may have in a row (default 10).
	Burst int
	// Refill is how long it takes to earn back one failure (default 10s).
	Refill time.Duration
	// MaxEntries bounds the number of tracked addresses (default 10000).
	MaxEntries int
	// IPv6PrefixLen groups IPv6 addresses, since one host can own a whole
	// /64 (default 64; 128 tracks single addresses).
	IPv6PrefixLen int
	// Now returns the current time (time.Now if nil).
	Now func() time.Time
}

// Limiter tracks failures per address. It is safe for concurrent use.
type Limiter struct {
	opts Options

	mu      sync.Mutex // over the buckets' contents
	buckets *lru.Cache // netip.Addr → *bucket, least recently seen evicted first
}

type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a Limiter.
func New(opts Options) *Limiter {
	if opts.Burst <= 0 {
		opts.Burst = 10
	}
	if opts.Refill <= 0 {
		opts.Refill = 10 * time.Second
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 10000
	}
	if opts.IPv6PrefixLen <= 0 || opts.IPv6PrefixLen > 128 {
		opts.IPv6PrefixLen = 64
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Limiter{opts: opts, buckets: lru.New(opts.MaxEntries)}
}

func (l *Limiter) key(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		if p, err := a.Prefix(l.opts.IPv6PrefixLen); err == nil {
			return p.Addr()
		}
	}
	return a
}

// refill brings b up to date and reports whether it is full again.
func (l *Limiter) refill(b *bucket, now time.Time) bool {
	if el := now.Sub(b.at); el > 0 {
		b.tokens += float64(el) / float64(l.opts.Refill)
		b.at = now
	}
	if b.tokens >= float64(l.opts.Burst) {
		b.tokens = float64(l.opts.Burst)
		return true
	}
	return false
}

// Allow reports whether addr may make another attempt. It does not take a
// token; call Failure when the attempt failed.
func (l *Limiter) Allow(addr netip.Addr) bool {
	k := l.key(addr)
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.buckets.Get(k)
	if !ok {
		return true
	}
	b := v.(*bucket)
	if l.refill(b, now) {
		l.buckets.Remove(k)
		return true
	}
	return b.tokens >= 1
}

// Failure records a failed attempt from addr.
func (l *Limiter) Failure(addr netip.Addr) {
	k := l.key(addr)
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.touchLocked(k, now)
	b.tokens--
	if b.tokens < 0 {
		b.tokens = 0
	}
}

// touchLocked returns k's bucket, refilled to now, creating it (and
// forgetting the least recently seen beyond MaxEntries) if needed.
func (l *Limiter) touchLocked(k netip.Addr, now time.Time) *bucket {
	v, ok := l.buckets.Get(k)
	if !ok {
		v = &bucket{tokens: float64(l.opts.Burst), at: now}
		l.buckets.Add(k, v)
	}
	b := v.(*bucket)
	l.refill(b, now)
	return b
}

// Take takes a token from addr's bucket if it has one and reports whether
// it did: a limit on every request (not only failures) of an address, as
// the boot script endpoint has.
func (l *Limiter) Take(addr netip.Addr) bool {
	k := l.key(addr)
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.touchLocked(k, now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Len returns the number of addresses currently tracked.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buckets.Len()
}
