package machine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/cluster"
)

// Field indexes of the Machine controller.
const (
	// IndexHostConsumer indexes Hosts by the UID of the Machine holding them.
	IndexHostConsumer = "spec.consumerRef.uid"
	// IndexNodeProviderID indexes Nodes by spec.providerID.
	IndexNodeProviderID = "spec.providerID"
	// IndexMachineProviderID indexes Machines by status.providerID.
	IndexMachineProviderID = "status.providerID"
	// IndexMachineClass indexes Machines by their MachineClass name.
	IndexMachineClass = "spec.machineClassRef.name"
	// IndexMachineWaiting indexes Machines that hold no Host and wait for
	// one (WaitingForHardware) under "true".
	IndexMachineWaiting = "status.waitingForHardware"
	// IndexHostClaimable indexes Hosts a Machine may claim under "true".
	IndexHostClaimable = "status.claimable"
)

// AddIndexes registers the field indexes. Call once per manager.
func AddIndexes(ctx context.Context, idx client.FieldIndexer) error {
	for _, ix := range []struct {
		obj client.Object
		f   string
		fn  client.IndexerFunc
	}{
		{&metalv1.Host{}, IndexHostConsumer, func(o client.Object) []string {
			if ref := o.(*metalv1.Host).Spec.ConsumerRef; ref != nil && ref.UID != "" {
				return []string{string(ref.UID)}
			}
			return nil
		}},
		{&corev1.Node{}, IndexNodeProviderID, func(o client.Object) []string {
			if p := o.(*corev1.Node).Spec.ProviderID; strings.HasPrefix(p, ProviderIDPrefix) {
				return []string{p}
			}
			return nil
		}},
		{&metalv1.Machine{}, IndexMachineProviderID, func(o client.Object) []string {
			if p := o.(*metalv1.Machine).Status.ProviderID; p != "" {
				return []string{p}
			}
			return nil
		}},
		{&metalv1.Machine{}, IndexMachineClass, func(o client.Object) []string {
			return []string{o.(*metalv1.Machine).Spec.MachineClassRef.Name}
		}},
		{&metalv1.Machine{}, IndexMachineWaiting, func(o client.Object) []string {
			m := o.(*metalv1.Machine)
			if m.Status.HostRef == nil && m.DeletionTimestamp.IsZero() && waiting(m) {
				return []string{"true"}
			}
			return nil
		}},
		{&metalv1.Host{}, IndexHostHostname, hostHostname},
		{&metalv1.Host{}, IndexHostClaimable, func(o client.Object) []string {
			if claimable(o.(*metalv1.Host)) {
				return []string{"true"}
			}
			return nil
		}},
	} {
		if err := idx.IndexField(ctx, ix.obj, ix.f, ix.fn); err != nil {
			return err
		}
	}
	return nil
}

// machinesForHost wakes the Machine holding a Host, or, for a free Host,
// every Machine of its namespace waiting for one. Only those that found
// none: a Machine still on its way to its first claim is reconciled by its
// own events, and waking all of them on every Host event of a 5,000-Machine
// scale-up listed thousands of Machines per event.
func (r *MachineReconciler) machinesForHost(ctx context.Context, o client.Object) []reconcile.Request {
	h := o.(*metalv1.Host)
	if ref := h.Spec.ConsumerRef; ref != nil {
		ns := ref.Namespace
		if ns == "" {
			ns = h.Namespace
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: ref.Name}}}
	}
	if !claimable(h) {
		return nil
	}
	var list metalv1.MachineList
	// Names only: no deep copy of every waiting Machine per Host event.
	if err := r.Client.List(ctx, &list, client.InNamespace(h.Namespace), client.MatchingFields{IndexMachineWaiting: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
	}
	return out
}

// changePredicate passes an update of a T only when matters says it
// changes something the Machine controller reads.
func changePredicate[T client.Object](matters func(o, n T) bool) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(T)
		n, ok2 := e.ObjectNew.(T)
		return !ok1 || !ok2 || matters(o, n)
	}}
}

// nodeMatters reports whether a Node update changes a field the Machine
// controller reads: identity, providerID, cordon, addresses, kubelet
// version, deletion, or the Ready condition's status, reason or message.
// A kubelet posts its status every few minutes even when only the
// heartbeat times changed; at 5,000 Nodes those posts were two thirds of
// the idle Machine reconciles.
func nodeMatters(o, n *corev1.Node) bool {
	if o.UID != n.UID || o.Spec.ProviderID != n.Spec.ProviderID || o.Spec.Unschedulable != n.Spec.Unschedulable ||
		!o.DeletionTimestamp.Equal(n.DeletionTimestamp) || o.Status.NodeInfo.KubeletVersion != n.Status.NodeInfo.KubeletVersion || o.Status.NodeInfo.BootID != n.Status.NodeInfo.BootID ||
		!equality.Semantic.DeepEqual(o.Status.Addresses, n.Status.Addresses) {
		return true
	}
	or, nr := nodeReady(o), nodeReady(n)
	if or == nil || nr == nil {
		return or != nr
	}
	return or.Status != nr.Status || or.Reason != nr.Reason || or.Message != nr.Message
}

// hostMatters reports whether a Host update changes anything but the
// agent's lastSeen or the last power check: the agent's periodic report
// and the power poll, which say the Host is still as it was.
func hostMatters(o, n *metalv1.Host) bool {
	if o.Generation != n.Generation || !equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
		!equality.Semantic.DeepEqual(o.Annotations, n.Annotations) || !o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
		!equality.Semantic.DeepEqual(o.Finalizers, n.Finalizers) {
		return true
	}
	os, ns := o.Status, n.Status
	os.LastPowerCheck, ns.LastPowerCheck = nil, nil
	if os.Agent != nil && ns.Agent != nil {
		oa, na := *os.Agent, *ns.Agent
		oa.LastSeen, na.LastSeen = nil, nil
		os.Agent, ns.Agent = &oa, &na
	}
	return !equality.Semantic.DeepEqual(os, ns)
}

func (r *MachineReconciler) machineForNode(ctx context.Context, o client.Object) []reconcile.Request {
	p := o.(*corev1.Node).Spec.ProviderID
	if p == "" {
		// Perhaps a bootstrap Machine's kubelet, registered by hostname
		// (adoptNode).
		return r.machinesForHostname(ctx, o.GetName())
	}
	if !strings.HasPrefix(p, ProviderIDPrefix) {
		return nil
	}
	var list metalv1.MachineList
	if err := r.Client.List(ctx, &list, client.MatchingFields{IndexMachineProviderID: p}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
	}
	return out
}

// setupTargets makes the target registry if none was given (and runs it
// with the manager) and has every target cluster's Node events wake the
// Machines they belong to, as the management cluster's Node watch does.
func (r *MachineReconciler) setupTargets(mgr ctrl.Manager) error {
	r.remoteNodes = make(chan event.GenericEvent, 1024)
	if r.Targets == nil {
		t, err := cluster.New(cluster.Options{Secrets: r.APIReader, Classes: r.Client, Management: r.management(),
			Logger: mgr.GetLogger().WithName("targets")})
		if err != nil {
			return err
		}
		if err := mgr.Add(t); err != nil {
			return err
		}
		r.Targets = t
	}
	r.Targets.AddHook(r.watchTargetNodes)
	return nil
}

// watchTargetNodes indexes a target cluster's Nodes by providerID and maps
// their events through the Machines' providerID index.
func (r *MachineReconciler) watchTargetNodes(ctx context.Context, t *cluster.Target) error {
	if err := t.Cache.IndexField(ctx, &corev1.Node{}, cluster.IndexNodeProviderID, cluster.NodeProviderID); err != nil {
		return fmt.Errorf("indexing Nodes: %w", err)
	}
	inf, err := t.Cache.GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return fmt.Errorf("watching Nodes: %w", err)
	}
	wake := func(o any) {
		n, ok := o.(*corev1.Node)
		if d, isTomb := o.(toolscache.DeletedFinalStateUnknown); isTomb {
			n, ok = d.Obj.(*corev1.Node)
		}
		if !ok {
			return
		}
		for _, req := range r.machineForNode(ctx, n) {
			m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
			select {
			case r.remoteNodes <- event.GenericEvent{Object: m}:
			case <-ctx.Done():
				return
			}
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: wake, DeleteFunc: wake,
		UpdateFunc: func(o, n any) {
			on, ok1 := o.(*corev1.Node)
			nn, ok2 := n.(*corev1.Node)
			if !ok1 || !ok2 || nodeMatters(on, nn) {
				wake(n)
			}
		},
	})
	return err
}

func (r *MachineReconciler) machinesForClass(ctx context.Context, o client.Object) []reconcile.Request {
	var list metalv1.MachineList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{IndexMachineClass: o.GetName()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
	}
	return out
}

const (
	claimSettle  = 2 * time.Second // wait for our own claim to reach the cache
	claimRetry   = time.Second     // after losing a race for a Host
	claimExpires = 30 * time.Second
)

// claims remembers Hosts this process claimed until the cache shows them,
// so a reconcile on a stale cache cannot claim a second Host.
type claims struct {
	mu sync.Mutex
	m  map[types.UID]claimMemo
}

type claimMemo struct {
	host string
	at   time.Time
}

func (r *MachineReconciler) rememberClaim(m *metalv1.Machine, host string) {
	r.claims.mu.Lock()
	defer r.claims.mu.Unlock()
	if r.claims.m == nil {
		r.claims.m = map[types.UID]claimMemo{}
	}
	r.claims.m[m.UID] = claimMemo{host: host, at: time.Now()}
}

func (r *MachineReconciler) forgetClaim(m *metalv1.Machine) {
	r.claims.mu.Lock()
	defer r.claims.mu.Unlock()
	delete(r.claims.m, m.UID)
}

// pendingClaim: this process claimed a Host for m and the cache has not
// caught up. A memo older than claimExpires is checked against the API
// server (one GET of that Host) rather than dropped: under load the cache
// can lag longer, and dropping it would let m claim a second Host.
func (r *MachineReconciler) pendingClaim(ctx context.Context, m *metalv1.Machine) bool {
	r.claims.mu.Lock()
	c, ok := r.claims.m[m.UID]
	r.claims.mu.Unlock()
	if !ok || time.Since(c.at) <= claimExpires {
		return ok
	}
	h := &metalv1.Host{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: c.host}, h)
	r.claims.mu.Lock()
	defer r.claims.mu.Unlock()
	if err == nil && h.Labels[metalv1.LabelConsumerUID] == string(m.UID) {
		r.claims.m[m.UID] = claimMemo{host: c.host, at: time.Now()}
		return true
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return true // unknown: keep waiting rather than risk a second claim
	}
	delete(r.claims.m, m.UID)
	return false
}
