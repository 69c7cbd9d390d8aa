package bmc

import (
	"context"
	"fmt"
	"sync"
	"time"

	"anvil.dev/anvil/internal/netguard"
)

// PoolOptions configure a Pool.
type PoolOptions struct {
	// MaxConcurrentPerBMC limits the calls in flight to one BMC address.
	// BMCs are small computers that fall over under parallel load; the
	// default is 1.
	MaxConcurrentPerBMC int
	// IdleTimeout closes (logs out) drivers unused for this long. Default 10
	// minutes.
	IdleTimeout time.Duration
	// Open creates drivers; nil means bmc.Open.
	Open func(Options) (Driver, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Guard is the request-forgery guard of every driver the pool opens
	// (it replaces Options.Guard, so the admin's allow-list is wired in one
	// place). The zero value refuses loopback, link-local and metadata BMC
	// addresses.
	Guard netguard.Guard
}

// Pool caches one driver per BMC address so sessions are reused across
// reconciles, replaces it when the credentials (or other options) change —
// credential rotation works without a restart — limits concurrent calls per
// BMC and applies a deadline to every call. It is safe for concurrent use.
type Pool struct {
	opts PoolOptions

	mu        sync.Mutex
	bmcs      map[string]*poolBMC
	closed    bool
	lastSweep time.Time
}

type poolBMC struct {
	sem      chan struct{}
	cur      *pooledDriver
	users    int // Do calls waiting for or holding sem
	lastUsed time.Time
}

type pooledDriver struct {
	key     string
	d       Driver
	refs    int
	retired bool
}

// NewPool returns an empty pool.
func NewPool(opts PoolOptions) *Pool {
	if opts.MaxConcurrentPerBMC <= 0 {
		opts.MaxConcurrentPerBMC = 1
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 10 * time.Minute
	}
	if opts.Open == nil {
		opts.Open = Open
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Pool{opts: opts, bmcs: map[string]*poolBMC{}}
}

// Guard is the guard the pool's drivers dial through, for validating BMC
// addresses with the same rules.
func (p *Pool) Guard() netguard.Guard { return p.opts.Guard }

// optionsKey identifies the driver configuration. Credentials enter only as a
// hash.
func optionsKey(o Options) string {
	return fmt.Sprintf("%s|%s|%t|%p|%t|%d|%d|%d|%d|%t", o.Address, o.Credentials.Fingerprint(),
		o.DisableCertificateVerification, o.RootCAs, o.UEFI, o.Timeout, o.MaxRetries, o.AuthFailureBackoff, o.IPMICipherSuite, o.AllowPlainHTTP)
}

// Do runs fn with the cached driver for opts.Address, opening (or replacing)
// it as needed. ctx gets the per-call deadline (opts.CallTimeout()), which
// also bounds waiting for a free slot on a busy BMC. Errors have the password
// redacted.
func (p *Pool) Do(ctx context.Context, opts Options, fn func(ctx context.Context, d Driver) error) error {
	addr, err := ParseAddress(opts.Address)
	if err != nil {
		return err
	}
	opts.Guard = p.opts.Guard
	if err := CheckTarget(opts.Guard, addr); err != nil {
		return err
	}
	bkey := addr.String()
	ctx, cancel := context.WithTimeout(ctx, opts.CallTimeout())
	defer cancel()

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("bmc: pool is closed")
	}
	idle := p.sweepLocked(bkey)
	b := p.bmcs[bkey]
	if b == nil {
		b = &poolBMC{sem: make(chan struct{}, p.opts.MaxConcurrentPerBMC)}
		p.bmcs[bkey] = b
	}
	b.users++
	p.mu.Unlock()
	closeAsync(idle)

	defer func() {
		p.mu.Lock()
		b.users--
		b.lastUsed = p.opts.Now()
		p.mu.Unlock()
	}()

	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("bmc %s: waiting for a free slot (max %d concurrent calls per BMC): %w", bkey, cap(b.sem), ctx.Err())
	}
	defer func() { <-b.sem }()

	pd, retired, err := p.acquire(b, opts)
	closeAsync(retired)
	if err != nil {
		return Redact(err, opts.Credentials.Password)
	}
	err = fn(ctx, pd.d)
	closeAsync(p.release(pd))
	return Redact(err, opts.Credentials.Password)
}

// acquire returns the current driver for opts, replacing one with other
// options. It returns drivers that can be closed now.
func (p *Pool) acquire(b *poolBMC, opts Options) (*pooledDriver, []Driver, error) {
	key := optionsKey(opts)
	p.mu.Lock()
	defer p.mu.Unlock()
	var toClose []Driver
	if b.cur == nil || b.cur.key != key {
		d, err := p.opts.Open(opts)
		if err != nil {
			return nil, nil, err
		}
		if old := b.cur; old != nil {
			old.retired = true
			if old.refs == 0 {
				toClose = append(toClose, old.d)
			}
		}
		b.cur = &pooledDriver{key: key, d: d}
	}
	b.cur.refs++
	return b.cur, toClose, nil
}

func (p *Pool) release(pd *pooledDriver) []Driver {
	p.mu.Lock()
	defer p.mu.Unlock()
	pd.refs--
	if pd.retired && pd.refs == 0 {
		return []Driver{pd.d}
	}
	return nil
}

// sweepLocked drops idle BMC entries (other than keep) and returns their
// drivers for closing. It walks every entry, so it runs at most once per
// tenth of IdleTimeout: on every call it was 5% of the controllers' CPU with
// 5,000 BMCs.
func (p *Pool) sweepLocked(keep string) []Driver {
	var out []Driver
	now := p.opts.Now()
	if now.Sub(p.lastSweep) < p.opts.IdleTimeout/10 {
		return nil
	}
	p.lastSweep = now
	for k, b := range p.bmcs {
		if k == keep || b.users > 0 || now.Sub(b.lastUsed) < p.opts.IdleTimeout {
			continue
		}
		if b.cur != nil {
			out = append(out, b.cur.d)
		}
		delete(p.bmcs, k)
	}
	return out
}

// closeAsync logs drivers out in the background with a bounded deadline, so a
// dead BMC never delays a reconcile.
func closeAsync(ds []Driver) {
	for _, d := range ds {
		go func(d Driver) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = d.Close(ctx)
		}(d)
	}
}

// Forget closes and drops the cached driver for an address (for example when
// its Host is deleted). Calls in flight finish first.
func (p *Pool) Forget(address string) {
	addr, err := ParseAddress(address)
	if err != nil {
		return
	}
	p.mu.Lock()
	var toClose []Driver
	if b := p.bmcs[addr.String()]; b != nil && b.cur != nil {
		b.cur.retired = true
		if b.cur.refs == 0 {
			toClose = append(toClose, b.cur.d)
		}
		b.cur = nil
	}
	p.mu.Unlock()
	closeAsync(toClose)
}

// Len reports how many BMC addresses have a cached driver.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, b := range p.bmcs {
		if b.cur != nil {
			n++
		}
	}
	return n
}

// Close logs out every cached driver and refuses further calls.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	var ds []Driver
	for k, b := range p.bmcs {
		if b.cur != nil {
			ds = append(ds, b.cur.d)
		}
		delete(p.bmcs, k)
	}
	p.mu.Unlock()
	var first error
	for _, d := range ds {
		if err := d.Close(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// PowerState reads the power state through the pool.
func (p *Pool) PowerState(ctx context.Context, opts Options) (PowerState, error) {
	st := PowerStateUnknown
	err := p.Do(ctx, opts, func(ctx context.Context, d Driver) error {
		var err error
		st, err = d.PowerState(ctx)
		return err
	})
	return st, err
}

// SetPower performs a power action through the pool.
func (p *Pool) SetPower(ctx context.Context, opts Options, action PowerAction) error {
	return p.Do(ctx, opts, func(ctx context.Context, d Driver) error { return d.SetPower(ctx, action) })
}

// SetBootOnce sets a one-time boot device through the pool.
func (p *Pool) SetBootOnce(ctx context.Context, opts Options, dev BootDevice) error {
	return p.Do(ctx, opts, func(ctx context.Context, d Driver) error { return d.SetBootOnce(ctx, dev) })
}

// Facts reads inventory facts through the pool.
func (p *Pool) Facts(ctx context.Context, opts Options) (Facts, error) {
	var f Facts
	err := p.Do(ctx, opts, func(ctx context.Context, d Driver) error {
		var err error
		f, err = d.Facts(ctx)
		return err
	})
	return f, err
}
