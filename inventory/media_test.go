package inventory_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/mediatoken"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

// testMediaBase is the controller's MediaOptions.BaseURL in these tests;
// the emulated BMC takes the URL without fetching it.
const testMediaBase = "http://192.0.2.10:8080"

func vmHost(t *testing.T, sim *redfishsim.Server, name, mac string) client.ObjectKey {
	t.Helper()
	return hostOn(t, sim, name, mac, func(h *metalv1.Host) {
		h.Spec.BootMethod = metalv1.BootMethodVirtualMedia
		h.Spec.Network = &metalv1.HostNetwork{Address: "192.0.2.50/24", Gateway: "192.0.2.1"}
	})
}

// hostOn creates a Host (changed by mutate, if set) behind the emulated
// BMC sim, with its credentials Secret, and waits until it is Available,
// Off and in sync.
func hostOn(t *testing.T, sim *redfishsim.Server, name, mac string, mutate func(*metalv1.Host)) client.ObjectKey {
	t.Helper()
	ctx := context.Background()
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	h := newHost(ns, name, mac, "bmc")
	h.Spec.BMC.Address = sim.BMCAddress()
	if mutate != nil {
		mutate(h)
	}
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: name}
	waitHost(t, key, "became Available with power Off and in sync", func(h *metalv1.Host) bool {
		return h.Status.State == metalv1.HostAvailable && h.Status.PowerState == metalv1.PowerOff &&
			meta.IsStatusConditionTrue(h.Status.Conditions, metalv1.ConditionPowerSynced)
	})
	return key
}

// A VirtualMedia Host's boot request: the controller records a token hash,
// has the BMC insert <base>/media/<token>.iso (whose hash is the one in
// status), boots once from Cd and powers on; once the boot's credential is
// used it ejects. The URL is in no status field, Event or log line.
func TestVirtualMediaBoot(t *testing.T) {
	requireBMC(t)
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: testPassword,
		Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
	key := vmHost(t, sim, "vm-boot", "52:54:00:3c:00:01")
	sys := sim.SystemIDs()[0]

	patchHost(t, key, func(h *metalv1.Host) {
		h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1", Purpose: metalv1.BootPurposeProvision}
	})
	got := waitHost(t, key, "acknowledged b1 with the ISO inserted", func(h *metalv1.Host) bool {
		return h.Status.BootRequestID == "b1" && h.Status.VirtualMedia != nil && h.Status.VirtualMedia.InsertedAt != nil
	})
	vm := got.Status.VirtualMedia
	if vm.BootRequestID != "b1" || len(vm.TokenHash) != 64 {
		t.Fatalf("status.virtualMedia %+v", vm)
	}
	var image string
	for _, m := range sim.VirtualMedia(sys) {
		if m.Inserted {
			image = m.Image
		}
	}
	token, ok := strings.CutSuffix(strings.TrimPrefix(image, testMediaBase+"/media/"), ".iso")
	if !ok || mediatoken.Hash(token) != vm.TokenHash {
		t.Fatalf("the BMC holds %q, not an ISO URL whose token hashes to status.virtualMedia.tokenHash", image)
	}
	waitFor(t, "the system powered on booting from Cd with the ISO in", 20*time.Second, func() bool {
		for _, ev := range sim.Events() {
			if ev.On && ev.BootTarget == "Cd" && ev.CDImage == image {
				return true
			}
		}
		return false
	})
	if c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionVirtualMedia); c == nil || c.Status != metav1.ConditionTrue || c.Reason != metalv1.ReasonMediaInserted {
		t.Errorf("VirtualMedia condition %+v", c)
	}

	// The boot's credential is used (as the config endpoint records it):
	// the controller ejects.
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), key, h))
	now := metav1.Now()
	patch := client.MergeFrom(h.DeepCopy())
	h.Status.BootCredential = &metalv1.BootCredentialStatus{Hash: strings.Repeat("ab", 32), IssuedAt: now, ExpiresAt: now, BootRequestID: "b1", ConsumedAt: &now}
	must(t, env.Client.Status().Patch(context.Background(), h, patch))
	waitHost(t, key, "ejected after the boot", func(h *metalv1.Host) bool {
		return h.Status.VirtualMedia != nil && h.Status.VirtualMedia.EjectedAt != nil
	})
	for _, m := range sim.VirtualMedia(sys) {
		if m.Inserted || m.Image != "" {
			t.Errorf("the BMC still holds media after the eject: %+v", m)
		}
	}
	if strings.Contains(managerLogs.String(), token) {
		t.Error("the ISO URL's token is in the manager's log")
	}
	must(t, env.Client.Get(context.Background(), key, h))
	if b, _ := json.Marshal(h.Status); strings.Contains(string(b), token) {
		t.Error("the token is in the Host's status")
	}
}

// A Redfish BMC without virtual media: condition VirtualMedia False with
// reason NoVirtualMedia, and no boot.
func TestVirtualMediaMissing(t *testing.T) {
	requireBMC(t)
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: testPassword,
		VirtualMedia: redfishsim.VirtualMediaOptions{Disabled: true}, Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
	key := vmHost(t, sim, "vm-none", "52:54:00:3c:00:02")
	patchHost(t, key, func(h *metalv1.Host) {
		h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1", Purpose: metalv1.BootPurposeProvision}
	})
	got := waitHost(t, key, "VirtualMedia False, NoVirtualMedia", func(h *metalv1.Host) bool {
		return condReason(h, metalv1.ConditionVirtualMedia) == metalv1.ReasonNoVirtualMedia
	})
	c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionVirtualMedia)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "spec.bootMethod PXE") {
		t.Errorf("condition %+v", c)
	}
	if got.Status.BootRequestID == "b1" {
		t.Error("the boot request was acknowledged without virtual media")
	}
	for _, ev := range sim.Events() {
		if ev.On {
			t.Errorf("the system was powered on: %+v", ev)
		}
	}
}
