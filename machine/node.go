package machine

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/drain"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/cluster"
)

// drainStep bounds one drain call, so a reconcile worker is never held for
// the whole drain timeout; the next reconcile goes on where it stopped.
const drainStep = 20 * time.Second

// drainNode cordons n (in the cluster of cs) and evicts its pods through the eviction API, so
// PodDisruptionBudgets hold; DaemonSet and mirror pods stay. It reports
// whether the Node is empty, and how many pods are left if not.
func (r *MachineReconciler) drainNode(ctx context.Context, cs kubernetes.Interface, n *corev1.Node, timeout time.Duration) (bool, int, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("node", n.Name)
	h := &drain.Helper{
		Ctx:                 ctx,
		Client:              cs,
		Force:               true, // bare pods would otherwise block a deletion forever
		GracePeriodSeconds:  -1,
		IgnoreAllDaemonSets: true,
		DeleteEmptyDirData:  true,
		Timeout:             timeout,
		// Pods of a dead kubelet never finish terminating.
		SkipWaitForDeleteTimeoutSeconds: 60,
		Out:                             logWriter{log: log},
		ErrOut:                          logWriter{log: log, err: true},
	}
	if !n.Spec.Unschedulable {
		if err := drain.RunCordonOrUncordon(h, n, true); err != nil {
			return false, 0, fmt.Errorf("cordoning Node %s: %w", n.Name, err)
		}
	}
	list, errs := h.GetPodsForDeletion(n.Name)
	if len(errs) > 0 {
		return false, 0, fmt.Errorf("listing pods of Node %s: %v", n.Name, errs)
	}
	pods := list.Pods()
	if len(pods) == 0 {
		return true, 0, nil
	}
	if err := h.DeleteOrEvictPods(pods); err != nil {
		log.Info("drain not finished", "pods", len(pods), "reason", err.Error())
		return false, len(pods), nil
	}
	return true, 0, nil
}

// logWriter turns the drain helper's progress lines into log lines.
type logWriter struct {
	log ctrlLogger
	err bool
}

type ctrlLogger interface {
	Info(msg string, kv ...any)
}

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if line != "" {
			w.log.Info("drain: " + line)
		}
	}
	return len(p), nil
}

var _ io.Writer = logWriter{}

// targetOf is the cluster a Machine's Node is in: the one it names itself
// (spec.bootstrap.kubeconfigSecretRef), else its installed class's (a
// replacement may be moving it to another class), else its class's.
// A class that is gone, or names no kubeconfigSecretRef, means the
// management cluster, as before target clusters existed.
func (r *MachineReconciler) targetOf(ctx context.Context, s *scope) (*cluster.Target, error) {
	if s.target != nil {
		return s.target, nil
	}
	m := s.m
	if ownTarget(m) {
		return r.ownTargetOf(ctx, s)
	}
	name := m.Spec.MachineClassRef.Name
	if m.Status.InstalledClass != "" {
		name = m.Status.InstalledClass
	}
	class := &metalv1.MachineClass{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: name}, class)
	switch {
	case apierrors.IsNotFound(err):
		s.target = r.management()
		return s.target, nil
	case err != nil:
		return nil, err
	}
	if _, remote := cluster.SecretOf(class); !remote || r.Targets == nil {
		if remote {
			return nil, fmt.Errorf("MachineClass %s joins another cluster (spec.join.kubeconfigSecretRef) but this controller has no target registry", name)
		}
		s.target = r.management()
		return s.target, nil
	}
	t, err := r.Targets.For(ctx, class)
	if err != nil {
		// Before the join this blocks provisioning; afterwards the Node.
		cond := metalv1.ConditionInfrastructureReady
		if m.Status.NodeRef != nil {
			cond = metalv1.ConditionNodeReady
		}
		setCondition(m, cond, false, metalv1.ReasonTargetUnavailable, "%v", err)
		return nil, err
	}
	s.target = t
	return t, nil
}

// management is the management cluster as the controller reaches it.
func (r *MachineReconciler) management() *cluster.Target {
	// One for the controller's life: it caches the API server's version.
	r.mgmtOnce.Do(func() { r.mgmt = &cluster.Target{Clientset: r.Clientset, Client: r.Client, Nodes: r.Client} })
	return r.mgmt
}

// nodeByProviderID finds the Machine's Node in its target cluster.
func (r *MachineReconciler) nodeByProviderID(ctx context.Context, s *scope, pid string) (*corev1.Node, error) {
	t, err := r.targetOf(ctx, s)
	if err != nil {
		return nil, err
	}
	var nodes corev1.NodeList
	if t.Remote() && t.Cache == nil {
		// No cache for this target (a registry without the Machine
		// controller's hook): ask the API server.
		if err := t.Nodes.List(ctx, &nodes); err != nil {
			return nil, fmt.Errorf("listing Nodes in %s: %w", t, err)
		}
		for i := range nodes.Items {
			if nodes.Items[i].Spec.ProviderID == pid {
				return nodes.Items[i].DeepCopy(), nil
			}
		}
		return nil, nil
	}
	field := IndexNodeProviderID
	if t.Remote() {
		field = cluster.IndexNodeProviderID
	}
	if err := t.Nodes.List(ctx, &nodes, client.MatchingFields{field: pid}); err != nil {
		return nil, err
	}
	if len(nodes.Items) > 0 {
		return nodes.Items[0].DeepCopy(), nil
	}
	return nil, nil
}

// targetVersion is the API server version of the Machine's cluster, for
// the version-skew check of an upgrade.
func (r *MachineReconciler) targetVersion(ctx context.Context, s *scope) (*utilversion.Version, error) {
	t, err := r.targetOf(ctx, s)
	if err != nil {
		return nil, err
	}
	return t.ServerVersion()
}
