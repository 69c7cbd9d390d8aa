package machine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestSummarize(t *testing.T) {
	cond := func(typ string, ok bool, reason string) metav1.Condition {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		return metav1.Condition{Type: typ, Status: s, Reason: reason}
	}
	node := &corev1.ObjectReference{Name: "n1"}
	tests := []struct {
		name      string
		status    metalv1.MachineStatus
		phase     metalv1.MachinePhase
		readyTrue bool
	}{
		{"new", metalv1.MachineStatus{}, metalv1.MachinePending, false},
		{"failed wins", metalv1.MachineStatus{FailureReason: "HostLost", Conditions: []metav1.Condition{cond(metalv1.ConditionNodeReady, true, "NodeReady")}}, metalv1.MachineFailed, false},
		{"node ready", metalv1.MachineStatus{NodeRef: node, Conditions: []metav1.Condition{cond(metalv1.ConditionNodeReady, true, "NodeReady")}}, metalv1.MachineRunning, true},
		{"running node went NotReady", metalv1.MachineStatus{Phase: metalv1.MachineRunning, NodeRef: node,
			Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, true, "Ready"), cond(metalv1.ConditionNodeReady, false, "NodeNotReady")}}, metalv1.MachineRunning, false},
		// A failed upgrade keeps Updating=True; a reboot then is no new join.
		{"updating node went NotReady", metalv1.MachineStatus{Phase: metalv1.MachineUpdating, NodeRef: node, Upgrade: &metalv1.UpgradeStatus{Version: "v1.33.0"},
			Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, true, "Ready"), cond(metalv1.ConditionNodeReady, false, "NodeNotReady"), cond(metalv1.ConditionUpdating, true, "InPlaceUpdateFailed")}}, metalv1.MachineUpdating, false},
		{"updated node went NotReady", metalv1.MachineStatus{Phase: metalv1.MachineUpdating, NodeRef: node, Upgrade: &metalv1.UpgradeStatus{Version: "v1.33.0"},
			Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, true, "Ready"), cond(metalv1.ConditionNodeReady, false, "NodeNotReady")}}, metalv1.MachineRunning, false},
		// Written by hand or by an older Anvil: Running with a nodeRef but
		// no NodeReady condition once panicked here.
		{"running without NodeReady", metalv1.MachineStatus{Phase: metalv1.MachineRunning, NodeRef: node,
			Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, true, "Ready")}}, "", false},
		{"waiting for hardware", metalv1.MachineStatus{Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, false, metalv1.ReasonWaitingForHardware)}}, metalv1.MachineWaitingForHardware, false},
		{"class not ready", metalv1.MachineStatus{Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, false, metalv1.ReasonClassNotReady)}}, metalv1.MachinePending, false},
		{"provisioning", metalv1.MachineStatus{Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, false, "PoweringOn")}}, metalv1.MachineProvisioning, false},
		{"infrastructure ready, no node yet", metalv1.MachineStatus{Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, true, "Ready")}}, metalv1.MachineJoining, false},
		{"infrastructure ready, node not ready", metalv1.MachineStatus{Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, true, "Ready"), cond(metalv1.ConditionNodeReady, false, "NodeNotReady")}}, metalv1.MachineJoining, false},
		{"running and updating", metalv1.MachineStatus{NodeRef: node, Upgrade: &metalv1.UpgradeStatus{Version: "v1.33.0"},
			Conditions: []metav1.Condition{cond(metalv1.ConditionNodeReady, true, "NodeReady"), cond(metalv1.ConditionUpdating, true, "Draining")}}, metalv1.MachineUpdating, true},
		{"upgrade done, no longer updating", metalv1.MachineStatus{NodeRef: node, Upgrade: &metalv1.UpgradeStatus{Version: "v1.33.0"},
			Conditions: []metav1.Condition{cond(metalv1.ConditionNodeReady, true, "NodeReady"), cond(metalv1.ConditionUpdating, false, "UpToDate")}}, metalv1.MachineRunning, true},
		{"updating but not running stays provisioning", metalv1.MachineStatus{Upgrade: &metalv1.UpgradeStatus{Version: "v1.33.0"},
			Conditions: []metav1.Condition{cond(metalv1.ConditionInfrastructureReady, false, "PoweringOn"), cond(metalv1.ConditionUpdating, true, "Draining")}}, metalv1.MachineProvisioning, false},
	}
	for _, tc := range tests {
		m := &metalv1.Machine{Status: tc.status}
		summarize(m)
		if tc.phase != "" && m.Status.Phase != tc.phase {
			t.Errorf("%s: phase %q, want %q", tc.name, m.Status.Phase, tc.phase)
		}
		var ready *metav1.Condition
		for i := range m.Status.Conditions {
			if m.Status.Conditions[i].Type == metalv1.ConditionReady {
				ready = &m.Status.Conditions[i]
			}
		}
		if ready == nil || (ready.Status == metav1.ConditionTrue) != tc.readyTrue || ready.Reason == "" {
			t.Errorf("%s: Ready = %+v, want status true=%t with a reason", tc.name, ready, tc.readyTrue)
		}
	}
}
