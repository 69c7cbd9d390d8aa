package ticket_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/drivers"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

// A manual:// Host, driven by the real Host controller: a person hears
// about each power action, acknowledges one with a signed callback, and
// hears when another is no longer needed. A Host in Error is reported.
func TestManualHostPowerByTicket(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rcv := endpointWithReceiver(t, ns, "ops", nil)

	// Anvil's HTTP server with the callback handler; its address goes
	// into the payloads.
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	pool := bmc.NewPool(bmc.PoolOptions{})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	m := startManager(t, ns, ticket.SetupOptions{Delivery: testDelivery(), CallbackBaseURL: srv.URL}, func(mgr ctrl.Manager) error {
		mux.Handle(ticket.PathPrefix, ticket.NewHandler(ticket.HandlerOptions{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Logger: mgr.GetLogger()}))
		hosts := &inventory.HostReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("anvil-host"),
			Power: inventory.PowerOptions{Pool: pool, PollInterval: time.Second, BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second}}
		return hosts.SetupWithManager(context.Background(), mgr)
	})
	_ = m
	waitReady(t, ns, "ops")

	h := newManualHost(t, ns, "node-13", nil)
	key := client.ObjectKeyFromObject(h)
	getHost := func() *metalv1.Host {
		h := &metalv1.Host{}
		must(t, env.Client.Get(ctx, key, h))
		return h
	}
	waitFor(t, "Host Available", 30*time.Second, func() bool { return getHost().Status.State == metalv1.HostAvailable })
	setOnline := func(on bool) {
		h := getHost()
		patch := client.MergeFrom(h.DeepCopy())
		h.Spec.Online = on
		must(t, env.Client.Patch(ctx, h, patch))
	}
	received := func(typ string, n int) tickettest.Delivery {
		var got []tickettest.Delivery
		waitFor(t, fmt.Sprintf("%d %s for node-13", n, typ), 30*time.Second, func() bool {
			got = got[:0]
			for _, d := range rcv.Accepted() {
				if d.Type == typ && d.Object == "Host/node-13" {
					got = append(got, d)
				}
			}
			return len(got) >= n
		})
		return got[n-1]
	}

	// Power on: a person is asked, does it, and calls back.
	setOnline(true)
	req := received(ticket.PowerActionRequested, 1)
	links, _ := req.Data["links"].(map[string]any)
	actionID, _ := req.Data["actionID"].(string)
	if req.Data["action"] != "On" || actionID == "" || links["callback"] != srv.URL+ticket.PathPrefix+ns+"/ops" || req.Data["bmcAddress"] != "manual://rack1-unode-13" {
		t.Fatalf("power.action_requested data = %v", req.Data)
	}
	res, err := rcv.Callback(ctx, links["callback"].(string), ticket.CallbackPowerDone, map[string]any{"host": "node-13", "actionID": actionID})
	must(t, err)
	if res.Status != http.StatusOK {
		t.Fatalf("callback: %d %s", res.Status, res.Body)
	}
	waitFor(t, "power On acknowledged", 30*time.Second, func() bool {
		h := getHost()
		return h.Status.PowerState == metalv1.PowerOn && h.Status.PendingPowerAction == nil
	})

	// Power off is asked for, then not needed any more: cancelled. Action
	// IDs have one-second resolution, and an acknowledgement counts for a
	// new action requested in its second (inventory.PendingActionID): let
	// the clock move on first.
	acked, _ := time.Parse(time.RFC3339, actionID)
	waitFor(t, "the next second", 5*time.Second, func() bool { return time.Now().Truncate(time.Second).After(acked) })
	setOnline(false)
	off := received(ticket.PowerActionRequested, 2)
	if off.Data["action"] != "Off" {
		t.Fatalf("second request = %v", off.Data)
	}
	setOnline(true)
	can := received(ticket.PowerActionCancelled, 1)
	if can.Data["actionID"] != off.Data["actionID"] || can.Data["action"] != "Off" {
		t.Fatalf("cancelled %v, want the Off request %v", can.Data, off.Data)
	}

	// A Host in Error is reported once.
	broken := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broken"},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "ipmi://10.99.0.1", CredentialsName: "missing"}, BootMACs: []string{"52:54:00:aa:00:02"}},
	}
	must(t, env.Client.Create(ctx, broken))
	var failed tickettest.Delivery
	waitFor(t, "host.failed for broken", 30*time.Second, func() bool {
		for _, d := range rcv.Accepted() {
			if d.Type == ticket.HostFailed && d.Object == "Host/broken" {
				failed = d
				return true
			}
		}
		return false
	})
	if !strings.Contains(fmt.Sprint(failed.Data["problems"]), metalv1.ReasonSecretMissing) {
		t.Errorf("host.failed data = %v", failed.Data)
	}

	// Everything in order, once per event: no cancellation of the action
	// that was done.
	var seq []string
	for _, d := range rcv.Accepted() {
		if d.Object == "Host/node-13" {
			seq = append(seq, d.Type+" "+fmt.Sprint(d.Data["action"]))
		}
	}
	want := "[power.action_requested On power.action_requested Off power.action_cancelled Off]"
	if fmt.Sprint(seq) != want {
		t.Errorf("node-13's tickets: %v, want %s", seq, want)
	}
	if n := len(rcv.Received()); n != 4 {
		t.Errorf("receiver got %d requests, want 4 (one per event)", n)
	}
	checkStream(t, "ops", rcv.Received())
}
