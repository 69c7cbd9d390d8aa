// Package inventory keeps the Host inventory: it validates Hosts, moves them
// through their states and reconciles their power through the BMC drivers.
package inventory

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/statusapply"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts/status,verbs=patch
// Credentials Secrets: get;list;watch in the Host namespaces only, through
// the anvil-manager-secrets RoleBindings (deploy/rbac/secrets.yaml).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// HostReconciler validates Hosts and drives their state machine.
type HostReconciler struct {
	Client client.Client
	// APIReader reads a credentials Secret's values, uncached, when its
	// resourceVersion in Client's metadata-only cache differs from the one
	// remembered (see credentialCache): the manager never caches Secret
	// values, and a rotation is read once, not before every BMC call.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// MaxConcurrentReconciles bounds the workers; a slow BMC holds one.
	MaxConcurrentReconciles int
	// Power configures BMC calls; without Power.Pool Hosts are validated only.
	Power PowerOptions
	// Media configures spec.bootMethod VirtualMedia boots.
	Media MediaOptions
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	creds  credentialCache // BMC credentials by Secret, revalidated by resourceVersion
	checks powerChecks     // when each Host's power was last read, in memory only
	tokens mediaTokens     // virtual media tokens minted, not yet inserted
	events *bmcEvents      // BMC event streams (Power.Events), nil without
}

func (r *HostReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func ctrlLog(ctx context.Context) logr.Logger { return ctrl.LoggerFrom(ctx) }

// event records an Event when a recorder is configured.
func (r *HostReconciler) event(h *metalv1.Host, typ, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(h, nil, typ, reason, action, note, args...)
	}
}

// hostScope is what one reconcile of one Host works on.
type hostScope struct {
	host    *metalv1.Host
	problem *Problem // why the spec is unusable, nil when valid
}

// stepResult is what a state handler asks for next.
type stepResult struct {
	next         metalv1.HostState // state to move to; "" stays
	requeueAfter time.Duration
	err          error
}

// stateHandler handles one HostState. Handlers are small so the state
// machine reads as a table instead of one long function.
type stateHandler func(ctx context.Context, s *hostScope) stepResult

func (r *HostReconciler) handlers() map[metalv1.HostState]stateHandler {
	return map[metalv1.HostState]stateHandler{
		"":                         r.handleRegistering,
		metalv1.HostRegistering:    r.handleRegistering,
		metalv1.HostDiscovered:     r.handleDiscovered,
		metalv1.HostAvailable:      r.handleValidState,
		metalv1.HostClaimed:        r.handleValidState,
		metalv1.HostProvisioning:   r.handleValidState,
		metalv1.HostProvisioned:    r.handleValidState,
		metalv1.HostDeprovisioning: r.handleValidState,
		metalv1.HostError:          r.handleError,
	}
}

// Reconcile runs validation, then the handler for the Host's state, and
// patches status once at the end.
func (r *HostReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	host := &metalv1.Host{}
	if err := r.Client.Get(ctx, req.NamespacedName, host); err != nil {
		if apierrors.IsNotFound(err) {
			r.checks.forget(req.NamespacedName)
			if r.events != nil {
				r.events.forget(req.NamespacedName)
			}
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// Fields an older Anvil (or any merge patch) wrote go to their
	// writers first, so that a writer leaving one out removes it.
	// Then again from the Host as written: what the controller sends
	// depends on what it owns.
	if took, err := statusapply.TakeOver(ctx, r.Client, host, statusapply.HostGVK, statusapply.HostWriters...); apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil // the cache is behind: from the newer version
	} else if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	} else if took {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	before := host.DeepCopy()
	defer func() {
		// A power poll that changed nothing a user sees writes nothing:
		// lastPowerCheck alone is not worth a write (and the write would
		// wake the Host's Machine). It rides along with other changes.
		if statusUnchanged(&before.Status, &host.Status) {
			return
		}
		r.checks.stamp(host)
		if err := applyStatus(ctx, r.Client, before, host); err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "patching Host status")
			if retErr == nil {
				retErr = err
			}
		}
	}()

	s := &hostScope{host: host}
	var err error
	if s.problem, err = r.validate(ctx, host); err != nil {
		return ctrl.Result{}, err
	}
	setValidCondition(host, s.problem)

	for range 4 { // a few transitions per reconcile, never a loop forever
		h, ok := r.handlers()[host.Status.State]
		if !ok {
			return ctrl.Result{}, fmt.Errorf("host in unknown state %q", host.Status.State)
		}
		step := h(ctx, s)
		if step.err != nil {
			return ctrl.Result{}, step.err
		}
		if step.next == "" || step.next == host.Status.State {
			return ctrl.Result{RequeueAfter: step.requeueAfter}, nil
		}
		r.transition(host, step.next, s.problem)
	}
	return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil // more transitions to make: soon
}

func (r *HostReconciler) validate(ctx context.Context, h *metalv1.Host) (*Problem, error) {
	if p := validateSpec(h); p != nil {
		return p, nil
	}
	if p := checkBMCTarget(h, r.bmcGuard()); p != nil {
		return p, nil
	}
	if p, err := checkDuplicateMACs(ctx, r.Client, h); p != nil || err != nil {
		return p, err
	}
	if p := wipeProblem(h); p != nil {
		return p, nil
	}
	return r.checkCredentials(ctx, h)
}

func setValidCondition(h *metalv1.Host, p *Problem) {
	c := metav1.Condition{Type: metalv1.ConditionValid, Status: metav1.ConditionTrue, Reason: metalv1.ReasonValid, Message: "", ObservedGeneration: h.Generation}
	if p != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, p.Reason, p.Message
	}
	meta.SetStatusCondition(&h.Status.Conditions, c)
	h.Status.ObservedGeneration = h.Generation
}

// transition records a state change and tells the admin with an Event.
func (r *HostReconciler) transition(h *metalv1.Host, to metalv1.HostState, p *Problem) {
	from := h.Status.State
	h.Status.State = to
	if r.Recorder == nil {
		return
	}
	if to == metalv1.HostError && p != nil {
		r.Recorder.Eventf(h, nil, corev1.EventTypeWarning, p.Reason, "Validate", "%s -> Error: %s", stateName(from), p.Message)
		return
	}
	r.Recorder.Eventf(h, nil, corev1.EventTypeNormal, string(to), "StateChange", "%s -> %s", stateName(from), to)
}

func stateName(s metalv1.HostState) string {
	if s == "" {
		return "New"
	}
	return string(s)
}

func (r *HostReconciler) handleRegistering(ctx context.Context, s *hostScope) stepResult {
	switch {
	case s.problem != nil:
		return stepResult{next: metalv1.HostError}
	case s.host.Spec.BMC.Address == "":
		return stepResult{next: metalv1.HostDiscovered}
	case s.host.Status.State == "":
		return stepResult{next: metalv1.HostRegistering}
	case r.Power.Pool != nil:
		return r.checkBMC(ctx, s)
	}
	return stepResult{next: metalv1.HostAvailable}
}

func (r *HostReconciler) handleDiscovered(_ context.Context, s *hostScope) stepResult {
	if s.host.Spec.BMC.Address != "" {
		return stepResult{next: metalv1.HostRegistering}
	}
	return stepResult{}
}

// handleValidState keeps a working Host where it is; a free Host whose spec
// broke goes to Error. A claimed Host keeps running its node: the condition
// tells the admin, and yanking a running node would hurt more than it helps.
//
// A claimed Host follows its spec (ClaimState) through Claimed,
// Provisioning, Provisioned and Deprovisioning back to Available.
func (r *HostReconciler) handleValidState(ctx context.Context, s *hostScope) stepResult {
	want := ClaimState(s.host)
	if s.problem != nil && want == metalv1.HostAvailable {
		return stepResult{next: metalv1.HostError}
	}
	if want != s.host.Status.State {
		return stepResult{next: want}
	}
	ackRejoin(ctx, s.host)
	if r.Power.Pool == nil {
		return stepResult{}
	}
	return r.reconcilePower(ctx, s)
}

// ackRejoin acknowledges a Rejoin boot request of a provisioned Host
// without touching its power: the host is up, and the request only lets
// its next network boot (whenever that comes) get a fresh credential.
func ackRejoin(ctx context.Context, h *metalv1.Host) {
	br := h.Spec.BootRequest
	if br == nil || br.Purpose != metalv1.BootPurposeRejoin || h.Status.State != metalv1.HostProvisioned || h.Status.BootRequestID == br.ID {
		return
	}
	h.Status.BootRequestID = br.ID
	ctrlLog(ctx).V(1).Info("rejoin boot armed", "bootRequest", br.ID)
}

func (r *HostReconciler) handleError(_ context.Context, s *hostScope) stepResult {
	if s.problem == nil {
		return stepResult{next: metalv1.HostRegistering}
	}
	return stepResult{}
}

// SetupWithManager registers the controller, its indexes and its watches.
func (r *HostReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := AddIndexes(ctx, mgr); err != nil {
		return err
	}
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 8
	}
	r.Power.defaults()
	b := ctrl.NewControllerManagedBy(mgr)
	if r.Power.Events && r.Power.Pool != nil {
		guard := r.Power.Pool.Guard()
		r.events = newBMCEvents(ctx, mgr.GetLogger().WithName("bmc-events"), func(o *bmc.Options) { o.Guard = guard },
			func(hk types.NamespacedName) { r.checks.wake(hk, r.now()) },
			func(hk types.NamespacedName) { r.checks.soon(hk, r.now().Add(jitter(r.Power.PollInterval))) })
		// An event wakes its Host's reconcile, which reads the power.
		b = b.WatchesRawSource(source.Channel(r.events.wake, &handler.EnqueueRequestForObject{}))
	}
	return b.
		// Our own status patches must not wake us: timers and spec,
		// annotation (manual acks) and Secret changes do.
		For(&metalv1.Host{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		// Another Host with the same MAC appearing or leaving changes who owns it.
		Watches(&metalv1.Host{}, handler.EnqueueRequestsFromMapFunc(r.hostsSharingMACs)).
		// Only metadata of Secrets is cached; its resourceVersion tells the
		// credentials memo when to read the values again (credentialCache).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.hostsUsingSecret), builder.OnlyMetadata).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Named("host").
		Complete(r)
}

// AddIndexes registers the Host field indexes. Safe to call once per manager.
func AddIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &metalv1.Host{}, IndexBootMAC, IndexHostMACs); err != nil {
		return err
	}
	return idx.IndexField(ctx, &metalv1.Host{}, IndexCredentials, IndexHostCredentials)
}

func (r *HostReconciler) hostsSharingMACs(ctx context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	seen := map[types.NamespacedName]bool{{Namespace: o.GetNamespace(), Name: o.GetName()}: true}
	for _, mac := range IndexHostMACs(o) {
		var list metalv1.HostList
		if err := r.Client.List(ctx, &list, client.MatchingFields{IndexBootMAC: mac}); err != nil {
			continue
		}
		for _, h := range list.Items {
			k := types.NamespacedName{Namespace: h.Namespace, Name: h.Name}
			if !seen[k] {
				seen[k] = true
				out = append(out, reconcile.Request{NamespacedName: k})
			}
		}
	}
	return out
}

func (r *HostReconciler) hostsUsingSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var list metalv1.HostList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{IndexCredentials: o.GetName()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, h := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: h.Namespace, Name: h.Name}})
	}
	return out
}
