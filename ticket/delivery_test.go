package ticket_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

// checkStream fails the test for every problem tickettest.CheckStream finds.
func checkStream(t *testing.T, name string, got []tickettest.Delivery) {
	t.Helper()
	for _, p := range tickettest.CheckStream(got) {
		t.Errorf("%s: %s", name, p)
	}
}

// acceptedEvents is the set of "Kind/name type" a receiver filed.
func acceptedEvents(r *tickettest.Receiver) map[string]int {
	out := map[string]int{}
	for _, d := range r.Accepted() {
		out[d.Object+" "+d.Type]++
	}
	return out
}

func waitReady(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		waitFor(t, "TicketEndpoint "+n+" Ready", 30*time.Second, func() bool {
			ep := &metalv1.TicketEndpoint{}
			return env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: n}, ep) == nil &&
				meta.IsStatusConditionTrue(ep.Status.Conditions, metalv1.ConditionReady)
		})
	}
}

func TestOneDeliveryPerEventPerEndpoint(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	a := endpointWithReceiver(t, ns, "ops-a", func(ep *metalv1.TicketEndpoint) {
		ep.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	})
	b := endpointWithReceiver(t, ns, "ops-b", func(ep *metalv1.TicketEndpoint) {
		ep.Spec.EventTypes = []string{ticket.HardwareRequested}
	})
	m := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery(), CallbackBaseURL: "http://anvil.example:8080/"}, nil)
	waitReady(t, ns, "ops-a", "ops-b")

	ms := []*metalv1.Machine{
		newMachine(t, ns, "m0", map[string]string{"team": "a"}),
		newMachine(t, ns, "m1", map[string]string{"team": "b"}),
		newMachine(t, ns, "m2", map[string]string{"team": "a"}),
	}
	file := func() {
		for range 3 { // a controller files on every reconcile
			for _, mc := range ms {
				must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: mc, Data: map[string]any{"busyMatches": 2}}))
			}
		}
		for _, mc := range ms[:2] {
			must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareFulfilled, Object: mc, Data: map[string]any{"host": "node-7"}}))
		}
	}
	file()
	// ops-a: m0 and m2 (selector), requested and m0's fulfilled. ops-b:
	// every request, no fulfilment (event filter).
	waitFor(t, "six deliveries finished", 30*time.Second, func() bool { return allFinished(t, ns, 6) })
	file() // again, after delivery: nothing new
	if ds := deliveries(t, ns); len(ds) != 6 {
		t.Fatalf("filing again made %d deliveries, want 6:%s", len(ds), describe(ds))
	}
	for _, d := range deliveries(t, ns) {
		if d.Status.State != metalv1.TicketDelivered || d.Status.Attempts != 1 {
			t.Errorf("delivery %s: state %s after %d attempts, want Delivered after 1", d.Name, d.Status.State, d.Status.Attempts)
		}
	}

	wantA := map[string]int{"Machine/m0 hardware.requested": 1, "Machine/m2 hardware.requested": 1, "Machine/m0 hardware.fulfilled": 1}
	wantB := map[string]int{"Machine/m0 hardware.requested": 1, "Machine/m1 hardware.requested": 1, "Machine/m2 hardware.requested": 1}
	for _, tc := range []struct {
		name string
		r    *tickettest.Receiver
		want map[string]int
	}{{"ops-a", a, wantA}, {"ops-b", b, wantB}} {
		if got := acceptedEvents(tc.r); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s filed %v, want %v", tc.name, got, tc.want)
		}
		if n := len(tc.r.Received()); n != len(tc.want) {
			t.Errorf("%s received %d requests, want %d (one each)", tc.name, n, len(tc.want))
		}
		if bad := tc.r.Invalid(); len(bad) > 0 {
			t.Errorf("%s: requests failing the independent signature check: %v", tc.name, bad)
		}
		checkStream(t, tc.name, tc.r.Received())
	}

	// One webhook-id per event, the same at every endpoint.
	idOf := func(r *tickettest.Receiver, obj, typ string) tickettest.Delivery {
		for _, d := range r.Received() {
			if d.Object == obj && d.Type == typ {
				return d
			}
		}
		t.Fatalf("no %s %s", obj, typ)
		return tickettest.Delivery{}
	}
	if x, y := idOf(a, "Machine/m0", ticket.HardwareRequested), idOf(b, "Machine/m0", ticket.HardwareRequested); x.ID != y.ID {
		t.Errorf("m0's request has webhook-id %s at ops-a and %s at ops-b", x.ID, y.ID)
	}
	// Thin data with names, labels and a callback link.
	d := idOf(a, "Machine/m0", ticket.HardwareRequested)
	obj, _ := d.Data["object"].(map[string]any)
	links, _ := d.Data["links"].(map[string]any)
	if obj["namespace"] != ns || d.Data["machineClass"] != "fcos" || d.Data["failureDomain"] != "fd-a" || fmt.Sprint(d.Data["busyMatches"]) != "2" ||
		links["callback"] != "http://anvil.example:8080/tickets/v1/"+ns+"/ops-a" {
		t.Errorf("payload data = %v", d.Data)
	}
	if f := idOf(a, "Machine/m0", ticket.HardwareFulfilled); f.Data["host"] != "node-7" {
		t.Errorf("fulfilled data = %v", f.Data)
	}

	// The receivers' tickets are in the Machines' status.
	for _, tc := range []struct {
		name  string
		state metalv1.HardwareRequestState
	}{{"m0", metalv1.HardwareRequestFulfilled}, {"m1", metalv1.HardwareRequestFiled}, {"m2", metalv1.HardwareRequestFiled}} {
		var hr *metalv1.HardwareRequest
		waitFor(t, tc.name+" hardwareRequest "+string(tc.state), 10*time.Second, func() bool {
			hr = getMachine(t, ns, tc.name).Status.HardwareRequest
			return hr != nil && hr.State == tc.state
		})
		if !strings.HasPrefix(hr.ID, "T-") || !strings.HasPrefix(hr.URL, "http://127.0.0.1:") || hr.FiledAt == nil || hr.LastError != "" {
			t.Errorf("%s hardwareRequest = %+v", tc.name, hr)
		}
	}
}

// The receiver is down for a while, then answers 503 half the time and
// sometimes too late: every event arrives, duplicates carry the same
// webhook-id, and each Machine's events keep their order.
func TestReceiverDownAndFlakyLosesNothing(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rcv := endpointWithReceiver(t, ns, "ops", func(ep *metalv1.TicketEndpoint) {
		ep.Spec.Timeout = &metav1.Duration{Duration: 300 * time.Millisecond}
	})
	must(t, rcv.SetDown(true))
	m := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery()}, nil)
	waitReady(t, ns, "ops")

	var ms []*metalv1.Machine
	for i := range 8 {
		mc := newMachine(t, ns, fmt.Sprintf("m%d", i), nil)
		ms = append(ms, mc)
		must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: mc}))
	}
	waitFor(t, "every request tried while the receiver is down", 30*time.Second, func() bool {
		ds := deliveries(t, ns)
		for _, d := range ds {
			if d.Status.Attempts == 0 {
				return false
			}
		}
		return len(ds) == 8
	})
	// Meanwhile four Machines get Hosts and two are deleted.
	for _, mc := range ms[:4] {
		must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareFulfilled, Object: mc}))
	}
	for _, mc := range ms[4:6] {
		must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareCancelled, Object: mc}))
	}
	rcv.SetFaults(tickettest.Faults{FailRate: 0.5, RetryAfter: "1", LateRate: 0.2, Late: time.Second})
	must(t, rcv.SetDown(false))
	waitFor(t, "all 14 deliveries finished", 90*time.Second, func() bool { return allFinished(t, ns, 14) })

	got := acceptedEvents(rcv)
	for i, mc := range ms {
		var want []string
		switch {
		case i < 4:
			want = []string{ticket.HardwareRequested, ticket.HardwareFulfilled}
		case i < 6:
			want = []string{ticket.HardwareCancelled} // the request was withdrawn before it got through
		default:
			want = []string{ticket.HardwareRequested}
		}
		for _, typ := range want {
			if got["Machine/"+mc.Name+" "+typ] == 0 {
				t.Errorf("%s %s never arrived", mc.Name, typ)
			}
		}
	}
	if got["Machine/m4 hardware.requested"]+got["Machine/m5 hardware.requested"] != 0 {
		t.Errorf("a request arrived after its cancellation was filed: %v", got)
	}
	for _, d := range deliveries(t, ns) {
		want := metalv1.TicketDelivered
		if d.Spec.EventType == ticket.HardwareRequested && (d.Spec.Object.Name == "m4" || d.Spec.Object.Name == "m5") {
			want = metalv1.TicketSuperseded
		}
		if d.Status.State != want {
			t.Errorf("delivery %s %s: %s, want %s (%s)", d.Spec.Object.Name, d.Spec.EventType, d.Status.State, want, d.Status.LastError)
		}
	}
	if bad := rcv.Invalid(); len(bad) > 0 {
		t.Errorf("requests failing the independent signature check: %v", bad)
	}
	checkStream(t, "ops", rcv.Received())
	t.Logf("%d requests for 12 events", len(rcv.Received()))
}

// A manager stopped mid-way (requests in flight, receiver down) and a new
// one started: nothing lost, duplicates only with the same webhook-id,
// order kept.
func TestRestartMidwayLosesNothing(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rcv := endpointWithReceiver(t, ns, "ops", func(ep *metalv1.TicketEndpoint) {
		ep.Spec.Timeout = &metav1.Duration{Duration: 5 * time.Second}
	})
	must(t, rcv.SetDown(true))
	first := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery()}, nil)
	waitReady(t, ns, "ops")
	var ms []*metalv1.Machine
	for i := range 6 {
		mc := newMachine(t, ns, fmt.Sprintf("r%d", i), nil)
		ms = append(ms, mc)
		must(t, first.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: mc}))
	}
	waitFor(t, "every request tried", 30*time.Second, func() bool {
		ds := deliveries(t, ns)
		for _, d := range ds {
			if d.Status.Attempts == 0 {
				return false
			}
		}
		return len(ds) == 6
	})
	// The receiver comes back but answers slowly: it files tickets while
	// the manager is being stopped, before the answers are recorded.
	rcv.SetFaults(tickettest.Faults{LateRate: 1, Late: 3 * time.Second})
	must(t, rcv.SetDown(false))
	waitFor(t, "a request in flight", 30*time.Second, func() bool { return len(rcv.Received()) > 0 })
	first.stop()

	// While no manager runs, the Machine controller (of the next leader)
	// files fulfilments: the outbox needs only the API server.
	outbox := ticket.NewOutbox(ticket.OutboxOptions{Client: env.Client})
	for _, mc := range ms[:3] {
		must(t, outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareFulfilled, Object: mc}))
	}
	rcv.SetFaults(tickettest.Faults{FailRate: 0.3})
	startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery()}, nil)
	waitFor(t, "all 9 deliveries delivered", 90*time.Second, func() bool { return allFinished(t, ns, 9) })

	got := acceptedEvents(rcv)
	for i, mc := range ms {
		if got["Machine/"+mc.Name+" hardware.requested"] == 0 || (i < 3 && got["Machine/"+mc.Name+" hardware.fulfilled"] == 0) {
			t.Errorf("events of %s missing: %v", mc.Name, got)
		}
	}
	for _, d := range deliveries(t, ns) {
		if d.Status.State != metalv1.TicketDelivered {
			t.Errorf("delivery %s: %s (%s)", d.Name, d.Status.State, d.Status.LastError)
		}
	}
	if bad := rcv.Invalid(); len(bad) > 0 {
		t.Errorf("requests failing the independent signature check: %v", bad)
	}
	checkStream(t, "ops", rcv.Received())
	t.Logf("%d requests for 9 events; accepted per event: %v", len(rcv.Received()), got)
}

// 410 disables the endpoint until its spec changes; other 4xx fail the
// delivery with the code and the body's first bytes; Retry-After is
// honoured; a redelivery sends a failed one again.
func TestReceiverAnswers(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	gone := endpointWithReceiver(t, ns, "gone", nil)
	gone.SetFaults(tickettest.Faults{Status: 410})
	bad := endpointWithReceiver(t, ns, "bad", nil)
	bad.SetFaults(tickettest.Faults{Status: 400, Body: "unknown project \"ANV\"\n" + strings.Repeat("x", 1000)})
	busy := endpointWithReceiver(t, ns, "busy", nil)
	busy.SetFaults(tickettest.Faults{Status: 503, RetryAfter: "3600"})
	m := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery()}, nil)
	waitReady(t, ns, "gone", "bad", "busy")
	mc := newMachine(t, ns, "m", nil)
	must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: mc}))

	get := func(ep string) *metalv1.TicketDelivery {
		d := &metalv1.TicketDelivery{}
		must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ticket.DeliveryName("m", string(mc.UID), ticket.HardwareRequested, "", ep)}, d))
		return d
	}
	endpoint := func(name string) *metalv1.TicketEndpoint {
		ep := &metalv1.TicketEndpoint{}
		must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep))
		return ep
	}
	waitFor(t, "endpoint gone disabled", 30*time.Second, func() bool {
		ep := endpoint("gone")
		return meta.IsStatusConditionTrue(ep.Status.Conditions, metalv1.ConditionDisabled) &&
			meta.FindStatusCondition(ep.Status.Conditions, metalv1.ConditionReady).Reason == metalv1.ReasonGone
	})
	if d := get("gone"); d.Status.State != metalv1.TicketPending || d.Status.ResponseCode != 410 {
		t.Errorf("delivery to gone: %s code %d", d.Status.State, d.Status.ResponseCode)
	}
	waitFor(t, "delivery to bad failed", 30*time.Second, func() bool { return get("bad").Status.State == metalv1.TicketFailed })
	if d := get("bad"); d.Status.ResponseCode != 400 || !strings.Contains(d.Status.LastError, `HTTP 400: unknown project "ANV"`) || len(d.Status.LastError) > 400 {
		t.Errorf("delivery to bad: code %d, lastError %q", d.Status.ResponseCode, d.Status.LastError)
	}
	waitFor(t, "delivery to busy tried", 30*time.Second, func() bool { return get("busy").Status.ResponseCode == 503 })
	if d := get("busy"); d.Status.NextAttemptAt.Sub(d.Status.LastAttemptAt.Time) < 59*time.Minute || d.Status.Attempts != 1 {
		t.Errorf("Retry-After: 3600 not honoured: attempt %d at %s, next at %s", d.Status.Attempts, d.Status.LastAttemptAt, d.Status.NextAttemptAt)
	}
	waitFor(t, "Machine's request Failed", 10*time.Second, func() bool {
		hr := getMachine(t, ns, "m").Status.HardwareRequest
		return hr != nil && hr.State == metalv1.HardwareRequestFailed && strings.Contains(hr.LastError, "unknown project")
	})

	// The receiver is fixed, but a disabled endpoint stays quiet until an
	// admin touches its spec.
	gone.SetFaults(tickettest.Faults{})
	if n := len(gone.Received()); n != 1 {
		t.Fatalf("the disabled endpoint got %d requests, want the one answered 410", n)
	}
	ep := endpoint("gone")
	ep.Spec.Timeout = &metav1.Duration{Duration: 5 * time.Second}
	must(t, env.Client.Update(ctx, ep))
	waitFor(t, "delivery to gone delivered", 30*time.Second, func() bool { return get("gone").Status.State == metalv1.TicketDelivered })
	ep = endpoint("gone")
	if meta.IsStatusConditionTrue(ep.Status.Conditions, metalv1.ConditionDisabled) {
		t.Errorf("endpoint still disabled: %+v", ep.Status.Conditions)
	}
	waitFor(t, "Machine's request Filed", 10*time.Second, func() bool {
		hr := getMachine(t, ns, "m").Status.HardwareRequest
		return hr != nil && hr.State == metalv1.HardwareRequestFiled && hr.ID != ""
	})

	// Redeliver the refused one once its receiver is fixed.
	bad.SetFaults(tickettest.Faults{})
	d := get("bad")
	d.Annotations = map[string]string{metalv1.AnnotationRedeliver: "1"}
	must(t, env.Client.Update(ctx, d))
	waitFor(t, "redelivered", 30*time.Second, func() bool { return get("bad").Status.State == metalv1.TicketDelivered })
	if d := get("bad"); d.Status.Attempts != 2 || d.Status.Redelivery != "1" || len(bad.Accepted()) != 1 || bad.Accepted()[0].ID != d.Spec.WebhookID {
		t.Errorf("redelivery: attempts %d, redelivery %q, accepted %d", d.Status.Attempts, d.Status.Redelivery, len(bad.Accepted()))
	}
}

// A request withdrawn before anything was sent is never sent, and neither
// is its cancellation.
func TestCancelledBeforeSent(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	sec := newSecretValue()
	rcv, err := tickettest.Start(tickettest.Options{Secret: sec})
	must(t, err)
	t.Cleanup(rcv.Close)
	// The endpoint's Secret does not exist yet: nothing can be signed.
	must(t, env.Client.Create(ctx, &metalv1.TicketEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
		Spec:       metalv1.TicketEndpointSpec{URL: rcv.URL, SecretRef: metalv1.SecretKeyReference{Name: "ops-key"}},
	}))
	m := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery()}, nil)
	waitFor(t, "endpoint not Ready: Secret missing", 30*time.Second, func() bool {
		ep := &metalv1.TicketEndpoint{}
		_ = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ops"}, ep)
		c := meta.FindStatusCondition(ep.Status.Conditions, metalv1.ConditionReady)
		return c != nil && c.Reason == ticket.ReasonSecretMissing
	})
	mc := newMachine(t, ns, "m", nil)
	must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: mc}))
	waitFor(t, "the request waits on the missing Secret", 30*time.Second, func() bool {
		ds := deliveries(t, ns)
		return len(ds) == 1 && strings.Contains(ds[0].Status.LastError, "ops-key")
	})
	must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareCancelled, Object: mc}))
	must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: mc})) // a stale reconcile
	waitFor(t, "both superseded", 30*time.Second, func() bool { return allFinished(t, ns, 2) })
	for _, d := range deliveries(t, ns) {
		if d.Status.State != metalv1.TicketSuperseded || d.Status.Attempts != 0 {
			t.Errorf("%s: %s after %d attempts", d.Spec.EventType, d.Status.State, d.Status.Attempts)
		}
	}
	// The Machine's status is patched after the deliveries finish.
	waitFor(t, "hardwareRequest Cancelled", 30*time.Second, func() bool {
		hr := getMachine(t, ns, "m").Status.HardwareRequest
		return hr != nil && hr.State == metalv1.HardwareRequestCancelled
	})
	// With the Secret in place, only new events go out.
	storeSecret(t, ns, "ops-key", sec)
	waitReady(t, ns, "ops")
	m2 := newMachine(t, ns, "m2", nil)
	must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: m2}))
	waitFor(t, "m2 finished", 30*time.Second, func() bool { return allFinished(t, ns, 3) })
	for _, d := range rcv.Received() {
		if d.Object != "Machine/m2" {
			t.Errorf("received %s %s", d.Object, d.Type)
		}
	}
}

// Finished deliveries stay while their object exists (a late filing is
// still refused) and go once it is gone and the retention has passed.
func TestFinishedDeliveriesCollected(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	endpointWithReceiver(t, ns, "ops", nil)
	o := testDelivery()
	o.Retention = 500 * time.Millisecond
	m := startManager(t, ns, ticket.SetupOptions{Delivery: o}, nil)
	waitReady(t, ns, "ops")
	mc := newMachine(t, ns, "m", nil)
	must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: mc}))
	waitFor(t, "delivered", 30*time.Second, func() bool { return allFinished(t, ns, 1) })
	past := time.Now().Add(4 * o.Retention)
	waitFor(t, "retention passed", 10*time.Second, func() bool { return time.Now().After(past) })
	must(t, m.outbox.Enqueue(ctx, ticket.Event{Type: ticket.HardwareRequested, Object: mc}))
	if ds := deliveries(t, ns); len(ds) != 1 || ds[0].Status.Attempts != 1 {
		t.Fatalf("with the Machine still there, its delivery must stay (and refuse a second filing):%s", describe(ds))
	}
	must(t, env.Client.Delete(ctx, mc))
	waitFor(t, "the delivery of a deleted Machine collected", 30*time.Second, func() bool { return len(deliveries(t, ns)) == 0 })
}
