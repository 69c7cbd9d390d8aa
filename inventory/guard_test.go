package inventory_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

// A Host whose BMC address is a metadata, link-local or loopback address
// (here 127.0.0.2, a real listener that records everything; the test pool
// allows only 127.0.0.1) is not Valid, never Available, and Anvil sends
// nothing there: no request, no Authorization header.
func TestBMCAddressGuard(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	rec := bmctest.StartRecorder(t, "127.0.0.2:0")
	for i, addr := range []string{
		"redfish+http://" + rec.HostPort() + "/redfish/v1/Systems/1",
		"redfish+https://" + rec.HostPort(),
		"redfish+http://169.254.169.254/",
		"redfish+https://169.254.169.254/redfish/v1/Systems/1",
		"ipmi://169.254.10.1",
		"ipmi://" + rec.HostPort(),
		"redfish+https://localhost:" + rec.PortString(),
	} {
		h := newHost(ns, "guarded-"+string(rune('a'+i)), "52:54:00:3a:00:0"+string(rune('1'+i)), "bmc")
		h.Spec.BMC.Address = addr
		must(t, env.Client.Create(ctx, h))
		// Refused, or (without the guard) a BMC call made.
		got := waitHost(t, client.ObjectKeyFromObject(h), "refused or called", func(h *metalv1.Host) bool {
			return validReason(h) == metalv1.ReasonAddressNotAllowed || meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionBMCReachable) != nil
		})
		// The reconcile that wrote the status would have dialled before it.
		if reqs := rec.Requests(); len(reqs) != 0 || rec.Conns() != 0 {
			t.Fatalf("%s: the listener on 127.0.0.2 got %d connections and requests %v", addr, rec.Conns(), reqs)
		}
		c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionValid)
		if c.Reason != metalv1.ReasonAddressNotAllowed || c.Status != "False" || !strings.Contains(c.Message, "spec.bmc.address") || !strings.Contains(c.Message, "--bmc-allow-cidrs") {
			t.Fatalf("%s: Valid condition %+v, want False/AddressNotAllowed naming spec.bmc.address and --bmc-allow-cidrs; conditions %+v", addr, c, got.Status.Conditions)
		}
		if strings.Contains(c.Message, testPassword) {
			t.Fatal("the password is in the condition")
		}
		got = waitHost(t, client.ObjectKeyFromObject(h), "in Error", state(metalv1.HostError))
		if meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionBMCReachable) != nil {
			t.Fatalf("%s: a BMC call was made: %+v", addr, got.Status.Conditions)
		}
	}
}

// redfish+http:// needs spec.bmc.allowPlainHTTP: without it the Host is
// not Valid (PlainHTTPNotAllowed) and the BMC gets no request; with it the
// Host becomes Available through the same emulated BMC.
func TestPlainHTTPRedfishNeedsOptIn(t *testing.T) {
	requireBMC(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: testPassword,
		Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
	if !strings.HasPrefix(sim.BMCAddress(), "redfish+http://127.0.0.1:") {
		t.Fatalf("simulator at %s, want plain HTTP on 127.0.0.1", sim.BMCAddress())
	}
	h := newHost(ns, "plain", "52:54:00:3b:00:01", "bmc")
	h.Spec.BMC.Address = sim.BMCAddress()
	h.Spec.BMC.AllowPlainHTTP = false
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKeyFromObject(h)
	got := waitHost(t, key, "refused for plain HTTP", func(h *metalv1.Host) bool {
		return validReason(h) == metalv1.ReasonPlainHTTPNotAllowed && h.Status.State == metalv1.HostError
	})
	if c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionValid); !strings.Contains(c.Message, "spec.bmc.allowPlainHTTP") {
		t.Fatalf("condition %+v does not name spec.bmc.allowPlainHTTP", c)
	}
	if n := sim.Stats().Requests; n != 0 {
		t.Fatalf("the BMC got %d requests before the opt-in", n)
	}
	patchHost(t, key, func(h *metalv1.Host) { h.Spec.BMC.AllowPlainHTTP = true })
	waitHost(t, key, "Available after the opt-in", func(h *metalv1.Host) bool {
		return h.Status.State == metalv1.HostAvailable && validReason(h) == metalv1.ReasonValid && h.Status.PowerState == metalv1.PowerOff
	})
	if sim.Stats().Requests == 0 {
		t.Fatal("Available without a BMC request")
	}
}

// spec.bootMethod VirtualMedia needs a Redfish BMC and a static
// spec.network.address: with an ipmi:// or manual:// BMC, or without the
// address, the Host is not Valid, and the condition says what to change.
// Back to PXE, it registers.
func TestVirtualMediaNeedsRedfish(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	for i, tc := range []struct {
		addr, want string
		network    bool
	}{
		{"ipmi://192.0.2.1:9", "IPMI has no standard virtual media", true},
		{"manual://rack7", "manual://", true},
		// No DHCP for a virtual media boot: the static address is needed.
		{"redfish+https://192.0.2.1", "spec.network.address", false},
	} {
		h := newHost(ns, "vm-"+string(rune('a'+i)), "52:54:00:3b:00:0"+string(rune('1'+i)), "bmc")
		h.Spec.BMC.Address = tc.addr
		h.Spec.BootMethod = metalv1.BootMethodVirtualMedia
		if tc.network {
			h.Spec.Network = &metalv1.HostNetwork{Address: "192.0.2.50/24"}
		}
		must(t, env.Client.Create(ctx, h))
		got := waitHost(t, client.ObjectKeyFromObject(h), "not Valid", func(h *metalv1.Host) bool {
			return validReason(h) == metalv1.ReasonBootMethodUnsupported
		})
		c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionValid)
		if c.Status != "False" || !strings.Contains(c.Message, "spec.bootMethod") || !strings.Contains(c.Message, tc.want) {
			t.Fatalf("%s: Valid condition %+v", tc.addr, c)
		}
		waitHost(t, client.ObjectKeyFromObject(h), "in Error", state(metalv1.HostError))
	}
	// The same manual:// Host with the default boot method is fine.
	h := newHost(ns, "vm-pxe", "52:54:00:3b:00:09", "bmc")
	h.Spec.BMC.Address = "manual://rack7"
	must(t, env.Client.Create(ctx, h))
	waitHost(t, client.ObjectKeyFromObject(h), "Valid", func(h *metalv1.Host) bool { return validReason(h) == metalv1.ReasonValid })
}
