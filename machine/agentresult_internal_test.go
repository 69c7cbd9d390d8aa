package machine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// TestTakeAgentResult: the agent API's report (status.upgrade.agentResult)
// becomes state, message and finishedAt as the agent's own write made them,
// only for the current plan and only while Applying.
func TestTakeAgentResult(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC))
	applying := func(ar *metalv1.AgentUpgradeResult) *metalv1.UpgradeStatus {
		return &metalv1.UpgradeStatus{PlanID: "p-2", Version: "v1.37.0", State: metalv1.UpgradeApplying, Message: "plan published; waiting for the agent", AgentResult: ar}
	}
	for _, tt := range []struct {
		name    string
		up      *metalv1.UpgradeStatus
		changed bool
		state   metalv1.UpgradeState
		message string
		done    bool // finishedAt set
	}{
		{"no report", applying(nil), false, metalv1.UpgradeApplying, "plan published; waiting for the agent", false},
		{"stale plan's outcome", applying(&metalv1.AgentUpgradeResult{PlanID: "p-1", Outcome: metalv1.AgentUpgradeSucceeded, ReportedAt: at}),
			false, metalv1.UpgradeApplying, "plan published; waiting for the agent", false},
		{"progress", applying(&metalv1.AgentUpgradeResult{PlanID: "p-2", Outcome: metalv1.AgentUpgradeInProgress, Message: "downloading", ReportedAt: at}),
			true, metalv1.UpgradeApplying, "agent: downloading", false},
		{"success without reason", applying(&metalv1.AgentUpgradeResult{PlanID: "p-2", Outcome: metalv1.AgentUpgradeSucceeded, ReportedAt: at}),
			true, metalv1.UpgradeSucceeded, "kubelet v1.37.0 installed and healthy", true},
		{"failure", applying(&metalv1.AgentUpgradeResult{PlanID: "p-2", Outcome: metalv1.AgentUpgradeFailed, Message: "rolled back", ReportedAt: at}),
			true, metalv1.UpgradeFailed, "rolled back", true},
		{"failure without reason", applying(&metalv1.AgentUpgradeResult{PlanID: "p-2", Outcome: metalv1.AgentUpgradeFailed, ReportedAt: at}),
			true, metalv1.UpgradeFailed, "the agent reported a failure without a reason", true},
		{"verified stays", &metalv1.UpgradeStatus{PlanID: "p-2", Version: "v1.37.0", State: metalv1.UpgradeVerified, Message: "ok",
			AgentResult: &metalv1.AgentUpgradeResult{PlanID: "p-2", Outcome: metalv1.AgentUpgradeFailed, ReportedAt: at}}, false, metalv1.UpgradeVerified, "ok", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			changed := takeAgentResult(tt.up)
			if changed != tt.changed || tt.up.State != tt.state || tt.up.Message != tt.message || (tt.up.FinishedAt != nil) != tt.done {
				t.Errorf("changed %v, upgrade %+v; want changed %v, state %s, message %q, finished %v", changed, tt.up, tt.changed, tt.state, tt.message, tt.done)
			}
			if tt.done && !tt.up.FinishedAt.Equal(&at) {
				t.Errorf("finishedAt %v, want the report's time %v", tt.up.FinishedAt, at)
			}
		})
	}
}
