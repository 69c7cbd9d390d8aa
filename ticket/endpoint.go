package ticket

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// Reasons of a TicketEndpoint's Ready condition beyond the shared ones.
const (
	ReasonSecretMissing = metalv1.ReasonSecretMissing // CredentialsSecretMissing
	ReasonSecretInvalid = metalv1.ReasonSecretInvalid
)

// DefaultSecretKey is the Secret key read when secretRef.key is empty.
const DefaultSecretKey = "secret"

// EndpointReconciler keeps a TicketEndpoint's Ready condition true to its
// URL and Secret, and enables an endpoint disabled by a 410 once its spec
// changes.
type EndpointReconciler struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	Guard     Guard
}

// Reconcile checks one endpoint.
func (r *EndpointReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ep := &metalv1.TicketEndpoint{}
	if err := r.Client.Get(ctx, req.NamespacedName, ep); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := ep.DeepCopy()
	conds := &ep.Status.Conditions
	if c := meta.FindStatusCondition(*conds, metalv1.ConditionDisabled); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration < ep.Generation {
		setCond(conds, ep.Generation, metalv1.ConditionDisabled, false, metalv1.ReasonEnabled, "the spec changed after the receiver answered 410 Gone; deliveries resume")
	}
	reason, msg := metalv1.ReasonEndpointReady, "URL and signing secret are usable"
	if _, err := r.Guard.CheckURL(ep.Spec.URL); err != nil {
		reason, msg = metalv1.ReasonInvalidURL, err.Error()
	} else if _, err := readSecret(ctx, r.APIReader, ep); err != nil {
		reason, msg = ReasonSecretInvalid, err.Error()
		if apierrors.IsNotFound(err) {
			reason = ReasonSecretMissing
		}
	}
	switch {
	case disabled(ep):
		c := meta.FindStatusCondition(*conds, metalv1.ConditionDisabled)
		setCond(conds, ep.Generation, metalv1.ConditionReady, false, metalv1.ReasonGone, c.Message)
	case reason != metalv1.ReasonEndpointReady:
		setCond(conds, ep.Generation, metalv1.ConditionReady, false, reason, msg)
	default:
		setCond(conds, ep.Generation, metalv1.ConditionReady, true, reason, msg)
	}
	ep.Status.ObservedGeneration = ep.Generation
	if equality.Semantic.DeepEqual(before.Status, ep.Status) {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Status().Patch(ctx, ep, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if was, now := ready(before), ready(ep); was != now && r.Recorder != nil {
		typ := corev1.EventTypeNormal
		if !now {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(ep, nil, typ, meta.FindStatusCondition(*conds, metalv1.ConditionReady).Reason, "Validate", "%s", msg)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the endpoint controller.
func (r *EndpointReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&metalv1.TicketEndpoint{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, disabledChanged))).
		// Only metadata of Secrets is cached; the key is read when needed.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.endpointsUsing), builder.OnlyMetadata).
		Named("ticketendpoint").
		Complete(r)
}

// disabledChanged wakes the endpoint when a delivery disabled it, so Ready
// follows.
var disabledChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return disabled(e.ObjectOld.(*metalv1.TicketEndpoint)) != disabled(e.ObjectNew.(*metalv1.TicketEndpoint))
	},
}

func (r *EndpointReconciler) endpointsUsing(ctx context.Context, o client.Object) []reconcile.Request {
	var list metalv1.TicketEndpointList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, ep := range list.Items {
		if ep.Spec.SecretRef.Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ep.Namespace, Name: ep.Name}})
		}
	}
	return out
}

// readSecret reads and parses an endpoint's signing secret. Errors name the
// Secret and key, never the value.
func readSecret(ctx context.Context, r client.Reader, ep *metalv1.TicketEndpoint) (Secret, error) {
	key := ep.Spec.SecretRef.Key
	if key == "" {
		key = DefaultSecretKey
	}
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: ep.Namespace, Name: ep.Spec.SecretRef.Name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return Secret{}, fmt.Errorf("Secret %s of TicketEndpoint %s not found: %w", ep.Spec.SecretRef.Name, ep.Name, err)
		}
		return Secret{}, fmt.Errorf("%w: reading Secret %s of TicketEndpoint %s: %v", errNoSecret, ep.Spec.SecretRef.Name, ep.Name, err)
	}
	return secretFromObject(&s, ep)
}

// secretFromObject parses the endpoint's key of a Secret already read.
func secretFromObject(s *corev1.Secret, ep *metalv1.TicketEndpoint) (Secret, error) {
	key := ep.Spec.SecretRef.Key
	if key == "" {
		key = DefaultSecretKey
	}
	v, ok := s.Data[key]
	if !ok {
		return Secret{}, fmt.Errorf("%w: Secret %s has no key %q (TicketEndpoint %s)", errNoSecret, s.Name, key, ep.Name)
	}
	sec, err := ParseSecret(string(v))
	if err != nil {
		return Secret{}, fmt.Errorf("%w: key %q of Secret %s: %v", errNoSecret, key, s.Name, err)
	}
	return sec, nil
}

// disabled reports a 410 not yet answered by a spec change.
func disabled(ep *metalv1.TicketEndpoint) bool {
	c := meta.FindStatusCondition(ep.Status.Conditions, metalv1.ConditionDisabled)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration >= ep.Generation
}

func ready(ep *metalv1.TicketEndpoint) bool {
	return meta.IsStatusConditionTrue(ep.Status.Conditions, metalv1.ConditionReady)
}

func setCond(conds *[]metav1.Condition, gen int64, typ string, ok bool, reason, msg string) {
	st := metav1.ConditionFalse
	if ok {
		st = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg, ObservedGeneration: gen})
}
