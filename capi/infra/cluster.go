package infra

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// AnvilClusterReconciler reports an AnvilCluster's failure domains (from
// its Hosts' labels) and whether it is provisioned (its control plane
// endpoint is set: Anvil provides none).
type AnvilClusterReconciler struct {
	Client client.Client
}

// Reconcile computes the status; it is patched once, at the end.
func (r *AnvilClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	ac := &infrav1.AnvilCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, ac); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ac.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // nothing of Anvil's to clean up
	}
	before := ac.DeepCopy()
	defer func() {
		ac.Status.ObservedGeneration = ac.Generation
		if equality.Semantic.DeepEqual(before.Status, ac.Status) {
			return
		}
		if err := r.Client.Status().Patch(ctx, ac, client.MergeFrom(before), client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "patching AnvilCluster status")
			if retErr == nil {
				retErr = err
			}
		}
	}()
	cluster, err := r.ownerCluster(ctx, ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	if paused(cluster, ac) {
		setCondition(ac, infrav1.ConditionPaused, metav1.ConditionTrue, infrav1.ReasonPaused, "reconciling is paused (Cluster spec.paused or the "+clusterv1.PausedAnnotation+" annotation)")
		return ctrl.Result{}, nil
	}
	setCondition(ac, infrav1.ConditionPaused, metav1.ConditionFalse, infrav1.ReasonNotPaused, "")
	if err := r.failureDomains(ctx, ac); err != nil {
		return ctrl.Result{}, err
	}
	ep := ac.Spec.ControlPlaneEndpoint
	if ep.Host == "" || ep.Port == 0 {
		setCondition(ac, infrav1.ConditionReady, metav1.ConditionFalse, infrav1.ReasonControlPlaneEndpointUnset,
			"set spec.controlPlaneEndpoint.host and spec.controlPlaneEndpoint.port (Anvil provides no load balancer)")
		return ctrl.Result{}, nil
	}
	yes := true
	ac.Status.Initialization.Provisioned = &yes
	setCondition(ac, infrav1.ConditionReady, metav1.ConditionTrue, infrav1.ReasonProvisioned, fmt.Sprintf("control plane endpoint %s:%d", ep.Host, ep.Port))
	return ctrl.Result{}, nil
}

// ownerCluster is the CAPI Cluster owning ac, nil if none (yet).
func (r *AnvilClusterReconciler) ownerCluster(ctx context.Context, ac *infrav1.AnvilCluster) (*clusterv1.Cluster, error) {
	for _, o := range ac.OwnerReferences {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err != nil || gv.Group != clusterv1.GroupVersion.Group || o.Kind != "Cluster" {
			continue
		}
		c := &clusterv1.Cluster{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ac.Namespace, Name: o.Name}, c); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("reading Cluster.cluster.x-k8s.io %s/%s: %w", ac.Namespace, o.Name, err)
		}
		return c, nil
	}
	return nil, nil
}

// failureDomains lists the Hosts spec.hostSelector allows.
func (r *AnvilClusterReconciler) failureDomains(ctx context.Context, ac *infrav1.AnvilCluster) error {
	sel, err := metav1.LabelSelectorAsSelector(&ac.Spec.HostSelector)
	if err != nil {
		setCondition(ac, infrav1.ConditionFailureDomainsReady, metav1.ConditionFalse, infrav1.ReasonInvalidHostSelector, "spec.hostSelector: "+err.Error())
		return nil
	}
	var hosts metalv1.HostList
	if err := r.Client.List(ctx, &hosts, client.InNamespace(ac.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("listing Hosts in %s: %w", ac.Namespace, err)
	}
	ac.Status.FailureDomains = failureDomains(hosts.Items)
	switch {
	case len(hosts.Items) == 0:
		setCondition(ac, infrav1.ConditionFailureDomainsReady, metav1.ConditionFalse, infrav1.ReasonNoHosts,
			fmt.Sprintf("no Host in namespace %s matches spec.hostSelector %s", ac.Namespace, sel))
	default:
		setCondition(ac, infrav1.ConditionFailureDomainsReady, metav1.ConditionTrue, infrav1.ReasonFailureDomainsFound,
			fmt.Sprintf("%d failure domains (label %s) over %d Hosts", len(ac.Status.FailureDomains), metalv1.LabelFailureDomain, len(hosts.Items)))
	}
	return nil
}

// SetupWithManager registers the controller: AnvilClusters, their Hosts
// (failure domains come and go) and their Clusters (unpausing).
func (r *AnvilClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.AnvilCluster{}).
		Watches(&metalv1.Host{}, handler.EnqueueRequestsFromMapFunc(r.clustersInNamespace)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(infraClusterOf)).
		Named("anvilcluster").
		Complete(r)
}

func (r *AnvilClusterReconciler) clustersInNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var l infrav1.AnvilClusterList
	if err := r.Client.List(ctx, &l, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for _, ac := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ac.Namespace, Name: ac.Name}})
	}
	return out
}

func infraClusterOf(_ context.Context, o client.Object) []reconcile.Request {
	ref := o.(*clusterv1.Cluster).Spec.InfrastructureRef
	if ref.APIGroup != infrav1.GroupVersion.Group || ref.Kind != "AnvilCluster" || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
}
