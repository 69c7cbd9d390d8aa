package index

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/pxe"
)

// Lease6 is a DHCPv6 lease of a boot MAC, as the DHCPv6 server reports
// and restores it (dhcp6.Lease).
type Lease6 struct {
	MAC     net.HardwareAddr
	IP      netip.Addr
	DUID    []byte
	Expires time.Time
}

// Lease6WriterOptions configure a Lease6Writer.
type Lease6WriterOptions struct {
	Index *Index
	// Client writes Host status; APIReader re-reads a Host after a
	// conflict. Required.
	Client    client.Client
	APIReader client.Reader
	// FieldOwner of status.leases6 (api/v1alpha1/STATUS.md). Default
	// "anvil-dhcp6".
	FieldOwner string
	Logger     logr.Logger
}

// Lease6Writer keeps the DHCPv6 server's leases in their Hosts'
// status.leases6, off the serving path: Enqueue never blocks, the newest
// lease of a MAC wins, and a failed write is retried with backoff (a
// client-go rate-limited work queue). The DHCPv6 server answers from
// memory; the Host objects are what a restart gets back (Persisted).
type Lease6Writer struct {
	o       Lease6WriterOptions
	log     logr.Logger
	queue   workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex
	pending map[string]Lease6 // by MAC key: the newest not yet written
}

// NewLease6Writer returns a writer; Run it.
func NewLease6Writer(o Lease6WriterOptions) (*Lease6Writer, error) {
	if o.Index == nil || o.Client == nil || o.APIReader == nil {
		return nil, fmt.Errorf("index: Lease6WriterOptions needs Index, Client and APIReader")
	}
	if o.FieldOwner == "" {
		o.FieldOwner = "anvil-dhcp6"
	}
	return &Lease6Writer{o: o, log: o.Logger.WithName("leases6"), pending: map[string]Lease6{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "anvil_dhcp6_leases"})}, nil
}

// Enqueue records l to be written (dhcp6.Options.OnBound).
func (w *Lease6Writer) Enqueue(l Lease6) {
	key := pxe.MACKey(l.MAC)
	w.mu.Lock()
	w.pending[key] = l
	w.mu.Unlock()
	w.queue.Add(key)
}

// Run writes queued leases until ctx ends.
func (w *Lease6Writer) Run(ctx context.Context) {
	go func() { <-ctx.Done(); w.queue.ShutDown() }()
	for {
		key, quit := w.queue.Get()
		if quit {
			return
		}
		w.mu.Lock()
		l, ok := w.pending[key]
		delete(w.pending, key)
		w.mu.Unlock()
		if !ok {
			w.queue.Forget(key)
			w.queue.Done(key)
			continue
		}
		if err := w.write(ctx, key, l); err != nil {
			w.log.Error(err, "DHCPv6 lease not written; retrying", "mac", key, "ip", l.IP.String())
			w.mu.Lock()
			if _, newer := w.pending[key]; !newer {
				w.pending[key] = l
			}
			w.mu.Unlock()
			w.queue.AddRateLimited(key)
		} else {
			w.queue.Forget(key)
		}
		w.queue.Done(key)
	}
}

// write sets the lease in its Host's status.leases6 (casWrite).
func (w *Lease6Writer) write(ctx context.Context, mac string, l Lease6) error {
	base, ok := w.o.Index.Host(l.MAC)
	if !ok {
		return nil // the Host is gone or no longer has the MAC: nothing to keep
	}
	key := client.ObjectKeyFromObject(base)
	if err := casWrite(ctx, w.o.Client, w.o.APIReader, base, "leases6", w.o.FieldOwner, 5, func(h *metalv1.Host) error {
		setLease6(h, mac, l) // not a boot MAC of h (any more): unchanged, nothing written
		return nil
	}); err != nil {
		return fmt.Errorf("writing the DHCPv6 lease of %s to Host %s: %w", mac, key, err)
	}
	w.log.V(1).Info("DHCPv6 lease written", "host", key.String(), "mac", mac, "ip", l.IP.String(), "expires", l.Expires.UTC().Format(time.RFC3339))
	return nil
}

// setLease6 sets mac's entry in h.status.leases6 (expiry rounded up to
// the second, as the API keeps it) and drops entries of MACs the Host no
// longer boots from. It reports false if mac is not a boot MAC of h.
func setLease6(h *metalv1.Host, mac string, l Lease6) bool {
	boot := bootMACSet(h)
	if !boot[mac] {
		return false
	}
	out := make([]metalv1.DHCPv6Lease, 0, len(h.Status.Leases6)+1)
	for _, e := range h.Status.Leases6 {
		if m, err := inventory.NormalizeMAC(e.MAC); err == nil && boot[m] && m != mac {
			out = append(out, e)
		}
	}
	exp := l.Expires.Truncate(time.Second)
	if exp.Before(l.Expires) {
		exp = exp.Add(time.Second)
	}
	out = append(out, metalv1.DHCPv6Lease{MAC: mac, IP: l.IP.String(), DUID: hex.EncodeToString(l.DUID), ExpiresAt: metav1.NewTime(exp)})
	slices.SortFunc(out, func(a, b metalv1.DHCPv6Lease) int { return strings.Compare(a.MAC, b.MAC) })
	h.Status.Leases6 = out
	return true
}

// Persisted6 are the unexpired leases in the indexed Hosts'
// status.leases6 of their current boot MACs (dhcp6.Options.Restore).
func (ix *Index) Persisted6(now time.Time) []Lease6 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []Lease6
	for _, e := range ix.hosts {
		for _, l := range e.obj.Status.Leases6 {
			m, err := inventory.NormalizeMAC(l.MAC)
			if err != nil || !slices.Contains(e.macs, m) || !l.ExpiresAt.After(now) {
				continue
			}
			hw, err1 := net.ParseMAC(m)
			ip, err2 := netip.ParseAddr(l.IP)
			if err1 != nil || err2 != nil || !ip.Is6() {
				continue
			}
			out = append(out, Lease6{MAC: hw, IP: ip, Expires: l.ExpiresAt.Time})
		}
	}
	return out
}
