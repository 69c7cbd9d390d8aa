package kube_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/client"
	"anvil.dev/anvil/agent/server"
	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/ratelimit"
)

func newClient(t *testing.T, cred string) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{Endpoint: apiURL, Credential: cred, Attempts: 3, BaseDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func secretOf(cred string) string {
	_, s, _ := strings.Cut(cred, ".")
	return s
}

func sampleReport() agent.Report {
	return agent.Report{
		AgentVersion: "v0.3.0", BootID: "95ec1d05-f628-49bd-965c-d2d0a18047e1", Kernel: "6.1.0-18-amd64",
		KubeletVersion: "v1.36.0", CPU: agent.CPU{Model: "AMD EPYC 7543 32-Core Processor", Count: 64}, MemoryMiB: 257652,
		Disks: []agent.Disk{{Name: "nvme0n1", SizeBytes: 960197124096, Model: "SAMSUNG MZQL2960HCJR", Serial: "S64FNE0R"}},
		NICs: []agent.NIC{
			{Name: "eno1", MAC: "3C:EC:EF:00:11:22", SpeedMbps: 25000},
			{Name: "eno2", MAC: "3c:ec:ef:00:11:23"},
			{Name: "bond0", MAC: "3c:ec:ef:00:11:22"}, // shares eno1's MAC: listed once
		},
	}
}

func TestReportLandsInHostStatus(t *testing.T) {
	ns := env.Namespace(t)
	h, cred := newHost(t, ns, "h-report", metalv1.HostProvisioned)
	// BMC facts are already there; the agent's report must not erase them.
	h.Status.Hardware = &metalv1.HardwareDetails{Manufacturer: "Supermicro", SerialNumber: "S123", CPUModel: "from BMC"}
	if err := env.Client.Status().Update(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, cred)
	before := time.Now().Add(-time.Second).Truncate(time.Second)
	if err := c.Report(context.Background(), sampleReport()); err != nil {
		t.Fatal(err)
	}
	h = waitFor(t, h, "got the report", func(h *metalv1.Host) bool { return h.Status.Agent.BootID != "" })
	a, hw := h.Status.Agent, h.Status.Hardware
	if a.Version != "v0.3.0" || a.BootID != "95ec1d05-f628-49bd-965c-d2d0a18047e1" || a.KubeletVersion != "v1.36.0" {
		t.Errorf("agent status %+v", a)
	}
	if a.LastSeen == nil || a.LastSeen.Time.Before(before) {
		t.Errorf("lastSeen %v", a.LastSeen)
	}
	if a.CredentialHash != agent.CredentialHash(cred) {
		t.Error("the report changed the credential hash")
	}
	if hw.CPUModel != "AMD EPYC 7543 32-Core Processor" || hw.CPUCount != 64 || hw.MemoryMiB != 257652 {
		t.Errorf("hardware %+v", hw)
	}
	if strings.Join(hw.MACs, ",") != "3c:ec:ef:00:11:22,3c:ec:ef:00:11:23" {
		t.Errorf("MACs %v", hw.MACs)
	}
	if want := sampleReport(); len(hw.Disks) != len(want.Disks) || len(hw.NICs) != len(want.NICs) || hw.Kernel != want.Kernel ||
		(len(want.Disks) > 0 && (hw.Disks[0].Name != want.Disks[0].Name || hw.Disks[0].SizeBytes != want.Disks[0].SizeBytes)) {
		t.Errorf("disks %+v nics %+v kernel %q; reported %+v %+v %q", hw.Disks, hw.NICs, hw.Kernel, want.Disks, want.NICs, want.Kernel)
	}
	if hw.Manufacturer != "Supermicro" || hw.SerialNumber != "S123" {
		t.Errorf("BMC facts lost: %+v", hw)
	}

	// A report after a reboot replaces the boot ID and kubelet version.
	r := sampleReport()
	r.BootID, r.KubeletVersion = "0d6c8a1e-0000-4000-8000-000000000001", "v1.37.0"
	if err := c.Report(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, "saw the reboot", func(h *metalv1.Host) bool {
		return h.Status.Agent.BootID == r.BootID && h.Status.Agent.KubeletVersion == "v1.37.0"
	})
	if strings.Contains(logs.String(), secretOf(cred)) {
		t.Error("the credential appears in the logs")
	}
}

func TestReportValidation(t *testing.T) {
	ns := env.Namespace(t)
	_, cred := newClientHost(t, ns, "h-invalid")
	tests := []struct {
		name string
		mod  func(r *agent.Report)
	}{
		{"no boot ID", func(r *agent.Report) { r.BootID = "" }},
		{"bad MAC", func(r *agent.Report) { r.NICs = []agent.NIC{{Name: "eth0", MAC: "zz"}} }},
		{"bad kubelet version", func(r *agent.Report) { r.KubeletVersion = "1.37" }},
		{"huge field", func(r *agent.Report) { r.Kernel = strings.Repeat("x", 1000) }},
	}
	c := newClient(t, cred)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sampleReport()
			tt.mod(&r)
			var se *client.StatusError
			if err := c.Report(context.Background(), r); !errors.As(err, &se) || se.Code != http.StatusBadRequest {
				t.Errorf("got %v, want a 400", err)
			}
		})
	}
}

func newClientHost(t *testing.T, ns, name string) (*metalv1.Host, string) {
	return newHost(t, ns, name, metalv1.HostProvisioned)
}

// TestAuthRefused: every bad credential gets the same bare 401.
func TestAuthRefused(t *testing.T) {
	ns := env.Namespace(t)
	h, oldCred := newClientHost(t, ns, "h-auth")
	other, otherCred := newClientHost(t, ns, "h-auth-other")
	// Rotate: the new credential replaces the old one's hash.
	newCred, err := kube.IssueCredential(context.Background(), env.Client, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitCache(t, h, agent.CredentialHash(newCred))
	uid := string(h.UID)
	tests := []struct {
		name   string
		header string
	}{
		{"no header", ""},
		{"basic scheme", "Basic " + newCred},
		{"no secret", "Bearer " + uid + "."},
		{"not a credential", "Bearer garbage"},
		{"wrong secret", "Bearer " + uid + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"old credential after rotation", "Bearer " + oldCred},
		{"unknown host", "Bearer 00000000-0000-0000-0000-000000000000." + secretOf(newCred)},
		{"another host's secret", "Bearer " + uid + "." + secretOf(otherCred)},
		{"another host's credential for this host's UID", "Bearer " + string(other.UID) + "." + secretOf(newCred)},
	}
	for _, tt := range tests {
		for _, ep := range []struct{ method, path string }{
			{http.MethodGet, agent.PathActions},
			{http.MethodPost, agent.PathReport},
			{http.MethodPost, agent.ResultPath("p1")},
		} {
			t.Run(tt.name+ep.path, func(t *testing.T) {
				req, _ := http.NewRequest(ep.method, apiURL+ep.path, strings.NewReader(`{}`))
				if tt.header != "" {
					req.Header.Set("Authorization", tt.header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized || len(body) != 0 {
					t.Errorf("got %d %q, want a bare 401", resp.StatusCode, body)
				}
				if resp.Header.Get("WWW-Authenticate") == "" {
					t.Error("no WWW-Authenticate header")
				}
			})
		}
	}
	// The client maps it to ErrUnauthorized and does not retry.
	if _, err := newClient(t, oldCred).NextAction(context.Background()); !errors.Is(err, client.ErrUnauthorized) {
		t.Errorf("old credential: %v", err)
	}
	if _, err := newClient(t, newCred).NextAction(context.Background()); err != nil {
		t.Errorf("new credential: %v", err)
	}
	// Revoked: nothing works any more.
	if err := kube.RevokeCredential(context.Background(), env.Client, h); err != nil {
		t.Fatal(err)
	}
	waitCache(t, h, "")
	if _, err := newClient(t, newCred).NextAction(context.Background()); !errors.Is(err, client.ErrUnauthorized) {
		t.Errorf("revoked credential: %v", err)
	}
	for _, c := range []string{oldCred, newCred, otherCred} {
		if strings.Contains(logs.String(), secretOf(c)) {
			t.Error("a credential appears in the logs")
		}
	}
}

func TestAuthFailuresRateLimited(t *testing.T) {
	ns := env.Namespace(t)
	_, cred := newClientHost(t, ns, "h-ratelimit")
	srv, err := server.NewServer(server.ServerOptions{Backend: backend, Limiter: ratelimit.New(ratelimit.Options{Burst: 3, Refill: time.Hour})})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	codes := []int{}
	for i := 0; i < 5; i++ {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+agent.PathActions, nil)
		req.Header.Set("Authorization", "Bearer 00000000-0000-0000-0000-000000000000.x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	want := []int{401, 401, 401, 429, 429}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("codes %v, want %v", codes, want)
		}
	}
	// Somebody guessing from the host's address (shared, or spoofed on
	// the segment) does not lock the host out: its good credential still
	// works from the address that is out of tokens...
	c, _ := client.New(client.Options{Endpoint: hs.URL, Credential: cred, Attempts: 1})
	if _, err := c.NextAction(context.Background()); err != nil {
		t.Errorf("good credential from a limited address: %v", err)
	}
	// ...while guesses, even with the host's UID, stay throttled.
	uid, err := agent.HostUID(cred)
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := client.New(client.Options{Endpoint: hs.URL, Credential: uid + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", Attempts: 1})
	var se *client.StatusError
	if _, err := bad.NextAction(context.Background()); !errors.As(err, &se) || se.Code != http.StatusTooManyRequests {
		t.Errorf("a guess with the host's UID from a limited address: %v, want 429", err)
	}
}

func TestNextAction(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	kubelets := []metalv1.KubeletArtifact{
		{Version: "v1.37.0", Artifact: metalv1.Artifact{URL: "https://dl.example/v1.37.0/kubelet", SHA256: digest}},
		{Version: "v1.38.0", Artifact: metalv1.Artifact{URL: "kubelet/v1.38.0/kubelet", SHA256: digest}},
	}
	applying := func(v string) *metalv1.UpgradeStatus {
		return &metalv1.UpgradeStatus{PlanID: "plan-" + v, Version: v, FromVersion: "v1.36.0", State: metalv1.UpgradeApplying}
	}
	tests := []struct {
		name     string
		state    metalv1.HostState
		machine  bool
		upgrade  *metalv1.UpgradeStatus
		want     agent.Action
		resolved string
	}{
		{name: "idle host", state: metalv1.HostProvisioned, want: agent.Action{Type: agent.ActionNone}},
		{name: "machine without upgrade", state: metalv1.HostProvisioned, machine: true, want: agent.Action{Type: agent.ActionNone}},
		{name: "draining", state: metalv1.HostProvisioned, machine: true,
			upgrade: &metalv1.UpgradeStatus{PlanID: "p", Version: "v1.37.0", State: "Draining"}, want: agent.Action{Type: agent.ActionNone}},
		{name: "applying, absolute URL", state: metalv1.HostProvisioned, machine: true, upgrade: applying("v1.37.0"),
			want: agent.Action{Type: agent.ActionUpgrade, ID: "plan-v1.37.0", Upgrade: &agent.UpgradePlan{
				PlanID: "plan-v1.37.0", Version: "v1.37.0", URL: "/artifacts/%s/%s-class/kubelet/v1.37.0/kubelet", SHA256: digest, HealthCheckTimeoutSeconds: 90}},
			resolved: apiURL + "/artifacts/%s/%s-class/kubelet/v1.37.0/kubelet"},
		{name: "applying, artifact path", state: metalv1.HostProvisioned, machine: true, upgrade: applying("v1.38.0"),
			want: agent.Action{Type: agent.ActionUpgrade, ID: "plan-v1.38.0", Upgrade: &agent.UpgradePlan{
				PlanID: "plan-v1.38.0", Version: "v1.38.0", URL: "/artifacts/%s/%s-class/kubelet/v1.38.0/kubelet", SHA256: digest, HealthCheckTimeoutSeconds: 90}},
			resolved: apiURL + "/artifacts/%s/%s-class/kubelet/v1.38.0/kubelet"},
		{name: "applying a version the class lacks", state: metalv1.HostProvisioned, machine: true, upgrade: applying("v1.39.0"),
			want: agent.Action{Type: agent.ActionNone}},
		{name: "deprovisioning", state: metalv1.HostDeprovisioning, machine: true, upgrade: applying("v1.37.0"),
			want: agent.Action{Type: agent.ActionWipe, ID: "wipe-3"}},
	}
	ns := env.Namespace(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, cred := newHost(t, ns, "h-action-"+string(rune('a'+i)), tt.state)
			// Every kubelet, relative or http(s), is served by the boot HTTP
			// server under the class's artifact directory.
			if u := tt.want.Upgrade; u != nil {
				want := *u
				want.URL = fmt.Sprintf(u.URL, ns, h.Name)
				tt.want.Upgrade = &want
				tt.resolved = fmt.Sprintf(tt.resolved, ns, h.Name)
			}
			if tt.machine {
				machineFor(t, h, kubelets, tt.upgrade)
			}
			c := newClient(t, cred)
			var a agent.Action
			// The cache catches up with the Machine and the class shortly.
			deadline := time.Now().Add(10 * time.Second)
			for {
				var err error
				if a, err = c.NextAction(context.Background()); err != nil {
					t.Fatal(err)
				}
				if a.Type == tt.want.Type || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			a.PollAfterSeconds = 0
			if tt.want.Type == agent.ActionWipe {
				tt.want.ID = "wipe-" + strconv.FormatInt(h.Generation, 10)
			}
			if !equalAction(a, tt.want) {
				t.Fatalf("action %+v (plan %+v), want %+v (plan %+v)", a, a.Upgrade, tt.want, tt.want.Upgrade)
			}
			if tt.resolved != "" {
				if u, err := c.ResolveURL(a.Upgrade.URL); err != nil || u != tt.resolved {
					t.Errorf("resolved URL %q, %v; want %q", u, err, tt.resolved)
				}
			}
		})
	}
}

func equalAction(a, b agent.Action) bool {
	if a.Type != b.Type || a.ID != b.ID || (a.Upgrade == nil) != (b.Upgrade == nil) {
		return false
	}
	return a.Upgrade == nil || *a.Upgrade == *b.Upgrade
}

// TestUpgradeResults: the agent's reports land in status.upgrade.agentResult
// alone, under the agent API's field manager; status.upgrade.state, message
// and finishedAt stay the Machine controller's (it is not running here, so
// they stay as the plan was published).
func TestUpgradeResults(t *testing.T) {
	ns := env.Namespace(t)
	kubelets := []metalv1.KubeletArtifact{{Version: "v1.37.0", Artifact: metalv1.Artifact{URL: "https://dl.example/k", SHA256: strings.Repeat("0", 64)}}}
	tests := []struct {
		name        string
		results     []agent.Result
		wantOutcome metalv1.AgentUpgradeOutcome
		wantMessage string
	}{
		{"success", []agent.Result{
			{Result: agent.InProgress, Phase: agent.PhaseDownloading},
			{Result: agent.InProgress, Phase: agent.PhaseVerifying},
			{Result: agent.Succeeded, Phase: agent.PhaseDone, KubeletVersion: "v1.37.0"},
			{Result: agent.Succeeded, Phase: agent.PhaseDone, KubeletVersion: "v1.37.0"}, // a retry: no-op
		}, metalv1.AgentUpgradeSucceeded, ""},
		{"failure", []agent.Result{
			{Result: agent.InProgress, Phase: agent.PhaseRestarting},
			{Result: agent.Failed, Phase: agent.PhaseDone, Reason: "kubelet v1.37.0 not healthy within 5m0s; rolled back to kubelet v1.36.0"},
			{Result: agent.Succeeded, Phase: agent.PhaseDone}, // late and contradictory: the first outcome stands
		}, metalv1.AgentUpgradeFailed, "kubelet v1.37.0 not healthy within 5m0s; rolled back to kubelet v1.36.0"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, cred := newHost(t, ns, "h-result-"+string(rune('a'+i)), metalv1.HostProvisioned)
			planID := "plan-" + tt.name
			published := metalv1.UpgradeStatus{PlanID: planID, Version: "v1.37.0", FromVersion: "v1.36.0", State: metalv1.UpgradeApplying, Message: "plan published; waiting for the agent"}
			// A report on an older plan, as a previous attempt left it.
			published.AgentResult = &metalv1.AgentUpgradeResult{PlanID: "plan-older", Outcome: metalv1.AgentUpgradeFailed, Message: "old", ReportedAt: metav1.Now()}
			m := machineFor(t, h, kubelets, published.DeepCopy())
			c := newClient(t, cred)
			if a := waitAction(t, c, agent.ActionUpgrade); a.ID != planID {
				t.Fatalf("action %+v beside an older plan's outcome, want plan %s", a, planID)
			}
			for _, r := range tt.results {
				r.Type, r.PlanID = agent.ActionUpgrade, planID
				if err := c.SendResult(context.Background(), planID, r); err != nil {
					t.Fatalf("%+v: %v", r, err)
				}
				if r.Result == agent.InProgress {
					waitFor(t, m, "showed the phase", func(m *metalv1.Machine) bool {
						ar := m.Status.Upgrade.AgentResult
						return ar.PlanID == planID && ar.Outcome == metalv1.AgentUpgradeInProgress && ar.Message == string(r.Phase)
					})
				}
			}
			m = waitFor(t, m, "recorded the outcome", func(m *metalv1.Machine) bool {
				ar := m.Status.Upgrade.AgentResult
				return ar.PlanID == planID && ar.Outcome != metalv1.AgentUpgradeInProgress
			})
			if ar := m.Status.Upgrade.AgentResult; ar.Outcome != tt.wantOutcome || ar.Message != tt.wantMessage || ar.ReportedAt.IsZero() {
				t.Errorf("agentResult %+v, want outcome %s, message %q", ar, tt.wantOutcome, tt.wantMessage)
			}
			// The controller's fields are as it published them.
			got := m.Status.Upgrade.DeepCopy()
			got.AgentResult = nil
			published.AgentResult = nil
			if *got != published {
				t.Errorf("upgrade status %+v, want %+v (the agent API writes only agentResult)", got, published)
			}
			checkAgentUpgradeOwnsOnlyAgentResult(t, m)
			if a := waitAction(t, c, agent.ActionNone); a.Type != agent.ActionNone {
				t.Errorf("after the outcome the action is %+v", a)
			}
			// A result for another plan is stale.
			err := c.SendResult(context.Background(), "plan-other", agent.Result{Type: agent.ActionUpgrade, PlanID: "plan-other", Result: agent.Succeeded})
			if !errors.Is(err, client.ErrConflict) {
				t.Errorf("stale plan: %v, want ErrConflict", err)
			}
		})
	}
}

// checkAgentUpgradeOwnsOnlyAgentResult: in the API server's managedFields,
// the agent API's manager (anvil-agent-upgrade) has one apply entry and it
// owns status.upgrade.agentResult and nothing else.
func checkAgentUpgradeOwnsOnlyAgentResult(t *testing.T, m *metalv1.Machine) {
	t.Helper()
	entries := 0
	for _, mf := range m.GetManagedFields() {
		if mf.Manager != "anvil-agent-upgrade" {
			continue
		}
		entries++
		if mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != "status" || mf.FieldsV1 == nil {
			t.Errorf("anvil-agent-upgrade entry %s on %q, want an apply on status", mf.Operation, mf.Subresource)
			continue
		}
		var set map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &set); err != nil {
			t.Fatal(err)
		}
		status, _ := set["f:status"].(map[string]any)
		upgrade, _ := status["f:upgrade"].(map[string]any)
		if len(set) != 1 || len(status) != 1 || len(upgrade) != 1 || upgrade["f:agentResult"] == nil {
			t.Errorf("anvil-agent-upgrade owns %s, want only f:status.f:upgrade.f:agentResult", mf.FieldsV1.GetRawBytes())
		}
	}
	if entries != 1 {
		t.Errorf("%d managedFields entries of anvil-agent-upgrade, want 1", entries)
	}
}

func waitAction(t *testing.T, c *client.Client, want agent.ActionType) agent.Action {
	t.Helper()
	var a agent.Action
	for i := 0; i < 200; i++ {
		var err error
		if a, err = c.NextAction(context.Background()); err != nil {
			t.Fatal(err)
		}
		if a.Type == want {
			return a
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("action stayed %+v, want %s", a, want)
	return a
}

func TestWipeResult(t *testing.T) {
	ns := env.Namespace(t)
	for _, tt := range []struct {
		name   string
		result agent.Result
		want   metav1.ConditionStatus
		reason string
	}{
		{"succeeded", agent.Result{Type: agent.ActionWipe, Result: agent.Succeeded, Reason: "wiped nvme0n1, sda"}, metav1.ConditionTrue, kube.ReasonWiped},
		{"failed", agent.Result{Type: agent.ActionWipe, Result: agent.Failed, Reason: "sda: in use"}, metav1.ConditionFalse, kube.ReasonWipeFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, cred := newHost(t, ns, "h-wipe-"+tt.name, metalv1.HostDeprovisioning)
			c := newClient(t, cred)
			a := waitAction(t, c, agent.ActionWipe)
			if err := c.SendResult(context.Background(), a.ID, agent.Result{Type: agent.ActionWipe, Result: agent.InProgress, Phase: agent.PhaseWiping}); err != nil {
				t.Fatal(err)
			}
			if err := c.SendResult(context.Background(), a.ID, tt.result); err != nil {
				t.Fatal(err)
			}
			h = waitFor(t, h, "got the Wiped condition", func(h *metalv1.Host) bool {
				return meta.FindStatusCondition(h.Status.Conditions, kube.ConditionWiped) != nil
			})
			cond := meta.FindStatusCondition(h.Status.Conditions, kube.ConditionWiped)
			if cond.Status != tt.want || cond.Reason != tt.reason || cond.Message != tt.result.Reason || cond.ObservedGeneration != h.Generation {
				t.Errorf("condition %+v", cond)
			}
			// Recorded: no second wipe for this deprovisioning; a retry is a no-op.
			waitAction(t, c, agent.ActionNone)
			if err := c.SendResult(context.Background(), a.ID, tt.result); err != nil {
				t.Errorf("repeated result: %v", err)
			}
			// Once the Host has left Deprovisioning, a late result changes nothing.
			h.Status.State = metalv1.HostAvailable
			if err := env.Client.Status().Update(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			waitAction(t, c, agent.ActionNone)
		})
	}
}

// TestUnchangedReportIsNotWritten: the agent's periodic report that says
// nothing new writes nothing (lastSeen is refreshed only hourly); a report
// that changes anything else is written at once.
func TestUnchangedReportIsNotWritten(t *testing.T) {
	ns := env.Namespace(t)
	h, cred := newHost(t, ns, "h-quiet", metalv1.HostProvisioned)
	c := newClient(t, cred)
	ctx := context.Background()
	if err := c.Report(ctx, sampleReport()); err != nil {
		t.Fatal(err)
	}
	h = waitFor(t, h, "got the report", func(h *metalv1.Host) bool { return h.Status.Agent.BootID != "" })
	rv := h.ResourceVersion
	// The backend decides from its cache: wait until that has the report.
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &metalv1.Host{}
		return cached.Get(ctx, crclient.ObjectKeyFromObject(h), got) == nil && got.ResourceVersion == rv, nil
	})
	if err != nil {
		t.Fatal("the cache never saw the report")
	}
	// Into the next second, so a written lastSeen would differ.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	if err := c.Report(ctx, sampleReport()); err != nil {
		t.Fatal(err)
	}
	got := &metalv1.Host{}
	if err := env.Client.Get(ctx, crclient.ObjectKeyFromObject(h), got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != rv {
		t.Errorf("an unchanged report was written (lastSeen %v -> %v)", h.Status.Agent.LastSeen, got.Status.Agent.LastSeen)
	}

	for _, change := range []struct {
		what   string
		mutate func(*agent.Report)
		landed func(*metalv1.Host) bool
	}{
		{"memory", func(r *agent.Report) { r.MemoryMiB = 1024 }, func(h *metalv1.Host) bool { return h.Status.Hardware.MemoryMiB == 1024 }},
		{"no kubelet", func(r *agent.Report) { r.MemoryMiB, r.KubeletVersion = 1024, "" }, func(h *metalv1.Host) bool { return h.Status.Agent.KubeletVersion == "" }},
	} {
		r := sampleReport()
		change.mutate(&r)
		if err := c.Report(ctx, r); err != nil {
			t.Fatal(err)
		}
		waitFor(t, h, "got the report that changed "+change.what, change.landed)
	}
}
