package ticket_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

// callbackEnv is an endpoint, its receiver (which signs callbacks) and
// Anvil's callback handler on a real loopback HTTP server.
type callbackEnv struct {
	ns, url string
	rcv     *tickettest.Receiver
}

func newCallbackEnv(t *testing.T, mutate func(*metalv1.TicketEndpoint)) *callbackEnv {
	t.Helper()
	ns := env.Namespace(t)
	rcv := endpointWithReceiver(t, ns, "ops", mutate)
	m := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery()}, nil)
	h := ticket.NewHandler(ticket.HandlerOptions{Client: m.mgr.GetClient(), APIReader: m.mgr.GetAPIReader(), Logger: m.mgr.GetLogger().WithName("callbacks")})
	mux := http.NewServeMux()
	mux.Handle(ticket.PathPrefix, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	waitReady(t, ns, "ops")
	return &callbackEnv{ns: ns, url: srv.URL + ticket.PathPrefix + ns + "/ops", rcv: rcv}
}

func newManualHost(t *testing.T, ns, name string, labels map[string]string) *metalv1.Host {
	t.Helper()
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://rack1-u" + name}, BootMACs: []string{"52:54:00:aa:00:01"}},
	}
	must(t, env.Client.Create(context.Background(), h))
	return h
}

// versions snapshots resourceVersions: a refused callback changes none.
func versions(t *testing.T, objs ...client.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o))
		out[o.GetName()] = o.GetResourceVersion()
	}
	return out
}

func TestCallbacksRefuseForgedUnsignedAndReplayed(t *testing.T) {
	ctx := context.Background()
	ce := newCallbackEnv(t, nil)
	m := newMachine(t, ce.ns, "m", nil)
	m.Status.HardwareRequest = &metalv1.HardwareRequest{State: metalv1.HardwareRequestFiled, ID: "T-1"}
	must(t, env.Client.Status().Update(ctx, m))
	host := newManualHost(t, ce.ns, "h", nil)
	before := versions(t, m, host)

	reject := map[string]any{"machine": "m", "reason": "no budget"}
	body := []byte(`{"type":"hardware.rejected","timestamp":"2026-01-01T00:00:00Z","data":{"machine":"m","reason":"no budget"}}`)
	forger, err := tickettest.Start(tickettest.Options{Secret: newSecretValue()})
	must(t, err)
	defer forger.Close()
	post := func(url string, sign func(*http.Request)) tickettest.CallbackResult {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if sign != nil {
			sign(req)
		}
		res, err := tickettest.Do(req)
		must(t, err)
		return res
	}
	tests := []struct {
		name string
		do   func() tickettest.CallbackResult
	}{
		{"unsigned", func() tickettest.CallbackResult { return post(ce.url, nil) }},
		{"signature header only", func() tickettest.CallbackResult {
			return post(ce.url, func(r *http.Request) { r.Header.Set("webhook-signature", "v1,AAAA") })
		}},
		{"forged: another secret", func() tickettest.CallbackResult {
			res, err := forger.Callback(ctx, ce.url, ticket.CallbackHardwareRejected, reject)
			must(t, err)
			return res
		}},
		{"replayed: timestamp 10 minutes old", func() tickettest.CallbackResult {
			res, err := ce.rcv.CallbackAt(ctx, ce.url, ticket.CallbackHardwareRejected, reject, time.Now().Add(-10*time.Minute), "")
			must(t, err)
			return res
		}},
		{"signature of another body", func() tickettest.CallbackResult {
			return post(ce.url, func(r *http.Request) {
				must(t, tickettest.SignRequest(r, "whsec_"+strings.Repeat("QUFB", 8), "msg_1", time.Now(), body))
			})
		}},
		{"tampered body", func() tickettest.CallbackResult {
			return post(ce.url, func(r *http.Request) {
				// Signed by the right secret over a different reason.
				other := bytes.Replace(body, []byte("no budget"), []byte("whatever"), 1)
				must(t, tickettest.SignRequest(r, secretOf(t, ce.ns, "ops-key"), "msg_2", time.Now(), other))
			})
		}},
		{"unknown endpoint", func() tickettest.CallbackResult {
			res, err := ce.rcv.Callback(ctx, strings.TrimSuffix(ce.url, "/ops")+"/nope", ticket.CallbackHardwareRejected, reject)
			must(t, err)
			return res
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.do()
			if res.Status != http.StatusUnauthorized || !strings.Contains(res.Body, "unauthorized") {
				t.Fatalf("answer %d %s, want 401", res.Status, res.Body)
			}
		})
	}
	if after := versions(t, m, host); after["m"] != before["m"] || after["h"] != before["h"] {
		t.Fatalf("a refused callback changed something: %v -> %v", before, after)
	}
	if hr := getMachine(t, ce.ns, "m").Status.HardwareRequest; hr.State != metalv1.HardwareRequestFiled {
		t.Fatalf("hardwareRequest = %+v", hr)
	}
}

func secretOf(t *testing.T, ns, name string) string {
	t.Helper()
	sec := &corev1.Secret{}
	must(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, sec))
	return string(sec.Data["secret"])
}

func TestCallbacksAct(t *testing.T) {
	ctx := context.Background()
	ce := newCallbackEnv(t, nil)
	waiting := newMachine(t, ce.ns, "waiting", nil)
	waiting.Status.HardwareRequest = &metalv1.HardwareRequest{State: metalv1.HardwareRequestFiled, ID: "T-1"}
	must(t, env.Client.Status().Update(ctx, waiting))
	newMachine(t, ce.ns, "other", nil)
	running := newMachine(t, ce.ns, "running", nil)
	running.Status.Phase = metalv1.MachineRunning
	must(t, env.Client.Status().Update(ctx, running))
	host := newManualHost(t, ce.ns, "h1", nil)
	newManualHost(t, ce.ns, "spare", nil)
	requestedAt := metav1.NewTime(time.Now().Truncate(time.Second))
	host.Status.PendingPowerAction = &metalv1.PendingPowerAction{Action: "On", BootDevice: "PXE", RequestedAt: requestedAt}
	must(t, env.Client.Status().Update(ctx, host))
	actionID := inventory.PendingActionID(host.Status.PendingPowerAction)

	call := func(typ string, data map[string]any, id string) tickettest.CallbackResult {
		res, err := ce.rcv.CallbackAt(ctx, ce.url, typ, data, time.Now(), id)
		must(t, err)
		return res
	}
	tests := []struct {
		name string
		typ  string
		data map[string]any
		code int
	}{
		{"reject", ticket.CallbackHardwareRejected, map[string]any{"machine": "waiting", "reason": "no budget\nuntil Q3"}, 200},
		{"reject without a request", ticket.CallbackHardwareRejected, map[string]any{"machine": "other", "reason": "x"}, 409},
		{"reject without a reason", ticket.CallbackHardwareRejected, map[string]any{"machine": "waiting"}, 400},
		{"assign", ticket.CallbackHardwareAssigned, map[string]any{"machine": "other", "host": "spare"}, 200},
		{"assign a missing Host", ticket.CallbackHardwareAssigned, map[string]any{"machine": "other", "host": "ghost"}, 404},
		{"assign to a running Machine", ticket.CallbackHardwareAssigned, map[string]any{"machine": "running", "host": "spare"}, 409},
		{"ack another action", ticket.CallbackPowerDone, map[string]any{"host": "h1", "actionID": "2001-01-01T00:00:00Z"}, 409},
		{"ack a Host without a pending action", ticket.CallbackPowerDone, map[string]any{"host": "spare", "actionID": actionID}, 409},
		{"ack", ticket.CallbackPowerDone, map[string]any{"host": "h1", "actionID": actionID}, 200},
		{"unknown type", "hardware.approved", map[string]any{"machine": "waiting"}, 400},
		{"bad name", ticket.CallbackHardwareAssigned, map[string]any{"machine": "../x", "host": "spare"}, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if res := call(tc.typ, tc.data, ""); res.Status != tc.code {
				t.Fatalf("answer %d %s, want %d", res.Status, res.Body, tc.code)
			}
		})
	}
	if hr := getMachine(t, ce.ns, "waiting").Status.HardwareRequest; hr.State != metalv1.HardwareRequestRejected || hr.LastError != "no budget until Q3" || hr.ID != "T-1" {
		t.Errorf("rejected hardwareRequest = %+v", hr)
	}
	if a := getMachine(t, ce.ns, "other").Annotations[metalv1.AnnotationAssignedHost]; a != "spare" {
		t.Errorf("assigned-host = %q", a)
	}
	if a := getMachine(t, ce.ns, "running").Annotations[metalv1.AnnotationAssignedHost]; a != "" {
		t.Errorf("running Machine got assigned-host %q", a)
	}
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ce.ns, Name: "h1"}, h))
	if h.Annotations[inventory.AnnotationAckPower] != actionID {
		t.Errorf("ack-power = %q, want %q", h.Annotations[inventory.AnnotationAckPower], actionID)
	}
	// The Host controller has done the action; the ticketing system,
	// whose first answer was lost, acknowledges again: that is success.
	h.Status.PendingPowerAction = nil
	must(t, env.Client.Status().Update(ctx, h))
	if res := call(ticket.CallbackPowerDone, map[string]any{"host": "h1", "actionID": actionID}, ""); res.Status != 200 || !strings.Contains(res.Body, `"already":true`) {
		t.Errorf("acknowledging a done action again: %d %s, want 200 already", res.Status, res.Body)
	}
	if res := call(ticket.CallbackPowerDone, map[string]any{"host": "h1", "actionID": "2001-01-01T00:00:00Z"}, ""); res.Status != 409 {
		t.Errorf("acknowledging another action with none pending: %d %s, want 409", res.Status, res.Body)
	}

	// A valid callback replayed within the tolerance does nothing twice.
	first := call(ticket.CallbackHardwareAssigned, map[string]any{"machine": "waiting", "host": "spare"}, "msg_replay")
	m := getMachine(t, ce.ns, "waiting")
	m.Status.Phase = metalv1.MachineWaitingForHardware
	delete(m.Annotations, metalv1.AnnotationAssignedHost)
	must(t, env.Client.Update(ctx, m))
	rv := versions(t, m)
	again := call(ticket.CallbackHardwareAssigned, map[string]any{"machine": "waiting", "host": "spare"}, "msg_replay")
	if first.Status != 200 || again.Status != 200 || !strings.Contains(again.Body, "duplicate") {
		t.Fatalf("first %d %s, replay %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if versions(t, m)["waiting"] != rv["waiting"] {
		t.Fatal("a replayed callback changed the Machine")
	}
}

// An endpoint may only act on what it is sent: its selector and event
// types bound its callbacks.
func TestCallbacksBoundedByEndpoint(t *testing.T) {
	ctx := context.Background()
	ce := newCallbackEnv(t, func(ep *metalv1.TicketEndpoint) {
		ep.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
		ep.Spec.EventTypes = []string{ticket.HardwareRequested, ticket.HardwareFulfilled}
	})
	newMachine(t, ce.ns, "theirs", map[string]string{"team": "b"})
	newManualHost(t, ce.ns, "h", map[string]string{"team": "a"})
	for _, tc := range []struct {
		typ  string
		data map[string]any
	}{
		{ticket.CallbackHardwareAssigned, map[string]any{"machine": "theirs", "host": "h"}},
		{ticket.CallbackPowerDone, map[string]any{"host": "h", "actionID": "2026-01-01T00:00:00Z"}},
	} {
		res, err := ce.rcv.Callback(ctx, ce.url, tc.typ, tc.data)
		must(t, err)
		if res.Status != http.StatusForbidden {
			t.Errorf("%s: %d %s, want 403", tc.typ, res.Status, res.Body)
		}
	}
}
