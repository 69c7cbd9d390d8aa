package kube_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/client"
	"anvil.dev/anvil/agent/server"
	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/ratelimit"
)

// subscribing is the shared backend, telling when a held request has
// subscribed (so the test changes things only after that).
type subscribing struct {
	*kube.Backend
	subs chan struct{}
}

func (s subscribing) WatchActions(h server.HostInfo) (<-chan struct{}, bool) {
	ch, ok := s.Backend.WatchActions(h)
	select {
	case s.subs <- struct{}{}:
	default:
	}
	return ch, ok
}

// TestLongPollWakes: an agent's held poll with nothing to do returns the
// action as soon as it is set: an upgrade plan on its Machine (found
// through the Host's consumerRef; the Machine has no hostRef here), a
// kubelet version added to the MachineClass, or Deprovisioning.
func TestLongPollWakes(t *testing.T) {
	ns := env.Namespace(t)
	digest := strings.Repeat("ab", 32)
	kubelets := []metalv1.KubeletArtifact{{Version: "v1.37.0", Artifact: metalv1.Artifact{URL: "https://dl.example/k", SHA256: digest}}}
	applying := func(v string) *metalv1.UpgradeStatus {
		return &metalv1.UpgradeStatus{PlanID: "plan-" + v, Version: v, FromVersion: "v1.36.0", State: metalv1.UpgradeApplying}
	}
	ctx := context.Background()
	tests := []struct {
		name   string
		setup  func(t *testing.T, h *metalv1.Host) (change func(t *testing.T))
		want   agent.ActionType
		wantID string
	}{
		{"plan set on the machine", func(t *testing.T, h *metalv1.Host) func(*testing.T) {
			draining := applying("v1.37.0")
			draining.State = "Draining"
			m := machineFor(t, h, kubelets, draining)
			return func(t *testing.T) {
				m.Status.Upgrade.State = metalv1.UpgradeApplying
				if err := env.Client.Status().Update(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
		}, agent.ActionUpgrade, "plan-v1.37.0"},
		{"kubelet added to the class", func(t *testing.T, h *metalv1.Host) func(*testing.T) {
			machineFor(t, h, kubelets, applying("v1.38.0"))
			return func(t *testing.T) {
				mc := &metalv1.MachineClass{}
				if err := env.Client.Get(ctx, crclient.ObjectKey{Namespace: ns, Name: h.Name + "-class"}, mc); err != nil {
					t.Fatal(err)
				}
				mc.Spec.Kubelets = append(mc.Spec.Kubelets, metalv1.KubeletArtifact{Version: "v1.38.0", Artifact: metalv1.Artifact{URL: "https://dl.example/k38", SHA256: digest}})
				if err := env.Client.Update(ctx, mc); err != nil {
					t.Fatal(err)
				}
			}
		}, agent.ActionUpgrade, "plan-v1.38.0"},
		{"host deprovisioning", func(t *testing.T, h *metalv1.Host) func(*testing.T) {
			return func(t *testing.T) {
				hh := &metalv1.Host{}
				if err := env.Client.Get(ctx, crclient.ObjectKeyFromObject(h), hh); err != nil {
					t.Fatal(err)
				}
				hh.Status.State = metalv1.HostDeprovisioning
				if err := env.Client.Status().Update(ctx, hh); err != nil {
					t.Fatal(err)
				}
			}
		}, agent.ActionWipe, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, cred := newHost(t, ns, "h-longpoll-"+string(rune('a'+i)), metalv1.HostProvisioned)
			change := tt.setup(t, h)
			be := subscribing{Backend: backend, subs: make(chan struct{}, 1)}
			srv, err := server.NewServer(server.ServerOptions{Backend: be, Limiter: ratelimit.New(ratelimit.Options{Burst: 1000})})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			c, err := client.New(client.Options{Endpoint: hs.URL, Credential: cred, Attempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			// Nothing to do yet (the setup waited for the cache).
			if a, err := c.NextAction(ctx); err != nil || a.Type != agent.ActionNone {
				t.Fatalf("before the change: %+v, %v", a, err)
			}
			const wait = 20 * time.Second
			type result struct {
				a   agent.Action
				err error
			}
			got := make(chan result, 1)
			go func() {
				a, err := c.NextActionWait(ctx, wait)
				got <- result{a, err}
			}()
			select {
			case <-be.subs:
			case r := <-got:
				t.Fatalf("answered before holding: %+v, %v", r.a, r.err)
			}
			change(t)
			// Woken, the request answers with the action; had it not been,
			// it would answer "none" when the wait ends.
			r := <-got
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.a.Type != tt.want || !r.a.Waited || (tt.wantID != "" && r.a.ID != tt.wantID) {
				t.Fatalf("held poll answered %+v, want %s %s with waited", r.a, tt.want, tt.wantID)
			}
		})
	}
}
