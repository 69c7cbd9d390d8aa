package inventory_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/index"
)

// TestDiscoveredHostYieldsItsMAC: PXE discovery created a Host for a MAC
// (anyone on the segment can send that DISCOVER); the Host an admin then
// registers with that MAC owns it and becomes Available, and the
// discovered one is the duplicate.
func TestDiscoveredHostYieldsItsMAC(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	d, err := index.NewDiscoverer(index.DiscovererOptions{Client: env.Client, Namespace: ns})
	must(t, err)
	hw, _ := net.ParseMAC("52:54:00:aa:00:77")
	if created, err := d.Discover(ctx, hw, pxe.ArchX8664UEFI, "PXEClient:Arch:00007:UNDI:003016"); err != nil || !created {
		t.Fatalf("Discover: %v %v", created, err)
	}
	found := client.ObjectKey{Namespace: ns, Name: index.DiscoveredHostName(hw)}
	waitHost(t, found, "became Discovered", state(metalv1.HostDiscovered))

	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	must(t, env.Client.Create(ctx, newHost(ns, "node-7", "52:54:00:AA:00:77", "bmc")))
	key := client.ObjectKey{Namespace: ns, Name: "node-7"}
	h := waitHost(t, key, "left registration", func(h *metalv1.Host) bool {
		return h.Status.State == metalv1.HostAvailable || h.Status.State == metalv1.HostError
	})
	if h.Status.State != metalv1.HostAvailable {
		t.Fatalf("the admin's Host lost its MAC to the discovered one: %s %q", h.Status.State, validReason(h))
	}
	dh := waitHost(t, found, "lost the MAC", func(h *metalv1.Host) bool { return validReason(h) == metalv1.ReasonDuplicateMAC })
	if c := meta.FindStatusCondition(dh.Status.Conditions, metalv1.ConditionValid); !strings.Contains(c.Message, ns+"/node-7") {
		t.Fatalf("discovered Host's condition: %+v", c)
	}
	waitHost(t, key, "stayed Available", state(metalv1.HostAvailable))
}
