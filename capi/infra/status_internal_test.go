package infra

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestFailureDomains(t *testing.T) {
	host := func(domain string) metalv1.Host {
		h := metalv1.Host{}
		if domain != "" {
			h.Labels = map[string]string{metalv1.LabelFailureDomain: domain}
		}
		return h
	}
	for _, tc := range []struct {
		name  string
		hosts []metalv1.Host
		want  string
	}{
		{"none", nil, "[]"},
		{"unlabelled only", []metalv1.Host{host(""), host("")}, "[]"},
		{"distinct and sorted", []metalv1.Host{host("b"), host("a"), host("b"), host("")}, "[a b]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := failureDomains(tc.hosts)
			var names []string
			for _, d := range got {
				names = append(names, d.Name)
				if d.ControlPlane == nil || !*d.ControlPlane {
					t.Errorf("%s: controlPlane not true", d.Name)
				}
			}
			if fmt.Sprint(names) != tc.want {
				t.Errorf("got %v, want %s", names, tc.want)
			}
		})
	}
}

func TestMirror(t *testing.T) {
	infra := func(s metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: metalv1.ConditionInfrastructureReady, Status: s, Reason: reason, Message: "m"}}
	}
	for _, tc := range []struct {
		name            string
		status          metalv1.MachineStatus
		specDomain      string
		host            *metalv1.Host
		wasProvisioned  bool
		wantReady       metav1.ConditionStatus
		wantReason      string
		wantProvisioned bool
		wantDomain      string
	}{
		{name: "nothing reported", wantReady: metav1.ConditionFalse, wantReason: string(metalv1.MachinePending)},
		{name: "booting", status: metalv1.MachineStatus{ProviderID: "anvil://u", Conditions: infra(metav1.ConditionFalse, metalv1.ReasonNetworkBooting)},
			wantReady: metav1.ConditionFalse, wantReason: metalv1.ReasonNetworkBooting},
		{name: "booted without providerID", status: metalv1.MachineStatus{Conditions: infra(metav1.ConditionTrue, metalv1.ReasonBooted)},
			wantReady: metav1.ConditionTrue, wantReason: metalv1.ReasonBooted},
		{name: "booted", status: metalv1.MachineStatus{ProviderID: "anvil://u", Conditions: infra(metav1.ConditionTrue, metalv1.ReasonBooted)},
			wantReady: metav1.ConditionTrue, wantReason: metalv1.ReasonBooted, wantProvisioned: true},
		{name: "provisioned stays after a later failure", wasProvisioned: true, status: metalv1.MachineStatus{ProviderID: "anvil://u", Conditions: infra(metav1.ConditionFalse, metalv1.ReasonHostLost)},
			wantReady: metav1.ConditionFalse, wantReason: metalv1.ReasonHostLost, wantProvisioned: true},
		{name: "domain from the spec", specDomain: "rack-a", wantReady: metav1.ConditionFalse, wantReason: string(metalv1.MachinePending), wantDomain: "rack-a"},
		{name: "domain from the Host wins", specDomain: "rack-a", host: &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{metalv1.LabelFailureDomain: "rack-b"}}},
			wantReady: metav1.ConditionFalse, wantReason: string(metalv1.MachinePending), wantDomain: "rack-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			am := &infrav1.AnvilMachine{}
			if tc.wasProvisioned {
				yes := true
				am.Status.Initialization.Provisioned = &yes
			}
			m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: metalv1.MachineSpec{FailureDomain: tc.specDomain}, Status: tc.status}
			mirror(am, m, tc.host)
			var ready *metav1.Condition
			for i := range am.Status.Conditions {
				if am.Status.Conditions[i].Type == infrav1.ConditionReady {
					ready = &am.Status.Conditions[i]
				}
			}
			if ready == nil || ready.Status != tc.wantReady || ready.Reason != tc.wantReason || !strings.HasPrefix(ready.Message, "Machine m") {
				t.Errorf("Ready = %+v, want %s %s", ready, tc.wantReady, tc.wantReason)
			}
			p := am.Status.Initialization.Provisioned
			if (p != nil && *p) != tc.wantProvisioned {
				t.Errorf("provisioned = %v, want %v", p, tc.wantProvisioned)
			}
			if am.Status.FailureDomain != tc.wantDomain {
				t.Errorf("failureDomain = %q, want %q", am.Status.FailureDomain, tc.wantDomain)
			}
		})
	}
}

func TestDesiredMachineVersion(t *testing.T) {
	secret := "s"
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"v1.37.2", true},
		{"1.37.2", false},
		{"v1.37.2+rke2", false},
		{"", false},
	} {
		owner := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Spec: clusterv1.MachineSpec{Version: tc.version, Bootstrap: clusterv1.Bootstrap{DataSecretName: &secret}}}
		m, err := desiredMachine(&infrav1.AnvilMachine{ObjectMeta: metav1.ObjectMeta{Name: "am", Namespace: "ns"}}, owner)
		if tc.ok != (err == nil) {
			t.Errorf("version %q: err %v, want ok=%v", tc.version, err, tc.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "spec.version") {
			t.Errorf("version %q: error %q does not name spec.version", tc.version, err)
		}
		if err == nil && (m.Spec.Version != tc.version || m.Spec.Bootstrap.DataSecretName != "s" || m.Name != "am" || m.Namespace != "ns") {
			t.Errorf("version %q: machine %+v", tc.version, m)
		}
	}
}
