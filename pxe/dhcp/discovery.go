package dhcp

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/pxe"
)

// maxTracked bounds the dedup table, so a flood of random MACs cannot grow
// memory without limit.
const maxTracked = 4096

type discoverEvent struct {
	mac         net.HardwareAddr
	arch        pxe.Arch
	vendorClass string
}

// discoverer deduplicates and rate-limits discovery reports and delivers
// them on its own goroutine, so a slow callback never stalls DHCP.
type discoverer struct {
	opts    DiscoveryOptions
	now     func() time.Time
	log     logr.Logger
	metrics *metrics
	events  chan discoverEvent

	mu     sync.Mutex
	seen   map[string]time.Time
	tokens float64
	last   time.Time
}

func newDiscoverer(opts DiscoveryOptions, now func() time.Time, log logr.Logger, m *metrics) *discoverer {
	return &discoverer{
		opts: opts, now: now, log: log, metrics: m,
		events: make(chan discoverEvent, 64),
		seen:   map[string]time.Time{},
		tokens: float64(opts.PerMinute),
	}
}

func (d *discoverer) start(ctx context.Context, wg *sync.WaitGroup) {
	if d.opts.OnDiscover == nil {
		return
	}
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-d.events:
				d.deliver(ev)
			}
		}
	})
}

func (d *discoverer) deliver(ev discoverEvent) {
	defer func() {
		if r := recover(); r != nil {
			d.log.Error(fmt.Errorf("panic: %v", r), "OnDiscover callback panicked")
		}
	}()
	d.opts.OnDiscover(ev.mac, ev.arch, ev.vendorClass)
}

// report queues a discovery event unless the MAC was reported within the
// interval or the global rate is exceeded. It never blocks.
func (d *discoverer) report(mac net.HardwareAddr, arch pxe.Arch, vendorClass string) {
	if d.opts.OnDiscover == nil {
		return
	}
	now := d.now()
	key := pxe.MACKey(mac)
	d.mu.Lock()
	if t, ok := d.seen[key]; ok && now.Sub(t) < d.opts.Interval {
		d.mu.Unlock()
		d.metrics.discover.WithLabelValues("duplicate").Inc()
		return
	}
	// Token bucket: PerMinute tokens, refilled continuously.
	rate := float64(d.opts.PerMinute) / 60
	d.tokens = min(float64(d.opts.PerMinute), d.tokens+now.Sub(d.last).Seconds()*rate)
	d.last = now
	if d.tokens < 1 {
		d.mu.Unlock()
		d.metrics.discover.WithLabelValues("rate_limited").Inc()
		return
	}
	if len(d.seen) >= maxTracked {
		for k, t := range d.seen {
			if now.Sub(t) >= d.opts.Interval {
				delete(d.seen, k)
			}
		}
		if len(d.seen) >= maxTracked {
			d.mu.Unlock()
			d.metrics.discover.WithLabelValues("overflow").Inc()
			return
		}
	}
	d.tokens--
	d.seen[key] = now
	d.mu.Unlock()

	ev := discoverEvent{mac: append(net.HardwareAddr(nil), mac...), arch: arch, vendorClass: vendorClass}
	select {
	case d.events <- ev:
		d.metrics.discover.WithLabelValues("reported").Inc()
	default:
		d.metrics.discover.WithLabelValues("overflow").Inc()
	}
}
