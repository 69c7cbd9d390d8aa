package inventory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

func httpBootHost(t *testing.T, sim *redfishsim.Server, name, mac string) client.ObjectKey {
	t.Helper()
	return hostOn(t, sim, name, mac, func(h *metalv1.Host) { h.Spec.BootMethod = metalv1.BootMethodHTTPBoot })
}

// An HTTPBoot Host's boot request: the Redfish BMC is asked for a one-time
// UefiHttp boot in UEFI mode, and status records the issued action with
// boot device HTTP.
func TestHTTPBoot(t *testing.T) {
	requireBMC(t)
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: testPassword,
		Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
	key := httpBootHost(t, sim, "http-boot", "52:54:00:3d:00:01")
	patchHost(t, key, func(h *metalv1.Host) {
		h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1", Purpose: metalv1.BootPurposeProvision}
	})
	got := waitHost(t, key, "acknowledged b1 with an issued HTTP boot", func(h *metalv1.Host) bool {
		return h.Status.BootRequestID == "b1" && h.Status.IssuedPowerAction != nil
	})
	if p := got.Status.IssuedPowerAction; p.Action != metalv1.PowerActionOn || p.BootDevice != metalv1.BootDeviceHTTP {
		t.Fatalf("issued power action %+v, want On with boot device HTTP", p)
	}
	waitFor(t, "the system powered on booting from UefiHttp in UEFI mode", 20*time.Second, func() bool {
		for _, ev := range sim.Events() {
			if ev.On && ev.BootTarget == "UefiHttp" && ev.BootMode == "UEFI" {
				return true
			}
		}
		return false
	})
}

// A Redfish BMC whose system does not list UefiHttp: PowerSynced False,
// reason Unsupported, with a message naming spec.bootMethod and the way
// out; the boot request is not acknowledged and nothing is powered on.
func TestHTTPBootUnsupported(t *testing.T) {
	requireBMC(t)
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: testPassword,
		Systems: []redfishsim.SystemOptions{{PowerState: "Off", BootTargets: []string{"None", "Pxe", "Hdd"}}}})
	key := httpBootHost(t, sim, "http-none", "52:54:00:3d:00:02")
	patchHost(t, key, func(h *metalv1.Host) {
		h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1", Purpose: metalv1.BootPurposeProvision}
	})
	got := waitHost(t, key, "PowerSynced False, Unsupported", func(h *metalv1.Host) bool {
		return condReason(h, metalv1.ConditionPowerSynced) == metalv1.ReasonUnsupported
	})
	c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionPowerSynced)
	for _, want := range []string{"spec.bootMethod HTTPBoot", "UefiHttp", "spec.bootMethod PXE"} {
		if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, want) {
			t.Errorf("PowerSynced %+v: want False naming %q", c, want)
		}
	}
	if got.Status.BootRequestID == "b1" || got.Status.IssuedPowerAction != nil {
		t.Errorf("the boot was recorded as sent: bootRequestID %q, issued %+v", got.Status.BootRequestID, got.Status.IssuedPowerAction)
	}
	for _, ev := range sim.Events() {
		if ev.On {
			t.Errorf("the system was powered on: %+v", ev)
		}
	}
}

// A manual:// HTTPBoot Host: the person is asked for a one-time HTTP boot
// (status.pendingPowerAction.bootDevice HTTP, named in the condition).
func TestHTTPBootManual(t *testing.T) {
	requireBMC(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	h := newHost(ns, "http-by-hand", "52:54:00:3d:00:03", "")
	h.Spec.BMC = metalv1.BMC{Address: "manual://row-4"}
	h.Spec.BootMethod = metalv1.BootMethodHTTPBoot
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: h.Name}
	waitHost(t, key, "became Available", state(metalv1.HostAvailable))
	patchHost(t, key, func(h *metalv1.Host) { h.Spec.BootRequest = &metalv1.BootRequest{ID: "m1"} })
	got := waitHost(t, key, "asked a person", func(h *metalv1.Host) bool { return h.Status.PendingPowerAction != nil })
	c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionPowerSynced)
	if p := got.Status.PendingPowerAction; p.BootDevice != metalv1.BootDeviceHTTP || c == nil || !strings.Contains(c.Message, "one-time HTTP boot") {
		t.Fatalf("pending action %+v, PowerSynced %+v: want a one-time HTTP boot asked for", p, c)
	}
}
