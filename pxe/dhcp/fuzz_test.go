package dhcp

import (
	"context"
	"net"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// FuzzHandle feeds arbitrary bytes through the parser and both modes of the
// handler (without the recover() safety net of process) and checks that
// nothing panics and that every reply is a well-formed BOOTREPLY for the
// same client. Seeds: testdata/fuzz/FuzzHandle plus the packets below.
//
//	go test -run='^$' -fuzz=FuzzHandle -fuzztime=20s ./pxe/dhcp
func FuzzHandle(f *testing.F) {
	pxeMods := []dhcpv4.Modifier{withArch(0), withVendor("PXEClient:Arch:00000:UNDI:002001")}
	seeds := []*dhcpv4.DHCPv4{
		request(f, staticMAC, dhcpv4.MessageTypeDiscover, pxeMods...),
		request(f, staticMAC, dhcpv4.MessageTypeDiscover, withArch(16), withVendor("HTTPClient:Arch:00016")),
		request(f, staticMAC, dhcpv4.MessageTypeDiscover, withArch(7), dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE"))),
		request(f, dynMAC, dhcpv4.MessageTypeDiscover),
		request(f, dynMAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.100"), withServerID(srvIP)),
		request(f, dynMAC, dhcpv4.MessageTypeRequest, dhcpv4.WithClientIP(net.ParseIP("10.0.0.100"))),
		request(f, dynMAC, dhcpv4.MessageTypeRelease, dhcpv4.WithClientIP(net.ParseIP("10.0.0.100"))),
		request(f, dynMAC, dhcpv4.MessageTypeDecline, withRequested("10.0.0.100")),
		request(f, staticMAC, dhcpv4.MessageTypeInform, dhcpv4.WithClientIP(net.ParseIP("10.0.0.5"))),
		request(f, dynMAC, dhcpv4.MessageTypeDiscover, dhcpv4.WithGatewayIP(relayIP)),
		request(f, unknMAC, dhcpv4.MessageTypeDiscover, pxeMods...),
	}
	for _, s := range seeds {
		b := s.ToBytes()
		f.Add(b, false, false)
		f.Add(b, true, false)
		f.Add(b, true, true)
		f.Add(b[:len(b)/2], false, false) // truncated
	}
	f.Add([]byte{}, false, false)
	f.Add([]byte{1, 1, 6, 0}, false, false)

	full := testServer(f, ModeFull)
	proxy := testServer(f, ModeProxy)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte, proxyMode, pxePort bool) {
		req, err := dhcpv4.FromBytes(data)
		if err != nil {
			return
		}
		s, on := full, listenDHCP
		if proxyMode {
			s = proxy
		}
		if pxePort {
			on = listenPXE
		}
		res := s.handle(ctx, req, &net.UDPAddr{IP: net.IPv4(10, 0, 0, 9), Port: 68}, on)
		if res.reply == nil {
			return
		}
		if res.dst == nil || res.dst.IP == nil {
			t.Fatalf("reply without destination")
		}
		if res.reply.OpCode != dhcpv4.OpcodeBootReply || res.reply.TransactionID != req.TransactionID {
			t.Fatalf("reply op=%v xid=%v for xid %v", res.reply.OpCode, res.reply.TransactionID, req.TransactionID)
		}
		if _, err := dhcpv4.FromBytes(res.reply.ToBytes()); err != nil {
			t.Fatalf("reply does not parse: %v", err)
		}
	})
}
