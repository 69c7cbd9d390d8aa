package simhost

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// Options configure a Fleet. Zero durations take the defaults noted.
type Options struct {
	// Config reaches the API server; the fleet's client is unthrottled
	// (the simulated kubelets are thousands of clients, not one). Required.
	Config *rest.Config
	// Namespace of the simulated Hosts. Required.
	Namespace string
	// Selector limits which Hosts of the namespace are simulated (default
	// all of them).
	Selector labels.Selector
	// BootURL is Anvil's HTTP boot server, e.g. http://127.0.0.1:8080.
	// Required.
	BootURL string

	// POSTDelay is the time from the BMC taking the boot to the first
	// script request (default 2s; real servers take minutes). Jittered
	// by ±20% like every delay below.
	POSTDelay time.Duration
	// KernelBootDelay is from the script to the config request: iPXE
	// loads kernel and initrd, the kernel starts Ignition (default 2s; real
	// hosts take tens of seconds).
	KernelBootDelay time.Duration
	// AgentStartDelay is from the config fetch to the agent's first
	// report: Ignition writes the files, the OS boots, systemd starts the
	// agent (default 1s; real hosts take tens of seconds).
	AgentStartDelay time.Duration
	// KubeletStartDelay is from the config fetch to the Node's
	// registration (default 1s: a real host also installs the OS and
	// downloads the kubelet).
	KubeletStartDelay time.Duration
	// NodeStatusInterval is how often the kubelet posts node status when
	// nothing changed (default 5m, the kubelet's
	// nodeStatusReportFrequency). The first post is at a random point of
	// the interval, so a fleet does not post in step.
	NodeStatusInterval time.Duration
	// PollInterval is the agent's action poll (default 30s, like
	// anvil-agent); the server's pollAfterSeconds wins when longer,
	// unless IgnorePollHint (tests that cannot wait 30 s).
	PollInterval   time.Duration
	IgnorePollHint bool
	// PollWait is how long the server may hold an action poll (long poll,
	// as anvil-agent; default 5m; negative: the short poll only). A held
	// poll is followed by the next at once.
	PollWait time.Duration
	// ReportInterval is the agent's periodic report (default 10m).
	ReportInterval time.Duration
	// ApplyDelay is the simulated upgrade (download, install, restart,
	// health check; default 5s), spread over the progress phases.
	ApplyDelay time.Duration
	// WipeDelay is the simulated wipe (default 2s).
	WipeDelay time.Duration
	// FailFraction of upgrade plans fail (rolled back) with FailReason.
	FailFraction float64
	FailReason   string
	// FailUpgrade, if set, is asked first for every plan: a non-empty
	// reason fails it (rolled back) with that reason.
	FailUpgrade func(host types.NamespacedName, version string) (reason string)
	// Seed makes delays, failures and boot IDs repeatable (0: random).
	Seed uint64
	// Concurrency bounds the HTTP requests and API writes in flight
	// across the fleet (default 64).
	Concurrency int
	// FirstAddress is the loopback source address of the first simulated
	// host; the next ones count up (default 127.100.0.1).
	FirstAddress netip.Addr
	// KubeletVersionFor says which kubelet a host runs whose config has
	// no KubeletEnvPath: one booted with Cluster API bootstrap data (plus
	// Anvil's agent part), where kubeadm starts the kubelet the image
	// carries (a test answers with the CAPI Machine's spec.version). Such a
	// host's kubelet registers its Node under the host's hostname (the
	// NoCloud meta-data's local-hostname; for Ignition /etc/hostname, else
	// ANVIL_NODE_NAME), without a providerID: Anvil's Machine controller
	// sets it. Without KubeletVersionFor such boots fail. It is called from
	// the host's goroutine with the Host as the boot found it.
	KubeletVersionFor func(host *metalv1.Host) string
	// OnEvent, if set, is called on every step a host takes (from the
	// host's goroutine; keep it fast).
	OnEvent func(Event)
	Logger  logr.Logger
}

func (o *Options) defaults() error {
	if o.Config == nil || o.Namespace == "" || o.BootURL == "" {
		return errors.New("simhost: Options need Config, Namespace and BootURL")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.POSTDelay, 2*time.Second)
	def(&o.KernelBootDelay, 2*time.Second)
	def(&o.AgentStartDelay, time.Second)
	def(&o.KubeletStartDelay, time.Second)
	def(&o.NodeStatusInterval, 5*time.Minute)
	def(&o.PollInterval, 30*time.Second)
	if o.PollWait == 0 {
		o.PollWait = 5 * time.Minute
	}
	def(&o.ReportInterval, 10*time.Minute)
	def(&o.ApplyDelay, 5*time.Second)
	def(&o.WipeDelay, 2*time.Second)
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if !o.FirstAddress.IsValid() {
		o.FirstAddress = netip.AddrFrom4([4]byte{127, 100, 0, 1})
	}
	if !o.FirstAddress.Is4() || !o.FirstAddress.IsLoopback() {
		return fmt.Errorf("simhost: FirstAddress %s is not an IPv4 loopback address", o.FirstAddress)
	}
	if o.FailReason == "" {
		o.FailReason = "simulated failure: the new kubelet did not become healthy; rolled back"
	}
	if o.Selector == nil {
		o.Selector = labels.Everything()
	}
	return nil
}

// EventKind names a step of a simulated host.
type EventKind string

// Steps reported through Options.OnEvent.
const (
	EventScriptFetched    EventKind = "ScriptFetched"    // the iPXE script, with a boot credential
	EventConfigFetched    EventKind = "ConfigFetched"    // Ignition fetched with the credential: the boot counts as booted
	EventBootFailed       EventKind = "BootFailed"       // no credential or no config: the boot fails like a real one
	EventReported         EventKind = "Reported"         // agent report accepted
	EventNodeRegistered   EventKind = "NodeRegistered"   // Node created (Ready)
	EventPlanReceived     EventKind = "PlanReceived"     // the agent got an upgrade plan
	EventPlanSucceeded    EventKind = "PlanSucceeded"    // outcome posted
	EventPlanFailed       EventKind = "PlanFailed"       // outcome posted
	EventWiped            EventKind = "Wiped"            // disks erased (the outcome is posted next)
	EventPoweredOff       EventKind = "PoweredOff"       // the OS stopped (spec.online false)
	EventAgentRefused     EventKind = "AgentRefused"     // the agent API refused the credential
	EventNodeStatusPosted EventKind = "NodeStatusPosted" // a periodic or changed node status
)

// Event is one step of one host.
type Event struct {
	Host types.NamespacedName
	Kind EventKind
	// BootRequest is the Host's boot request the step belongs to.
	BootRequest string
	// PlanID for plan events; Version the kubelet version after it.
	PlanID  string
	Version string
	At      time.Time
}

// Stats count what the fleet did.
type Stats struct {
	Hosts, Boots, ScriptRetries, ConfigsFetched, BootsFailed int64
	Reports, Polls, NodesRegistered, NodeStatusPosts         int64
	Upgrades, UpgradesFailed, Wipes                          int64
	// Errors counts failed calls that were retried or given up.
	Errors    int64
	LastError string
}

// Fleet runs the simulated hosts of one namespace.
type Fleet struct {
	o     Options
	c     client.Client
	cache cache.Cache
	hc    *http.Client
	sem   chan struct{}

	rndMu sync.Mutex
	rnd   *rand.Rand

	mu       sync.Mutex
	hosts    map[types.NamespacedName]*simHost
	nextAddr uint32
	wg       sync.WaitGroup
	closed   bool // no more hosts start (Run is returning)
	started  chan struct{}

	stats   statCounters
	errMu   sync.Mutex
	lastErr string
}

type statCounters struct {
	hosts, boots, scriptRetries, configs, bootsFailed atomic.Int64
	reports, polls, nodes, nodeStatus                 atomic.Int64
	upgrades, upgradesFailed, wipes, errors           atomic.Int64
}

// Scheme has what the fleet reads and writes: core types and Anvil's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = metalv1.AddToScheme(s)
	return s
}

// MachineVersion is a KubeletVersionFor for hosts booted with bootstrap
// data: the spec.version of the Anvil Machine that holds the Host (what
// kubeadm starts on an image carrying that kubelet), "" when none does.
func MachineVersion(c client.Reader) func(*metalv1.Host) string {
	return func(h *metalv1.Host) string {
		m := &metalv1.Machine{}
		ref := h.Spec.ConsumerRef
		if ref == nil || c.Get(context.Background(), types.NamespacedName{Namespace: h.Namespace, Name: ref.Name}, m) != nil {
			return ""
		}
		return m.Spec.Version
	}
}

// New builds a fleet; Run starts it.
func New(o Options) (*Fleet, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(o.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling
	cfg.UserAgent = "simhost"
	s := Scheme()
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("simhost: client: %w", err)
	}
	ca, err := cache.New(cfg, cache.Options{Scheme: s,
		DefaultNamespaces: map[string]cache.Config{o.Namespace: {}},
		ByObject:          map[client.Object]cache.ByObject{&metalv1.Host{}: {Label: o.Selector}},
	})
	if err != nil {
		return nil, fmt.Errorf("simhost: cache: %w", err)
	}
	seed := o.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &Fleet{
		o: o, c: c, cache: ca, hc: newHTTPClient(), sem: make(chan struct{}, o.Concurrency),
		rnd:     rand.New(rand.NewPCG(seed, seed^0x5eed)),
		hosts:   map[types.NamespacedName]*simHost{},
		started: make(chan struct{}),
	}, nil
}

// Started is closed once the fleet watches its Hosts.
func (f *Fleet) Started() <-chan struct{} { return f.started }

// Run simulates every selected Host of the namespace until ctx ends.
func (f *Fleet) Run(ctx context.Context) error {
	inf, err := f.cache.GetInformer(ctx, &metalv1.Host{})
	if err != nil {
		return fmt.Errorf("simhost: Host informer: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { f.wake(ctx, o) },
		UpdateFunc: func(_, o any) { f.wake(ctx, o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			f.wake(ctx, o)
		},
	})
	if err != nil {
		return fmt.Errorf("simhost: Host informer handler: %w", err)
	}
	cacheErr := make(chan error, 1)
	go func() { cacheErr <- f.cache.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	ok := f.cache.WaitForCacheSync(syncCtx)
	cancel()
	if !ok {
		return errors.New("simhost: the Host cache did not sync within 2 minutes")
	}
	close(f.started)
	select {
	case <-ctx.Done():
	case err := <-cacheErr:
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("simhost: cache: %w", err)
		}
	}
	f.mu.Lock()
	f.closed = true // informer events may still arrive; they start nothing
	f.mu.Unlock()
	f.wg.Wait()
	f.hc.CloseIdleConnections()
	return nil
}

// wake hands a Host's change to its simulated host, starting one for a
// Host seen the first time.
func (f *Fleet) wake(ctx context.Context, o any) {
	h, ok := o.(*metalv1.Host)
	if !ok || len(h.Spec.BootMACs) == 0 || ctx.Err() != nil {
		return
	}
	key := types.NamespacedName{Namespace: h.Namespace, Name: h.Name}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	s := f.hosts[key]
	if s == nil {
		addr := f.o.FirstAddress.As4()
		n := uint32(addr[1])<<16 | uint32(addr[2])<<8 | uint32(addr[3])
		n += f.nextAddr
		f.nextAddr++
		s = newSimHost(f, key, netip.AddrFrom4([4]byte{127, byte(n >> 16), byte(n >> 8), byte(n)}))
		f.hosts[key] = s
		f.stats.hosts.Add(1)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			s.run(ctx)
		}()
	}
	f.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake is pending; it reads the latest Host then
	}
}

// host returns the cached Host (nil when deleted).
func (f *Fleet) host(ctx context.Context, key types.NamespacedName) *metalv1.Host {
	h := &metalv1.Host{}
	if err := f.cache.Get(ctx, key, h); err != nil {
		return nil
	}
	return h
}

// Stats returns the counters.
func (f *Fleet) Stats() Stats {
	c := &f.stats
	f.errMu.Lock()
	last := f.lastErr
	f.errMu.Unlock()
	return Stats{
		Hosts: c.hosts.Load(), Boots: c.boots.Load(), ScriptRetries: c.scriptRetries.Load(), ConfigsFetched: c.configs.Load(),
		BootsFailed: c.bootsFailed.Load(), Reports: c.reports.Load(), Polls: c.polls.Load(), NodesRegistered: c.nodes.Load(),
		NodeStatusPosts: c.nodeStatus.Load(), Upgrades: c.upgrades.Load(), UpgradesFailed: c.upgradesFailed.Load(),
		Wipes: c.wipes.Load(), Errors: c.errors.Load(), LastError: last,
	}
}

func (f *Fleet) fail(err error) {
	f.stats.errors.Add(1)
	f.errMu.Lock()
	f.lastErr = err.Error()
	f.errMu.Unlock()
	f.o.Logger.V(1).Info("simulated host: call failed", "error", err.Error())
}

func (f *Fleet) event(e Event) {
	if f.o.OnEvent != nil {
		e.At = time.Now()
		f.o.OnEvent(e)
	}
}

// acquire takes one of the fleet's in-flight slots.
func (f *Fleet) acquire(ctx context.Context) bool {
	select {
	case f.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (f *Fleet) release() { <-f.sem }

// jitter spreads d over [0.8d, 1.2d].
func (f *Fleet) jitter(d time.Duration) time.Duration {
	f.rndMu.Lock()
	x := f.rnd.Float64()
	f.rndMu.Unlock()
	return time.Duration(float64(d) * (0.8 + 0.4*x))
}

func (f *Fleet) float() float64 {
	f.rndMu.Lock()
	defer f.rndMu.Unlock()
	return f.rnd.Float64()
}

// bootID is a random /proc/sys/kernel/random/boot_id.
func (f *Fleet) bootID() string {
	f.rndMu.Lock()
	a, b := f.rnd.Uint64(), f.rnd.Uint64()
	f.rndMu.Unlock()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a)&0xfff, uint16(b>>48)&0x3fff|0x8000, b&0xffffffffffff)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// srcKey carries a host's source address to the shared transport.
type srcKey struct{}

// newAgentHTTPClient is one simulated agent's: like anvil-agent's (the
// default agent/onhost/client transport), it keeps its connection alive between
// polls, so an idle fleet costs the server requests, not TCP handshakes.
// It dials from the host's address.
func newAgentHTTPClient(src netip.Addr) (*http.Client, func()) {
	d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: src.AsSlice()}}
	tr := &http.Transport{Proxy: nil, DialContext: d.DialContext, MaxIdleConnsPerHost: 1, ResponseHeaderTimeout: 30 * time.Second}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}, tr.CloseIdleConnections
}

// newHTTPClient is shared by every simulated host: no keep-alive, so each
// request dials from the address its context names.
func newHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	tr := &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dd := *d
			if a, ok := ctx.Value(srcKey{}).(netip.Addr); ok {
				dd.LocalAddr = &net.TCPAddr{IP: a.AsSlice()}
			}
			return dd.DialContext(ctx, network, addr)
		},
		ResponseHeaderTimeout: 30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}
