package infra

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=anvilmachines/finalizers,verbs=update
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machines,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts,verbs=get;list;watch

// AnvilMachineReconciler keeps one Anvil Machine per AnvilMachine and
// mirrors its status.
type AnvilMachineReconciler struct {
	Client client.Client
}

// versionRe is what the Anvil Machine's spec.version accepts.
var versionRe = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// machineScope is what one reconcile works on.
type machineScope struct {
	am      *infrav1.AnvilMachine
	owner   *clusterv1.Machine // the CAPI Machine
	cluster *clusterv1.Cluster // nil if not found (yet)
	machine *metalv1.Machine   // the Anvil Machine, nil before it exists
}

// Reconcile runs the phases; status is patched once, at the end.
func (r *AnvilMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	am := &infrav1.AnvilMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, am); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := am.DeepCopy()
	defer func() {
		am.Status.ObservedGeneration = am.Generation
		if equality.Semantic.DeepEqual(before.Status, am.Status) {
			return
		}
		if err := r.Client.Status().Patch(ctx, am, client.MergeFrom(before), client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "patching AnvilMachine status")
			if retErr == nil {
				retErr = err
			}
		}
	}()
	s := &machineScope{am: am}
	if err := r.loadMachine(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if !am.DeletionTimestamp.IsZero() {
		return r.delete(ctx, s)
	}
	for _, phase := range []func(context.Context, *machineScope) (bool, error){r.owner, r.pause, r.finalizer, r.create, r.sync} {
		done, err := phase(ctx, s)
		if err != nil || done {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// loadMachine reads the Anvil Machine the AnvilMachine created, if any.
func (r *AnvilMachineReconciler) loadMachine(ctx context.Context, s *machineScope) error {
	m := &metalv1.Machine{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.am.Namespace, Name: machineName(s.am)}, m)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading Machine %s/%s: %w", s.am.Namespace, machineName(s.am), err)
	}
	if !metav1.IsControlledBy(m, s.am) {
		return nil // owner checks this below and says so
	}
	s.machine = m
	return nil
}

// machineName is the Anvil Machine's name: the AnvilMachine's (other kind,
// same namespace), so a lagging cache yields AlreadyExists, never a
// second Machine.
func machineName(am *infrav1.AnvilMachine) string { return am.Name }

// owner finds the CAPI Machine owning the AnvilMachine and its Cluster.
func (r *AnvilMachineReconciler) owner(ctx context.Context, s *machineScope) (bool, error) {
	am := s.am
	var ref *metav1.OwnerReference
	for i, o := range am.OwnerReferences {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err == nil && gv.Group == clusterv1.GroupVersion.Group && o.Kind == "Machine" {
			ref = &am.OwnerReferences[i]
		}
	}
	if ref == nil {
		setCondition(am, infrav1.ConditionReady, metav1.ConditionFalse, infrav1.ReasonWaitingForOwner, "waiting for a Cluster API Machine to own this AnvilMachine (metadata.ownerReferences)")
		return true, nil
	}
	s.owner = &clusterv1.Machine{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: am.Namespace, Name: ref.Name}, s.owner); err != nil {
		if apierrors.IsNotFound(err) {
			setCondition(am, infrav1.ConditionReady, metav1.ConditionFalse, infrav1.ReasonWaitingForOwner, "owner Machine.cluster.x-k8s.io "+ref.Name+" not found")
			return true, nil
		}
		return true, fmt.Errorf("reading Machine.cluster.x-k8s.io %s/%s: %w", am.Namespace, ref.Name, err)
	}
	if name := s.owner.Spec.ClusterName; name != "" {
		c := &clusterv1.Cluster{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: am.Namespace, Name: name}, c)
		switch {
		case err == nil:
			s.cluster = c
		case !apierrors.IsNotFound(err):
			return true, fmt.Errorf("reading Cluster.cluster.x-k8s.io %s/%s: %w", am.Namespace, name, err)
		}
	}
	if m := (&metalv1.Machine{}); s.machine == nil && r.Client.Get(ctx, types.NamespacedName{Namespace: am.Namespace, Name: machineName(am)}, m) == nil {
		setCondition(am, infrav1.ConditionMachineCreated, metav1.ConditionFalse, infrav1.ReasonMachineNotOwned,
			fmt.Sprintf("Machine.metal.anvil.dev %s exists and is not controlled by this AnvilMachine: delete or rename it", m.Name))
		setCondition(am, infrav1.ConditionReady, metav1.ConditionFalse, infrav1.ReasonMachineNotOwned, "see MachineCreated")
		return true, nil
	}
	return false, nil
}

// pause stops here while CAPI pauses the Cluster or the objects.
func (r *AnvilMachineReconciler) pause(_ context.Context, s *machineScope) (bool, error) {
	if paused(s.cluster, s.am, s.owner) {
		setCondition(s.am, infrav1.ConditionPaused, metav1.ConditionTrue, infrav1.ReasonPaused, "reconciling is paused (Cluster spec.paused or the "+clusterv1.PausedAnnotation+" annotation)")
		return true, nil
	}
	setCondition(s.am, infrav1.ConditionPaused, metav1.ConditionFalse, infrav1.ReasonNotPaused, "")
	return false, nil
}

// finalizer keeps the AnvilMachine until its Anvil Machine is gone.
func (r *AnvilMachineReconciler) finalizer(ctx context.Context, s *machineScope) (bool, error) {
	if controllerutil.ContainsFinalizer(s.am, infrav1.FinalizerAnvilMachine) {
		return false, nil
	}
	p := client.MergeFrom(s.am.DeepCopy())
	controllerutil.AddFinalizer(s.am, infrav1.FinalizerAnvilMachine)
	if err := r.Client.Patch(ctx, s.am, p, client.FieldOwner(fieldOwner)); err != nil {
		return true, fmt.Errorf("adding finalizer to AnvilMachine %s/%s: %w", s.am.Namespace, s.am.Name, err)
	}
	return false, nil
}

// create makes the Anvil Machine once the CAPI Machine has bootstrap data.
func (r *AnvilMachineReconciler) create(ctx context.Context, s *machineScope) (bool, error) {
	if s.machine != nil {
		return false, nil
	}
	am, owner := s.am, s.owner
	secret := owner.Spec.Bootstrap.DataSecretName
	if secret == nil || *secret == "" {
		setCondition(am, infrav1.ConditionReady, metav1.ConditionFalse, infrav1.ReasonWaitingForBootstrapData,
			"waiting for Machine.cluster.x-k8s.io "+owner.Name+" to have spec.bootstrap.dataSecretName")
		return true, nil
	}
	m, err := desiredMachine(am, owner)
	if err != nil {
		setCondition(am, infrav1.ConditionMachineCreated, metav1.ConditionFalse, infrav1.ReasonInvalidVersion, err.Error())
		setCondition(am, infrav1.ConditionReady, metav1.ConditionFalse, infrav1.ReasonInvalidVersion, err.Error())
		return true, nil
	}
	if err := controllerutil.SetControllerReference(am, m, r.Client.Scheme()); err != nil {
		return true, err
	}
	if err := r.Client.Create(ctx, m, client.FieldOwner(fieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return true, nil // the cache lags behind our own create: the watch brings it
		}
		msg := fmt.Sprintf("creating Machine.metal.anvil.dev %s/%s: %v", m.Namespace, m.Name, err)
		setCondition(am, infrav1.ConditionMachineCreated, metav1.ConditionFalse, infrav1.ReasonCreateFailed, msg)
		return true, fmt.Errorf("%s", msg)
	}
	ctrl.LoggerFrom(ctx).Info("created Machine", "machine", m.Name, "version", m.Spec.Version, "failureDomain", m.Spec.FailureDomain)
	setCondition(am, infrav1.ConditionMachineCreated, metav1.ConditionTrue, infrav1.ReasonMachineCreated, "Machine.metal.anvil.dev "+m.Name)
	s.machine = m
	return false, nil
}

// KubeconfigSecretKey is the key of Cluster API's kubeconfig Secret.
const KubeconfigSecretKey = "value"

// KubeconfigSecretName is the Secret in which Cluster API keeps the
// workload cluster's kubeconfig.
func KubeconfigSecretName(cluster string) string { return cluster + "-kubeconfig" }

// desiredMachine is the Anvil Machine of an AnvilMachine and its CAPI
// Machine; an error says which CAPI field cannot be used.
func desiredMachine(am *infrav1.AnvilMachine, owner *clusterv1.Machine) (*metalv1.Machine, error) {
	v := owner.Spec.Version
	if !versionRe.MatchString(v) {
		return nil, fmt.Errorf("machine.cluster.x-k8s.io %s: spec.version %q is not vX.Y.Z, which Anvil needs to pick the kubelet", owner.Name, v)
	}
	labels := map[string]string{infrav1.LabelAnvilMachine: am.Name}
	bootstrap := &metalv1.MachineBootstrap{DataSecretName: *owner.Spec.Bootstrap.DataSecretName}
	if c := owner.Spec.ClusterName; c != "" {
		labels[clusterv1.ClusterNameLabel] = c
		// The Node joins the workload cluster, whose kubeconfig Cluster
		// API keeps in <cluster>-kubeconfig (key value).
		bootstrap.KubeconfigSecretRef = &metalv1.KubeconfigSecretReference{Name: KubeconfigSecretName(c), Key: KubeconfigSecretKey}
	}
	return &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: am.Namespace, Name: machineName(am), Labels: labels},
		Spec: metalv1.MachineSpec{
			MachineClassRef: metalv1.LocalObjectReference{Name: am.Spec.MachineClassRef.Name},
			HostSelector:    *am.Spec.HostSelector.DeepCopy(),
			FailureDomain:   owner.Spec.FailureDomain,
			Version:         v,
			Bootstrap:       bootstrap,
		},
	}, nil
}

// sync mirrors the Anvil Machine and sets spec.providerID once known.
func (r *AnvilMachineReconciler) sync(ctx context.Context, s *machineScope) (bool, error) {
	am, m := s.am, s.machine
	setCondition(am, infrav1.ConditionMachineCreated, metav1.ConditionTrue, infrav1.ReasonMachineCreated, "Machine.metal.anvil.dev "+m.Name)
	var h *metalv1.Host
	if m.Status.HostRef != nil {
		h = &metalv1.Host{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Status.HostRef.Name}, h); err != nil {
			if !apierrors.IsNotFound(err) {
				return true, fmt.Errorf("reading Host %s/%s: %w", m.Namespace, m.Status.HostRef.Name, err)
			}
			h = nil
		}
	}
	if id := m.Status.ProviderID; id != "" && am.Spec.ProviderID != id && strings.HasPrefix(id, metalv1.ProviderIDPrefix) {
		if am.Spec.ProviderID != "" {
			ctrl.LoggerFrom(ctx).Info("providerID changed (the Machine was replaced onto another Host)", "from", am.Spec.ProviderID, "to", id)
		}
		// spec and status are separate writes: keep the status we built.
		status := am.Status.DeepCopy()
		p := client.MergeFrom(am.DeepCopy())
		am.Spec.ProviderID = id
		if err := r.Client.Patch(ctx, am, p, client.FieldOwner(fieldOwner)); err != nil {
			return true, fmt.Errorf("setting spec.providerID of AnvilMachine %s/%s: %w", am.Namespace, am.Name, err)
		}
		am.Status = *status
	}
	mirror(am, m, h)
	return false, nil
}

// delete deletes the Anvil Machine (Anvil drains, wipes and releases its
// Host) and drops the finalizer once it is gone.
func (r *AnvilMachineReconciler) delete(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	am, m := s.am, s.machine
	if m != nil {
		if m.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, m, client.Preconditions{UID: &m.UID}); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting Machine.metal.anvil.dev %s/%s: %w", m.Namespace, m.Name, err)
			}
			ctrl.LoggerFrom(ctx).Info("deleting Machine", "machine", m.Name)
		}
		mirror(am, m, nil)
		setCondition(am, infrav1.ConditionReady, metav1.ConditionFalse, infrav1.ReasonDeleting,
			"waiting for Machine.metal.anvil.dev "+m.Name+" to be deleted (its Host is drained, wiped and released)")
		// The Owns watch wakes us on progress and when it is gone.
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	if !controllerutil.ContainsFinalizer(am, infrav1.FinalizerAnvilMachine) {
		return ctrl.Result{}, nil
	}
	// The cache may not have seen our own delete land: ask the API server.
	live := &metalv1.Machine{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: am.Namespace, Name: machineName(am)}, live); err == nil && metav1.IsControlledBy(live, am) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	p := client.MergeFrom(am.DeepCopy())
	controllerutil.RemoveFinalizer(am, infrav1.FinalizerAnvilMachine)
	if err := r.Client.Patch(ctx, am, p, client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("removing finalizer of AnvilMachine %s/%s: %w", am.Namespace, am.Name, err)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the controller: AnvilMachines, the Anvil
// Machines they own, their CAPI Machines (spec.infrastructureRef) and
// Clusters (unpausing).
func (r *AnvilMachineReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.AnvilMachine{}).
		Owns(&metalv1.Machine{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(infraRefOf)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.machinesOfCluster)).
		Named("anvilmachine").
		Complete(r)
}

func infraRefOf(_ context.Context, o client.Object) []reconcile.Request {
	ref := o.(*clusterv1.Machine).Spec.InfrastructureRef
	if ref.APIGroup != infrav1.GroupVersion.Group || ref.Kind != "AnvilMachine" || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
}

func (r *AnvilMachineReconciler) machinesOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	var l infrav1.AnvilMachineList
	if err := r.Client.List(ctx, &l, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for _, am := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: am.Namespace, Name: am.Name}})
	}
	return out
}
