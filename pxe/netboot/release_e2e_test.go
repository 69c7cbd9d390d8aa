package netboot_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
)

// TestSpoofedReleaseAndDeclineKeepTheBinding: a host booted and its lease
// is in its Host's status; another machine on the segment sends a RELEASE
// and (after a DISCOVER of its own for that chaddr) a DECLINE with the
// host's chaddr, address and our server identifier. The lease in the Host
// status and the address the config endpoint checks (AddressOf) stay.
func TestSpoofedReleaseAndDeclineKeepTheBinding(t *testing.T) {
	ctx := context.Background()
	e, reg := newSegment(t)
	victim := randMAC(t)
	must(t, env.Client.Create(ctx, &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "victim"},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: []string{victim.String()}},
	}))
	key := client.ObjectKey{Namespace: e.ns, Name: "victim"}
	o := e.options(t)
	o.Registerer = reg
	comp, _ := e.start(t, o)

	got, err := e.udhcpc(t, victim, biosPXE...)
	must(t, err)
	ip := got["ip"]
	bound := func() bool {
		h := &metalv1.Host{}
		if err := env.Client.Get(ctx, key, h); err != nil || len(h.Status.Leases) != 1 {
			return false
		}
		l := h.Status.Leases[0]
		a, ok := comp.Leases.AddressOf(victim)
		return l.MAC == pxe.MACKey(victim) && l.IP == ip && l.ExpiresAt.After(time.Now().Add(30*time.Minute)) && ok && a.String() == ip
	}
	waitFor(t, "the lease is in the Host status", bound)

	send := e.attacker(t)
	sid := dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IP(e.pair.SrvIP.AsSlice())))
	rel, err := dhcpv4.New(dhcpv4.WithHwAddr(victim), dhcpv4.WithMessageType(dhcpv4.MessageTypeRelease), dhcpv4.WithClientIP(net.ParseIP(ip)), sid)
	must(t, err)
	send(rel)
	waitFor(t, "the RELEASE was refused or applied", func() bool {
		return metricBy(t, reg, "anvil_dhcp_packets_dropped_total", "reason", "release_not_from_holder") > 0 || !bound()
	})
	if !bound() {
		t.Fatalf("a RELEASE from another MAC ended %s's lease of %s", victim, ip)
	}

	send(pxeDiscover(t, victim)) // the server offers the victim's address to the attacker's exchange
	waitFor(t, "the spoofed DISCOVER was answered", func() bool {
		return metricBy(t, reg, "anvil_dhcp_replies_sent_total", "type", "offer") >= 2
	})
	dec, err := dhcpv4.New(dhcpv4.WithHwAddr(victim), dhcpv4.WithMessageType(dhcpv4.MessageTypeDecline),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.ParseIP(ip))), sid)
	must(t, err)
	send(dec)
	waitFor(t, "the DECLINE was refused or applied", func() bool {
		return metricBy(t, reg, "anvil_dhcp_packets_dropped_total", "reason", "decline_not_from_client") > 0 || !bound()
	})
	if !bound() {
		t.Fatalf("a DECLINE from another MAC ended %s's lease of %s", victim, ip)
	}
	// And the host keeps its address on its next boot.
	again, err := e.udhcpc(t, victim, biosPXE...)
	must(t, err)
	if again["ip"] != ip {
		t.Fatalf("after the spoofed DECLINE the host got %s, had %s", again["ip"], ip)
	}
}

// TestRealClientDeclineMovesTheLease: udhcpc finds its address in use and
// DECLINEs it; it gets another one, and that is the lease in the Host
// status.
func TestRealClientDeclineMovesTheLease(t *testing.T) {
	ctx := context.Background()
	e, reg := newSegment(t)
	m := randMAC(t)
	must(t, env.Client.Create(ctx, &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "h"},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: []string{m.String()}},
	}))
	o := e.options(t)
	o.Registerer = reg
	e.start(t, o)
	// Another machine already uses the pool's first address.
	e.pair.Srv.Exec(t, "ip", "addr", "add", e.addr(100).String()+"/24", "dev", e.pair.SrvIf)

	got, err := e.udhcpc(t, m, append([]string{"-a", "-A", "1"}, biosPXE...)...)
	must(t, err)
	if got["ip"] == "" || got["ip"] == e.addr(100).String() {
		t.Fatalf("udhcpc got %q; %s is in use", got["ip"], e.addr(100))
	}
	if metricBy(t, reg, "anvil_dhcp_packets_received_total", "type", "decline") < 1 {
		t.Fatal("udhcpc sent no DECLINE")
	}
	waitFor(t, "the Host status has the new lease", func() bool {
		h := &metalv1.Host{}
		return env.Client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "h"}, h) == nil &&
			len(h.Status.Leases) == 1 && h.Status.Leases[0].IP == got["ip"]
	})
}
