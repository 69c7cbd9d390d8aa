package kube_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/client"
	"anvil.dev/anvil/agent/server"
	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/ratelimit"
)

// TestUpgradeProgressHeld: phases posted within ProgressInterval of the last
// written one are held (the agent still gets 204 at once), and the outcome
// discards them. Every write of the Machine is a watch event, so the events
// show exactly what was written: the first phase, then the outcome.
func TestUpgradeProgressHeld(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const planID = "plan-held"
	m, cred := applyingMachine(t, ns, "h-held", planID)

	// A window no test outlives: a held phase is never written here.
	be, err := kube.New(kube.Options{Client: cached, APIReader: env.Client, ProgressInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, be, cred)
	if a := waitAction(t, c, agent.ActionUpgrade); a.ID != planID {
		t.Fatalf("action %+v, want plan %s", a, planID)
	}

	wc, err := crclient.NewWithWatch(env.Config, crclient.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &metalv1.MachineList{}, crclient.InNamespace(ns),
		&crclient.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: m.ResourceVersion, FieldSelector: "metadata.name=" + m.Name}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	for _, ph := range []agent.Phase{agent.PhaseDownloading, agent.PhaseInstalling, agent.PhaseSwitching} {
		if err := c.SendResult(ctx, planID, agent.Result{Type: agent.ActionUpgrade, PlanID: planID, Result: agent.InProgress, Phase: ph}); err != nil {
			t.Fatalf("%s: %v", ph, err)
		}
	}
	if err := c.SendResult(ctx, planID, agent.Result{Type: agent.ActionUpgrade, PlanID: planID, Result: agent.Succeeded, Phase: agent.PhaseDone, KubeletVersion: "v1.37.0"}); err != nil {
		t.Fatal(err)
	}

	var written []string
	timeout := time.After(15 * time.Second)
	for len(written) == 0 || strings.HasPrefix(written[len(written)-1], string(metalv1.AgentUpgradeInProgress)) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended; writes so far %q", written)
			}
			if ev.Type != watch.Modified {
				t.Fatalf("watch event %s; writes so far %q", ev.Type, written)
			}
			ar := ev.Object.(*metalv1.Machine).Status.Upgrade.AgentResult
			if ar == nil {
				t.Fatalf("a write without agentResult; writes so far %q", written)
			}
			written = append(written, string(ar.Outcome)+" "+ar.Message)
		case <-timeout:
			t.Fatalf("the outcome was never written; writes %q", written)
		}
	}
	want := []string{string(metalv1.AgentUpgradeInProgress) + " " + string(agent.PhaseDownloading), string(metalv1.AgentUpgradeSucceeded) + " "}
	if strings.Join(written, "|") != strings.Join(want, "|") {
		t.Errorf("the Machine's writes %q, want %q (the phases within the interval held, then discarded by the outcome)", written, want)
	}
}

// machineLag is the manager's client with its cache frozen for one Machine
// (reads return the copy frozen at the start), as an informer seconds
// behind under load would.
type machineLag struct {
	crclient.Client
	frozen *metalv1.Machine
}

func (c machineLag) Get(ctx context.Context, key crclient.ObjectKey, obj crclient.Object, opts ...crclient.GetOption) error {
	if m, ok := obj.(*metalv1.Machine); ok && key == crclient.ObjectKeyFromObject(c.frozen) {
		c.frozen.DeepCopyInto(m)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestUpgradeResultsReadOwnWrites: with the cache stuck before the agent
// API's first write, each later report is still written on the version the
// previous one made: no conflict, so no read past the cache.
func TestUpgradeResultsReadOwnWrites(t *testing.T) {
	ctx := context.Background()
	const planID = "plan-own"
	m, cred := applyingMachine(t, env.Namespace(t), "h-own", planID)
	gets := &countingReader{Reader: env.Client} // a Machine read follows a conflict
	be, err := kube.New(kube.Options{Client: machineLag{Client: cached, frozen: m.DeepCopy()}, APIReader: gets, ProgressInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, be, cred)
	for _, r := range []agent.Result{
		{Result: agent.InProgress, Phase: agent.PhaseDownloading},
		{Result: agent.InProgress, Phase: agent.PhaseInstalling},
		{Result: agent.InProgress, Phase: agent.PhaseVerifying},
		{Result: agent.Succeeded, Phase: agent.PhaseDone, KubeletVersion: "v1.37.0"},
		{Result: agent.Succeeded, Phase: agent.PhaseDone, KubeletVersion: "v1.37.0"}, // a retry: recorded already
	} {
		r.Type, r.PlanID = agent.ActionUpgrade, planID
		if err := c.SendResult(ctx, planID, r); err != nil {
			t.Fatalf("%s %s: %v", r.Result, r.Phase, err)
		}
	}
	if n := gets.machineGets.Load(); n != 0 {
		t.Errorf("%d Machine reads past the cache: the agent API's writes conflicted with its own earlier ones", n)
	}
	got := &metalv1.Machine{}
	if err := env.Client.Get(ctx, crclient.ObjectKeyFromObject(m), got); err != nil {
		t.Fatal(err)
	}
	if ar := got.Status.Upgrade.AgentResult; ar == nil || ar.PlanID != planID || ar.Outcome != metalv1.AgentUpgradeSucceeded {
		t.Errorf("agentResult %+v, want the outcome", ar)
	}
}

// serve runs the agent API on be and returns an agent's client of it.
func serve(t *testing.T, be *kube.Backend, cred string) *client.Client {
	t.Helper()
	srv, err := server.NewServer(server.ServerOptions{Backend: be, Limiter: ratelimit.New(ratelimit.Options{Burst: 1000})})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := client.New(client.Options{Endpoint: hs.URL, Credential: cred, Attempts: 3, BaseDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// applyingMachine is a provisioned Host (its agent's credential) whose
// Machine has plan planID published (state Applying).
func applyingMachine(t *testing.T, ns, host, planID string) (*metalv1.Machine, string) {
	t.Helper()
	kubelets := []metalv1.KubeletArtifact{{Version: "v1.37.0", Artifact: metalv1.Artifact{URL: "https://dl.example/k", SHA256: strings.Repeat("0", 64)}}}
	h, cred := newHost(t, ns, host, metalv1.HostProvisioned)
	m := machineFor(t, h, kubelets, &metalv1.UpgradeStatus{PlanID: planID, Version: "v1.37.0", FromVersion: "v1.36.0",
		State: metalv1.UpgradeApplying, Message: "plan published; waiting for the agent"})
	return m, cred
}
