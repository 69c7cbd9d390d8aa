// Package index is the in-memory view of the inventory that Anvil's boot
// services (pxe/dhcp, pxe/httpboot) answer from: boot MAC -> Host, its
// Machine (Host.spec.consumerRef), the Machine's MachineClass and whether
// the Host should network boot now (see Decide).
//
// The Index is fed by the event handlers of controller-runtime informers
// (the manager's cache, shared with the controllers) and keeps maps that
// are updated incrementally per event under a RWMutex. Lookup, BootSpec
// and Artifact only read those maps: nothing on a packet or request path
// calls the API server.
//
// The package also has the API-backed dhcp.LeaseStore (leases kept in
// Host.status.leases) and the PXE discovery callback that creates Hosts
// for unknown MACs.
package index

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/httpboot"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts;machines;machineclasses,verbs=get;list;watch,roleName=anvil-pxe

// Informers is the part of a controller-runtime cache the Index needs
// (cache.Cache, e.g. mgr.GetCache(), implements it).
type Informers interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// Options configures an Index.
type Options struct {
	// Informers is where the event handlers are registered: the manager's
	// cache, so the index shares the informers (and their single watch
	// per kind) with the controllers. Required.
	Informers Informers
	Logger    logr.Logger
}

// Index answers the boot services from memory. It implements pxe.Backend,
// httpboot.BootSpecSource and httpboot.ArtifactSource.
type Index struct {
	log logr.Logger

	mu        sync.RWMutex
	hosts     map[types.NamespacedName]*hostEntry
	macs      map[string][]*hostEntry // normalised boot MAC -> every Host claiming it
	machines  map[types.NamespacedName]machineEntry
	classes   map[types.NamespacedName]*classEntry
	artifacts map[string]artifactRef                // artifact path -> artifact and its class
	leaseIPs  map[netip.Addr][]leaseRef             // durable leases (Host status) by address
	statics   map[netip.Addr][]types.NamespacedName // spec.network.address of every Host

	regMu sync.Mutex
	regs  []registration

	// shadowed is signalled when a discovered, unaccepted Host shares a
	// MAC with another Host (the Discoverer then deletes it).
	shadowed chan struct{}
}

var (
	_ pxe.Backend             = (*Index)(nil)
	_ httpboot.BootSpecSource = (*Index)(nil)
	_ httpboot.ArtifactSource = (*Index)(nil)
)

// hostEntry is one Host as the boot services need it. obj is the
// informer's object, shared with the cache: read-only.
type hostEntry struct {
	key      types.NamespacedName
	obj      *metalv1.Host
	rec      pxe.HostRecord     // MAC unset
	claim    inventory.MACClaim // which Host keeps a shared MAC; Yields: discovered, not accepted
	macs     []string
	consumer *types.NamespacedName
	leases   map[string]dhcp.Lease // by MAC; only the Host's boot MACs
}

type machineEntry struct {
	class types.NamespacedName
}

type artifactRef struct {
	art   httpboot.Artifact
	class types.NamespacedName
}

type leaseRef struct {
	mac     string
	host    types.NamespacedName
	expires time.Time
}

type registration struct {
	inf cache.Informer
	reg toolscache.ResourceEventHandlerRegistration
}

// New creates an Index and registers its event handlers with
// opts.Informers. It does not wait for the informers to sync (the cache may
// not be started yet); call WaitForSync before answering clients, or a
// registered Host would look unknown (and be "discovered" again).
func New(ctx context.Context, opts Options) (*Index, error) {
	if opts.Informers == nil {
		return nil, fmt.Errorf("index: Options.Informers is required")
	}
	ix := &Index{
		log:       opts.Logger.WithName("pxe-index"),
		hosts:     map[types.NamespacedName]*hostEntry{},
		macs:      map[string][]*hostEntry{},
		machines:  map[types.NamespacedName]machineEntry{},
		classes:   map[types.NamespacedName]*classEntry{},
		artifacts: map[string]artifactRef{},
		leaseIPs:  map[netip.Addr][]leaseRef{},
		statics:   map[netip.Addr][]types.NamespacedName{},
		shadowed:  make(chan struct{}, 1),
	}
	for _, w := range []struct {
		obj       client.Object
		set       func(any)
		del       func(any)
		kindLabel string
	}{
		{&metalv1.Host{}, ix.setHost, ix.deleteHost, "Host"},
		{&metalv1.Machine{}, ix.setMachine, ix.deleteMachine, "Machine"},
		{&metalv1.MachineClass{}, ix.setClass, ix.deleteClass, "MachineClass"},
	} {
		inf, err := opts.Informers.GetInformer(ctx, w.obj, cache.BlockUntilSynced(false))
		if err != nil {
			ix.Close()
			return nil, fmt.Errorf("index: informer for %s: %w", w.kindLabel, err)
		}
		set, del := w.set, w.del
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    set,
			UpdateFunc: func(_, n any) { set(n) },
			DeleteFunc: del,
		})
		if err != nil {
			ix.Close()
			return nil, fmt.Errorf("index: event handler for %s: %w", w.kindLabel, err)
		}
		ix.regMu.Lock()
		ix.regs = append(ix.regs, registration{inf: inf, reg: reg})
		ix.regMu.Unlock()
	}
	return ix, nil
}

// HasSynced reports whether every handler has seen its informer's initial
// list.
func (ix *Index) HasSynced() bool {
	ix.regMu.Lock()
	defer ix.regMu.Unlock()
	if len(ix.regs) == 0 {
		return false
	}
	for _, r := range ix.regs {
		if !r.reg.HasSynced() {
			return false
		}
	}
	return true
}

// WaitForSync blocks until HasSynced or ctx is done.
func (ix *Index) WaitForSync(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !ix.HasSynced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("index: waiting for the Host/Machine/MachineClass informers: %w", ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// Close removes the event handlers (the informers keep running for the
// rest of the manager). The Index keeps its last state.
func (ix *Index) Close() {
	ix.regMu.Lock()
	defer ix.regMu.Unlock()
	for _, r := range ix.regs {
		_ = r.inf.RemoveEventHandler(r.reg)
	}
	ix.regs = nil
}

// unwrap returns the object of an event, also for a tombstone.
func unwrap(o any) any {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return o
}

func keyOf(o client.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}

// --- Hosts ---

func (ix *Index) setHost(o any) {
	h, ok := unwrap(o).(*metalv1.Host)
	if !ok {
		return
	}
	e := newHostEntry(h)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeHostLocked(e.key)
	ix.hosts[e.key] = e
	shadow := false
	for _, m := range e.macs {
		for _, o := range ix.macs[m] {
			shadow = shadow || o.claim.Yields != e.claim.Yields
		}
		ix.macs[m] = append(ix.macs[m], e)
	}
	if shadow {
		select {
		case ix.shadowed <- struct{}{}:
		default:
		}
	}
	for mac, l := range e.leases {
		ix.leaseIPs[l.IP] = append(ix.leaseIPs[l.IP], leaseRef{mac: mac, host: e.key, expires: l.Expires})
	}
	if e.rec.IP.IsValid() {
		a := e.rec.IP.Addr()
		ix.statics[a] = append(ix.statics[a], e.key)
	}
}

func (ix *Index) deleteHost(o any) {
	h, ok := unwrap(o).(*metalv1.Host)
	if !ok {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeHostLocked(keyOf(h))
}

// removeHostLocked drops every contribution of the Host with key k.
func (ix *Index) removeHostLocked(k types.NamespacedName) {
	old, ok := ix.hosts[k]
	if !ok {
		return
	}
	delete(ix.hosts, k)
	for _, m := range old.macs {
		rest := slices.DeleteFunc(ix.macs[m], func(e *hostEntry) bool { return e.key == k })
		if len(rest) == 0 {
			delete(ix.macs, m)
		} else {
			ix.macs[m] = rest
		}
	}
	for _, l := range old.leases {
		rest := slices.DeleteFunc(ix.leaseIPs[l.IP], func(r leaseRef) bool { return r.host == k })
		if len(rest) == 0 {
			delete(ix.leaseIPs, l.IP)
		} else {
			ix.leaseIPs[l.IP] = rest
		}
	}
	if old.rec.IP.IsValid() {
		a := old.rec.IP.Addr()
		rest := slices.DeleteFunc(ix.statics[a], func(n types.NamespacedName) bool { return n == k })
		if len(rest) == 0 {
			delete(ix.statics, a)
		} else {
			ix.statics[a] = rest
		}
	}
}

func newHostEntry(h *metalv1.Host) *hostEntry {
	e := &hostEntry{
		key:    keyOf(h),
		obj:    h,
		rec:    hostRecord(h),
		claim:  inventory.ClaimOf(h),
		leases: map[string]dhcp.Lease{},
	}
	seen := map[string]bool{}
	for _, raw := range h.Spec.BootMACs {
		if m, err := inventory.NormalizeMAC(raw); err == nil && !seen[m] {
			seen[m] = true
			e.macs = append(e.macs, m)
		}
	}
	if ref := h.Spec.ConsumerRef; ref != nil && ref.Name != "" && (ref.Kind == "" || ref.Kind == "Machine") {
		ns := ref.Namespace
		if ns == "" {
			ns = h.Namespace
		}
		e.consumer = &types.NamespacedName{Namespace: ns, Name: ref.Name}
	}
	for _, l := range h.Status.Leases {
		m, err := inventory.NormalizeMAC(l.MAC)
		if err != nil || !seen[m] {
			continue // a MAC the Host no longer boots from
		}
		ip, err := netip.ParseAddr(l.IP)
		if err != nil || !ip.Is4() {
			continue
		}
		hw, _ := net.ParseMAC(m)
		e.leases[m] = dhcp.Lease{MAC: hw, IP: ip, Expires: l.ExpiresAt.Time}
	}
	return e
}

// ownerLocked returns the Host that owns a boot MAC (see hostLess).
func (ix *Index) ownerLocked(mac string) *hostEntry {
	var best *hostEntry
	for _, e := range ix.macs[mac] {
		if best == nil || hostLess(e, best) {
			best = e
		}
	}
	return best
}

// Lookup implements pxe.Backend: the record of the Host owning mac, or an
// error wrapping pxe.ErrNotFound.
func (ix *Index) Lookup(_ context.Context, mac net.HardwareAddr) (pxe.HostRecord, error) {
	key := pxe.MACKey(mac)
	ix.mu.RLock()
	e := ix.ownerLocked(key)
	var r pxe.HostRecord
	if e != nil {
		r = e.rec
		r.DNS = slices.Clone(e.rec.DNS)
	}
	ix.mu.RUnlock()
	if e == nil {
		return pxe.HostRecord{}, fmt.Errorf("%s: %w", key, pxe.ErrNotFound)
	}
	r.MAC = slices.Clone(mac)
	return r, nil
}

// Hosts returns how many Hosts the index holds.
func (ix *Index) Hosts() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.hosts)
}

// Known reports whether any Host (accepted or not, owner or not) lists mac
// as a boot MAC. Discovery uses it so it never creates a second Host for a
// MAC that is already registered.
func (ix *Index) Known(mac net.HardwareAddr) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.macs[pxe.MACKey(mac)]) > 0
}

// Host returns the cached Host object owning mac. It is the informer's
// object: callers must not modify it (DeepCopy first).
func (ix *Index) Host(mac net.HardwareAddr) (*metalv1.Host, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	e := ix.ownerLocked(pxe.MACKey(mac))
	if e == nil {
		return nil, false
	}
	return e.obj, true
}

// DiscoveredHost is a Host discovery created that nobody has accepted
// (inventory.YieldsMAC).
type DiscoveredHost struct {
	Key             types.NamespacedName
	UID             types.UID
	ResourceVersion string
	Created         time.Time
	// Shadowed: another, registered Host lists one of its MACs.
	Shadowed bool
}

// Discovered lists the discovered, unaccepted Hosts.
func (ix *Index) Discovered() []DiscoveredHost {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []DiscoveredHost
	for _, e := range ix.hosts {
		if !e.claim.Yields {
			continue
		}
		d := DiscoveredHost{Key: e.key, UID: e.obj.UID, ResourceVersion: e.obj.ResourceVersion, Created: e.claim.Created}
		for _, m := range e.macs {
			for _, o := range ix.macs[m] {
				d.Shadowed = d.Shadowed || !o.claim.Yields
			}
		}
		out = append(out, d)
	}
	return out
}

// DiscoveredCount is len(Discovered()), without the copies.
func (ix *Index) DiscoveredCount() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := 0
	for _, e := range ix.hosts {
		if e.claim.Yields {
			n++
		}
	}
	return n
}

// HasHost reports whether the index has the Host with key k.
func (ix *Index) HasHost(k types.NamespacedName) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	_, ok := ix.hosts[k]
	return ok
}

// --- Machines and MachineClasses ---

func (ix *Index) setMachine(o any) {
	m, ok := unwrap(o).(*metalv1.Machine)
	if !ok {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.machines[keyOf(m)] = machineEntry{class: types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.MachineClassRef.Name}}
}

func (ix *Index) deleteMachine(o any) {
	m, ok := unwrap(o).(*metalv1.Machine)
	if !ok {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	delete(ix.machines, keyOf(m))
}

func (ix *Index) setClass(o any) {
	c, ok := unwrap(o).(*metalv1.MachineClass)
	if !ok {
		return
	}
	e := parseClass(c)
	for _, err := range []error{e.specErr, e.otherErr} {
		if err != nil {
			ix.log.Info("MachineClass has unusable artifacts", "error", err.Error())
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeClassLocked(e.key)
	ix.classes[e.key] = e
	for p, a := range e.artifacts {
		ix.artifacts[p] = artifactRef{art: a, class: e.key}
	}
}

func (ix *Index) deleteClass(o any) {
	c, ok := unwrap(o).(*metalv1.MachineClass)
	if !ok {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeClassLocked(keyOf(c))
}

func (ix *Index) removeClassLocked(k types.NamespacedName) {
	old, ok := ix.classes[k]
	if !ok {
		return
	}
	delete(ix.classes, k)
	for p := range old.artifacts {
		if ix.artifacts[p].class == k {
			delete(ix.artifacts, p)
		}
	}
}

// BootSpec implements httpboot.BootSpecSource: the kernel, initrds and
// kernel arguments of the MachineClass of the Machine holding the Host.
// A missing link (no consumerRef, Machine or class not in the cache)
// wraps pxe.ErrNotFound.
func (ix *Index) BootSpec(_ context.Context, host pxe.HostRecord) (httpboot.BootSpec, error) {
	key := types.NamespacedName{Namespace: host.Namespace, Name: host.Name}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	h, ok := ix.hosts[key]
	if !ok {
		return httpboot.BootSpec{}, fmt.Errorf("Host %s: %w", key, pxe.ErrNotFound)
	}
	if h.consumer == nil {
		return httpboot.BootSpec{}, fmt.Errorf("Host %s is held by no Machine (spec.consumerRef): %w", key, pxe.ErrNotFound)
	}
	m, ok := ix.machines[*h.consumer]
	if !ok {
		return httpboot.BootSpec{}, fmt.Errorf("machine %s of Host %s: %w", h.consumer, key, pxe.ErrNotFound)
	}
	c, ok := ix.classes[m.class]
	if !ok {
		return httpboot.BootSpec{}, fmt.Errorf("MachineClass %s of Machine %s: %w", m.class, h.consumer, pxe.ErrNotFound)
	}
	if c.specErr != nil {
		return httpboot.BootSpec{}, c.specErr
	}
	return httpboot.BootSpec{
		KernelURL:  c.spec.KernelURL,
		InitrdURLs: slices.Clone(c.spec.InitrdURLs),
		Args:       slices.Clone(c.spec.Args),
	}, nil
}

// Artifact implements httpboot.ArtifactSource for the paths described at
// KernelPath.
func (ix *Index) Artifact(_ context.Context, path string) (httpboot.Artifact, error) {
	ix.mu.RLock()
	a, ok := ix.artifacts[path]
	ix.mu.RUnlock()
	if !ok {
		return httpboot.Artifact{}, fmt.Errorf("artifact %q: %w", path, pxe.ErrNotFound)
	}
	return a.art, nil
}

// ClassOfArtifact returns the MachineClass an artifact path belongs to
// (for httpboot.Options.OnArtifactMismatch, to set a condition on it).
func (ix *Index) ClassOfArtifact(path string) (types.NamespacedName, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	a, ok := ix.artifacts[path]
	return a.class, ok
}

// --- lease views for LeaseStore ---

// durableLeaseLocked is mac's lease as stored in Host status (the latest
// expiry if, unusually, two Hosts list the MAC).
func (ix *Index) durableLeaseLocked(mac string) (dhcp.Lease, bool) {
	var best dhcp.Lease
	found := false
	for _, e := range ix.macs[mac] {
		if l, ok := e.leases[mac]; ok && (!found || l.Expires.After(best.Expires)) {
			best, found = l, true
		}
	}
	return best, found
}

// heldByOtherLocked reports whether a MAC other than mac holds a durable
// lease on ip that has not expired at now.
func (ix *Index) heldByOtherLocked(ip netip.Addr, mac string, now time.Time) bool {
	for _, r := range ix.leaseIPs[ip] {
		if r.mac != mac && r.expires.After(now) {
			return true
		}
	}
	return false
}

// staticLocked reports whether ip is some Host's static address.
func (ix *Index) staticLocked(ip netip.Addr) bool { return len(ix.statics[ip]) > 0 }
