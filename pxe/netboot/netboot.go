// Package netboot runs Anvil's network boot services — DHCP (full or
// proxy), TFTP and HTTP boot — against the Kubernetes API: one Run call,
// one typed Options struct, flags for `anvil serve` from BindFlags.
//
// The services answer from pxe/index, an in-memory view fed by the
// manager's informers; the only API writes are DHCP leases (into
// Host.status.leases, before the ACK) and Hosts created by discovery.
package netboot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/pxe/neigh"
	"anvil.dev/anvil/pxe/tftp"
)

// Run starts the enabled services and serves until ctx is done (then it
// returns nil) or one of them fails (then it stops the others and returns
// the error). It returns nil at once when no service is enabled.
//
// Run first waits for the index to sync, so a registered Host is never
// mistaken for an unknown one. It opens every socket on the calling
// goroutine and runs the TFTP server on it (it opens one socket per
// transfer from there): to serve inside a network namespace, call Run from
// a goroutine locked to a thread in that namespace.
func Run(ctx context.Context, o Options) error {
	if !o.Enabled() {
		return nil
	}
	if err := o.Validate(); err != nil {
		return err
	}
	log := o.Logger
	if log.GetSink() == nil {
		log = logr.FromContextOrDiscard(ctx)
	}
	log = log.WithName("netboot")

	ix, err := index.New(ctx, index.Options{Informers: o.Cache, Logger: log})
	if err != nil {
		return err
	}
	defer ix.Close()
	log.Info("waiting for the Host, Machine and MachineClass informers")
	if err := ix.WaitForSync(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	comp := Components{Index: ix}
	// A segment with more hosts than the kernel's neighbour table loses
	// DHCP replies in a boot storm, silently: say so (package neigh).
	registerNeighbourOverflows(o.Registerer, neigh.StatFile)
	nc := &neighbourCheck{dir: neigh.ThreshDir, hosts: ix.Hosts, log: log}
	go nc.run(ctx)

	sv, err := open(ctx, o, &comp, log)
	if err != nil {
		return err
	}
	if sv.artifacts != nil {
		// Prefetch every class's upstream artifacts now and on changes.
		stop, err := sv.artifacts.run(ctx, o.Cache)
		if err != nil {
			sv.release()
			return fmt.Errorf("netboot: artifacts: %w", err)
		}
		defer stop()
	}
	if sv.ipxeDir != "" {
		defer os.RemoveAll(sv.ipxeDir)
	}
	return sv.serve(ctx, o, comp, log)
}

// servers are the opened services.
type servers struct {
	dhcp      *dhcp.Server
	disc      *index.Discoverer // with Discovery: deletes expired and shadowed discovered Hosts
	tftp      *tftp.Server
	v6        *servers6 // DHCPv6 and TFTP over IPv6, when DHCP6Interface is set
	http      *httpboot.Server
	ln        net.Listener
	artifacts *artifacts
	ipxeDir   string // with HTTPS: the trust-patched iPXE binaries, removed at the end
}

// open builds every enabled server and opens its sockets. On an error it
// releases what it already opened.
func open(ctx context.Context, o Options, comp *Components, log logr.Logger) (sv servers, err error) {
	defer func() {
		if err != nil {
			sv.release()
		}
	}()
	// The lease store first: the HTTP hooks get it in Components (the
	// config endpoint checks a request's source against the lease).
	if o.DHCP && o.DHCPMode == dhcp.ModeFull {
		comp.Leases, err = index.NewLeaseStore(index.LeaseStoreOptions{Index: comp.Index, Client: o.Client, APIReader: o.APIReader, Logger: log})
		if err != nil {
			return sv, err
		}
	}
	if o.tls != nil {
		if sv.ipxeDir, err = trustedIPXEDir("", o.tls.caDER); err != nil {
			return sv, err
		}
		o.TFTPRoot, o.IPXEDir = sv.ipxeDir, sv.ipxeDir
	}
	// DHCPv6 before HTTP too: its leases bind IPv6 boots (Components).
	if sv.v6, err = open6(o, comp, log); err != nil {
		return sv, err
	}
	if sv.v6 != nil {
		comp.Leases6 = sv.v6.dhcp
		o.ipxe6Dir = sv.v6.root
	}
	if o.HTTPBoot {
		sv.artifacts = newArtifacts(o, comp.Index, log)
		if sv.http, err = newHTTP(o, comp, sv.artifacts, log); err != nil {
			return sv, err
		}
		if sv.ln, err = net.Listen("tcp", o.HTTPAddr); err != nil {
			return sv, fmt.Errorf("netboot: HTTP: %w", err)
		}
	}
	if o.DHCP {
		if sv.dhcp, sv.disc, err = newDHCP(o, comp, log); err != nil {
			return sv, err
		}
	}
	// Last: a tftp.Server cannot be released without serving.
	if o.TFTP {
		sv.tftp, err = tftp.NewServer(tftp.Options{
			Root: o.TFTPRoot, ListenAddr: o.TFTPListen, Interface: o.Interface, MaxConcurrent: o.TFTPMaxConcurrent,
			MaxPerSource: o.TFTPMaxPerSource, FirstAckTimeout: o.TFTPFirstAckTimeout,
			Registerer: o.Registerer, Logger: log,
		})
		if err != nil {
			return sv, err
		}
	}
	return sv, nil
}

// release closes what open opened, for the error path.
func (sv servers) release() {
	if sv.ipxeDir != "" {
		os.RemoveAll(sv.ipxeDir)
	}
	if sv.artifacts != nil {
		sv.artifacts.queue.ShutDown()
	}
	sv.v6.release()
	if sv.ln != nil {
		sv.ln.Close()
	}
	if sv.http != nil {
		sv.http.Close()
	}
	if sv.dhcp != nil {
		// Serve on a cancelled context closes the sockets and returns.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = sv.dhcp.Serve(ctx)
	}
}

func newHTTP(o Options, comp *Components, arts *artifacts, log logr.Logger) (*httpboot.Server, error) {
	var scripts httpboot.ScriptSource
	var err error
	if o.Scripts != nil {
		scripts, err = o.Scripts(*comp)
	} else {
		scripts, err = httpboot.NewScripts(httpboot.ScriptOptions{Backend: comp.Index, BootSpecs: comp.Index})
	}
	if err != nil {
		return nil, fmt.Errorf("netboot: scripts: %w", err)
	}
	onMismatch := o.OnArtifactMismatch
	if onMismatch == nil {
		onMismatch = arts.onLocalMismatch
	}
	s, err := httpboot.New(httpboot.Options{
		ListenAddr: o.HTTPAddr, Scripts: scripts,
		ArtifactDir: o.ArtifactDir, Artifacts: comp.Index, OnArtifactMismatch: onMismatch,
		CacheDir: o.CacheDir, IPXEDir: o.IPXEDir, IPXE6Dir: o.ipxe6Dir,
		MaxConns: o.HTTPMaxConns, MaxConnsPerSource: o.HTTPMaxConnsPerSource,
		WriteStallTimeout: o.HTTPWriteStallTimeout, MaxRanges: o.HTTPMaxRanges, TLS: o.httpTLS(), CAInitrd: o.caInitrd(),
		Upstream: httpboot.UpstreamOptions{Guard: netguard.Guard{Allow: o.ArtifactAllow}, OnResult: arts.onResult,
			RetryBase: o.ArtifactRetryBase},
		Registerer: o.Registerer, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	arts.srv = s
	comp.HTTP = s
	patterns := make([]string, 0, len(o.Handlers))
	for p := range o.Handlers {
		patterns = append(patterns, p)
	}
	slices.Sort(patterns) // deterministic errors for conflicting patterns
	for _, p := range patterns {
		if err := s.Handle(p, o.Handlers[p]); err != nil {
			s.Close()
			return nil, err
		}
	}
	if o.HTTPHook != nil {
		if err := o.HTTPHook(*comp, s); err != nil {
			s.Close()
			return nil, fmt.Errorf("netboot: HTTP hook: %w", err)
		}
	}
	return s, nil
}

func newDHCP(o Options, comp *Components, log logr.Logger) (*dhcp.Server, *index.Discoverer, error) {
	ifAddr, err := interfaceAddr(o.Interface, o.ServerIP)
	if err != nil {
		return nil, nil, fmt.Errorf("netboot: DHCP: %w", err)
	}
	serverIP := ifAddr.Addr()
	opts := dhcp.Options{
		Mode: o.DHCPMode, Interface: o.Interface, ListenAddr: o.DHCPListen, ServerIP: serverIP,
		Backend: comp.Index, LeaseTime: o.LeaseTime,
		Boot:       dhcp.BootOptions{HTTPBaseURL: o.baseURL(serverIP)},
		Registerer: o.Registerer, Logger: log,
	}
	if o.DHCPMode == dhcp.ModeFull {
		if opts.Subnets, err = o.subnets(ifAddr); err != nil {
			return nil, nil, err
		}
		opts.Leases = comp.Leases
	}
	var d *index.Discoverer
	if o.Discovery {
		d, err = index.NewDiscoverer(index.DiscovererOptions{Client: o.Client, Namespace: o.DiscoveryNamespace, Index: comp.Index,
			MaxHosts: o.DiscoveryMaxHosts, TTL: o.DiscoveryTTL, Registerer: o.Registerer, Logger: log})
		if err != nil {
			return nil, nil, err
		}
		opts.Discovery.OnDiscover = d.OnDiscover
	}
	s, err := dhcp.NewServer(opts)
	return s, d, err
}

// serve runs the opened servers until ctx is done or one fails.
func (sv servers) serve(ctx context.Context, o Options, comp Components, log logr.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once     sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(name string, err error) {
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			once.Do(func() { firstErr = fmt.Errorf("netboot: %s: %w", name, err) })
		}
		cancel() // one service ending ends them all
	}
	if sv.dhcp != nil {
		wg.Go(func() { fail("DHCP", sv.dhcp.Serve(ctx)) })
	}
	if sv.disc != nil {
		wg.Go(func() { sv.disc.Run(ctx) })
	}
	if sv.http != nil {
		wg.Go(func() { fail("HTTP", sv.http.Serve(ctx, sv.ln)) })
	}
	sv.v6.start(ctx, wg.Go, fail)
	log.Info("boot services started", "dhcp", o.DHCP, "dhcpMode", o.DHCPMode, "tftp", o.TFTP, "httpBoot", o.HTTPBoot, "discovery", o.Discovery)
	if o.OnReady != nil {
		o.OnReady(comp)
	}
	if sv.tftp != nil {
		fail("TFTP", sv.tftp.Serve(ctx)) // on this goroutine: see Run
	} else {
		<-ctx.Done()
	}
	cancel()
	wg.Wait()
	return firstErr
}

// AddToManager runs the enabled services in mgr (on every replica: they
// do not need leader election), with the manager's cache, client and
// metrics registry unless o sets them, and adds a "netboot" readiness
// check that passes once every service listens. Nothing is added when no
// service is enabled.
func AddToManager(mgr manager.Manager, o Options) error {
	if !o.Enabled() {
		return nil
	}
	if o.Cache == nil {
		o.Cache = mgr.GetCache()
	}
	if o.Client == nil {
		o.Client = mgr.GetClient()
	}
	if o.APIReader == nil {
		o.APIReader = mgr.GetAPIReader()
	}
	if o.Registerer == nil {
		o.Registerer = ctrlmetrics.Registry
	}
	if o.Logger.GetSink() == nil {
		o.Logger = mgr.GetLogger()
	}
	if err := o.Validate(); err != nil {
		return err
	}
	var ready atomic.Bool
	userReady := o.OnReady
	o.OnReady = func(c Components) {
		ready.Store(true)
		if userReady != nil {
			userReady(c)
		}
	}
	if err := mgr.AddReadyzCheck("netboot", func(*http.Request) error {
		if !ready.Load() {
			return errors.New("boot services not serving yet")
		}
		return nil
	}); err != nil {
		return err
	}
	return mgr.Add(runnable{o: o})
}

type runnable struct{ o Options }

func (r runnable) Start(ctx context.Context) error { return Run(ctx, r.o) }

// NeedLeaderElection is false: every replica on a segment serves.
func (r runnable) NeedLeaderElection() bool { return false }
