package inventory_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

// slowPowerHost registers a Host on an emulated BMC that accepts a Reset at
// once and changes the power delay later, restarting the change when it
// gets another Reset meanwhile, as real BMCs do.
func slowPowerHost(t *testing.T, name, mac string, delay time.Duration) (*redfishsim.Server, client.ObjectKey) {
	t.Helper()
	requireBMC(t)
	ctx := context.Background()
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: testPassword,
		PowerDelay: delay, Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	h := newHost(ns, name, mac, "bmc")
	h.Spec.BMC.Address = sim.BMCAddress()
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: name}
	waitHost(t, key, "became Available with power Off", func(h *metalv1.Host) bool {
		return h.Status.State == metalv1.HostAvailable && h.Status.PowerState == metalv1.PowerOff
	})
	return sim, key
}

func synced(h *metalv1.Host) bool {
	return h.Status.IssuedPowerAction == nil && meta.IsStatusConditionTrue(h.Status.Conditions, metalv1.ConditionPowerSynced)
}

// One transition, one ComputerSystem.Reset: while the BMC takes 5 s to
// change the power, the controller reads it back (with a 1 s poll interval,
// several polls fall in that window) and does not send the action again.
func TestPendingPowerActionIsSentOnce(t *testing.T) {
	sim, key := slowPowerHost(t, "slow-power", "52:54:00:40:00:01", 5*time.Second)
	id := sim.SystemIDs()[0]

	patchHost(t, key, func(h *metalv1.Host) {
		h.Spec.Online = true
		h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1", Purpose: "Provision"}
	})
	got := waitHost(t, key, "recorded the issued power-on", func(h *metalv1.Host) bool { return h.Status.IssuedPowerAction != nil })
	if p := got.Status.IssuedPowerAction; p.Action != "On" || p.BootDevice != "PXE" || p.Target != metalv1.PowerOn || p.Attempts != 1 || !p.Deadline.After(p.IssuedAt.Time) {
		t.Fatalf("issuedPowerAction = %+v", p)
	}
	if got.Status.PowerState == metalv1.PowerOn && sim.PowerState(id) == "Off" {
		t.Fatal("status shows power On before the BMC does")
	}
	got = waitHost(t, key, "read power On back from the BMC", func(h *metalv1.Host) bool { return h.Status.PowerState == metalv1.PowerOn && synced(h) })
	if sim.PowerState(id) != "On" || got.Status.BootRequestID != "b1" {
		t.Fatalf("BMC power %s, bootRequestID %q", sim.PowerState(id), got.Status.BootRequestID)
	}
	if want := map[string]int{"On": 1}; !maps.Equal(sim.Stats().ResetRequests, want) {
		t.Fatalf("Reset requests %v for one power-on, want %v", sim.Stats().ResetRequests, want)
	}

	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = false })
	waitHost(t, key, "read power Off back from the BMC", func(h *metalv1.Host) bool { return h.Status.PowerState == metalv1.PowerOff && synced(h) })
	if want := map[string]int{"On": 1, "ForceOff": 1}; !maps.Equal(sim.Stats().ResetRequests, want) {
		t.Fatalf("Reset requests %v after power-on and power-off, want %v", sim.Stats().ResetRequests, want)
	}
	var sawPXE bool
	for _, ev := range sim.Events() {
		sawPXE = sawPXE || (ev.On && ev.BootTarget == "Pxe")
	}
	if !sawPXE {
		t.Fatalf("the power-on did not boot from PXE: %+v", sim.Events())
	}
}

// A BMC that never carries the action out: the deadline gives a condition
// naming the action and what the BMC reports, and one more Reset, not one
// per poll or read-back.
func TestPowerActionTimesOut(t *testing.T) {
	sim, key := slowPowerHost(t, "stuck-power", "52:54:00:40:00:02", time.Hour)
	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = true })
	got := waitHost(t, key, "reported the power action timed out", func(h *metalv1.Host) bool {
		return condReason(h, metalv1.ConditionPowerSynced) == inventory.ReasonPowerActionTimedOut
	})
	c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionPowerSynced)
	if !strings.Contains(c.Message, "power On") || !strings.Contains(c.Message, "reports Off") {
		t.Fatalf("condition %+v should name the action and the BMC's power state", c)
	}
	if p := got.Status.IssuedPowerAction; p == nil || p.Attempts != 2 || got.Status.PowerState != metalv1.PowerOff {
		t.Fatalf("issuedPowerAction %+v, powerState %s: want the second attempt pending and the BMC's Off", p, got.Status.PowerState)
	}
	if n := sim.Stats().ResetRequests["On"]; n != 2 {
		t.Fatalf("%d Reset requests when the first deadline passed, want 2", n)
	}
	// Several more read-backs send nothing but, per deadline, one retry:
	// the Resets match the attempts recorded (a Reset per poll would run
	// away from them).
	waitPolls(t, sim, 4)
	waitFor(t, "Reset requests equal to the attempts recorded", 30*time.Second, func() bool {
		if err := env.Client.Get(context.Background(), key, got); err != nil || got.Status.IssuedPowerAction == nil {
			return false
		}
		return sim.Stats().ResetRequests["On"] == int(got.Status.IssuedPowerAction.Attempts)
	})
}

// The same over IPMI: ipmi_sim answers the chassis control at once and its
// power follows 3 s later; one power-up for one transition.
func TestPendingPowerActionIsSentOnceOverIPMI(t *testing.T) {
	requireBMC(t)
	ctx := context.Background()
	sim := bmctest.StartIPMISim(t, bmctest.IPMISimOptions{Username: "admin", Password: testPassword, PowerDelay: 3 * time.Second})
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	h := newHost(ns, "slow-ipmi", "52:54:00:40:00:03", "bmc")
	h.Spec.BMC.Address = sim.Address()
	h.Spec.BootMode = "Legacy"
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: "slow-ipmi"}
	waitHost(t, key, "became Available with power Off", func(h *metalv1.Host) bool {
		return h.Status.State == metalv1.HostAvailable && h.Status.PowerState == metalv1.PowerOff
	})
	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = true })
	waitFor(t, "ipmi_sim powered on", 30*time.Second, func() bool { on, _ := sim.PowerOn(); return on })
	waitHost(t, key, "read power On back from ipmi_sim", func(h *metalv1.Host) bool { return h.Status.PowerState == metalv1.PowerOn && synced(h) })
	calls, err := sim.SetCalls()
	must(t, err)
	var ups int
	for _, c := range calls {
		if c.Param == "power" && c.Value == "1" {
			ups++
		}
	}
	if ups != 1 {
		t.Fatalf("%d power-up requests for one transition, want 1: %v", ups, calls)
	}
}

// spec.online flips while a power-on is in flight: the controller waits
// for the BMC to finish it (an action sent mid-change would meet a stale
// power state), then sends the power-off: one Reset each.
func TestSpecChangeWhilePowerActionInFlight(t *testing.T) {
	sim, key := slowPowerHost(t, "flip-power", "52:54:00:40:00:04", 3*time.Second)
	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = true })
	waitHost(t, key, "recorded the issued power-on", func(h *metalv1.Host) bool { return h.Status.IssuedPowerAction != nil })
	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = false })
	waitFor(t, "the power-off sent", 30*time.Second, func() bool { return sim.Stats().ResetRequests["ForceOff"] > 0 })
	waitHost(t, key, "read power Off back from the BMC", func(h *metalv1.Host) bool { return h.Status.PowerState == metalv1.PowerOff && synced(h) })
	if want := map[string]int{"On": 1, "ForceOff": 1}; !maps.Equal(sim.Stats().ResetRequests, want) || sim.PowerState(sim.SystemIDs()[0]) != "Off" {
		t.Fatalf("Reset requests %v, BMC power %s; want %v and Off", sim.Stats().ResetRequests, sim.PowerState(sim.SystemIDs()[0]), want)
	}
}
