package bmc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDriver records calls; it stands in for a BMC in the pool's own tests
// (the pool with real drivers is tested in pool_redfish_test.go).
type fakeDriver struct {
	opts   Options
	mu     sync.Mutex
	closed bool
	fn     func(ctx context.Context) error
}

func (f *fakeDriver) PowerState(ctx context.Context) (PowerState, error) {
	f.mu.Lock()
	fn := f.fn
	f.mu.Unlock()
	if fn != nil {
		return PowerStateUnknown, fn(ctx)
	}
	return PowerStateOn, nil
}
func (f *fakeDriver) SetPower(context.Context, PowerAction) error   { return nil }
func (f *fakeDriver) SetBootOnce(context.Context, BootDevice) error { return nil }
func (f *fakeDriver) Facts(context.Context) (Facts, error)          { return Facts{}, nil }
func (f *fakeDriver) isClosed() bool                                { f.mu.Lock(); defer f.mu.Unlock(); return f.closed }
func (f *fakeDriver) Close(context.Context) error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}
func (f *fakeDriver) String() string  { return fmt.Sprintf("fake(%s)", f.opts.Address) }
func (f *fakeDriver) opened() Options { return f.opts }

type fakeFactory struct {
	mu      sync.Mutex
	drivers []*fakeDriver
	fn      func(ctx context.Context) error
}

func (ff *fakeFactory) open(o Options) (Driver, error) {
	if _, err := ParseAddress(o.Address); err != nil {
		return nil, err
	}
	ff.mu.Lock()
	defer ff.mu.Unlock()
	d := &fakeDriver{opts: o, fn: ff.fn}
	ff.drivers = append(ff.drivers, d)
	return d, nil
}

func (ff *fakeFactory) all() []*fakeDriver {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	return append([]*fakeDriver(nil), ff.drivers...)
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func opts(addr, password string) Options {
	return Options{Address: addr, Credentials: Credentials{Username: "admin", Password: password}, Timeout: 10 * time.Second}
}

func TestPoolReusesAndReplacesDrivers(t *testing.T) {
	ff := &fakeFactory{}
	p := NewPool(PoolOptions{Open: ff.open})
	ctx := context.Background()
	for range 10 {
		if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.1", "one")); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(ff.all()); n != 1 {
		t.Fatalf("10 calls opened %d drivers, want 1", n)
	}
	// Credential rotation: a new driver replaces the old one, which is
	// closed.
	if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.1", "two")); err != nil {
		t.Fatal(err)
	}
	ds := ff.all()
	if len(ds) != 2 || ds[1].opened().Credentials.Password != "two" {
		t.Fatalf("drivers after rotation: %v", ds)
	}
	waitFor(t, ds[0].isClosed, "the old driver to be closed")
	if ds[1].isClosed() {
		t.Fatal("current driver closed")
	}
	// Another BMC gets its own driver; the count per address stays one.
	if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.2", "two")); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 2 || len(ff.all()) != 3 {
		t.Fatalf("Len %d, opened %d", p.Len(), len(ff.all()))
	}
	p.Forget("ipmi://10.0.0.2")
	waitFor(t, ff.all()[2].isClosed, "the forgotten driver to be closed")
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !ds[1].isClosed() {
		t.Fatal("Close left a driver open")
	}
	if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.1", "two")); err == nil {
		t.Fatal("closed pool accepted a call")
	}
}

func TestPoolRetiredDriverClosedAfterInflightCall(t *testing.T) {
	ff := &fakeFactory{}
	p := NewPool(PoolOptions{Open: ff.open, MaxConcurrentPerBMC: 2})
	ctx := context.Background()
	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- p.Do(ctx, opts("ipmi://10.0.0.1", "one"), func(ctx context.Context, d Driver) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.1", "two")); err != nil {
		t.Fatal(err)
	}
	old := ff.all()[0]
	if old.isClosed() {
		t.Fatal("driver closed while a call was still using it")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitFor(t, old.isClosed, "the retired driver to be closed after its call")
}

func TestPoolConcurrencyLimit(t *testing.T) {
	for _, limit := range []int{1, 2} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			ff := &fakeFactory{}
			p := NewPool(PoolOptions{Open: ff.open, MaxConcurrentPerBMC: limit})
			ctx := context.Background()
			release := make(chan struct{})
			var wg sync.WaitGroup
			inside := make(chan struct{}, limit)
			for range limit {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = p.Do(ctx, opts("ipmi://10.0.0.1", "pw"), func(ctx context.Context, d Driver) error {
						inside <- struct{}{}
						<-release
						return nil
					})
				}()
			}
			// All `limit` calls get in at the same time...
			for range limit {
				select {
				case <-inside:
				case <-time.After(10 * time.Second):
					t.Fatal("calls within the limit did not run concurrently")
				}
			}
			// ...and one more has to wait (here: until its deadline).
			o := opts("ipmi://10.0.0.1", "pw")
			o.Timeout = 100 * time.Millisecond
			err := p.Do(ctx, o, func(context.Context, Driver) error { t.Error("ran beyond the limit"); return nil })
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "free slot") {
				t.Fatalf("call beyond the limit: %v", err)
			}
			// Another BMC is not held up by this one.
			if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.9", "pw")); err != nil {
				t.Fatalf("other BMC: %v", err)
			}
			close(release)
			wg.Wait()
		})
	}
}

func TestPoolCallDeadline(t *testing.T) {
	ff := &fakeFactory{fn: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	p := NewPool(PoolOptions{Open: ff.open})
	o := opts("ipmi://10.0.0.1", "pw")
	o.Timeout = 50 * time.Millisecond
	_, err := p.PowerState(context.Background(), o)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the call deadline", err)
	}
}

func TestPoolRedactsErrors(t *testing.T) {
	ff := &fakeFactory{fn: func(context.Context) error {
		return &Error{Kind: ErrAuthFailed, Err: fmt.Errorf("BMC echoed %s", testSecret)}
	}}
	p := NewPool(PoolOptions{Open: ff.open})
	_, err := p.PowerState(context.Background(), opts("ipmi://10.0.0.1", testSecret))
	if !errors.Is(err, ErrAuthFailed) || strings.Contains(err.Error(), testSecret) {
		t.Fatalf("err = %v", err)
	}
	if _, err := p.PowerState(context.Background(), opts("ipmi://admin:"+testSecret+"@10.0.0.1", testSecret)); !errors.Is(err, ErrInvalidAddress) || strings.Contains(err.Error(), testSecret) {
		t.Fatalf("address with credentials: %v", err)
	}
}

func TestPoolClosesIdleDrivers(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ff := &fakeFactory{}
	p := NewPool(PoolOptions{Open: ff.open, IdleTimeout: time.Minute, Now: clock})
	ctx := context.Background()
	if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.1", "pw")); err != nil {
		t.Fatal(err)
	}
	advance(30 * time.Second)
	if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.2", "pw")); err != nil {
		t.Fatal(err)
	}
	if ff.all()[0].isClosed() {
		t.Fatal("driver closed before its idle timeout")
	}
	advance(45 * time.Second) // first idle 75s, second 45s
	if _, err := p.PowerState(ctx, opts("ipmi://10.0.0.2", "pw")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ff.all()[0].isClosed, "the idle driver to be closed")
	if ff.all()[1].isClosed() || p.Len() != 1 {
		t.Fatalf("busy driver closed or wrong Len %d", p.Len())
	}
}
