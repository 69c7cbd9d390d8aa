package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

// tickets is the admins' ticketing system: a receiver on loopback that
// checks signatures with its own implementation, and an admin who does what
// the power tickets of manual:// Hosts ask, on the lab's VMs, then calls
// back.
type tickets struct {
	e   *e2e
	rcv *tickettest.Receiver

	mu      sync.Mutex
	powered map[string]bool // action key -> the VM was powered
	acked   map[string]bool // action key -> Anvil accepted the callback
	log     []string
	errs    []string
}

// startTickets creates the TicketEndpoint "ops" with its signing Secret and
// starts the receiver (down) and the admin.
func (e *e2e) startTickets(ctx context.Context) *tickets {
	e.t.Helper()
	secret := ticket.NewSecret()
	rcv, err := tickettest.Start(tickettest.Options{Secret: secret})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(rcv.Close)
	if err := rcv.SetDown(true); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops-key"},
		Data: map[string][]byte{"secret": []byte(secret)}}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.Create(ctx, &metalv1.TicketEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
		Spec: metalv1.TicketEndpointSpec{URL: rcv.URL, SecretRef: metalv1.SecretKeyReference{Name: "ops-key"},
			Timeout: &metav1.Duration{Duration: 2 * time.Second}}}); err != nil {
		e.t.Fatal(err)
	}
	tk := &tickets{e: e, rcv: rcv, powered: map[string]bool{}, acked: map[string]bool{}}
	actx, cancel := context.WithCancel(ctx)
	e.t.Cleanup(cancel)
	go tk.admin(actx)
	return tk
}

// admin polls the filed tickets (bounded by ctx) and works through the
// power actions that were not cancelled, each once.
func (tk *tickets) admin(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cancelled := map[string]bool{}
		var todo []tickettest.Delivery
		for _, d := range tk.rcv.Accepted() {
			switch d.Type {
			case ticket.PowerActionCancelled:
				cancelled[fmt.Sprint(d.Object, d.Data["actionID"], d.Data["action"])] = true
			case ticket.PowerActionRequested:
				todo = append(todo, d)
			}
		}
		for _, d := range todo {
			if !cancelled[fmt.Sprint(d.Object, d.Data["actionID"], d.Data["action"])] {
				tk.do(ctx, d)
			}
		}
	}
}

// do powers the VM as asked (once) and acknowledges (until Anvil accepts).
func (tk *tickets) do(ctx context.Context, d tickettest.Delivery) {
	host := strings.TrimPrefix(d.Object, "Host/")
	action, _ := d.Data["action"].(string)
	boot, _ := d.Data["bootDevice"].(string)
	id, _ := d.Data["actionID"].(string)
	key := fmt.Sprint(host, " ", id, " ", action, " ", boot)
	tk.mu.Lock()
	powered, acked := tk.powered[key], tk.acked[key]
	tk.mu.Unlock()
	if acked {
		return
	}
	if !powered {
		labBoot := lab.BootNormal
		switch boot {
		case "PXE":
			labBoot = lab.BootPXE
		case "HTTP": // a manual:// HTTPBoot Host
			labBoot = lab.BootHTTP
		}
		var err error
		switch action {
		case "On":
			err = tk.e.st.Lab.Power(ctx, host, "on", labBoot)
		case "Reset":
			err = tk.e.st.Lab.Power(ctx, host, "reset", labBoot)
		case "Off", "GracefulOff":
			err = tk.e.st.Lab.Power(ctx, host, "off", "")
		default:
			err = fmt.Errorf("unknown action %q", action)
		}
		tk.record(key, "powered", err)
		if err != nil {
			return
		}
	}
	links, _ := d.Data["links"].(map[string]any)
	url, _ := links["callback"].(string)
	res, err := tk.rcv.Callback(ctx, url, ticket.CallbackPowerDone, map[string]any{"host": host, "actionID": id})
	if err == nil && res.Status != http.StatusOK {
		err = fmt.Errorf("callback answered %d: %s", res.Status, res.Body)
	}
	if err != nil {
		// Anvil may be restarting: the next round calls back again.
		tk.mu.Lock()
		tk.log = append(tk.log, fmt.Sprintf("%s: callback not accepted yet: %v", key, err))
		tk.mu.Unlock()
		return
	}
	tk.record(key, "acknowledged", nil)
}

func (tk *tickets) record(key, what string, err error) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if err != nil {
		tk.errs = append(tk.errs, fmt.Sprintf("%s: %v", key, err))
		return
	}
	if what == "powered" {
		tk.powered[key] = true
	} else {
		tk.acked[key] = true
	}
	tk.log = append(tk.log, time.Now().UTC().Format("15:04:05")+" "+key+" "+what)
}

// report is what the admin did, and what went wrong.
func (tk *tickets) report() (log, errs []string) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	return append([]string(nil), tk.log...), append([]string(nil), tk.errs...)
}

// deliveries lists the outbox.
func (e *e2e) deliveries(ctx context.Context) []metalv1.TicketDelivery {
	e.t.Helper()
	var l metalv1.TicketDeliveryList
	if err := e.c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

// describeDeliveries is one line per delivery, sorted.
func describeDeliveries(ds []metalv1.TicketDelivery) string {
	var lines []string
	for _, d := range ds {
		lines = append(lines, fmt.Sprintf("%s/%s %s %s attempts=%d %s", d.Spec.Object.Kind, d.Spec.Object.Name, d.Spec.EventType,
			d.Status.State, d.Status.Attempts, d.Status.LastError))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// acceptedEvents counts what the receiver filed, by "Kind/name type".
func (tk *tickets) acceptedEvents() map[string]int {
	out := map[string]int{}
	for _, d := range tk.rcv.Accepted() {
		out[d.Object+" "+d.Type]++
	}
	return out
}

// checkTickets: every event arrived once per webhook-id (duplicates only
// with the same id), in order per object, with valid signatures; the
// ticket the receiver opened is on the Machine; the admin's power action
// was done and acknowledged.
func (e *e2e) checkTickets(tk *tickets) {
	e.t.Helper()
	e.waitFor(3*time.Minute, "every webhook delivered or superseded", func(ctx context.Context) (bool, string) {
		for _, d := range e.deliveries(ctx) {
			if d.Status.State != metalv1.TicketDelivered && d.Status.State != metalv1.TicketSuperseded {
				return false, describeDeliveries(e.deliveries(ctx))
			}
		}
		return true, ""
	})
	ds := e.deliveries(context.Background())
	e.logf("ticket deliveries:\n%s", describeDeliveries(ds))
	got := tk.acceptedEvents()
	for _, want := range []string{"Machine/m3 hardware.requested", "Machine/m3 hardware.fulfilled", "Machine/far1 hardware.requested",
		"Machine/far2 hardware.cancelled", "Host/vm-third power.action_requested"} {
		if got[want] == 0 {
			e.t.Errorf("the receiver never filed %s; it filed %v", want, got)
		}
	}
	for _, d := range ds {
		if d.Status.State == metalv1.TicketSuperseded && !(d.Spec.Object.Name == "far2" && d.Spec.EventType == ticket.HardwareRequested) {
			e.t.Errorf("delivery %s %s/%s superseded", d.Spec.EventType, d.Spec.Object.Kind, d.Spec.Object.Name)
		}
	}
	for _, p := range tickettest.CheckStream(tk.rcv.Received()) {
		e.t.Error(p)
	}
	if bad := tk.rcv.Invalid(); len(bad) > 0 {
		e.t.Errorf("requests failing the receiver's own signature check: %v", bad)
	}
	m3, err := e.machine(context.Background(), "m3")
	if err != nil {
		e.t.Fatal(err)
	}
	if hr := m3.Status.HardwareRequest; hr == nil || hr.ID == "" || hr.URL == "" {
		e.t.Errorf("m3 does not show the ticket the receiver opened: %+v", hr)
	} else {
		e.logf("m3's ticket: %s %s (%s)", hr.ID, hr.URL, hr.State)
	}
	log, errs := tk.report()
	e.logf("the admin:\n%s", strings.Join(log, "\n"))
	for _, err := range errs {
		e.t.Errorf("admin: %s", err)
	}
	acked := 0
	for _, l := range log {
		if strings.HasSuffix(l, " acknowledged") {
			acked++
		}
	}
	if acked == 0 {
		e.t.Error("the admin acknowledged no power action, yet the manual Host booted")
	}
	e.logf("webhooks: %d requests for %d deliveries; filed per event: %v", len(tk.rcv.Received()), len(ds), got)
}
