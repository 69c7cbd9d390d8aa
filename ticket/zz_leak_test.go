package ticket_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

// Runs last (file order): after every other test has signed, failed,
// retried and been refused with its secrets, none of them is in a log
// line, an object or an Event.
func TestSecretsNeverLeak(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	// One more failure path: a Secret whose value is not a whsec_ secret.
	bad := "not-a-secret-Zq81-" + strings.TrimPrefix(newSecretValue(), "whsec_")
	secretsMu.Lock()
	allSecrets = append(allSecrets, bad)
	secretsMu.Unlock()
	must(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-key"}, Data: map[string][]byte{"secret": []byte(bad)}}))
	must(t, env.Client.Create(ctx, &metalv1.TicketEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
		Spec:       metalv1.TicketEndpointSpec{URL: "http://127.0.0.1:9/", SecretRef: metalv1.SecretKeyReference{Name: "bad-key"}},
	}))
	good := endpointWithReceiver(t, ns, "good", nil) // and one that signs
	good.SetFaults(tickettest.Faults{Status: 400, Body: "echo: whatever you sent"})
	m := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery()}, nil)
	waitFor(t, "endpoint refused its Secret", 30*time.Second, func() bool {
		ep := &metalv1.TicketEndpoint{}
		_ = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bad"}, ep)
		c := meta.FindStatusCondition(ep.Status.Conditions, metalv1.ConditionReady)
		return c != nil && c.Reason == ticket.ReasonSecretInvalid
	})
	must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: newMachine(t, ns, "m", nil)}))
	waitFor(t, "one delivery refused, one waiting on the bad Secret", 30*time.Second, func() bool {
		var refused, waiting bool
		for _, d := range deliveries(t, ns) {
			refused = refused || d.Status.State == metalv1.TicketFailed
			waiting = waiting || strings.Contains(d.Status.LastError, "bad-key")
		}
		return refused && waiting
	})
	m.stop()

	var haystacks []string
	add := func(what string, v any) {
		b, err := json.Marshal(v)
		must(t, err)
		haystacks = append(haystacks, what+": "+string(b))
	}
	haystacks = append(haystacks, "logs: "+managerLogs.String())
	for _, l := range []client.ObjectList{&metalv1.TicketDeliveryList{}, &metalv1.TicketEndpointList{}, &metalv1.MachineList{}, &metalv1.HostList{}, &eventsv1.EventList{}, &corev1.EventList{}} {
		must(t, env.Client.List(ctx, l))
		add("objects", l)
	}
	for _, b := range env.Removed() { // earlier tests' objects, deleted with their namespaces
		haystacks = append(haystacks, "objects: "+string(b))
	}
	if !strings.Contains(haystacks[0], "webhook attempt") || len(haystacks[0]) < 10000 {
		t.Fatal("the log capture is not working; the scan would prove nothing")
	}
	secretsMu.Lock()
	defer secretsMu.Unlock()
	t.Logf("looking for %d secrets in %d places", len(allSecrets), len(haystacks))
	for _, s := range allSecrets {
		needle := strings.TrimPrefix(s, "whsec_")
		for _, h := range haystacks {
			if i := strings.Index(h, needle); i >= 0 {
				what, _, _ := strings.Cut(h, ":")
				t.Errorf("a signing secret appears in the %s", what)
			}
		}
	}
}
