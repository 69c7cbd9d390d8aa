package simhost

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"anvil.dev/anvil/agent"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/index"
)

// simHost is one simulated server. Its goroutine (run) owns every field
// but the ones under mu, which its OS's agent and kubelet share.
type simHost struct {
	f    *Fleet
	key  types.NamespacedName
	addr netip.Addr
	wake chan struct{}

	lastBoot string // the boot request whose OS runs (or failed)
	os       *osRun

	mu      sync.Mutex
	version string                  // the kubelet version the host runs
	plans   map[string]agent.Result // outcomes of applied plans (the agent's state dir)
}

// osRun is one booted OS: its agent and, for a provisioning boot, its
// kubelet.
type osRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func newSimHost(f *Fleet, key types.NamespacedName, addr netip.Addr) *simHost {
	return &simHost{f: f, key: key, addr: addr, wake: make(chan struct{}, 1), plans: map[string]agent.Result{}}
}

func (s *simHost) run(ctx context.Context) {
	ctx = context.WithValue(ctx, srcKey{}, s.addr)
	defer s.stopOS()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		h := s.f.host(ctx, s.key)
		if h == nil {
			s.f.mu.Lock()
			delete(s.f.hosts, s.key)
			s.f.mu.Unlock()
			return
		}
		s.step(ctx, h)
	}
}

// step does what the server does about the Host's latest state: boot
// when the BMC took a new network boot, stop when powered off. A Rejoin
// request is no boot: it only arms the next one, and the server runs on.
func (s *simHost) step(ctx context.Context, h *metalv1.Host) {
	rejoin := h.Spec.BootRequest != nil && h.Spec.BootRequest.Purpose == metalv1.BootPurposeRejoin
	switch {
	case index.Decide(h).PXE && h.Status.BootRequestID != s.lastBoot && !rejoin:
		s.stopOS() // the reset ends whatever ran
		s.lastBoot = h.Status.BootRequestID
		s.boot(ctx, h.Status.BootRequestID)
	case !h.Spec.Online && s.os != nil:
		s.stopOS()
		s.f.event(Event{Host: s.key, Kind: EventPoweredOff, BootRequest: s.lastBoot})
	}
}

func (s *simHost) stopOS() {
	if s.os == nil {
		return
	}
	s.os.cancel()
	<-s.os.done
	s.os = nil
}

// boot is one network boot: POST, script, config, then the OS.
func (s *simHost) boot(ctx context.Context, bootReq string) {
	f := s.f
	if !sleep(ctx, f.jitter(f.o.POSTDelay)) {
		return
	}
	h := f.host(ctx, s.key)
	if h == nil || !index.Decide(h).PXE || h.Status.BootRequestID != bootReq {
		return // reset or powered off again during POST
	}
	f.stats.boots.Add(1)
	cfg, err := s.fetchConfig(ctx, h, bootReq)
	if err != nil {
		f.stats.bootsFailed.Add(1)
		f.fail(fmt.Errorf("host %s, boot %s: %w", s.key, bootReq, err))
		f.event(Event{Host: s.key, Kind: EventBootFailed, BootRequest: bootReq})
		return
	}
	f.stats.configs.Add(1)
	f.event(Event{Host: s.key, Kind: EventConfigFetched, BootRequest: bootReq})
	if cfg.kubeletVersion != "" {
		s.mu.Lock()
		s.version = cfg.kubeletVersion // a provisioning boot installs this one
		s.mu.Unlock()
	}
	octx, cancel := context.WithCancel(ctx)
	run := &osRun{cancel: cancel, done: make(chan struct{})}
	s.os = run
	var wg sync.WaitGroup
	var k *kubelet
	if !cfg.wipe {
		k = newKubelet(s, cfg, bootReq)
		wg.Add(1)
		go func() { defer wg.Done(); k.run(octx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); s.runAgent(octx, cfg, bootReq, k) }()
	go func() { wg.Wait(); close(run.done) }()
}

// errNoCredential: the script carried no config URL (another request got
// the boot's credential): the real boot would come up without a config.
var errNoCredential = errors.New("the iPXE script carries no config URL with a boot credential")

func (s *simHost) currentVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}
