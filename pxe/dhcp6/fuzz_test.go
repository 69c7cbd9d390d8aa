package dhcp6

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"
)

// FuzzHandle feeds arbitrary bytes through the parser and the handler and
// checks that nothing panics and that every answer serializes and parses
// back with the client's transaction ID (inside the same relay nesting).
//
//	go test -run='^$' -fuzz=FuzzHandle -fuzztime=20s ./pxe/dhcp6
func FuzzHandle(f *testing.F) {
	relayed, _ := dhcpv6.EncapsulateRelay(clientMsg(dhcpv6.MessageTypeSolicit, uuidDUID, withArch(iana.EFI_X86_64)),
		dhcpv6.MessageTypeRelayForward, net.ParseIP("2001:db8:1::1"), net.ParseIP("2001:db8:1::99"))
	relayed.AddOption(dhcpv6.OptClientLinkLayerAddress(iana.HWTypeEthernet, pxeMAC))
	for _, m := range []dhcpv6.DHCPv6{
		clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC), withArch(iana.EFI_X86_64)),
		clientMsg(dhcpv6.MessageTypeSolicit, uuidDUID, withUserClass("iPXE"), withRapidCommit),
		clientMsg(dhcpv6.MessageTypeRequest, llt(httpMAC), withArch(iana.Arch(16)), withVendorClass("HTTPClient"), withServer(srvDUID)),
		clientMsg(dhcpv6.MessageTypeRelease, llt(pxeMAC), withServer(srvDUID)),
		clientMsg(dhcpv6.MessageTypeConfirm, llt(pxeMAC)),
		relayed,
	} {
		b := m.ToBytes()
		f.Add(b, true)
		f.Add(b[:len(b)/2], true)
	}
	f.Add([]byte{}, false)
	f.Add([]byte{12, 0}, false)
	f.Fuzz(func(t *testing.T, data []byte, useLinkLocal bool) {
		m, err := dhcpv6.FromBytes(data)
		if err != nil {
			return
		}
		s := testServer(t)
		src := netip.MustParseAddr("fd00:6::99")
		if useLinkLocal {
			src = linkLocal(pxeMAC)
		}
		res := s.handle(context.Background(), m, src)
		if res.drop != "" {
			return
		}
		back, err := dhcpv6.FromBytes(res.reply.ToBytes())
		if err != nil {
			t.Fatalf("reply does not parse: %v", err)
		}
		in, err1 := m.GetInnerMessage()
		out, err2 := back.GetInnerMessage()
		if err1 != nil || err2 != nil || in.TransactionID != out.TransactionID || m.IsRelay() != back.IsRelay() {
			t.Fatalf("reply %v does not answer %v", back, m)
		}
	})
}
