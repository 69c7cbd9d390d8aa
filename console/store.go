package console

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// kind is a resource the console shows.
type kind string

const (
	kindHosts      kind = "hosts"
	kindMachines   kind = "machines"
	kindMachineSet kind = "machinesets"
	kindTickets    kind = "ticketdeliveries"
)

// newList is the typed list of a kind.
func newList(k kind) client.ObjectList {
	switch k {
	case kindHosts:
		return &metalv1.HostList{}
	case kindMachines:
		return &metalv1.MachineList{}
	case kindMachineSet:
		return &metalv1.MachineSetList{}
	case kindTickets:
		return &metalv1.TicketDeliveryList{}
	}
	panic("console: unknown kind " + string(k))
}

func newObject(k kind) client.Object {
	switch k {
	case kindHosts:
		return &metalv1.Host{}
	case kindMachines:
		return &metalv1.Machine{}
	case kindMachineSet:
		return &metalv1.MachineSet{}
	case kindTickets:
		return &metalv1.TicketDelivery{}
	}
	panic("console: unknown kind " + string(k))
}

// store is one session's view of one namespace: an informer per kind,
// listing and watching with the person's own credentials, so what the
// console shows is exactly what RBAC lets them read. Pages render from it
// and live streams wait on its generation counter. A kind they may not
// list is recorded as forbidden (shown on the page), not retried forever.
type store struct {
	c  client.WithWatch
	ns string

	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	informers map[kind]toolscache.SharedIndexInformer
	forbidden map[kind]error
	gen       uint64
	changed   chan struct{} // closed and replaced on every change
	lastUsed  time.Time
	streams   int
}

func newStore(parent context.Context, c client.WithWatch, ns string) *store {
	ctx, cancel := context.WithCancel(parent)
	return &store{c: c, ns: ns, ctx: ctx, cancel: cancel, informers: map[kind]toolscache.SharedIndexInformer{},
		forbidden: map[kind]error{}, changed: make(chan struct{}), lastUsed: time.Now()}
}

func (s *store) stop() { s.cancel() }

// bump records a change and wakes every waiting stream.
func (s *store) bump() {
	s.mu.Lock()
	s.gen++
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// generation and the channel closed on the next change.
func (s *store) generation() (uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, s.changed
}

func (s *store) touch(streamDelta int) {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.streams += streamDelta
	s.mu.Unlock()
}

// idleSince is when the store was last used, or zero while a stream reads it.
func (s *store) idleSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams > 0 {
		return time.Time{}
	}
	return s.lastUsed
}

// ensure starts the informers of kinds (once) and waits for their first list.
func (s *store) ensure(ctx context.Context, kinds ...kind) error {
	var wait []toolscache.InformerSynced
	for _, k := range kinds {
		s.mu.Lock()
		inf, ok := s.informers[k]
		_, denied := s.forbidden[k]
		s.mu.Unlock()
		if denied {
			continue
		}
		if !ok {
			// One small list first: a kind the person may not list is
			// recorded, not handed to an informer that would retry forever.
			if err := s.c.List(ctx, newList(k), client.InNamespace(s.ns), client.Limit(1)); err != nil {
				if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
					s.mu.Lock()
					s.forbidden[k] = err
					s.mu.Unlock()
					continue
				}
				return fmt.Errorf("listing %s: %w", k, err)
			}
			inf = s.start(k)
		}
		wait = append(wait, inf.HasSynced)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), wait...) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return errors.New("the console's view of the API did not sync")
	}
	return nil
}

func (s *store) start(k kind) toolscache.SharedIndexInformer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if inf, ok := s.informers[k]; ok {
		return inf
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l := newList(k)
			err := s.c.List(ctx, l, &client.ListOptions{Namespace: s.ns, Raw: &o})
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return s.c.Watch(ctx, newList(k), &client.ListOptions{Namespace: s.ns, Raw: &o})
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, newObject(k), 0, toolscache.Indexers{})
	// managedFields are most of an object's size and never shown.
	_ = inf.SetTransform(func(o any) (any, error) {
		if m, err := meta.Accessor(o); err == nil {
			m.SetManagedFields(nil)
		}
		return o, nil
	})
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.bump() },
		UpdateFunc: func(any, any) { s.bump() },
		DeleteFunc: func(any) { s.bump() },
	})
	go inf.RunWithContext(s.ctx)
	s.informers[k] = inf
	return inf
}

// denied is the error of a kind the person may not list (nil if allowed).
func (s *store) denied(k kind) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forbidden[k]
}

func (s *store) items(k kind) []any {
	s.mu.Lock()
	inf := s.informers[k]
	s.mu.Unlock()
	if inf == nil {
		return nil
	}
	return inf.GetStore().List()
}

func (s *store) hosts() []*metalv1.Host {
	items := s.items(kindHosts)
	out := make([]*metalv1.Host, 0, len(items))
	for _, o := range items {
		out = append(out, o.(*metalv1.Host))
	}
	sort.Slice(out, func(i, j int) bool { return lessKey(out[i], out[j]) })
	return out
}

func (s *store) machines() []*metalv1.Machine {
	items := s.items(kindMachines)
	out := make([]*metalv1.Machine, 0, len(items))
	for _, o := range items {
		out = append(out, o.(*metalv1.Machine))
	}
	sort.Slice(out, func(i, j int) bool { return lessKey(out[i], out[j]) })
	return out
}

func (s *store) machineSets() []*metalv1.MachineSet {
	items := s.items(kindMachineSet)
	out := make([]*metalv1.MachineSet, 0, len(items))
	for _, o := range items {
		out = append(out, o.(*metalv1.MachineSet))
	}
	sort.Slice(out, func(i, j int) bool { return lessKey(out[i], out[j]) })
	return out
}

func (s *store) tickets() []*metalv1.TicketDelivery {
	items := s.items(kindTickets)
	out := make([]*metalv1.TicketDelivery, 0, len(items))
	for _, o := range items {
		out = append(out, o.(*metalv1.TicketDelivery))
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Spec.EnqueuedAt.Time.After(out[j].Spec.EnqueuedAt.Time)
	})
	return out
}

func (s *store) host(ns, name string) *metalv1.Host {
	s.mu.Lock()
	inf := s.informers[kindHosts]
	s.mu.Unlock()
	if inf == nil {
		return nil
	}
	o, ok, _ := inf.GetStore().GetByKey(ns + "/" + name)
	if !ok {
		return nil
	}
	return o.(*metalv1.Host)
}

func lessKey(a, b client.Object) bool {
	if a.GetNamespace() != b.GetNamespace() {
		return a.GetNamespace() < b.GetNamespace()
	}
	return a.GetName() < b.GetName()
}

// eventWatch follows the Events of one object for a live stream, with the
// person's credentials: an informer scoped by a field selector.
type eventWatch struct {
	inf    toolscache.SharedIndexInformer
	cancel context.CancelFunc
}

func (s *store) watchEvents(ctx context.Context, kindName, ns, name string, onChange func()) (*eventWatch, error) {
	sel := fields.Set{"involvedObject.kind": kindName, "involvedObject.name": name}.AsSelector().String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			l := &corev1.EventList{}
			err := s.c.List(ctx, l, &client.ListOptions{Namespace: ns, Raw: &o})
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return s.c.Watch(ctx, &corev1.EventList{}, &client.ListOptions{Namespace: ns, Raw: &o})
		},
	}
	if err := s.c.List(ctx, &corev1.EventList{}, client.InNamespace(ns), client.Limit(1)); err != nil {
		return nil, err
	}
	inf := toolscache.NewSharedIndexInformer(lw, &corev1.Event{}, 0, toolscache.Indexers{})
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { onChange() },
		UpdateFunc: func(any, any) { onChange() },
		DeleteFunc: func(any) { onChange() },
	})
	wctx, cancel := context.WithCancel(ctx)
	go inf.RunWithContext(wctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		return nil, ctx.Err()
	}
	return &eventWatch{inf: inf, cancel: cancel}, nil
}

func (w *eventWatch) events() []*corev1.Event {
	var out []*corev1.Event
	for _, o := range w.inf.GetStore().List() {
		out = append(out, o.(*corev1.Event))
	}
	sortEvents(out)
	return out
}

// listEvents reads an object's Events once (a page render).
func listEvents(ctx context.Context, c client.Client, kindName, ns, name string) ([]*corev1.Event, error) {
	l := &corev1.EventList{}
	sel := fields.Set{"involvedObject.kind": kindName, "involvedObject.name": name}.AsSelector()
	if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	out := make([]*corev1.Event, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	sortEvents(out)
	return out, nil
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// sortEvents orders Events oldest first, as they happened.
func sortEvents(es []*corev1.Event) {
	sort.SliceStable(es, func(i, j int) bool { return eventTime(es[i]).Before(eventTime(es[j])) })
}
