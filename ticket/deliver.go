package ticket

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=ticketdeliveries,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=ticketdeliveries/status,verbs=patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=ticketendpoints,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=ticketendpoints/status,verbs=patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machines,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts,verbs=get;list;watch;patch
// Signing Secrets: get;list;watch in the TicketEndpoint namespaces only,
// through the anvil-manager-secrets RoleBindings (deploy/rbac/secrets.yaml).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Options tune delivery.
type Options struct {
	// Guard restricts webhook targets (request forgery).
	Guard Guard
	// Backoff spaces retries (default 5s doubling to 2h, give up after 72h).
	Backoff Backoff
	// DefaultTimeout of an attempt when the endpoint sets none (10s).
	DefaultTimeout time.Duration
	// Retention keeps a finished delivery this long after its object is
	// gone (default 24h), so a late re-filing is still refused.
	Retention time.Duration
	// MaxConcurrentReconciles bounds deliveries in flight (default 8).
	MaxConcurrentReconciles int
	// UserAgent of the webhook requests.
	UserAgent string
	// HTTPClient sends the webhooks (default Guard.HTTPClient()).
	HTTPClient *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o *Options) defaults() {
	o.Backoff.defaults()
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = 10 * time.Second
	}
	if o.Retention <= 0 {
		o.Retention = 24 * time.Hour
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 8
	}
	if o.UserAgent == "" {
		o.UserAgent = "anvil-tickets/1"
	}
	if o.HTTPClient == nil {
		o.HTTPClient = o.Guard.HTTPClient()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// DeliveryReconciler sends TicketDeliveries: in order per object and
// endpoint, signed, retried with backoff until the receiver answers.
type DeliveryReconciler struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	Options   Options
}

// waitSafety re-checks a delivery waiting for its turn, in case a wake-up
// was lost (the watches normally wake it at once).
const waitSafety = time.Minute

// Reconcile moves one delivery forward.
func (r *DeliveryReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := &metalv1.TicketDelivery{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("event", d.Spec.EventType, "object", d.Spec.Object.Kind+"/"+d.Spec.Object.Name, "endpoint", d.Spec.EndpointName)
	ctx = ctrl.LoggerInto(ctx, log)
	if ann := d.Annotations[metalv1.AnnotationRedeliver]; ann != "" && ann != d.Status.Redelivery {
		return r.redeliver(ctx, d, ann)
	}
	if terminal(d.Status.State) {
		return r.finished(ctx, d)
	}
	ep := &metalv1.TicketEndpoint{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: d.Spec.EndpointName}, ep); err != nil {
		if apierrors.IsNotFound(err) {
			return r.finish(ctx, d, metalv1.TicketFailed, fmt.Sprintf("TicketEndpoint %s was deleted", d.Spec.EndpointName))
		}
		return ctrl.Result{}, err
	}
	if disabled(ep) {
		// The endpoint watch wakes us when an admin enables it again.
		return ctrl.Result{}, r.note(ctx, d, fmt.Sprintf("TicketEndpoint %s is disabled (its receiver answered 410 Gone); edit its spec to enable it", ep.Name))
	}
	if res, done, err := r.turn(ctx, d); done {
		return res, err
	}
	now := r.Options.Now()
	if d.Status.Attempts > 0 && now.After(d.Spec.EnqueuedAt.Add(r.Options.Backoff.GiveUpAfter)) {
		return r.finish(ctx, d, metalv1.TicketFailed, fmt.Sprintf("gave up after %d attempts over %s; last error: %s", d.Status.Attempts, r.Options.Backoff.GiveUpAfter, d.Status.LastError))
	}
	if next := d.Status.NextAttemptAt; next != nil && now.Before(next.Time) {
		return ctrl.Result{RequeueAfter: next.Sub(now)}, nil
	}
	return r.attempt(ctx, d, ep)
}

// turn applies the ordering rules to d against its siblings, read live.
// done means the reconcile ends here, with res and err: d waits its turn
// or was superseded.
func (r *DeliveryReconciler) turn(ctx context.Context, d *metalv1.TicketDelivery) (res ctrl.Result, done bool, err error) {
	sibs, err := r.siblings(ctx, d)
	if err != nil {
		return ctrl.Result{}, true, err
	}
	switch st, why := decide(d, sibs); st {
	case waitTurn:
		return ctrl.Result{RequeueAfter: waitSafety}, true, nil
	case supersede:
		res, err := r.finish(ctx, d, metalv1.TicketSuperseded, why)
		return res, true, err
	}
	return ctrl.Result{}, false, nil
}

// decision is where a delivery stands among its siblings.
type decision int

const (
	proceed decision = iota
	waitTurn
	supersede
)

// decide applies the ordering rules: a request whose cancellation is filed
// is not sent any more; a follow-up waits for its request, and a
// cancellation of a request that never left Anvil is not sent; anything
// filed earlier for the object and endpoint goes first.
func decide(d *metalv1.TicketDelivery, sibs []metalv1.TicketDelivery) (decision, string) {
	typ := d.Spec.EventType
	for i := range sibs {
		s := &sibs[i]
		if s.Name == d.Name || s.Spec.Instance != d.Spec.Instance {
			continue
		}
		if c := canceller(typ); c != "" && s.Spec.EventType == c {
			return supersede, "cancelled (" + c + ") before it was delivered"
		}
		if op := opener(typ); op != "" && s.Spec.EventType == op {
			if !terminal(s.Status.State) {
				return waitTurn, ""
			}
			if typ == canceller(op) && s.Status.State == metalv1.TicketSuperseded && s.Status.Attempts == 0 {
				return supersede, "its request never reached the receiver; nothing to cancel"
			}
		}
	}
	me := keyOf(d, sibs)
	for i := range sibs {
		s := &sibs[i]
		if s.Name != d.Name && !terminal(s.Status.State) && keyOf(s, sibs).less(me) {
			return waitTurn, ""
		}
	}
	return proceed, ""
}

// siblings are the deliveries of the same object to the same endpoint,
// read live: a stale cache could miss a request filed a moment ago.
func (r *DeliveryReconciler) siblings(ctx context.Context, d *metalv1.TicketDelivery) ([]metalv1.TicketDelivery, error) {
	var list metalv1.TicketDeliveryList
	sel := client.MatchingLabels{LabelObjectUID: string(d.Spec.Object.UID), LabelEndpoint: labelValue(d.Spec.EndpointName)}
	if err := r.APIReader.List(ctx, &list, client.InNamespace(d.Namespace), sel); err != nil {
		return nil, fmt.Errorf("listing deliveries of %s %s: %w", d.Spec.Object.Kind, d.Spec.Object.Name, err)
	}
	out := list.Items[:0]
	for _, s := range list.Items {
		if s.Spec.EndpointName == d.Spec.EndpointName {
			out = append(out, s)
		}
	}
	return out, nil
}

// attempt sends d once. The attempt is written down first: a crash during
// the request leaves it counted, and the optimistic lock lets only one
// manager send it.
func (r *DeliveryReconciler) attempt(ctx context.Context, d *metalv1.TicketDelivery, ep *metalv1.TicketEndpoint) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	now := r.Options.Now()
	sec, u, err := r.target(ctx, ep)
	if err != nil {
		// Not the receiver's fault and nothing was sent: the endpoint
		// watch wakes us when an admin fixes it; look again now and then.
		wait := min(r.Options.Backoff.Max, 5*time.Minute)
		before := d.DeepCopy()
		d.Status.State = metalv1.TicketPending
		d.Status.LastError = err.Error()
		d.Status.NextAttemptAt = ptrTime(now.Add(wait))
		if perr := r.patchStatus(ctx, d, before); perr != nil {
			return ctrl.Result{}, perr
		}
		log.Info("webhook not sent", "reason", err.Error(), "retryIn", wait)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	before := d.DeepCopy()
	d.Status.State = metalv1.TicketPending
	d.Status.Attempts++
	d.Status.LastAttemptAt = ptrTime(now)
	d.Status.NextAttemptAt = ptrTime(now.Add(r.Options.Backoff.after(d.Status.Attempts)))
	if err := r.patchStatus(ctx, d, before); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil // someone else moved it; look again
		}
		return ctrl.Result{}, err
	}
	// The turn was taken before the secret's read and the attempt's write
	// (round trips that take a while on a busy API server): a
	// cancellation filed meanwhile must still stop the send.
	if res, done, err := r.turn(ctx, d); done {
		return res, err
	}
	timeout := r.Options.DefaultTimeout
	if ep.Spec.Timeout != nil && ep.Spec.Timeout.Duration > 0 {
		timeout = ep.Spec.Timeout.Duration
	}
	sendCtx, cancel := context.WithTimeout(ctx, timeout)
	res := post(sendCtx, r.Options.HTTPClient, u, sec, d.Spec.WebhookID, now, []byte(d.Spec.Payload), r.Options.UserAgent)
	cancel()
	log.Info("webhook attempt", "delivery", d.Name, "attempt", d.Status.Attempts, "code", res.code, "outcome", res.verdict.String(), "error", res.msg)
	// The request went out: record what came back even if we are being
	// stopped, or the next manager repeats it for nothing.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer rcancel()
	return r.record(rctx, d, ep, res)
}

func (v verdict) String() string {
	return [...]string{"delivered", "retry", "gone", "refused"}[v]
}

// target reads the signing secret (live, so a rotation counts at once)
// and checks the URL.
func (r *DeliveryReconciler) target(ctx context.Context, ep *metalv1.TicketEndpoint) (Secret, string, error) {
	u, err := r.Options.Guard.CheckURL(ep.Spec.URL)
	if err != nil {
		return Secret{}, "", fmt.Errorf("TicketEndpoint %s: %v", ep.Name, err)
	}
	sec, err := readSecret(ctx, r.APIReader, ep)
	if err != nil {
		return Secret{}, "", err
	}
	return sec, u.String(), nil
}

// record writes an attempt's outcome and its effects.
func (r *DeliveryReconciler) record(ctx context.Context, d *metalv1.TicketDelivery, ep *metalv1.TicketEndpoint, res result) (ctrl.Result, error) {
	now := r.Options.Now()
	var requeue time.Duration
	apply := func(d *metalv1.TicketDelivery) {
		d.Status.ResponseCode = int32(res.code)
		d.Status.LastError = res.msg
		switch res.verdict {
		case delivered:
			d.Status.State = metalv1.TicketDelivered
			d.Status.DeliveredAt = ptrTime(now)
			d.Status.NextAttemptAt = nil
			if res.ticketID != "" || res.ticketURL != "" {
				d.Status.TicketID, d.Status.TicketURL = res.ticketID, res.ticketURL
			}
		case gone:
			d.Status.NextAttemptAt = nil
			d.Status.LastError = res.msg + " (endpoint disabled)"
		case refused:
			d.Status.State = metalv1.TicketFailed
			d.Status.NextAttemptAt = nil
		case retryLater:
			wait := r.Options.Backoff.after(d.Status.Attempts)
			if res.retryAfter > 0 {
				wait = res.retryAfter
			}
			d.Status.NextAttemptAt = ptrTime(now.Add(wait))
			requeue = wait
		}
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		before := d.DeepCopy()
		apply(d)
		err := r.patchStatus(ctx, d, before)
		if apierrors.IsConflict(err) {
			fresh := &metalv1.TicketDelivery{}
			if gerr := r.APIReader.Get(ctx, client.ObjectKeyFromObject(d), fresh); gerr != nil {
				return gerr
			}
			*d = *fresh
		}
		return err
	})
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch res.verdict {
	case gone:
		if err := r.disableEndpoint(ctx, ep, res.msg); err != nil {
			return ctrl.Result{}, err
		}
	case refused:
		r.event(d, corev1.EventTypeWarning, "DeliveryRefused", "%s to TicketEndpoint %s refused: %s", d.Spec.EventType, ep.Name, res.msg)
	}
	if err := r.syncMachine(ctx, r.APIReader, d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// finish ends a delivery without sending it (again).
func (r *DeliveryReconciler) finish(ctx context.Context, d *metalv1.TicketDelivery, st metalv1.TicketDeliveryState, why string) (ctrl.Result, error) {
	before := d.DeepCopy()
	d.Status.State = st
	d.Status.LastError = why
	d.Status.NextAttemptAt = nil
	if err := r.patchStatus(ctx, d, before); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("delivery finished unsent", "delivery", d.Name, "state", st, "reason", why)
	if st == metalv1.TicketFailed {
		r.event(d, corev1.EventTypeWarning, "DeliveryFailed", "%s", why)
	}
	return ctrl.Result{}, r.syncMachine(ctx, r.APIReader, d)
}

// note records why a delivery waits, once.
func (r *DeliveryReconciler) note(ctx context.Context, d *metalv1.TicketDelivery, msg string) error {
	if d.Status.LastError == msg && d.Status.State == metalv1.TicketPending {
		return nil
	}
	before := d.DeepCopy()
	d.Status.State = metalv1.TicketPending
	d.Status.LastError = msg
	return client.IgnoreNotFound(r.patchStatus(ctx, d, before))
}

// finished keeps a done delivery's Machine in step (a crash may have come
// between the two writes) and deletes it once its object is long gone.
func (r *DeliveryReconciler) finished(ctx context.Context, d *metalv1.TicketDelivery) (ctrl.Result, error) {
	if err := r.syncMachine(ctx, r.Client, d); err != nil {
		return ctrl.Result{}, err
	}
	at := d.CreationTimestamp.Time
	for _, t := range []*metav1.Time{d.Status.LastAttemptAt, d.Status.DeliveredAt} {
		if t != nil && t.After(at) {
			at = t.Time
		}
	}
	if wait := at.Add(r.Options.Retention).Sub(r.Options.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	gone, err := r.objectGone(ctx, d)
	if err != nil || !gone {
		return ctrl.Result{RequeueAfter: r.Options.Retention}, err
	}
	err = r.Client.Delete(ctx, d, client.Preconditions{UID: &d.UID})
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

func (r *DeliveryReconciler) objectGone(ctx context.Context, d *metalv1.TicketDelivery) (bool, error) {
	var obj client.Object = &metalv1.Machine{}
	if d.Spec.Object.Kind == "Host" {
		obj = &metalv1.Host{}
	}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: d.Spec.Object.Name}, obj)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return err == nil && string(obj.GetUID()) != d.Spec.Object.UID, err
}

// redeliver acts on `anvil tickets redeliver`: the delivery goes out again
// with the same webhook-id.
func (r *DeliveryReconciler) redeliver(ctx context.Context, d *metalv1.TicketDelivery, ann string) (ctrl.Result, error) {
	before := d.DeepCopy()
	d.Status.Redelivery = ann
	if d.Status.State != metalv1.TicketSuperseded {
		d.Status.State = metalv1.TicketPending
		d.Status.NextAttemptAt = nil
		d.Status.DeliveredAt = nil
		d.Status.LastError = ""
	}
	if err := r.patchStatus(ctx, d, before); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("redelivery requested", "delivery", d.Name, "state", d.Status.State)
	return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
}

// syncMachine mirrors a hardware delivery into its Machine's
// status.hardwareRequest.
func (r *DeliveryReconciler) syncMachine(ctx context.Context, reader client.Reader, d *metalv1.TicketDelivery) error {
	if d.Spec.Object.Kind != "Machine" {
		return nil
	}
	var u hwUpdate
	st := d.Status.State
	switch typ := d.Spec.EventType; {
	case typ == HardwareRequested && st == metalv1.TicketDelivered:
		u = hwUpdate{state: metalv1.HardwareRequestFiled, id: d.Status.TicketID, url: d.Status.TicketURL, filedAt: d.Status.DeliveredAt}
	case typ == HardwareRequested && st == metalv1.TicketFailed:
		u = hwUpdate{state: metalv1.HardwareRequestFailed, lastError: fmt.Sprintf("TicketEndpoint %s: %s", d.Spec.EndpointName, d.Status.LastError)}
	case typ == HardwareRequested && (st == metalv1.TicketPending || st == "") && d.Status.LastError != "":
		u = hwUpdate{noteOnly: true, lastError: fmt.Sprintf("TicketEndpoint %s: %s", d.Spec.EndpointName, d.Status.LastError)}
	case typ == HardwareFulfilled && st == metalv1.TicketDelivered:
		u = hwUpdate{state: metalv1.HardwareRequestFulfilled}
	case typ == HardwareCancelled && (st == metalv1.TicketDelivered || st == metalv1.TicketSuperseded):
		u = hwUpdate{state: metalv1.HardwareRequestCancelled}
	default:
		return nil
	}
	return setHardwareRequest(ctx, r.Client, reader, d.Namespace, d.Spec.Object.Name, types.UID(d.Spec.Object.UID), u)
}

func (r *DeliveryReconciler) patchStatus(ctx context.Context, d, before *metalv1.TicketDelivery) error {
	return r.Client.Status().Patch(ctx, d, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// disableEndpoint records a 410: Disabled=True for this generation.
func (r *DeliveryReconciler) disableEndpoint(ctx context.Context, ep *metalv1.TicketEndpoint, msg string) error {
	key := client.ObjectKeyFromObject(ep)
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &metalv1.TicketEndpoint{}
		if err := r.APIReader.Get(ctx, key, cur); err != nil {
			return err
		}
		if disabled(cur) {
			return nil
		}
		before := cur.DeepCopy()
		text := fmt.Sprintf("the receiver answered %s at %s; deliveries wait until the endpoint's spec is changed", msg, r.Options.Now().UTC().Format(time.RFC3339))
		setCond(&cur.Status.Conditions, cur.Generation, metalv1.ConditionDisabled, true, metalv1.ReasonGone, text)
		setCond(&cur.Status.Conditions, cur.Generation, metalv1.ConditionReady, false, metalv1.ReasonGone, text)
		changed = true
		return r.Client.Status().Patch(ctx, cur, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if changed {
		logr.FromContextOrDiscard(ctx).Info("TicketEndpoint disabled: receiver answered 410 Gone", "endpoint", ep.Name)
		r.event(ep, corev1.EventTypeWarning, metalv1.ReasonGone, "receiver answered 410 Gone; endpoint disabled until its spec changes")
	}
	return nil
}

func (r *DeliveryReconciler) event(obj client.Object, typ, reason, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, typ, reason, "Deliver", note, args...)
	}
}

// SetupWithManager registers the delivery controller.
func (r *DeliveryReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Options.defaults()
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&metalv1.TicketDelivery{}, builder.WithPredicates(deliveryChanged)).
		// A request filed, finished or deleted changes whose turn it is.
		Watches(&metalv1.TicketDelivery{}, handler.EnqueueRequestsFromMapFunc(r.pendingSiblings), builder.WithPredicates(siblingChanged)).
		// An endpoint enabled again, fixed or with a new Secret lets its
		// deliveries go.
		Watches(&metalv1.TicketEndpoint{}, handler.EnqueueRequestsFromMapFunc(r.pendingOfEndpoint), builder.WithPredicates(endpointChanged)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Options.MaxConcurrentReconciles}).
		Named("ticketdelivery").
		Complete(r)
}

// Our own attempt bookkeeping must not wake us; a new state, a redeliver
// request and (re)starts do.
var deliveryChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*metalv1.TicketDelivery), e.ObjectNew.(*metalv1.TicketDelivery)
		return o.Status.State != n.Status.State || o.Annotations[metalv1.AnnotationRedeliver] != n.Annotations[metalv1.AnnotationRedeliver]
	},
	DeleteFunc: func(event.DeleteEvent) bool { return false },
}

var siblingChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.(*metalv1.TicketDelivery).Status.State != e.ObjectNew.(*metalv1.TicketDelivery).Status.State
	},
}

var endpointChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*metalv1.TicketEndpoint), e.ObjectNew.(*metalv1.TicketEndpoint)
		return o.Generation != n.Generation || disabled(o) != disabled(n) || ready(o) != ready(n)
	},
}

func (r *DeliveryReconciler) pendingSiblings(ctx context.Context, o client.Object) []reconcile.Request {
	d, ok := o.(*metalv1.TicketDelivery)
	if !ok {
		return nil
	}
	return r.pending(ctx, d.Namespace, client.MatchingLabels{LabelObjectUID: string(d.Spec.Object.UID), LabelEndpoint: labelValue(d.Spec.EndpointName)}, d.Name)
}

func (r *DeliveryReconciler) pendingOfEndpoint(ctx context.Context, o client.Object) []reconcile.Request {
	return r.pending(ctx, o.GetNamespace(), client.MatchingLabels{LabelEndpoint: labelValue(o.GetName())}, "")
}

func (r *DeliveryReconciler) pending(ctx context.Context, ns string, sel client.MatchingLabels, except string) []reconcile.Request {
	var list metalv1.TicketDeliveryList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns), sel); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, d := range list.Items {
		if d.Name != except && !terminal(d.Status.State) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: d.Namespace, Name: d.Name}})
		}
	}
	return out
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}

// errNoSecret is wrapped by readSecret's errors.
var errNoSecret = errors.New("signing secret unavailable")
