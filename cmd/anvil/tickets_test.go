package main

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

// ticketsCLI runs `anvil tickets ...`; the command is registered here as
// main.go registers it.
func ticketsCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	registered := false
	for _, c := range root.Commands() {
		registered = registered || c.Name() == "tickets"
	}
	if !registered {
		root.AddCommand(newTicketsCommand())
	}
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"tickets"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestTicketsListAndRedeliver(t *testing.T) {
	if err := tickettest.InstallCRDs(env.Config); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kc, err := env.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	now := time.Now()
	mk := func(obj, typ, ep string, st metalv1.TicketDeliveryState, mutate func(*metalv1.TicketDeliveryStatus)) *metalv1.TicketDelivery {
		uid := "uid-" + obj
		d := &metalv1.TicketDelivery{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ticket.DeliveryName(obj, uid, typ, "", ep)},
			Spec: metalv1.TicketDeliverySpec{EndpointName: ep, EventType: typ, WebhookID: ticket.WebhookID(uid, typ, ""),
				Object:  metalv1.TicketObjectReference{Kind: "Machine", Name: obj, UID: uid},
				Payload: `{"type":"` + typ + `"}`, EnqueuedAt: metav1.NewMicroTime(now)},
		}
		if err := env.Client.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		d.Status.State = st
		if mutate != nil {
			mutate(&d.Status)
		}
		if err := env.Client.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	filed := mk("m1", ticket.HardwareRequested, "ops", metalv1.TicketDelivered, func(s *metalv1.TicketDeliveryStatus) {
		s.Attempts, s.ResponseCode, s.TicketID = 1, 200, "OPS-17"
	})
	retrying := mk("m2", ticket.HardwareRequested, "ops", metalv1.TicketPending, func(s *metalv1.TicketDeliveryStatus) {
		next := metav1.NewTime(now.Add(10 * time.Minute))
		s.Attempts, s.ResponseCode, s.NextAttemptAt, s.LastError = 3, 503, &next, "HTTP 503: down for maintenance"
	})
	refused := mk("m3", ticket.HardwareRequested, "ops", metalv1.TicketFailed, func(s *metalv1.TicketDeliveryStatus) {
		s.Attempts, s.ResponseCode, s.LastError = 1, 400, `HTTP 400: unknown project "ANV"`
	})
	superseded := mk("m4", ticket.HardwareRequested, "ops", metalv1.TicketSuperseded, func(s *metalv1.TicketDeliveryStatus) {
		s.LastError = "cancelled before it was delivered"
	})

	out, err := ticketsCLI(t, "list", "--kubeconfig", kc, "-n", ns)
	if err != nil {
		t.Fatalf("tickets list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("tickets list printed:\n%s", out)
	}
	for _, want := range [][]string{
		{filed.Name, "hardware.requested", "Machine/m1", "ops", "Delivered", "200", "OPS-17"},
		{retrying.Name, "Pending", "503", "in 9m", "down for maintenance"},
		{refused.Name, "Failed", "400", `unknown project "ANV"`},
		{superseded.Name, "Superseded"},
	} {
		found := false
		for _, l := range lines {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(l, w)
			}
			found = found || ok
		}
		if !found {
			t.Errorf("no line with %q in:\n%s", want, out)
		}
	}
	out, err = ticketsCLI(t, "list", "--open", "--kubeconfig", kc, "-n", ns)
	if err != nil || strings.Count(strings.TrimSpace(out), "\n") != 2 || strings.Contains(out, filed.Name) || strings.Contains(out, superseded.Name) {
		t.Fatalf("tickets list --open: %v\n%s", err, out)
	}
	if out, err := ticketsCLI(t, "list", "-A", "--kubeconfig", kc); err != nil || !strings.Contains(out, "NAMESPACE") || !strings.Contains(out, ns) {
		t.Fatalf("tickets list -A: %v\n%s", err, out)
	}

	tests := []struct {
		name, id, wantErr string
	}{
		{"refused", refused.Name, ""},
		{"delivered", filed.Name, ""},
		{"superseded", superseded.Name, "superseded"},
		{"unknown", "nope", "no ticket delivery nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ticketsCLI(t, "redeliver", tc.id, "--kubeconfig", kc, "-n", ns)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("redeliver %s: %v, want error with %q", tc.id, err, tc.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out, "will be sent again") {
				t.Fatalf("redeliver %s: %v\n%s", tc.id, err, out)
			}
			d := &metalv1.TicketDelivery{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.id}, d); err != nil {
				t.Fatal(err)
			}
			if d.Annotations[metalv1.AnnotationRedeliver] == "" {
				t.Fatalf("annotations = %v", d.Annotations)
			}
		})
	}
}
