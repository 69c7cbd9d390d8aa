// Package machine turns Machines into Nodes: it claims a free Host, network
// boots it, waits for its kubelet to join, and on deletion drains the Node,
// wipes the Host and releases it. MachineSets keep replicas of a template.
package machine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/join/token"
)

// FieldManager is the field manager of the Machine controller's status
// writes (api/v1alpha1/STATUS.md). They are merge patches with the
// resourceVersion as precondition: the status is computed whole from
// one read, and the agent (status.upgrade) writes part of it on the same
// condition; the ticket outbox applies status.hardwareRequest.
const FieldManager = "anvil-machine"

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machines,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts/status,verbs=patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machineclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=secrets,verbs=get;list;watch;update;delete

// Options tune the Machine controller. Zero values take the defaults.
type Options struct {
	// BootTimeout bounds a network boot, from the boot request to the
	// host's first report (default 20m: real servers POST for minutes).
	BootTimeout time.Duration
	// JoinTimeout bounds the join, from the boot report to a Ready Node
	// (default 15m).
	JoinTimeout time.Duration
	// MaxBootAttempts is how often a boot that timed out is tried before
	// the Machine fails (default 2: reboot once).
	MaxBootAttempts int32
	// DrainTimeout bounds the drain of a deleted Machine's Node; after it
	// the deletion goes on without it (default 10m).
	DrainTimeout time.Duration
	// WipeTimeout bounds the wipe boot of a deleted Machine's Host; a wipe
	// that did not report in time counts as failed (default 30m).
	WipeTimeout time.Duration
	// MaxConcurrentReconciles (default 16).
	MaxConcurrentReconciles int
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.BootTimeout, 20*time.Minute)
	def(&o.JoinTimeout, 15*time.Minute)
	def(&o.DrainTimeout, 10*time.Minute)
	def(&o.WipeTimeout, 30*time.Minute)
	if o.MaxBootAttempts <= 0 {
		o.MaxBootAttempts = 2
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 16
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Notifier hears about hardware requests (the ticket package files them
// with the admins). Calls must be idempotent per (Machine, event type):
// they are repeated after restarts and conflicts.
type Notifier interface {
	Notify(ctx context.Context, ev Event) error
}

// Event is one hardware-request event of a Machine.
type Event struct {
	Type    string // EventHardwareRequested, EventHardwareFulfilled, EventHardwareCancelled
	Machine *metalv1.Machine
	Host    *metalv1.Host // the claimed Host, for fulfilled
	Data    map[string]any
}

// Event types, as the ticket webhooks name them.
const (
	EventHardwareRequested = "hardware.requested"
	EventHardwareFulfilled = "hardware.fulfilled"
	EventHardwareCancelled = "hardware.cancelled"
)

// MachineReconciler provisions and releases Machines.
type MachineReconciler struct {
	Client client.Client
	// APIReader reads around the cache where a stale read could claim a
	// second Host.
	APIReader client.Reader
	// Clientset drains Nodes and manages bootstrap tokens.
	Clientset kubernetes.Interface
	Recorder  events.EventRecorder
	// Notifier, if set, files hardware requests.
	Notifier Notifier
	// Targets resolves classes that join another cluster
	// (spec.join.kubeconfigSecretRef); SetupWithManager makes one if nil.
	// Tokens, Nodes, drains and the version-skew check of such Machines
	// use that cluster.
	Targets *cluster.Registry
	// Tokens, if set, answers token lookups in the management cluster from
	// an informer (shared with config delivery in one process); target
	// clusters are always asked directly.
	Tokens  *token.Cache
	Options Options

	claims      claims
	tokenChecks sync.Map                // Machine UID -> time.Time: keepTokensAlive need not LIST before then
	targetWaits sync.Map                // Machine UID -> int: looks at an unavailable own target cluster (targetBackoff)
	remoteNodes chan event.GenericEvent // Machines to look at after a Node event in a target cluster
	written     recent[string]          // Machine UID -> the resourceVersion its last status write was made on
	mgmtOnce    sync.Once
	mgmt        *cluster.Target // the management cluster as a target
}

// scope is what one reconcile of one Machine works on.
type scope struct {
	m     *metalv1.Machine
	host  *metalv1.Host // claimed Host, nil if none
	class *metalv1.MachineClass
	node  *corev1.Node
	now   time.Time
	// target is the cluster of the Machine's Node (targetOf), once known.
	target *cluster.Target
	// teardown is set while the Host is given back (deletion or
	// replacement): which condition tells the progress, and since when.
	teardown teardown
	// rebooted: join saw the Node come back with a new boot ID.
	rebooted bool
	// targetErr: the Machine's own target cluster
	// (spec.bootstrap.kubeconfigSecretRef) is unavailable; s.node is unknown.
	targetErr error
	// foreignNode: adoptNode found a Node with the Host's hostname and
	// another providerID (the message says which).
	foreignNode string
}

// teardown describes one giving back of a Host.
type teardown struct {
	condition string    // ConditionDeleting or ConditionReplacing
	action    string    // Event action: Delete or Replace
	since     time.Time // drain and wipe deadlines count from here
}

// result is what a phase asks for: stop the list here, and when to look
// again (0: only on a watch event).
type result struct {
	stop  bool
	after time.Duration
	err   error
}

func (r result) merge(o result) result {
	if o.after > 0 && (r.after == 0 || o.after < r.after) {
		r.after = o.after
	}
	r.stop, r.err = o.stop, o.err
	return r
}

// Reconcile runs the phases of a Machine in order and patches its status
// once at the end.
func (r *MachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	m := &metalv1.Machine{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// status.hardwareRequest as an older Anvil's merge patches left it
	// goes to the ticket outbox's apply entry, so that a member it leaves
	// out is removed.
	if took, err := statusapply.TakeOver(ctx, r.Client, m, statusapply.MachineGVK, statusapply.TicketOutbox); apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	} else if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	} else if took {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	if r.behindOwnWrite(m) {
		// Our last status write is not in the cache yet (it is seconds
		// behind under load): what this reconcile would decide on is
		// older than what we wrote, and its write would meet a conflict
		// (one per Machine in the rollout benchmark of 5,000, after the
		// Node event of its own cordon or uncordon). Look again shortly.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	before := m.DeepCopy()
	defer func() {
		m.Status.ObservedGeneration = m.Generation
		if equality.Semantic.DeepEqual(before.Status, m.Status) {
			return
		}
		base := m.ResourceVersion
		// Optimistic: the agent API (upgrade.agentResult) and the ticket
		// outbox write this status too, and a reconcile on a stale cache must not undo what they
		// wrote (a merge patch replaces whole lists and fields). A conflict
		// means: look again with what is there now.
		err := r.Client.Status().Patch(ctx, m, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager))
		switch {
		case err == nil:
			r.written.put(m.UID, base)
		case apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			log.V(1).Info("Machine status changed meanwhile; reconciling again")
			res, retErr = ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
		default:
			log.Error(err, "patching Machine status")
			if retErr == nil {
				retErr = err
			}
		}
	}()

	s := &scope{m: m, now: r.Options.Now()}
	var phases []func(context.Context, *scope) result
	if !m.DeletionTimestamp.IsZero() {
		s.teardown = teardown{condition: metalv1.ConditionDeleting, action: "Delete", since: m.DeletionTimestamp.Time}
		phases = r.deletePhases()
	} else {
		if !controllerutil.ContainsFinalizer(m, metalv1.FinalizerMachine) {
			if err := r.addFinalizer(ctx, m); err != nil {
				return ctrl.Result{}, err
			}
			before = m.DeepCopy()
		}
		phases = []func(context.Context, *scope) result{r.findHost, r.replace, r.claimHost, r.boot, r.join, r.rejoin, r.upgrade}
	}
	var acc result
	for _, p := range phases {
		acc = acc.merge(p(ctx, s))
		if acc.err != nil || acc.stop {
			break
		}
	}
	if m.DeletionTimestamp.IsZero() {
		summarize(m)
	}
	if acc.err != nil {
		return ctrl.Result{}, acc.err
	}
	return ctrl.Result{RequeueAfter: acc.after}, nil
}

func (r *MachineReconciler) addFinalizer(ctx context.Context, m *metalv1.Machine) error {
	orig := m.DeepCopy()
	controllerutil.AddFinalizer(m, metalv1.FinalizerMachine)
	// The status patch at the end must diff against what we send now.
	if err := r.Client.Patch(ctx, m, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding finalizer: %w", err)
	}
	return nil
}

// summarize sets Ready and the phase from the other conditions, so that
// `kubectl get machines` tells the story without reading conditions.
func summarize(m *metalv1.Machine) {
	infra := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionInfrastructureReady)
	node := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionNodeReady)
	ready := metav1.Condition{Type: metalv1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: m.Generation}
	switch {
	case m.Status.FailureReason != "":
		m.Status.Phase = metalv1.MachineFailed
		ready.Reason, ready.Message = m.Status.FailureReason, m.Status.FailureMessage
	case node != nil && node.Status == metav1.ConditionTrue:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionTrue, metalv1.ReasonNodeReady, ""
		m.Status.Phase = metalv1.MachineRunning
	case m.Status.NodeRef != nil && wasRunning(m) && node != nil:
		// A running node went away or NotReady (a reboot, also during or
		// after an upgrade): still Running, never Joining again.
		m.Status.Phase = metalv1.MachineRunning
		ready.Reason, ready.Message = node.Reason, node.Message
	case infra == nil:
		m.Status.Phase = metalv1.MachinePending
		ready.Reason = "Pending"
	case infra.Reason == metalv1.ReasonWaitingForHardware:
		m.Status.Phase = metalv1.MachineWaitingForHardware
		ready.Reason, ready.Message = infra.Reason, infra.Message
	case infra.Reason == metalv1.ReasonClassNotReady:
		m.Status.Phase = metalv1.MachinePending
		ready.Reason, ready.Message = infra.Reason, infra.Message
	case infra.Status != metav1.ConditionTrue:
		m.Status.Phase = metalv1.MachineProvisioning
		ready.Reason, ready.Message = infra.Reason, infra.Message
	default:
		m.Status.Phase = metalv1.MachineJoining
		ready.Reason = metalv1.ReasonWaitingForNode // a condition needs a reason
		if node != nil {
			ready.Reason, ready.Message = node.Reason, node.Message
		}
	}
	if m.Status.Upgrade != nil && m.Status.Phase == metalv1.MachineRunning && isUpdating(m) {
		m.Status.Phase = metalv1.MachineUpdating
	}
	meta.SetStatusCondition(&m.Status.Conditions, ready)
}

// wasRunning: the Machine's Node had joined and was Ready (the phase as
// last summarized; Updating is Running with an upgrade).
func wasRunning(m *metalv1.Machine) bool {
	return m.Status.Phase == metalv1.MachineRunning || m.Status.Phase == metalv1.MachineUpdating
}

func isUpdating(m *metalv1.Machine) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpdating)
	return c != nil && c.Status == metav1.ConditionTrue
}

func setCondition(m *metalv1.Machine, typ string, ok bool, reason, format string, args ...any) {
	c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: fmt.Sprintf(format, args...), ObservedGeneration: m.Generation}
	if ok {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&m.Status.Conditions, c)
}

func (r *MachineReconciler) event(m *metalv1.Machine, typ, reason, action, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(m, nil, typ, reason, action, format, args...)
	}
}

// fail ends provisioning: the Machine keeps its Host (so an admin can look
// at it) until it is deleted.
func (r *MachineReconciler) fail(m *metalv1.Machine, reason, format string, args ...any) result {
	msg := fmt.Sprintf(format, args...)
	m.Status.FailureReason, m.Status.FailureMessage = reason, msg
	r.event(m, corev1.EventTypeWarning, reason, "Provision", "%s", msg)
	return result{stop: true}
}

// SetupWithManager registers the controller, its indexes and its watches.
func (r *MachineReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	r.Options.defaults()
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Clientset == nil {
		return errors.New("machine: MachineReconciler needs a Clientset")
	}
	if err := AddIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := r.setupTargets(mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&metalv1.Machine{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}, deletionPredicate(), upgradeStatePredicate()))).
		// A Host's progress (power, config fetch, agent report, wipe)
		// wakes its Machine; a Host becoming free wakes the waiting ones.
		Watches(&metalv1.Host{}, handler.EnqueueRequestsFromMapFunc(r.machinesForHost), builder.WithPredicates(changePredicate(hostMatters))).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.machineForNode), builder.WithPredicates(changePredicate(nodeMatters))).
		Watches(&metalv1.MachineClass{}, handler.EnqueueRequestsFromMapFunc(r.machinesForClass)).
		WatchesRawSource(source.Channel(r.remoteNodes, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Options.MaxConcurrentReconciles}).
		Named("machine").
		Complete(r)
}

// behindOwnWrite reports whether m, as the cache has it, is still at the
// resourceVersion our last status write of it was made on (within a
// minute of that write: the memo expires, so a lost event cannot stall a
// Machine).
func (r *MachineReconciler) behindOwnWrite(m *metalv1.Machine) bool {
	base, ok := r.written.get(m.UID)
	if !ok {
		return false
	}
	if base == m.ResourceVersion {
		return true
	}
	r.written.forget(m.UID) // the cache has the write, or something after it
	return false
}

// upgradeStatePredicate lets the agent API's write of an outcome
// (status.upgrade.agentResult Succeeded or Failed) wake the Machine at
// once, so that the controller moves the state (Applying -> Succeeded or
// Failed); otherwise it would learn it from the next Host write or its
// one-minute requeue (the 500-Machine rollout benchmark's p99 tail). A
// progress phase wakes nothing: the controller has nothing to do with it.
// Its own write of a new state wakes it too, for the next step.
func upgradeStatePredicate() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*metalv1.Machine)
		n, ok2 := e.ObjectNew.(*metalv1.Machine)
		if !ok1 || !ok2 || n.Status.Upgrade == nil {
			return false
		}
		ou, nu := o.Status.Upgrade, n.Status.Upgrade
		if ou == nil || ou.State != nu.State || ou.PlanID != nu.PlanID {
			return true
		}
		ar := nu.AgentResult
		return ar != nil && ar.Outcome != metalv1.AgentUpgradeInProgress && !equality.Semantic.DeepEqual(ou.AgentResult, ar)
	}}
}

func deletionPredicate() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectNew.GetDeletionTimestamp() != nil
	}}
}
