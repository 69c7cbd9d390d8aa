package machine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machinesets,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machinesets/status,verbs=patch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machinesets/finalizers,verbs=update
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machines,verbs=create;delete

// MachineSetReconciler keeps spec.replicas Machines of a template, spread
// across the failure domains of the Hosts the template selects.
type MachineSetReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// MaxConcurrentReconciles (default 4).
	MaxConcurrentReconciles int

	deleted recent[struct{}] // deletions the cache may not show yet
	patched recent[string]   // spec.version patches (the version) the cache may not show yet
	created sync.Map         // MachineSet UID -> *createMemo: creates the cache may not show yet
}

// Reconcile scales the set and reports its replicas.
func (r *MachineSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	ms := &metalv1.MachineSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, ms); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ms.DeletionTimestamp.IsZero() {
		r.created.Delete(ms.UID)
		return ctrl.Result{}, nil // owner references delete the Machines
	}
	before := ms.DeepCopy()
	defer func() {
		if equality.Semantic.DeepEqual(before.Status, ms.Status) {
			return
		}
		if err := r.Client.Status().Patch(ctx, ms, client.MergeFrom(before), client.FieldOwner("anvil-machineset")); err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "patching MachineSet status")
			if retErr == nil {
				retErr = err
			}
		}
	}()
	machines, err := r.machines(ctx, ms)
	if err != nil {
		return ctrl.Result{}, err
	}
	want := int32(1)
	if ms.Spec.Replicas != nil {
		want = *ms.Spec.Replicas
	}
	active := make([]metalv1.Machine, 0, len(machines))
	for _, m := range machines {
		if _, gone := r.deleted.get(m.UID); m.DeletionTimestamp.IsZero() && !gone {
			active = append(active, m)
		}
	}
	var after time.Duration
	n := int(want) - len(active)
	// Machines this set created that the cache does not show yet count as
	// created: else each lagging reconcile of a scale-up to thousands sent
	// hundreds of creates that only came back AlreadyExists.
	pending := r.creates(ms.UID).pending(machines)
	if n > 0 {
		n = max(0, n-len(pending))
	}
	switch {
	case n > 0:
		if err := r.scaleUp(ctx, ms, machines, active, pending, n); err != nil {
			return ctrl.Result{}, err
		}
	case n < 0:
		if err := r.scaleDown(ctx, ms, active, -n); err != nil {
			return ctrl.Result{}, err
		}
		after = 2 * time.Second // the cache catches up with the deletes
	}
	if after == 0 {
		// Template changes other than the version apply to new Machines;
		// the version is rolled out in place.
		d, err := r.rollout(ctx, ms, active)
		if err != nil {
			return ctrl.Result{}, err
		}
		after = d
	}
	r.status(ms, machines)
	return ctrl.Result{RequeueAfter: after}, nil
}

// machines lists the set's Machines (its label and its controller
// reference). They are the cache's own objects, not copies: a set of
// thousands is listed on every change of any of them, and copying them all
// each time was most of the MachineSet's CPU. Callers must not modify them
// (copy one before a patch).
func (r *MachineSetReconciler) machines(ctx context.Context, ms *metalv1.MachineSet) ([]metalv1.Machine, error) {
	var list metalv1.MachineList
	if err := r.Client.List(ctx, &list, client.InNamespace(ms.Namespace), client.MatchingLabels{metalv1.LabelMachineSet: ms.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := list.Items[:0]
	for _, m := range list.Items {
		if ref := metav1.GetControllerOf(&m); ref != nil && ref.UID == ms.UID {
			out = append(out, m)
		}
	}
	return out, nil
}

// creates is the set's memo of its recent creates.
func (r *MachineSetReconciler) creates(set types.UID) *createMemo {
	v, _ := r.created.LoadOrStore(set, &createMemo{at: map[string]time.Time{}})
	return v.(*createMemo)
}

// createMemo holds the names of Machines a set created in the last minute
// until the cache shows them.
type createMemo struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (c *createMemo) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at[name] = time.Now()
}

// pending returns the names created less than a minute ago that listed
// (the cache's view) lacks, and forgets the others.
func (c *createMemo) pending(listed []metalv1.Machine) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.at) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(listed))
	for i := range listed {
		seen[listed[i].Name] = true
	}
	var out []string
	for name, at := range c.at {
		if seen[name] || time.Since(at) > time.Minute {
			delete(c.at, name)
			continue
		}
		out = append(out, name)
	}
	return out
}

// recent remembers a Machine's change this controller made for a minute:
// the cache shows it long before that, and until it does the controller
// goes by what it wrote.
type recent[V any] struct {
	m     sync.Map     // Machine UID -> stamped[V]
	swept atomic.Int64 // unix nanoseconds of the last sweep of expired entries
}

type stamped[V any] struct {
	v  V
	at time.Time
}

func (r *recent[V]) put(uid types.UID, v V) {
	now := time.Now()
	r.m.Store(uid, stamped[V]{v: v, at: now})
	// Entries of Machines never looked at again (deleted) would stay:
	// once a minute, drop the expired ones.
	if last := r.swept.Load(); now.UnixNano()-last > int64(time.Minute) && r.swept.CompareAndSwap(last, now.UnixNano()) {
		r.m.Range(func(k, x any) bool {
			if now.Sub(x.(stamped[V]).at) > time.Minute {
				r.m.Delete(k)
			}
			return true
		})
	}
}

func (r *recent[V]) forget(uid types.UID) { r.m.Delete(uid) }

// get returns what was put for uid less than a minute ago.
func (r *recent[V]) get(uid types.UID) (V, bool) {
	x, ok := r.m.Load(uid)
	if !ok {
		var zero V
		return zero, false
	}
	s := x.(stamped[V])
	if time.Since(s.at) > time.Minute {
		r.m.Delete(uid)
		var zero V
		return zero, false
	}
	return s.v, true
}

// scaleUp creates n Machines with predictable names (<set>-<n>), so a
// cache that lags behind our own creates yields AlreadyExists instead of
// extra Machines.
func (r *MachineSetReconciler) scaleUp(ctx context.Context, ms *metalv1.MachineSet, all, active []metalv1.Machine, pending []string, n int) error {
	used := map[string]bool{}
	for _, m := range all {
		used[m.Name] = true
	}
	for _, name := range pending {
		used[name] = true
	}
	domains, err := r.failureDomains(ctx, ms)
	if err != nil {
		return err
	}
	perDomain := map[string]int{}
	for _, m := range active {
		perDomain[m.Spec.FailureDomain]++
	}
	idx := 0
	todo := make([]*metalv1.Machine, 0, n)
	for range n {
		for used[ms.Name+"-"+strconv.Itoa(idx)] {
			idx++
		}
		name := ms.Name + "-" + strconv.Itoa(idx)
		used[name] = true
		m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ms.Namespace,
			Labels: map[string]string{}, Annotations: map[string]string{}}, Spec: *ms.Spec.Template.Spec.DeepCopy()}
		for k, v := range ms.Spec.Template.Labels {
			m.Labels[k] = v
		}
		for k, v := range ms.Spec.Template.Annotations {
			m.Annotations[k] = v
		}
		m.Labels[metalv1.LabelMachineSet] = ms.Name
		// Created with the Machine controller's finalizer: it need not
		// spend a patch of its own on each new Machine.
		controllerutil.AddFinalizer(m, metalv1.FinalizerMachine)
		if m.Spec.FailureDomain == "" && len(domains) > 0 {
			m.Spec.FailureDomain = leastUsed(domains, perDomain)
			perDomain[m.Spec.FailureDomain]++
		}
		if err := controllerutil.SetControllerReference(ms, m, r.Client.Scheme()); err != nil {
			return err
		}
		todo = append(todo, m)
	}
	memo := r.creates(ms.UID)
	return slowStart(ctx, todo, func(ctx context.Context, m *metalv1.Machine) error {
		if err := r.Client.Create(ctx, m); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return fmt.Errorf("creating Machine %s: %w", m.Name, err)
		}
		memo.add(m.Name)
		r.event(ms, corev1.EventTypeNormal, "MachineCreated", "Scale", "created Machine %s%s", m.Name, inDomain(m.Spec.FailureDomain))
		return nil
	})
}

// maxCreateBatch bounds the creates in flight: enough that 5,000 Machines
// are not 5,000 round trips in a row, few enough not to flood the API
// server (the client's QPS limit still applies).
const maxCreateBatch = 64

// slowStart creates in batches of 1, 2, 4, ... (at most maxCreateBatch), in
// parallel within a batch, and stops after a batch with an error - as the
// ReplicaSet controller does, so a set that cannot create (quota, a
// webhook, a bad template) fails after one request, not thousands.
func slowStart(ctx context.Context, todo []*metalv1.Machine, create func(context.Context, *metalv1.Machine) error) error {
	for batch := 1; len(todo) > 0; batch = min(2*batch, maxCreateBatch) {
		k := min(batch, len(todo))
		errs := make([]error, k)
		var wg sync.WaitGroup
		for i, m := range todo[:k] {
			wg.Go(func() { errs[i] = create(ctx, m) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		todo = todo[k:]
	}
	return nil
}

func inDomain(d string) string {
	if d == "" {
		return ""
	}
	return " in failure domain " + d
}

// failureDomains are the failure-domain labels of the Hosts the template
// selects, sorted.
func (r *MachineSetReconciler) failureDomains(ctx context.Context, ms *metalv1.MachineSet) ([]string, error) {
	sel, err := metav1.LabelSelectorAsSelector(&ms.Spec.Template.Spec.HostSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.template.spec.hostSelector: %w", err)
	}
	var hosts metalv1.HostList
	// Labels only, read from the cache's own objects (no copy of every Host).
	if err := r.Client.List(ctx, &hosts, client.InNamespace(ms.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, h := range hosts.Items {
		if d := h.Labels[metalv1.LabelFailureDomain]; d != "" {
			set[d] = true
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, nil
}

func leastUsed(domains []string, count map[string]int) string {
	best := domains[0]
	for _, d := range domains[1:] {
		if count[d] < count[best] {
			best = d
		}
	}
	return best
}

// scaleDown deletes the n Machines that are least far along, and among
// equals those in the most crowded failure domain.
func (r *MachineSetReconciler) scaleDown(ctx context.Context, ms *metalv1.MachineSet, active []metalv1.Machine, n int) error {
	perDomain := map[string]int{}
	for _, m := range active {
		perDomain[m.Spec.FailureDomain]++
	}
	sort.SliceStable(active, func(i, j int) bool {
		a, b := progress(&active[i]), progress(&active[j])
		if a != b {
			return a < b
		}
		da, db := perDomain[active[i].Spec.FailureDomain], perDomain[active[j].Spec.FailureDomain]
		if da != db {
			return da > db
		}
		return active[i].CreationTimestamp.After(active[j].CreationTimestamp.Time)
	})
	for i := 0; i < n && i < len(active); i++ {
		m := &active[i]
		if err := r.Client.Delete(ctx, m, client.Preconditions{UID: &m.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Machine %s: %w", m.Name, err)
		}
		r.deleted.put(m.UID, struct{}{})
		perDomain[m.Spec.FailureDomain]--
		r.event(ms, corev1.EventTypeNormal, "MachineDeleted", "Scale", "deleted Machine %s (%s)", m.Name, nonEmpty(string(m.Status.Phase), "Pending"))
	}
	return nil
}

// progress ranks how far a Machine is: the least far along go first.
func progress(m *metalv1.Machine) int {
	switch m.Status.Phase {
	case metalv1.MachineFailed:
		return 0
	case "", metalv1.MachinePending, metalv1.MachineWaitingForHardware:
		return 1
	case metalv1.MachineProvisioning:
		return 2
	case metalv1.MachineJoining:
		return 3
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		return 4
	}
	return 5
}

func (r *MachineSetReconciler) status(ms *metalv1.MachineSet, machines []metalv1.Machine) {
	st := &ms.Status
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpToDateReplicas, st.UpdatingReplicas, st.FailedReplicas = 0, 0, 0, 0, 0, 0
	for i := range machines {
		m := &machines[i]
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		st.Replicas++
		ready := meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady)
		if ready {
			st.ReadyReplicas++
			st.AvailableReplicas++
		}
		if ready && m.Status.Version == m.Spec.Version && m.Spec.Version == ms.Spec.Template.Spec.Version {
			st.UpToDateReplicas++
		}
		up := m.Status.Upgrade
		switch {
		case m.Status.Phase == metalv1.MachineFailed:
			st.FailedReplicas++
		case up != nil && up.State == metalv1.UpgradeFailed && up.Version == m.Spec.Version:
			// Rolled back and left for the admin (Updating stays True with
			// InPlaceUpdateFailed): maybe Ready on the old version, but
			// failed all the same, not updating.
			st.FailedReplicas++
		case m.Status.Phase == metalv1.MachineUpdating:
			st.UpdatingReplicas++
		}
	}
	sel := labels.SelectorFromSet(labels.Set{metalv1.LabelMachineSet: ms.Name})
	st.Selector = sel.String()
	st.ObservedGeneration = ms.Generation
	want := int32(1)
	if ms.Spec.Replicas != nil {
		want = *ms.Spec.Replicas
	}
	c := metav1.Condition{Type: metalv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "AllReady", ObservedGeneration: ms.Generation}
	if st.ReadyReplicas != want || st.Replicas != want {
		c.Status, c.Reason = metav1.ConditionFalse, "Scaling"
		c.Message = fmt.Sprintf("%d of %d Machines Ready", st.ReadyReplicas, want)
		if st.FailedReplicas > 0 {
			c.Reason = "MachinesFailed"
			c.Message += fmt.Sprintf(", %d Failed", st.FailedReplicas)
		}
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

func (r *MachineSetReconciler) event(ms *metalv1.MachineSet, typ, reason, action, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(ms, nil, typ, reason, action, format, args...)
	}
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// SetupWithManager registers the controller.
func (r *MachineSetReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 4
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&metalv1.MachineSet{}).
		Owns(&metalv1.Machine{}).
		// New Hosts can add failure domains to spread over.
		Watches(&metalv1.Host{}, handler.EnqueueRequestsFromMapFunc(r.setsInNamespace)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Named("machineset").
		Complete(r)
}

func (r *MachineSetReconciler) setsInNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	if o.(*metalv1.Host).Status.State != metalv1.HostAvailable {
		return nil
	}
	var list metalv1.MachineSetList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, ms := range list.Items {
		if ms.Status.Replicas < ptrOr(ms.Spec.Replicas, 1) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ms.Namespace, Name: ms.Name}})
		}
	}
	return out
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
