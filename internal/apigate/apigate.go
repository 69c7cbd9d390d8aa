// Package apigate orders one process's API writes by how long their
// clients can wait.
//
// In a boot storm the network boot services write Host status for three
// reasons per host: the DHCP lease (before the ACK), the script's boot
// credential and the config's consumption. Firmware gives a DHCP REQUEST
// about a minute in all (EDK2: 4+8+16+32 s) and then stops booting; iPXE
// waits on its HTTP connection for minutes. When the API server (or the
// client's own rate limit) admits fewer writes than the storm asks for, a
// first-come order lets the later stages' writes delay the leases past the
// firmware's patience, and those hosts fail. The Gate lets Urgent writes
// (leases) go first and Normal ones (HTTP) when no Urgent write waits.
//
// Strictly: a Normal write that has waited long does not overtake. Normal
// writes are not starved for long: Urgent ones come one per host and DHCP
// exchange, so they stop when the rack has its leases. Measured on the
// bench (a storm of 2,000 hosts, bench/RESULTS.md section 4): without the
// gate the first hosts' script writes took most of the API budget, lease
// writes fell to a few a second, and 1,067 hosts' ACKs came after their
// firmware had given up; with it the 2,000 leases were written at the
// rate the API server allowed (about 50 a second) and every host booted.
package apigate

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Priority of a write.
type Priority int

const (
	// Urgent writes have a client waiting with a short deadline (a DHCP
	// REQUEST).
	Urgent Priority = iota
	// Normal writes have a patient client (an HTTP request).
	Normal
)

func (p Priority) String() string {
	if p == Urgent {
		return "urgent"
	}
	return "normal"
}

// Options configures a Gate.
type Options struct {
	// Slots is how many writes may be in flight at once (default 32: the
	// DHCP server's lease writers). Beyond it writes wait their turn.
	Slots int
	// Registerer gets anvil_api_write_gate_wait_seconds{priority}; nil
	// registers nothing.
	Registerer prometheus.Registerer
	Now        func() time.Time
}

// Gate hands out write slots, Urgent first.
type Gate struct {
	opts Options
	wait *prometheus.HistogramVec

	mu      sync.Mutex
	free    int
	waiters [2][]*waiter // FIFO per priority
}

type waiter struct {
	ready chan struct{} // closed when the slot is handed over
}

// New returns a Gate.
func New(o Options) *Gate {
	if o.Slots <= 0 {
		o.Slots = 32
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	g := &Gate{opts: o, free: o.Slots}
	g.wait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "anvil_api_write_gate_wait_seconds",
		Help:    "Time an API write of the network boot services waited for a slot, by priority (urgent: DHCP leases; normal: boot scripts and configs).",
		Buckets: []float64{0.001, 0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60},
	}, []string{"priority"})
	if o.Registerer != nil {
		_ = o.Registerer.Register(g.wait) // a second Gate in one registry keeps the first's series
	}
	return g
}

// Acquire waits for a slot and returns its release. It returns ctx's error
// if ctx ends first.
func (g *Gate) Acquire(ctx context.Context, p Priority) (release func(), err error) {
	start := g.opts.Now()
	g.mu.Lock()
	if g.free > 0 { // then nobody waits: release hands a slot to a waiter before freeing it
		g.free--
		g.mu.Unlock()
		g.wait.WithLabelValues(p.String()).Observe(0)
		return g.release, nil
	}
	w := &waiter{ready: make(chan struct{})}
	g.waiters[p] = append(g.waiters[p], w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		g.wait.WithLabelValues(p.String()).Observe(g.opts.Now().Sub(start).Seconds())
		return g.release, nil
	case <-ctx.Done():
		g.mu.Lock()
		handed := true
		for i, x := range g.waiters[p] {
			if x == w {
				g.waiters[p] = append(g.waiters[p][:i], g.waiters[p][i+1:]...)
				handed = false
				break
			}
		}
		g.mu.Unlock()
		if handed { // the slot came as ctx ended: pass it on
			g.release()
		}
		return nil, ctx.Err()
	}
}

// release hands the slot to the next waiter: the oldest Urgent one, else
// the oldest Normal one.
func (g *Gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	next := Priority(-1)
	switch {
	case len(g.waiters[Urgent]) > 0:
		next = Urgent
	case len(g.waiters[Normal]) > 0:
		next = Normal
	}
	if next < 0 {
		g.free++
		return
	}
	w := g.waiters[next][0]
	g.waiters[next] = g.waiters[next][1:]
	close(w.ready)
}

// Client returns c with its writes (Create, Update, Patch, Apply, Delete,
// DeleteAllOf and those of its subresources) taken through the gate at p.
// Reads pass straight through.
func (g *Gate) Client(c client.Client, p Priority) client.Client {
	return &gated{Client: c, g: g, p: p}
}

type gated struct {
	client.Client
	g *Gate
	p Priority
}

func (c *gated) do(ctx context.Context, f func() error) error {
	release, err := c.g.Acquire(ctx, c.p)
	if err != nil {
		return err
	}
	defer release()
	return f()
}

func (c *gated) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.do(ctx, func() error { return c.Client.Create(ctx, obj, opts...) })
}

func (c *gated) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.do(ctx, func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c *gated) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.do(ctx, func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}

func (c *gated) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return c.do(ctx, func() error { return c.Client.Apply(ctx, obj, opts...) })
}

func (c *gated) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.do(ctx, func() error { return c.Client.Delete(ctx, obj, opts...) })
}

func (c *gated) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return c.do(ctx, func() error { return c.Client.DeleteAllOf(ctx, obj, opts...) })
}

// Status is SubResource("status"), as in controller-runtime's client.
func (c *gated) Status() client.SubResourceWriter {
	return &gatedSubClient{SubResourceClient: c.Client.SubResource("status"), c: c}
}

func (c *gated) SubResource(name string) client.SubResourceClient {
	return &gatedSubClient{SubResourceClient: c.Client.SubResource(name), c: c}
}

// gatedSubClient is a SubResourceClient (reads and writes) with gated
// writes.
type gatedSubClient struct {
	client.SubResourceClient
	c *gated
}

func (s *gatedSubClient) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return s.c.do(ctx, func() error { return s.SubResourceClient.Create(ctx, obj, sub, opts...) })
}

func (s *gatedSubClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.do(ctx, func() error { return s.SubResourceClient.Update(ctx, obj, opts...) })
}

func (s *gatedSubClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.do(ctx, func() error { return s.SubResourceClient.Patch(ctx, obj, patch, opts...) })
}

func (s *gatedSubClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return s.c.do(ctx, func() error { return s.SubResourceClient.Apply(ctx, obj, opts...) })
}
