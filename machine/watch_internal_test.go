package machine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// TestNodeMatters: a kubelet's periodic status post (heartbeat times only)
// wakes no Machine; every field the Machine controller reads does.
func TestNodeMatters(t *testing.T) {
	base := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1", ResourceVersion: "1"},
			Spec:       corev1.NodeSpec{ProviderID: ProviderIDPrefix + "ns/h1"},
			Status: corev1.NodeStatus{
				NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}},
				Conditions: []corev1.NodeCondition{
					{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
					{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
				},
			},
		}
	}
	now := metav1.NewTime(time.Now())
	for _, tc := range []struct {
		name   string
		change func(n *corev1.Node)
		want   bool
	}{
		{"heartbeat only", func(n *corev1.Node) {
			n.ResourceVersion = "2"
			for i := range n.Status.Conditions {
				n.Status.Conditions[i].LastHeartbeatTime = now
			}
		}, false},
		{"another condition", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionTrue }, false},
		{"Ready false", func(n *corev1.Node) { n.Status.Conditions[1].Status = corev1.ConditionFalse }, true},
		{"Ready message", func(n *corev1.Node) { n.Status.Conditions[1].Message = "PLEG is not healthy" }, true},
		{"Ready gone", func(n *corev1.Node) { n.Status.Conditions = n.Status.Conditions[:1] }, true},
		{"cordoned", func(n *corev1.Node) { n.Spec.Unschedulable = true }, true},
		{"kubelet upgraded", func(n *corev1.Node) { n.Status.NodeInfo.KubeletVersion = "v1.37.2" }, true},
		{"rebooted", func(n *corev1.Node) { n.Status.NodeInfo.BootID = "b2" }, true},
		{"address", func(n *corev1.Node) { n.Status.Addresses[0].Address = "10.0.0.6" }, true},
		{"providerID", func(n *corev1.Node) { n.Spec.ProviderID = "" }, true},
		{"deleting", func(n *corev1.Node) { n.DeletionTimestamp = &now }, true},
		{"recreated", func(n *corev1.Node) { n.UID = "u2" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, n := base(), base()
			tc.change(n)
			if got := nodeMatters(o, n); got != tc.want {
				t.Errorf("nodeMatters = %v, want %v", got, tc.want)
			}
			if got := changePredicate(nodeMatters).Update(event.UpdateEvent{ObjectOld: o, ObjectNew: n}); got != tc.want {
				t.Errorf("the Node watch's predicate passes = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHostMatters: the agent's periodic report (lastSeen) and the power
// check time wake no Machine; any other change does.
func TestHostMatters(t *testing.T) {
	t0 := metav1.NewTime(time.Now().Truncate(time.Second))
	t1 := metav1.NewTime(t0.Add(10 * time.Minute))
	base := func() *metalv1.Host {
		return &metalv1.Host{
			ObjectMeta: metav1.ObjectMeta{Name: "h1", Generation: 1, ResourceVersion: "1", Labels: map[string]string{"rack": "r1"}},
			Status: metalv1.HostStatus{State: metalv1.HostProvisioned, LastPowerCheck: &t0,
				Agent: &metalv1.AgentStatus{BootID: "b1", LastSeen: &t0, KubeletVersion: "v1.36.3"}},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(h *metalv1.Host)
		want   bool
	}{
		{"lastSeen and resourceVersion", func(h *metalv1.Host) { h.Status.Agent.LastSeen, h.ResourceVersion = &t1, "2" }, false},
		{"power check time", func(h *metalv1.Host) { h.Status.LastPowerCheck = &t1 }, false},
		{"boot ID", func(h *metalv1.Host) { h.Status.Agent.LastSeen, h.Status.Agent.BootID = &t1, "b2" }, true},
		{"kubelet version", func(h *metalv1.Host) { h.Status.Agent.KubeletVersion = "v1.37.2" }, true},
		{"agent status appears", func(h *metalv1.Host) { h.Status.Agent = nil }, true},
		{"state", func(h *metalv1.Host) { h.Status.State = metalv1.HostDeprovisioning }, true},
		{"spec", func(h *metalv1.Host) { h.Generation = 2 }, true},
		{"label", func(h *metalv1.Host) { h.Labels["rack"] = "r2" }, true},
		{"annotation", func(h *metalv1.Host) { h.Annotations = map[string]string{metalv1.AnnotationProvisioned: "x"} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, n := base(), base()
			tc.change(n)
			if got := hostMatters(o, n); got != tc.want {
				t.Errorf("hostMatters = %v, want %v", got, tc.want)
			}
			if got := changePredicate(hostMatters).Update(event.UpdateEvent{ObjectOld: o, ObjectNew: n}); got != tc.want {
				t.Errorf("the Host watch's predicate passes = %v, want %v", got, tc.want)
			}
		})
	}
}
