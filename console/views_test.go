package console

import (
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
)

func cond(t, status, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}
}

func TestHostHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		state  metalv1.HostState
		conds  []metav1.Condition
		want   health
		reason string
	}{
		{"available", metalv1.HostAvailable, []metav1.Condition{cond(metalv1.ConditionBMCReachable, "True", "Reachable", "")}, healthOK, ""},
		{"bmc unreachable", metalv1.HostRegistering, []metav1.Condition{cond(metalv1.ConditionBMCReachable, "False", metalv1.ReasonUnreachable, "dial tcp: refused")},
			healthError, "BMCReachable=False Unreachable: dial tcp: refused"},
		{"auth failed", metalv1.HostError, []metav1.Condition{cond(metalv1.ConditionBMCReachable, "False", metalv1.ReasonAuthFailed, "401")}, healthError, "AuthFailed"},
		{"wipe failed", metalv1.HostError, []metav1.Condition{cond(metalv1.ConditionWiped, "False", metalv1.ReasonWipeFailed, "disk busy")}, healthError, "Wiped=False WipeFailed"},
		{"config render failed", metalv1.HostProvisioning, []metav1.Condition{cond(metalv1.ConditionConfigRendered, "False", metalv1.ReasonConfigRenderFailed, "template")}, healthError, "ConfigRendered=False"},
		{"powering is a change, not a problem", metalv1.HostAvailable, []metav1.Condition{cond(metalv1.ConditionPowerSynced, "False", inventory.ReasonPowering, "")}, healthOK, ""},
		{"a person must act", metalv1.HostClaimed, []metav1.Condition{cond(metalv1.ConditionPowerSynced, "False", inventory.ReasonManualActionRequired, "power on")}, healthWait, "ManualActionRequired"},
		{"power unreachable", metalv1.HostAvailable, []metav1.Condition{cond(metalv1.ConditionPowerSynced, "False", metalv1.ReasonUnreachable, "")}, healthError, "PowerSynced=False"},
		{"error state without a condition", metalv1.HostError, nil, healthError, "state Error"},
		{"provisioning", metalv1.HostProvisioning, nil, healthBusy, "Provisioning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &metalv1.Host{Status: metalv1.HostStatus{State: tc.state, Conditions: tc.conds}}
			got, reason := hostHealth(h)
			if got != tc.want || !strings.Contains(reason, tc.reason) {
				t.Errorf("hostHealth = %s %q, want %s containing %q", got, reason, tc.want, tc.reason)
			}
		})
	}
}

func host(name, rack, fd string, state metalv1.HostState, conds ...metav1.Condition) *metalv1.Host {
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{}},
		Status: metalv1.HostStatus{State: state, Conditions: conds}}
	if rack != "" {
		h.Labels[metalv1.LabelRack] = rack
	}
	if fd != "" {
		h.Labels[metalv1.LabelFailureDomain] = fd
	}
	return h
}

func rackNames(p rackPage) string {
	var out []string
	for _, r := range p.Racks {
		var names []string
		for _, t := range r.Tiles {
			names = append(names, t.Name)
		}
		out = append(out, r.Name+":"+strings.Join(names, ","))
	}
	return strings.Join(out, " ")
}

func TestGroupRacks(t *testing.T) {
	bad := cond(metalv1.ConditionBMCReachable, "False", metalv1.ReasonUnreachable, "")
	hosts := []*metalv1.Host{
		host("a1", "ra", "fd1", metalv1.HostAvailable), host("a2", "ra", "fd1", metalv1.HostProvisioned),
		host("b1", "rb", "fd2", metalv1.HostRegistering, bad), host("b2", "rb", "fd2", metalv1.HostAvailable), host("b3", "rb", "fd2", metalv1.HostAvailable),
		host("loose", "", "", metalv1.HostAvailable),
	}
	hosts[1].Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Name: "web-0"}
	idx := indexMachines([]*metalv1.Machine{{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns"},
		Status: metalv1.MachineStatus{NodeRef: &corev1.ObjectReference{Name: "node-web-0"}, Version: "v1.37.2"}}})
	for _, tc := range []struct {
		name     string
		f        rackFilter
		pageSize int
		want     string
		pages    int
	}{
		{"one page, racks sorted by failure domain then name", rackFilter{}, 100, "(no rack):loose ra:a1,a2 rb:b1,b2,b3", 1},
		{"racks are never split across pages", rackFilter{Page: 2}, 3, "rb:b1,b2,b3", 2},
		{"first page", rackFilter{Page: 1}, 3, "(no rack):loose ra:a1,a2", 2},
		{"a page past the end shows the last", rackFilter{Page: 9}, 3, "rb:b1,b2,b3", 2},
		{"problems only", rackFilter{Problems: true}, 100, "rb:b1", 1},
		{"find by machine name", rackFilter{Query: "WEB-0"}, 100, "ra:a2", 1},
		{"find by rack", rackFilter{Query: "rb"}, 100, "rb:b1,b2,b3", 1},
		{"nothing matches", rackFilter{Query: "zzz"}, 100, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := groupRacks(hosts, idx, tc.f, tc.pageSize)
			if got := rackNames(p); got != tc.want || p.Pages != tc.pages {
				t.Errorf("got %q in %d pages, want %q in %d", got, p.Pages, tc.want, tc.pages)
			}
			if p.Hosts != 6 || p.Problems != 1 {
				t.Errorf("summary %d hosts, %d problems; want 6 and 1", p.Hosts, p.Problems)
			}
		})
	}
	p := groupRacks(hosts, idx, rackFilter{}, 100)
	a2 := p.Racks[1].Tiles[1]
	if a2.Machine != "web-0" || a2.Node != "node-web-0" || a2.Kubelet != "v1.37.2" || a2.ID != "h-ns--a2" {
		t.Errorf("tile of a2: %+v", a2)
	}
	if r := p.Racks[2]; r.Problems != 1 || r.FailureDomain != "fd2" || r.ID != "rack-fd2--rb" {
		t.Errorf("rack rb: %+v", r)
	}
}

func TestMachineUpgrade(t *testing.T) {
	up := func(state metalv1.UpgradeState, msg string, agent *metalv1.AgentUpgradeResult) *metalv1.Machine {
		return &metalv1.Machine{Status: metalv1.MachineStatus{Upgrade: &metalv1.UpgradeStatus{PlanID: "p1", FromVersion: "v1.36.4", Version: "v1.37.2",
			State: state, Message: msg, PodsLeft: 3, AgentResult: agent}}}
	}
	for _, tc := range []struct {
		name        string
		m           *metalv1.Machine
		state, want string
		class       health
	}{
		{"draining", up(metalv1.UpgradeDraining, "", nil), "Draining", "draining (3 pods left)", healthBusy},
		{"applying, the agent's phase", up(metalv1.UpgradeApplying, "", &metalv1.AgentUpgradeResult{PlanID: "p1", Outcome: metalv1.AgentUpgradeInProgress, Message: "downloading"}),
			"Applying", "v1.36.4 → v1.37.2: downloading", healthBusy},
		{"an old plan's phase is not shown", up(metalv1.UpgradeApplying, "", &metalv1.AgentUpgradeResult{PlanID: "p0", Outcome: metalv1.AgentUpgradeInProgress, Message: "old"}),
			"Applying", "the agent has the plan", healthBusy},
		{"verifying", up(metalv1.UpgradeSucceeded, "", nil), "Verifying", "checking the Node", healthBusy},
		{"rolled back with the agent's reason", up(metalv1.UpgradeFailed, "failed", &metalv1.AgentUpgradeResult{PlanID: "p1", Outcome: metalv1.AgentUpgradeFailed, Message: "health check failed"}),
			"Failed", "rolled back: health check failed", healthError},
		{"rejected", up(metalv1.UpgradeRejected, "skips minor versions", nil), "Rejected", "nothing touched: skips minor versions", healthError},
		{"done", up(metalv1.UpgradeVerified, "", nil), "Verified", "done", healthOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := machineUpgrade(tc.m)
			if v.State != tc.state || !strings.Contains(v.Detail, tc.want) || v.Class != tc.class {
				t.Errorf("got %s %q (%s), want %s containing %q (%s)", v.State, v.Detail, v.Class, tc.state, tc.want, tc.class)
			}
		})
	}
	if machineUpgrade(&metalv1.Machine{}) != nil {
		t.Error("a Machine that never upgraded shows an upgrade")
	}
}

func TestSetRollout(t *testing.T) {
	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	ms.Spec.Template.Spec.Version = "v1.37.2"
	ms.Status.Conditions = []metav1.Condition{cond("RolloutPaused", "True", "TooManyFailures", "1 of 1 allowed failures")}
	member := func(name, fd, running string, state metalv1.UpgradeState) *metalv1.Machine {
		m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
		m.Spec.Version, m.Spec.FailureDomain, m.Status.Version = "v1.37.2", fd, running
		if state != "" {
			m.Status.Upgrade = &metalv1.UpgradeStatus{State: state, Version: "v1.37.2"}
		}
		return m
	}
	v := setRollout(ms, []*metalv1.Machine{
		member("a", "fd1", "v1.37.2", metalv1.UpgradeVerified), member("b", "fd1", "v1.36.4", metalv1.UpgradeFailed),
		member("c", "fd2", "v1.36.4", metalv1.UpgradeApplying), member("d", "fd2", "v1.37.2", ""),
	}, nil)
	if !v.Paused || !strings.Contains(v.PausedWhy, "TooManyFailures") || strings.Join(v.Failed, ",") != "b" {
		t.Errorf("paused %t %q, failed %v", v.Paused, v.PausedWhy, v.Failed)
	}
	if len(v.Domains) != 2 {
		t.Fatalf("domains %+v", v.Domains)
	}
	if d := v.Domains[0]; d.Domain != "fd1" || d.UpToDate != 1 || d.Total != 2 || strings.Join(d.Failed, ",") != "b" {
		t.Errorf("fd1: %+v", d)
	}
	if d := v.Domains[1]; d.Domain != "fd2" || d.UpToDate != 1 || d.Updating != 1 {
		t.Errorf("fd2: %+v", d)
	}
}

func TestRequestGuards(t *testing.T) {
	for _, tc := range []struct {
		origin, site string
		ok           bool
	}{
		{"", "", true}, // a client that is not a browser
		{"http://console.example:8443", "same-origin", true},
		{"https://evil.example", "cross-site", false},
		{"https://evil.example", "", false},
		{"null", "", false},
		{"", "same-site", false},
	} {
		r := httptest.NewRequest("POST", "http://console.example:8443/actions/hosts/ns/h/power", nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if got := sameOrigin(r); got != tc.ok {
			t.Errorf("Origin %q Sec-Fetch-Site %q: sameOrigin %t, want %t", tc.origin, tc.site, got, tc.ok)
		}
	}
	for in, want := range map[string]string{"/machines?ns=a": "/machines?ns=a", "//evil.example/x": "/racks", "https://evil.example": "/racks", "/\\evil": "/racks", "": "/racks"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"redfish+https://admin:hunter2@10.0.0.5/redfish/v1/Systems/1": "redfish+https://10.0.0.5/redfish/v1/Systems/1",
		"ipmi://10.0.0.6:623?password=x":                              "ipmi://10.0.0.6:623",
		"manual://rack-3/slot-4":                                      "manual://rack-3/slot-4",
	} {
		if got := bmcAddress(in); got != want {
			t.Errorf("bmcAddress(%q) = %q, want %q", in, got, want)
		}
	}
}
