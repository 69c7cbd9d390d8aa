package console

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/ops"
)

func testServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(Config{API: &rest.Config{Host: "https://127.0.0.1:6443"}, Scheme: runtime.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const evil = `<script>alert("x")</script>`

// Every region template renders what the API holds, and text from the API
// (a condition message, an Event, a label) is escaped, never markup.
func TestTemplatesRenderAndEscape(t *testing.T) {
	s := testServer(t)
	now := metav1.NewTime(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	h := host("n1", "r1"+evil, "fd1", metalv1.HostProvisioned,
		cond(metalv1.ConditionBMCReachable, "False", metalv1.ReasonUnreachable, evil))
	h.Spec.BMC = metalv1.BMC{Address: "redfish+https://root:calvin@10.0.0.9/redfish/v1/Systems/1", CredentialsName: "bmc-n1"}
	h.Spec.BootMACs = []string{"02:00:00:00:00:01"}
	h.Status.PowerState = metalv1.PowerOn
	h.Status.Hardware = &metalv1.HardwareDetails{Manufacturer: "Contoso", Disks: []metalv1.Disk{{Name: "sda", SizeBytes: 1 << 30}}, NICs: []metalv1.NIC{{Name: "eno1", MAC: "02:00:00:00:00:01"}}}
	h.Status.Leases = []metalv1.DHCPLease{{MAC: "02:00:00:00:00:01", IP: "10.1.0.5", ExpiresAt: now}}
	h.Status.PendingPowerAction = &metalv1.PendingPowerAction{Action: metalv1.PowerActionOn, RequestedAt: now}
	h.Status.BootCredential = &metalv1.BootCredentialStatus{Hash: "sha256-of-the-credential", IssuedAt: now, ExpiresAt: now}
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns"}}
	m.Status.Boot = &metalv1.MachineBoot{RequestID: "b1", Purpose: metalv1.BootPurposeProvision, Attempt: 1, StartedAt: now}
	m.Status.Upgrade = &metalv1.UpgradeStatus{PlanID: "p1", FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeFailed,
		AgentResult: &metalv1.AgentUpgradeResult{PlanID: "p1", Outcome: metalv1.AgentUpgradeFailed, Message: evil}}
	row := machineRowOf(m)
	d := hostDetail{H: h, Tile: hostTile(h, m), BMC: bmcAddress(h.Spec.BMC.Address), Rack: h.Labels[metalv1.LabelRack], Conditions: h.Status.Conditions,
		Leases: h.Status.Leases, Machine: &row, Boot: m.Status.Boot, Pending: "power On", Boots: []eventRow{{Time: "t", Reason: "NetworkBoot", Message: evil}}}
	set := setRollout(&metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}, []*metalv1.Machine{m}, nil)
	var out strings.Builder
	for _, part := range []struct {
		tmpl string
		data any
	}{
		{"rack", groupRacks([]*metalv1.Host{h}, nil, rackFilter{}, 10).Racks[0]},
		{"racks-summary", racksSummary{P: groupRacks([]*metalv1.Host{h}, nil, rackFilter{}, 10)}},
		{"racks-head", racksHead{Filter: rackFilter{Query: evil}}},
		{"host-summary", d}, {"host-conditions", d}, {"host-power", d},
		{"host-events", eventRows([]*corev1.Event{{Reason: "PowerOn", Message: evil, Type: corev1.EventTypeWarning}})},
		{"machinesets", machinesData{Sets: []setView{set}}},
		{"machines", machinesData{Machines: []machineRow{row}}},
		{"tickets-requests", ticketsData{Requests: []hardwareRequestRow{{Machine: "m3", Error: evil, URL: "https://tickets.example/1"}}}},
		{"tickets-power", ticketsData{Power: []powerRow{{Host: "n1", Namespace: "ns", Action: "power On"}}}},
		{"tickets-deliveries", ticketsData{Deliveries: []ticketRow{{Event: "hardware.requested", LastError: evil}}}},
		{"preview", previewData{Kind: "machines", Name: "m1", Namespace: "ns", Version: "v1.37.2", Startable: true,
			Rows: []ops.MachinePreview{{Machine: "m1", Mode: ops.ModeInPlace, Why: evil, SkewOK: true}}}},
	} {
		h, err := s.renderTemplate(part.tmpl, part.data)
		if err != nil {
			t.Fatalf("template %s: %v", part.tmpl, err)
		}
		if strings.Contains(string(h), "<script") {
			t.Errorf("template %s lets markup from the API through:\n%s", part.tmpl, h)
		}
		out.WriteString(string(h))
	}
	page := out.String()
	for _, want := range []string{"&lt;script&gt;", "//10.0.0.9/redfish/v1/Systems/1", "credentials in Secret bmc-n1", "10.1.0.5",
		"Provision boot b1, attempt 1", "Waiting for a person: power On", "rolled back: &lt;script&gt;", `data-health="error"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the rendered regions lack %q", want)
		}
	}
	for _, secret := range []string{"calvin", "sha256-of-the-credential"} {
		if strings.Contains(page, secret) {
			t.Errorf("the rendered regions show %q", secret)
		}
	}
}
