package inventory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

// logLine reports whether one line of the manager's log has every part.
func logLine(parts ...string) bool { return logLines(parts...) > 0 }

// logLines counts the lines of the manager's log that have every part.
func logLines(parts ...string) int {
	n := 0
	for _, line := range strings.Split(managerLogs.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// powerChanges counts the Host's PowerChanged Events to state whose note
// has how (the event stream or the poll); a repeat of an Event is one
// Event with a series (its count is written at once only for the first
// repeat, so this counts to 2 and no further).
func powerChanges(t *testing.T, key client.ObjectKey, state metalv1.PowerState, how string) int {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(key.Namespace)); err != nil {
		return 0
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name != key.Name || e.Reason != "PowerChanged" || !strings.HasSuffix(e.Action, string(state)) || !strings.HasPrefix(e.Note, "power is "+string(state)) || !strings.Contains(e.Note, how) {
			continue
		}
		n++
		if e.Series != nil {
			n += int(max(e.Series.Count, 2)) - 1
		}
	}
	return n
}

// A Redfish BMC that pushes events: once its stream is open, the Host is
// not polled again within the test (the events' poll interval is an hour
// here), yet a power change nobody asked for is on the Host at once, read
// on the BMC's event. When the BMC ends the stream, the controller
// subscribes again, reads the Host (it may have missed an event), and the
// next change arrives the same way.
func TestBMCEvents(t *testing.T) {
	requireBMC(t)
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: testPassword,
		EventStream: true, Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
	key := hostOn(t, sim, "events-1", "52:54:00:3e:00:01", nil)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// What a failure needs to be understood: the Host's Events and
		// the manager's lines about it or its BMC.
		var list eventsv1.EventList
		_ = env.Client.List(context.Background(), &list, client.InNamespace(key.Namespace))
		for _, e := range list.Items {
			if e.Regarding.Name == key.Name {
				t.Logf("event %s/%s %q series=%v", e.Reason, e.Action, e.Note, e.Series)
			}
		}
		for _, line := range strings.Split(managerLogs.String(), "\n") {
			if strings.Contains(line, key.Name) || strings.Contains(line, sim.URL()) {
				t.Log(line)
			}
		}
		t.Logf("emulator: %+v", sim.Stats())
	})
	waitFor(t, "the controller opened the BMC's event stream", 30*time.Second, func() bool {
		return logLine("BMC event stream open", sim.URL())
	})
	sys := sim.SystemIDs()[0]

	const byEvent = "on an event from the BMC"
	must(t, sim.PushPowerButton(sys))
	waitFor(t, "the change read on the BMC's event", 30*time.Second, func() bool { return powerChanges(t, key, metalv1.PowerOn, byEvent) == 1 })
	// spec.online is false: Anvil powers it off again.
	waitFor(t, "the emulated system powered off again", 30*time.Second, func() bool { return sim.PowerState(sys) == "Off" })
	waitHost(t, key, "shown power Off again", func(h *metalv1.Host) bool { return h.Status.PowerState == metalv1.PowerOff })

	sim.EndEventStreams()
	waitFor(t, "the controller subscribed again", 60*time.Second, func() bool {
		return sim.Stats().EventStreamsOpened == 2 && logLines("BMC event stream open", sim.URL()) == 2
	})
	must(t, sim.PushPowerButton(sys))
	waitFor(t, "the second change read on its event", 30*time.Second, func() bool { return powerChanges(t, key, metalv1.PowerOn, byEvent) == 2 })
	if n := powerChanges(t, key, metalv1.PowerOn, "power poll"); n != 0 {
		t.Fatalf("%d power changes found by the poll, want none: events tell them", n)
	}
	if strings.Contains(managerLogs.String(), testPassword) {
		t.Fatal("the BMC password is in the manager's log")
	}
}
