package inventory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/redfishsim"
)

func requestCycle(t *testing.T, key client.ObjectKey, id string, mutate func(*metalv1.Host)) {
	t.Helper()
	patchHost(t, key, func(h *metalv1.Host) {
		metav1.SetMetaDataAnnotation(&h.ObjectMeta, inventory.AnnotationPowerCycle, id)
		if mutate != nil {
			mutate(h)
		}
	})
}

func cycled(id string) func(*metalv1.Host) bool {
	return func(h *metalv1.Host) bool { return h.Status.PowerCycleID == id && synced(h) }
}

// waitEvent waits for an Event of the Host with reason whose note has want.
func waitEvent(t *testing.T, key client.ObjectKey, reason, want string) {
	t.Helper()
	waitFor(t, "Event "+reason+" saying "+want, 30*time.Second, func() bool {
		var evs eventsv1.EventList
		if err := env.Client.List(context.Background(), &evs, client.InNamespace(key.Namespace)); err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == key.Name && e.Reason == reason && strings.Contains(e.Note, want) {
				return true
			}
		}
		return false
	})
}

// restarts are the BMC's power events since the first n that restarted a
// running server, as "pxe" (a network boot) or "plain".
func restarts(sim *redfishsim.Server, n int) []string {
	var out []string
	for _, ev := range sim.Events()[n:] {
		if ev.Restart {
			kind := "plain"
			if ev.BootTarget == "Pxe" {
				kind = "pxe"
			}
			out = append(out, kind)
		}
	}
	return out
}

// One power reset per power-cycle request ID: none for a Host that is off
// (an Event says so), one per new ID, none when the Host is reconciled
// again with the same ID, and a boot request in the same write goes first.
func TestPowerCycleOncePerID(t *testing.T) {
	sim, key := slowPowerHost(t, "cycle", "52:54:00:40:00:11", 0)

	requestCycle(t, key, "c-off", nil)
	waitHost(t, key, "handled c-off", func(h *metalv1.Host) bool { return h.Status.PowerCycleID == "c-off" })
	waitEvent(t, key, inventory.ReasonPowerCycleSkipped, inventory.MessagePowerIsOff)
	if n := sim.Stats().Resets; n != 0 {
		t.Fatalf("%d Resets for a cycle of a Host that is off, want none", n)
	}

	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = true })
	waitHost(t, key, "powered on", func(h *metalv1.Host) bool { return h.Status.PowerState == metalv1.PowerOn && synced(h) })
	before := len(sim.Events())

	requestCycle(t, key, "c1", nil)
	waitHost(t, key, "cycled for c1", cycled("c1"))
	waitEvent(t, key, inventory.ReasonPowerCycle, "power cycle c1: power reset sent")
	if got := sim.Stats().ResetRequests["ForceRestart"]; got != 1 {
		t.Fatalf("%d ForceRestart requests for one cycle, want 1", got)
	}
	reconciledAgain(t, key, nil)
	if got := sim.Stats().ResetRequests["ForceRestart"]; got != 1 {
		t.Fatalf("%d ForceRestart requests after a reconcile with the same ID, want 1", got)
	}

	requestCycle(t, key, "c2", nil)
	waitHost(t, key, "cycled for c2", cycled("c2"))
	if got := sim.Stats().ResetRequests["ForceRestart"]; got != 2 {
		t.Fatalf("%d ForceRestart requests for two cycles, want 2", got)
	}

	// The boot request and the cycle arrive together: the network boot
	// first, then the cycle's plain restart.
	requestCycle(t, key, "c3", func(h *metalv1.Host) {
		h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1", Purpose: metalv1.BootPurposeProvision}
	})
	waitHost(t, key, "booted b1 and cycled for c3", func(h *metalv1.Host) bool { return h.Status.BootRequestID == "b1" && cycled("c3")(h) })
	if got, want := strings.Join(restarts(sim, before), ","), "plain,plain,pxe,plain"; got != want {
		t.Fatalf("restarts %s, want %s (one per cycle, the network boot before the cycle that came with it)", got, want)
	}
}

// A manual:// Host's cycle is a pending power reset a person acknowledges.
func TestPowerCycleManualHost(t *testing.T) {
	requireBMC(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	h := newHost(ns, "by-hand-cycle", "52:54:00:40:00:12", "")
	h.Spec.BMC = metalv1.BMC{Address: "manual://row-4"}
	h.Spec.Online = true
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: "by-hand-cycle"}
	ack := func(what string) {
		got := waitHost(t, key, "asked a person to "+what, func(h *metalv1.Host) bool { return h.Status.PendingPowerAction != nil })
		id := inventory.PendingActionID(got.Status.PendingPowerAction)
		patchHost(t, key, func(h *metalv1.Host) { metav1.SetMetaDataAnnotation(&h.ObjectMeta, inventory.AnnotationAckPower, id) })
	}
	ack("power on")
	waitHost(t, key, "powered on by hand", func(h *metalv1.Host) bool {
		return h.Status.PowerState == metalv1.PowerOn && h.Status.PendingPowerAction == nil
	})

	requestCycle(t, key, "m1", nil)
	got := waitHost(t, key, "asked a person to reset", func(h *metalv1.Host) bool { return h.Status.PendingPowerAction != nil })
	if p := got.Status.PendingPowerAction; p.Action != metalv1.PowerAction("Reset") || p.BootDevice != "" || got.Status.PowerCycleID == "m1" {
		t.Fatalf("pending action %+v, powerCycleID %q: want a Reset not yet done", p, got.Status.PowerCycleID)
	}
	ack("reset")
	waitHost(t, key, "recorded the acknowledged cycle", func(h *metalv1.Host) bool {
		return h.Status.PowerCycleID == "m1" && h.Status.PendingPowerAction == nil
	})
	waitEvent(t, key, inventory.ReasonPowerCycle, "power cycle m1: power reset done by hand")
}
