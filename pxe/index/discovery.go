package index

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/pxe"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,namespace=anvil-system,resources=hosts,verbs=create;delete,roleName=anvil-pxe-discovery

// Discovery labels and annotations.
const (
	// LabelDiscovered marks Hosts created by PXE discovery.
	LabelDiscovered = inventory.LabelDiscovered
	// AnnotationVendorClass records the DHCP vendor class the host sent.
	AnnotationVendorClass = "metal.anvil.dev/discovered-vendor-class"
	// DiscoveredNamePrefix starts the name of every discovered Host.
	DiscoveredNamePrefix = "discovered-"
)

// DiscovererOptions configures a Discoverer.
type DiscovererOptions struct {
	// Client creates the Hosts. Required.
	Client client.Client
	// Namespace the Hosts are created in. Required.
	Namespace string
	// Index, if set, is checked first: a MAC that any Host lists already
	// creates nothing.
	Index *Index
	// Timeout bounds one create or delete. Default 10s.
	Timeout time.Duration
	// MaxHosts caps the discovered Hosts nobody has accepted yet (across
	// all namespaces, as the index sees them): at the cap a new MAC
	// creates nothing until one is accepted, deleted or expires. Default
	// DefaultDiscoveryMaxHosts. Several servers (one per node) each check
	// their own view, so the cap can be passed by a few.
	MaxHosts int
	// TTL: a discovered Host still not accepted this long after its
	// creation is deleted (Run). If the machine is still there and keeps
	// trying to boot, its next DISCOVER creates it again. Default
	// DefaultDiscoveryTTL.
	TTL time.Duration
	// Registerer receives anvil_discovery_hosts_total; nil keeps it private.
	Registerer prometheus.Registerer
	Logger     logr.Logger
	// Now is the clock, default time.Now.
	Now func() time.Time
}

// Defaults of DiscovererOptions (and of anvil serve's --discovery-max-hosts
// and --discovery-ttl).
const (
	DefaultDiscoveryMaxHosts = 1000
	DefaultDiscoveryTTL      = 24 * time.Hour
)

// Discoverer turns DHCP discovery reports (dhcp.DiscoveryOptions.OnDiscover,
// which the dhcp package deduplicates and rate-limits) into Host objects an
// administrator can accept by adding a BMC.
//
// A discovered Host nobody has accepted never keeps its MAC from a Host an
// administrator registers (inventory.YieldsMAC); Run deletes it then, and
// deletes those older than TTL.
type Discoverer struct {
	opts DiscovererOptions
	log  logr.Logger

	results *prometheus.CounterVec

	mu       sync.Mutex
	created  map[types.NamespacedName]time.Time // created here, not yet in the index
	fullSaid time.Time                          // last "cap reached" log
}

// NewDiscoverer validates opts.
func NewDiscoverer(opts DiscovererOptions) (*Discoverer, error) {
	if opts.Client == nil || opts.Namespace == "" {
		return nil, errors.New("index: DiscovererOptions needs Client and Namespace")
	}
	if opts.MaxHosts < 0 {
		return nil, fmt.Errorf("index: discovery MaxHosts %d is negative", opts.MaxHosts)
	}
	if opts.TTL < 0 {
		return nil, fmt.Errorf("index: discovery TTL %v is negative", opts.TTL)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.MaxHosts == 0 {
		opts.MaxHosts = DefaultDiscoveryMaxHosts
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultDiscoveryTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	results := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "anvil_discovery_hosts_total",
		Help: "MACs reported by DHCP discovery, by outcome (created: a Host; known: a Host lists the MAC; cap_reached: --discovery-max-hosts; error), and discovered Hosts deleted (deleted_expired, deleted_shadowed).",
	}, []string{"result"})
	if opts.Registerer != nil {
		results = pxe.Register(opts.Registerer, results)
	}
	return &Discoverer{opts: opts, log: opts.Logger.WithName("discovery"), results: results, created: map[types.NamespacedName]time.Time{}}, nil
}

// full reports whether MaxHosts discovered Hosts exist: those the index
// shows plus those created here that it does not show yet.
func (d *Discoverer) full() bool {
	if d.opts.Index == nil {
		return false
	}
	now := d.opts.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, at := range d.created {
		if d.opts.Index.HasHost(k) || now.Sub(at) > time.Minute {
			delete(d.created, k)
		}
	}
	if d.opts.Index.DiscoveredCount()+len(d.created) < d.opts.MaxHosts {
		return false
	}
	if now.Sub(d.fullSaid) >= time.Minute {
		d.fullSaid = now
		d.log.Info("discovered Hosts at the cap; new MACs create none until some are accepted, deleted or expire",
			"max", d.opts.MaxHosts, "flag", "--discovery-max-hosts")
	}
	return true
}

// Run deletes discovered, unaccepted Hosts that are older than TTL or
// share a MAC with a registered Host, at once when the index sees such a
// Host and every TTL/4 (at most a minute). It needs Index and returns when
// ctx is done.
func (d *Discoverer) Run(ctx context.Context) {
	if d.opts.Index == nil {
		return
	}
	every := min(time.Minute, max(d.opts.TTL/4, 100*time.Millisecond))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		d.sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.opts.Index.shadowed:
		}
	}
}

func (d *Discoverer) sweep(ctx context.Context) {
	now := d.opts.Now()
	for _, h := range d.opts.Index.Discovered() {
		why, result := "", ""
		switch {
		case h.Shadowed:
			why, result = "a registered Host has its MAC", "deleted_shadowed"
		case !h.Created.IsZero() && now.Sub(h.Created) >= d.opts.TTL:
			why, result = "not accepted within --discovery-ttl", "deleted_expired"
		default:
			continue
		}
		// Preconditions: an admin who accepted it meanwhile (a new
		// resourceVersion) keeps it.
		uid, rv := h.UID, h.ResourceVersion
		obj := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: h.Key.Namespace, Name: h.Key.Name}}
		dctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
		err := d.opts.Client.Delete(dctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv})
		cancel()
		switch {
		case err == nil:
			d.results.WithLabelValues(result).Inc()
			d.log.Info("deleted a discovered Host", "host", h.Key.String(), "why", why)
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		default:
			d.log.Error(err, "deleting a discovered Host", "host", h.Key.String())
		}
	}
}

// DiscoveredHostName is the name of the Host discovery creates for mac:
// discovered-<12 lower-case hex digits>.
func DiscoveredHostName(mac net.HardwareAddr) string {
	return DiscoveredNamePrefix + strings.ReplaceAll(pxe.MACKey(mac), ":", "")
}

// OnDiscover has the signature of dhcp.DiscoveryOptions.OnDiscover.
func (d *Discoverer) OnDiscover(mac net.HardwareAddr, arch pxe.Arch, vendorClass string) {
	ctx, cancel := context.WithTimeout(context.Background(), d.opts.Timeout)
	defer cancel()
	if _, err := d.Discover(ctx, mac, arch, vendorClass); err != nil {
		d.log.Error(err, "creating a Host for a discovered MAC", "mac", pxe.MACKey(mac))
	}
}

// Discover creates the Host for an unknown MAC: spec.bootMACs=[mac], no BMC
// (so the Host controller puts it in state Discovered, and the index never
// accepts it), the architecture and boot mode the DHCP request announced,
// and the label metal.anvil.dev/discovered=true. It reports whether it
// created one; an existing Host (of that name, or listing the MAC) is not
// an error.
func (d *Discoverer) Discover(ctx context.Context, mac net.HardwareAddr, arch pxe.Arch, vendorClass string) (bool, error) {
	if len(mac) != 6 {
		return false, errors.New("index: discovery needs a 48-bit MAC")
	}
	if d.opts.Index != nil && d.opts.Index.Known(mac) {
		d.results.WithLabelValues("known").Inc()
		return false, nil
	}
	if d.full() {
		d.results.WithLabelValues("cap_reached").Inc()
		return false, nil
	}
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{
			Name:      DiscoveredHostName(mac),
			Namespace: d.opts.Namespace,
			Labels:    map[string]string{LabelDiscovered: "true"},
		},
		Spec: metalv1.HostSpec{BootMACs: []string{pxe.MACKey(mac)}},
	}
	if vc := vendorClass; vc != "" {
		if len(vc) > 255 {
			vc = vc[:255]
		}
		h.Annotations = map[string]string{AnnotationVendorClass: strings.ToValidUTF8(vc, "?")}
	}
	switch arch.CPU() {
	case "amd64":
		h.Spec.Architecture = "x86_64"
	case "arm64":
		h.Spec.Architecture = "aarch64"
	}
	if arch != pxe.ArchUnknown {
		h.Spec.BootMode = "Legacy"
		if arch.UEFI() {
			h.Spec.BootMode = "UEFI"
		}
	}
	// A firmware that tried UEFI HTTP boot first is answered that way once
	// accepted (a PXE Host's HTTP boot attempt gets no boot file).
	if arch.HTTPBoot() || strings.HasPrefix(vendorClass, "HTTPClient") {
		h.Spec.BootMethod = metalv1.BootMethodHTTPBoot
	}
	err := d.opts.Client.Create(ctx, h)
	switch {
	case apierrors.IsAlreadyExists(err):
		d.results.WithLabelValues("known").Inc()
		return false, nil
	case err != nil:
		d.results.WithLabelValues("error").Inc()
		return false, err
	}
	d.results.WithLabelValues("created").Inc()
	d.mu.Lock()
	d.created[client.ObjectKeyFromObject(h)] = d.opts.Now()
	d.mu.Unlock()
	d.log.Info("created a Host for a MAC seen on the network; add its BMC to accept it",
		"host", h.Namespace+"/"+h.Name, "mac", pxe.MACKey(mac), "arch", string(arch))
	return true, nil
}
