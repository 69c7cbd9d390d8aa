package machine

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/drain"
	ctrl "sigs.k8s.io/controller-runtime"
)

// drainStep bounds one drain call, so a reconcile worker is never held for
// the whole drain timeout; the next reconcile goes on where it stopped.
const drainStep = 20 * time.Second

// drainNode cordons n and evicts its pods through the eviction API, so
// PodDisruptionBudgets hold; DaemonSet and mirror pods stay. It reports
// whether the Node is empty, and how many pods are left if not.
func (r *MachineReconciler) drainNode(ctx context.Context, n *corev1.Node, timeout time.Duration) (bool, int, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("node", n.Name)
	h := &drain.Helper{
		Ctx:                 ctx,
		Client:              r.Clientset,
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
