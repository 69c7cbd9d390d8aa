package dhcp

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// TestDeclineBoundToExchange: a DECLINE holds an address only when it
// names the address of the client's latest OFFER/ACK, within the window,
// once, from the same source; one MAC holds at most maxDeclinesPerClient
// addresses; the lease itself is never ended by a DECLINE.
func TestDeclineBoundToExchange(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	s := testServer(t, ModeFull, func(o *Options) { o.Now = clk.Now })
	s.frames = &frameConn{} // as if the packet socket were open: senders are checked
	self := mac(t, dynMAC)
	decline := func(ip string, from net.HardwareAddr, mods ...dhcpv4.Modifier) string {
		t.Helper()
		req := request(t, dynMAC, dhcpv4.MessageTypeDecline, append([]dhcpv4.Modifier{withRequested(ip), withServerID(srvIP)}, mods...)...)
		return outcome(s.handleFrame(ctx, req, clientPeer, listenDHCP, passAny, from))
	}
	offer := func(mods ...dhcpv4.Modifier) string {
		t.Helper()
		res := s.handle(ctx, request(t, dynMAC, dhcpv4.MessageTypeDiscover, mods...), clientPeer, listenDHCP)
		if res.reply == nil {
			t.Fatalf("DISCOVER: %+v", res)
		}
		return res.reply.YourIPAddr.String()
	}
	held := func() (n int) {
		for _, d := range s.declined {
			if d.mac == dynMAC {
				n++
			}
		}
		return n
	}

	if got := decline("10.0.0.105", self); got != "decline_not_offered" {
		t.Fatalf("DECLINE without an exchange: %s", got)
	}
	ip := offer()
	if got := decline("10.0.0.109", self); got != "decline_not_offered" {
		t.Fatalf("DECLINE of an address not offered: %s", got)
	}
	if got := decline(ip, mac(t, dyn2MAC)); got != "decline_not_from_client" {
		t.Fatalf("DECLINE from another MAC's frame: %s", got)
	}
	if got := decline(ip, self, withServerIDString("10.0.0.2")); got != "other_server" {
		t.Fatalf("DECLINE for another server: %s", got)
	}
	clk.Advance(declineWindow + time.Second)
	if got := decline(ip, self); got != "decline_not_offered" {
		t.Fatalf("DECLINE after the window: %s", got)
	}
	ip = offer()
	if got := decline(ip, self); got != "none" {
		t.Fatalf("DECLINE of the offered address: %s", got)
	}
	if got := decline(ip, self); got != "decline_not_offered" {
		t.Fatalf("second DECLINE of one exchange: %s", got)
	}
	if l, err := s.opts.Leases.Get(ctx, self); err != nil || l.IP.String() != ip || !l.Expires.After(clk.Now()) {
		t.Fatalf("DECLINE ended the lease: %v %v", l, err)
	}
	if next := offer(); next == ip {
		t.Fatalf("declined %s offered again", ip)
	}
	// A client declining every address it is offered holds two at a time.
	for range 6 {
		if got := decline(offer(), self); got != "none" {
			t.Fatalf("DECLINE: %s", got)
		}
	}
	if n := held(); n != maxDeclinesPerClient {
		t.Fatalf("one MAC holds %d declined addresses, want %d", n, maxDeclinesPerClient)
	}

	// Relayed: the DECLINE must come through the relay of the exchange.
	rip := offer(dhcpv4.WithGatewayIP(relayIP))
	if got := decline(rip, nil, dhcpv4.WithGatewayIP(net.ParseIP("10.1.0.2"))); got != "decline_not_from_client" {
		t.Fatalf("DECLINE through another relay: %s", got)
	}
	if got := decline(rip, nil, dhcpv4.WithGatewayIP(relayIP)); got != "none" {
		t.Fatalf("DECLINE through the exchange's relay: %s", got)
	}
	if _, ok := s.declined[netip.MustParseAddr(rip)]; !ok {
		t.Fatalf("relayed DECLINE of %s not held", rip)
	}
}

func withServerIDString(ip string) dhcpv4.Modifier {
	return dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.ParseIP(ip)))
}
