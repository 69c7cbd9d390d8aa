package machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/cluster"
)

// Machines with spec.bootstrap boot with data a Cluster API bootstrap
// provider wrote. Anvil mints no bootstrap token for them, and their
// kubelet (kubeadm's) may register without Anvil's providerID, in a
// cluster the Machine names itself (spec.bootstrap.kubeconfigSecretRef):
//
//   - that cluster's Secret may not exist yet (Cluster API writes it when
//     the control plane initialises): the Machine boots anyway, NodeReady
//     says TargetClusterUnavailable naming the Secret, and the Machine looks
//     again with backoff (targetBackoff) until the join timeout;
//   - a Node named like the Host's hostname (the NoCloud meta-data's
//     local-hostname) with an empty spec.providerID is the Machine's: Anvil
//     sets spec.providerID to anvil://<host-uid> once (adoptNode), as
//     Metal3's CAPM3 does. A Node of that name with another providerID is
//     left alone and the Machine says so.

// IndexHostHostname indexes claimed Hosts by the hostname they are given
// (Host.NodeHostname), to map a Node without providerID to its Machine.
const IndexHostHostname = "anvil.hostname"

// ReasonNodeProviderIDMismatch on NodeReady: a Node named like the Host's
// hostname has another providerID; Anvil does not touch it.
const ReasonNodeProviderIDMismatch = "NodeProviderIDMismatch"

// Backoff of a Machine whose own target cluster is unavailable.
const (
	targetBackoffMin = time.Second
	targetBackoffMax = time.Minute
)

func bootstrapped(m *metalv1.Machine) bool { return m.Spec.Bootstrap != nil }

// ownTarget reports whether the Machine names its own target cluster.
func ownTarget(m *metalv1.Machine) bool {
	_, ok := cluster.MachineSecretOf(m)
	return ok
}

// ownTargetOf is targetOf for a Machine with spec.bootstrap.kubeconfigSecretRef.
func (r *MachineReconciler) ownTargetOf(ctx context.Context, s *scope) (*cluster.Target, error) {
	m := s.m
	if r.Targets == nil {
		return nil, fmt.Errorf("machine %s/%s names a target cluster (spec.bootstrap.kubeconfigSecretRef) but this controller has no target registry", m.Namespace, m.Name)
	}
	t, err := r.Targets.ForMachine(ctx, m)
	if err != nil {
		// Errors of join/cluster name the Secret and key, never content.
		hint := ""
		if errors.Is(err, cluster.ErrSecretNotFound) {
			hint = " (Cluster API writes <cluster>-kubeconfig once the control plane is initialised)"
		}
		setCondition(m, metalv1.ConditionNodeReady, false, metalv1.ReasonTargetUnavailable, "%v%s; looking again", err, hint)
		return nil, err
	}
	r.targetWaits.Delete(m.UID)
	if c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionNodeReady); c != nil && c.Reason == metalv1.ReasonTargetUnavailable {
		// The join phase says what comes next.
		meta.RemoveStatusCondition(&m.Status.Conditions, metalv1.ConditionNodeReady)
	}
	s.target = t
	return t, nil
}

// targetBackoff is how long a Machine whose own target is unavailable
// waits before looking again: doubling from targetBackoffMin to
// targetBackoffMax, reset once the target is there.
func (r *MachineReconciler) targetBackoff(m *metalv1.Machine) time.Duration {
	n := 0
	if v, ok := r.targetWaits.Load(m.UID); ok {
		n = v.(int)
	}
	r.targetWaits.Store(m.UID, n+1)
	d := targetBackoffMin << min(n, 16)
	return min(d, targetBackoffMax)
}

// unavailableTarget handles a failed targetOf in findHost: a Machine naming
// its own cluster goes on without its Node (it boots without that cluster;
// join waits and times out as usual) and looks again with backoff; any
// other error ends the reconcile as before.
func (r *MachineReconciler) unavailableTarget(s *scope, err error) result {
	if !ownTarget(s.m) {
		return result{err: err}
	}
	s.targetErr = err
	return result{after: r.targetBackoff(s.m)}
}

// waitForTarget is join's answer while the Machine's own target cluster
// is unavailable: the condition targetOf set stays, and the join timeout
// still runs from the boot.
func (r *MachineReconciler) waitForTarget(ctx context.Context, s *scope) result {
	m := s.m
	b := m.Status.Boot
	if m.Status.NodeRef != nil || b == nil || b.BootedAt == nil {
		return result{stop: true}
	}
	left := r.Options.JoinTimeout - s.now.Sub(b.BootedAt.Time)
	if left <= 0 {
		return r.timedOut(ctx, s, metalv1.ReasonJoinTimeout, fmt.Sprintf("no Node registered within %s of the boot: %v", r.Options.JoinTimeout, s.targetErr))
	}
	return result{stop: true, after: left}
}

// adoptNode looks for a booted bootstrap Machine's Node by the Host's
// hostname and, if its spec.providerID is empty, sets it to the Machine's
// providerID (once: the API server allows no change after that). It
// returns the Node if it is the Machine's now; a Node of another
// providerID is reported on NodeReady and left alone.
func (r *MachineReconciler) adoptNode(ctx context.Context, s *scope) (*corev1.Node, error) {
	m, h := s.m, s.host
	pid := m.Status.ProviderID
	if !bootstrapped(m) || h == nil || pid == "" || m.Status.Boot == nil || m.Status.Boot.BootedAt == nil {
		return nil, nil
	}
	t, err := r.targetOf(ctx, s)
	if err != nil {
		return nil, err
	}
	name := h.NodeHostname()
	n := &corev1.Node{}
	if err := t.Nodes.Get(ctx, types.NamespacedName{Name: name}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Node %s in %s: %w", name, t, err)
	}
	switch n.Spec.ProviderID {
	case pid:
		return n, nil // the index has not caught up with our own patch
	case "":
	default:
		s.foreignNode = fmt.Sprintf("Node %s in %s (the hostname of Host %s) has spec.providerID %s, not %s: Anvil leaves it alone; delete that Node or give Host %s another spec.network.hostname",
			n.Name, t, h.Name, n.Spec.ProviderID, pid, h.Name)
		return nil, nil
	}
	orig := n.DeepCopy()
	n.Spec.ProviderID = pid
	// Optimistic: if the kubelet set a providerID meanwhile, look again.
	if err := t.Client.Patch(ctx, n, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("setting spec.providerID of Node %s in %s: %w", n.Name, t, err)
	}
	ctrl.LoggerFrom(ctx).Info("set the providerID of the Node registered with the Host's hostname", "node", n.Name, "providerID", pid)
	r.event(m, corev1.EventTypeNormal, "NodeProviderIDSet", "Provision", "set spec.providerID %s on Node %s (registered with the hostname of Host %s)", pid, n.Name, h.Name)
	return n, nil
}

// skipDrain: a deleted Machine whose own target's Secret is gone (its
// cluster was deleted) cannot have its Node drained; Cluster API drains
// and deletes Nodes itself before it deletes the infrastructure.
func skipDrain(m *metalv1.Machine, err error) bool {
	return ownTarget(m) && errors.Is(err, cluster.ErrSecretNotFound)
}

// hostHostname is the IndexHostHostname function: claimed Hosts only.
func hostHostname(o client.Object) []string {
	h := o.(*metalv1.Host)
	if h.Spec.ConsumerRef == nil {
		return nil
	}
	return []string{h.NodeHostname()}
}

// machinesForHostname maps a Node without providerID to the Machine holding
// the Host of that hostname.
func (r *MachineReconciler) machinesForHostname(ctx context.Context, name string) []reconcile.Request {
	var list metalv1.HostList
	if err := r.Client.List(ctx, &list, client.MatchingFields{IndexHostHostname: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, h := range list.Items {
		ref := h.Spec.ConsumerRef
		ns := ref.Namespace
		if ns == "" {
			ns = h.Namespace
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: ref.Name}})
	}
	return out
}
