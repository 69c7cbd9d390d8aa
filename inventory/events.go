package inventory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/backoff"
)

// BMC events (PowerOptions.Events): where a BMC pushes events (Redfish
// EventService server-sent events), a power change outside Anvil is seen
// when it happens, and the power poll becomes a safety net at
// PollMaxInterval. One stream serves every Host on one BMC service with the
// same credentials (a chassis manager, or the emulator's thousands of
// systems), opened with a driver of its own so it never holds a slot of
// the Pool's per-BMC call limit. An event that may concern a Host's power
// (bmc.Event.AboutPower) makes its next power read due now; the read, not
// the event, decides the state. A stream that ends may have missed events:
// its Hosts go back to the normal poll, and are all read once it is open
// again. A BMC without a stream is asked again after eventsUnsupportedRetry.

const (
	eventsRetryBase = 5 * time.Second
	eventsRetryMax  = 5 * time.Minute
	// eventsStable: a stream open this long counts as working, and its
	// next failure retries from eventsRetryBase again.
	eventsStable           = time.Minute
	eventsUnsupportedRetry = time.Hour
)

// bmcEvents keeps the streams. The zero value is unusable: start sets the
// context the streams run under and the channel that wakes Hosts.
type bmcEvents struct {
	ctx  context.Context
	log  logr.Logger
	wake chan event.GenericEvent
	// onEvent makes a Host's next power read due now (powerChecks.wake);
	// onDrop puts it back on the normal poll (powerChecks.soon).
	onEvent, onDrop func(types.NamespacedName)
	guard           func(*bmc.Options)

	mu      sync.Mutex
	streams map[string]*eventStream
	byHost  map[types.NamespacedName]string // Host -> stream key
}

type eventStream struct {
	key  string
	addr string // the BMC service, for logs (never credentials)
	// opts are the newest driver options a Host on the stream was
	// reconciled with (the credentials rotate with the Secret).
	opts   bmc.Options
	hosts  map[types.NamespacedName]string // Host -> its system path
	live   bool
	cancel context.CancelFunc
}

func newBMCEvents(ctx context.Context, log logr.Logger, guard func(*bmc.Options), onEvent, onDrop func(types.NamespacedName)) *bmcEvents {
	return &bmcEvents{ctx: ctx, log: log, wake: make(chan event.GenericEvent, 1024), guard: guard, onEvent: onEvent, onDrop: onDrop,
		streams: map[string]*eventStream{}, byHost: map[types.NamespacedName]string{}}
}

// streamKey is the BMC service (the address without its system path) and
// the credentials' fingerprint; ok is false for BMCs that push nothing.
func streamKey(opts bmc.Options) (key, service, systemPath string, ok bool) {
	a, err := bmc.ParseAddress(opts.Address)
	if err != nil || (a.Scheme != "redfish+https" && a.Scheme != "redfish+http") {
		return "", "", "", false
	}
	systemPath = a.Path
	if systemPath == "" || systemPath == "/redfish/v1" {
		// The driver then uses the BMC's only system: any system's event.
		systemPath = "/redfish/v1/Systems"
	}
	a.Path = ""
	service = a.String()
	return fmt.Sprintf("%s|%s|%t|%t", service, opts.Credentials.Fingerprint(), opts.DisableCertificateVerification, opts.AllowPlainHTTP), service, systemPath, true
}

// ensure puts the Host on the stream of its BMC service, starting it if
// it is the first; a Host whose BMC changed leaves its old stream.
func (e *bmcEvents) ensure(h *metalv1.Host, opts bmc.Options) {
	hk := hostKey(h)
	key, service, sys, ok := streamKey(opts)
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, had := e.byHost[hk]; had && old != key {
		e.leaveLocked(hk, old)
	}
	if !ok {
		return
	}
	st := e.streams[key]
	if st == nil {
		ctx, cancel := context.WithCancel(e.ctx)
		st = &eventStream{key: key, addr: service, hosts: map[types.NamespacedName]string{}, cancel: cancel}
		e.streams[key] = st
		go e.run(ctx, st)
	}
	st.opts = opts
	st.hosts[hk] = sys
	e.byHost[hk] = key
}

// forget takes a deleted Host off its stream.
func (e *bmcEvents) forget(hk types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if key, ok := e.byHost[hk]; ok {
		e.leaveLocked(hk, key)
	}
}

func (e *bmcEvents) leaveLocked(hk types.NamespacedName, key string) {
	delete(e.byHost, hk)
	st := e.streams[key]
	if st == nil {
		return
	}
	delete(st.hosts, hk)
	if len(st.hosts) == 0 {
		st.cancel()
		delete(e.streams, key)
	}
}

// live reports whether the Host's BMC events are arriving.
func (e *bmcEvents) live(hk types.NamespacedName) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.streams[e.byHost[hk]]
	return st != nil && st.live
}

// run keeps one stream open until its last Host leaves.
func (e *bmcEvents) run(ctx context.Context, st *eventStream) {
	log := e.log.WithValues("bmc", st.addr)
	// One driver, so one BMC session, for every subscription of the
	// stream: a stream that fails now and then does not log in each time.
	var d bmc.Driver
	closeDriver := func() {
		if d == nil {
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = d.Close(cctx)
		d = nil
	}
	defer closeDriver()
	failures, everLive := 0, false
	for ctx.Err() == nil {
		opened := time.Now()
		opts := st.optsCopy(e)
		e.guard(&opts)
		var err error
		if d == nil {
			d, err = bmc.Open(opts)
		}
		if err == nil {
			err = e.stream(ctx, st, d, opts, everLive)
		}
		if ctx.Err() != nil {
			return
		}
		wasLive := e.setLive(st, false)
		if wasLive {
			everLive = true
			for _, hk := range e.hostsOf(st) {
				e.onDrop(hk)
			}
		}
		if time.Since(opened) >= eventsStable {
			failures = 0
		}
		failures++
		wait := backoff.Backoff{Base: eventsRetryBase, Cap: eventsRetryMax, Low: 0.8, High: 1.2}.Delay(failures)
		switch {
		case errors.Is(err, bmc.ErrUnsupported):
			closeDriver() // no session held for an hour
			wait = eventsUnsupportedRetry
			log.Info("the BMC pushes no events; its Hosts' power is polled", "reason", err.Error(), "askAgainIn", wait)
		case errors.Is(err, bmc.ErrAuthFailed):
			closeDriver()
			wait = max(wait, opts.AuthBackoff())
			log.Info("BMC event stream refused the credentials; its Hosts' power is polled", "error", err.Error(), "retryIn", wait.Round(time.Second))
		case wasLive:
			log.Info("BMC event stream ended; its Hosts' power is polled until it is back", "error", err.Error(), "retryIn", wait.Round(time.Second))
		default:
			log.V(1).Info("BMC event stream failed", "error", err.Error(), "retryIn", wait.Round(time.Second))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (st *eventStream) optsCopy(e *bmcEvents) bmc.Options {
	e.mu.Lock()
	defer e.mu.Unlock()
	return st.opts
}

// stream opens one subscription and delivers its events until it ends.
// After an earlier stream ended (missed), every Host on it is read once.
func (e *bmcEvents) stream(ctx context.Context, st *eventStream, d bmc.Driver, opts bmc.Options, missed bool) error {
	es, err := bmc.EventSourceOf(d, st.addr)
	if err != nil {
		return err
	}
	s, err := es.SubscribeEvents(ctx)
	if err != nil {
		return bmc.Redact(err, opts.Credentials.Password)
	}
	defer s.Close()
	e.setLive(st, true)
	e.log.V(1).Info("BMC event stream open", "bmc", st.addr, "hosts", len(e.hostsOf(st)))
	if missed {
		for _, hk := range e.hostsOf(st) {
			e.deliver(ctx, hk)
		}
	}
	for {
		ev, err := s.Next()
		if err != nil {
			return bmc.Redact(err, opts.Credentials.Password)
		}
		if !ev.AboutPower() {
			continue
		}
		for _, hk := range e.concerned(st, ev) {
			e.deliver(ctx, hk)
		}
	}
}

// concerned lists the Hosts an event may be about: the one Host of a
// stream that has one, else those whose system it names.
func (e *bmcEvents) concerned(st *eventStream, ev bmc.Event) []types.NamespacedName {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []types.NamespacedName
	for hk, sys := range st.hosts {
		if len(st.hosts) == 1 || ev.ConcernsSystem(sys) {
			out = append(out, hk)
		}
	}
	return out
}

func (e *bmcEvents) hostsOf(st *eventStream) []types.NamespacedName {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(st.hosts))
	for hk := range st.hosts {
		out = append(out, hk)
	}
	return out
}

func (e *bmcEvents) setLive(st *eventStream, live bool) (was bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	was, st.live = st.live, live
	return was
}

// deliver makes the Host's power read due and wakes its reconcile.
func (e *bmcEvents) deliver(ctx context.Context, hk types.NamespacedName) {
	e.onEvent(hk)
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: hk.Namespace, Name: hk.Name}}
	select {
	case e.wake <- event.GenericEvent{Object: h}:
	case <-ctx.Done():
	}
}
