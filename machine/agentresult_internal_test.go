package machine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// TestTakeAgentResult: the agent API's outcome (status.upgrade.agentResult)
// becomes state, message and finishedAt as the agent's own write made them,
// only for the current plan and only while Applying; a progress phase
// changes nothing.
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
		// A phase stays in agentResult (readers show it with Progress):
		// nothing for the controller to write.
		{"progress", applying(&metalv1.AgentUpgradeResult{PlanID: "p-2", Outcome: metalv1.AgentUpgradeInProgress, Message: "downloading", ReportedAt: at}),
			false, metalv1.UpgradeApplying, "plan published; waiting for the agent", false},
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

// TestUpgradeProgress: readers show the agent's phase while the plan is
// Applying, and the controller's message otherwise.
func TestUpgradeProgress(t *testing.T) {
	phase := func(plan string, o metalv1.AgentUpgradeOutcome, msg string) *metalv1.AgentUpgradeResult {
		return &metalv1.AgentUpgradeResult{PlanID: plan, Outcome: o, Message: msg}
	}
	for _, tt := range []struct {
		name string
		up   *metalv1.UpgradeStatus
		want string
	}{
		{"none", nil, ""},
		{"applying, no report", &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeApplying, Message: "plan published"}, "plan published"},
		{"applying, a phase", &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeApplying, Message: "plan published",
			AgentResult: phase("p", metalv1.AgentUpgradeInProgress, "downloading")}, "agent: downloading"},
		{"applying, another plan's phase", &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeApplying, Message: "plan published",
			AgentResult: phase("old", metalv1.AgentUpgradeInProgress, "downloading")}, "plan published"},
		{"applying, an outcome not yet taken", &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeApplying, Message: "plan published",
			AgentResult: phase("p", metalv1.AgentUpgradeSucceeded, "healthy")}, "agent: succeeded: healthy"},
		{"applying, a failure not yet taken", &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeApplying, Message: "plan published",
			AgentResult: phase("p", metalv1.AgentUpgradeFailed, "")}, "agent: failed"},
		{"failed", &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeFailed, Message: "rolled back",
			AgentResult: phase("p", metalv1.AgentUpgradeInProgress, "health check")}, "rolled back"},
	} {
		if got := tt.up.Progress(); got != tt.want {
			t.Errorf("%s: Progress() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestUpgradeStatePredicate: a new state or plan, and the agent's outcome,
// wake the Machine; a progress phase does not (nothing to do, and at
// thousands of Machines a reconcile per phase).
func TestUpgradeStatePredicate(t *testing.T) {
	machine := func(up *metalv1.UpgradeStatus) *metalv1.Machine {
		return &metalv1.Machine{Status: metalv1.MachineStatus{Upgrade: up}}
	}
	applying := func(ar *metalv1.AgentUpgradeResult) *metalv1.UpgradeStatus {
		return &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeApplying, AgentResult: ar}
	}
	phase := func(o metalv1.AgentUpgradeOutcome, msg string) *metalv1.AgentUpgradeResult {
		return &metalv1.AgentUpgradeResult{PlanID: "p", Outcome: o, Message: msg}
	}
	p := upgradeStatePredicate()
	for _, tt := range []struct {
		name     string
		old, new *metalv1.UpgradeStatus
		want     bool
	}{
		{"no upgrade", nil, nil, false},
		{"a plan starts", nil, &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeDraining}, true},
		{"state moves", &metalv1.UpgradeStatus{PlanID: "p", State: metalv1.UpgradeDraining}, applying(nil), true},
		{"first phase", applying(nil), applying(phase(metalv1.AgentUpgradeInProgress, "downloading")), false},
		{"next phase", applying(phase(metalv1.AgentUpgradeInProgress, "downloading")), applying(phase(metalv1.AgentUpgradeInProgress, "swapping")), false},
		{"outcome", applying(phase(metalv1.AgentUpgradeInProgress, "health check")), applying(phase(metalv1.AgentUpgradeSucceeded, "")), true},
		{"outcome unchanged", applying(phase(metalv1.AgentUpgradeFailed, "x")), applying(phase(metalv1.AgentUpgradeFailed, "x")), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: machine(tt.old), ObjectNew: machine(tt.new)}); got != tt.want {
			t.Errorf("%s: predicate = %v, want %v", tt.name, got, tt.want)
		}
	}
}
