package dhcp6

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"

	"anvil.dev/anvil/pxe"
)

var (
	srvAddr  = netip.MustParseAddr("fd00:6::1")
	srvDUID  = (&dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: net.HardwareAddr{2, 0, 0, 0, 0, 1}}).ToBytes()
	pxeMAC   = net.HardwareAddr{0x52, 0x54, 0, 0xa6, 0, 1}
	httpMAC  = net.HardwareAddr{0x52, 0x54, 0, 0xa6, 0, 2}
	diskMAC  = net.HardwareAddr{0x52, 0x54, 0, 0xa6, 0, 3}
	newMAC   = net.HardwareAddr{0x52, 0x54, 0, 0xa6, 0, 4}
	unknMAC  = net.HardwareAddr{0x52, 0x54, 0, 0xa6, 0, 9}
	uuidDUID = &dhcpv6.DUIDUUID{UUID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
)

func testServer(t *testing.T, more ...pxe.HostRecord) *Server {
	t.Helper()
	opts := Options{
		Interface: "test", ServerAddr: srvAddr, ServerDUID: srvDUID,
		Range: Range{Start: netip.MustParseAddr("fd00:6::100"), End: netip.MustParseAddr("fd00:6::1ff")},
		Backend: pxe.NewStaticBackend(append([]pxe.HostRecord{
			{Name: "pxe", MAC: pxeMAC, PXE: true, Accepted: true},
			{Name: "http", MAC: httpMAC, PXE: true, Accepted: true, BootMethod: pxe.BootMethodHTTP},
			{Name: "disk", MAC: diskMAC, PXE: false, Accepted: true},
			{Name: "new", MAC: newMAC, PXE: true, Accepted: false},
		}, more...)...),
		Logger: logr.Discard(),
	}
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		t.Fatal(err)
	}
	return &Server{opts: opts, log: opts.Logger, leases: newLeaseStore(opts.Range, time.Now)}
}

// linkLocal is the EUI-64 link-local address firmware forms from mac.
func linkLocal(mac net.HardwareAddr) netip.Addr {
	return netip.AddrFrom16([16]byte{0xfe, 0x80, 8: mac[0] ^ 2, 9: mac[1], 10: mac[2], 11: 0xff, 12: 0xfe, 13: mac[3], 14: mac[4], 15: mac[5]})
}

func llt(mac net.HardwareAddr) dhcpv6.DUID {
	return &dhcpv6.DUIDLLT{HWType: iana.HWTypeEthernet, Time: 12345, LinkLayerAddr: mac}
}

type msgOpt func(*dhcpv6.Message)

func withArch(a iana.Arch) msgOpt {
	return func(m *dhcpv6.Message) { m.AddOption(dhcpv6.OptClientArchType(a)) }
}
func withUserClass(s string) msgOpt {
	return func(m *dhcpv6.Message) { m.AddOption(&dhcpv6.OptUserClass{UserClasses: [][]byte{[]byte(s)}}) }
}
func withVendorClass(s string) msgOpt {
	return func(m *dhcpv6.Message) {
		m.AddOption(&dhcpv6.OptVendorClass{EnterpriseNumber: enterprisePXE, Data: [][]byte{[]byte(s)}})
	}
}
func withServer(d []byte) msgOpt {
	return func(m *dhcpv6.Message) { m.AddOption(dhcpv6.OptServerID(serverDUID(d))) }
}
func withRapidCommit(m *dhcpv6.Message) {
	m.AddOption(&dhcpv6.OptionGeneric{OptionCode: dhcpv6.OptionRapidCommit})
}

func clientMsg(mt dhcpv6.MessageType, duid dhcpv6.DUID, opts ...msgOpt) *dhcpv6.Message {
	m := &dhcpv6.Message{MessageType: mt, TransactionID: dhcpv6.TransactionID{1, 2, 3}}
	if duid != nil {
		m.AddOption(dhcpv6.OptClientID(duid))
	}
	m.AddOption(&dhcpv6.OptIANA{IaId: [4]byte{0, 0, 0, 7}})
	m.AddOption(dhcpv6.OptRequestedOption(dhcpv6.OptionBootfileURL))
	for _, o := range opts {
		o(m)
	}
	return m
}

// inner returns the client message in a reply, unwrapping a Relay-repl.
func inner(t *testing.T, d dhcpv6.DHCPv6) *dhcpv6.Message {
	t.Helper()
	for d.IsRelay() {
		rm := d.(*dhcpv6.RelayMessage)
		if rm.MessageType != dhcpv6.MessageTypeRelayReply {
			t.Fatalf("relay reply type %v", rm.MessageType)
		}
		d = rm.Options.RelayMessage()
	}
	return d.(*dhcpv6.Message)
}

func addrOf(m *dhcpv6.Message) netip.Addr {
	if ia := m.Options.OneIANA(); ia != nil {
		if a := ia.Options.OneAddress(); a != nil {
			addr, _ := netip.AddrFromSlice(a.IPv6Addr)
			return addr
		}
	}
	return netip.Addr{}
}

func TestHandle(t *testing.T) {
	for _, tc := range []struct {
		name     string
		msg      dhcpv6.DHCPv6
		src      netip.Addr
		drop     string
		wantType dhcpv6.MessageType
		wantURL  string
		wantAddr bool
		wantVC   bool // vendor class HTTPClient echoed
	}{
		{name: "firmware PXE solicit, DUID-LLT", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC), withArch(iana.EFI_X86_64), withVendorClass("PXEClient:Arch:00007:UNDI:003000")),
			src: linkLocal(pxeMAC), wantType: dhcpv6.MessageTypeAdvertise, wantURL: "tftp://[fd00:6::1]/ipxe.efi", wantAddr: true},
		{name: "rapid commit gets a Reply", msg: clientMsg(dhcpv6.MessageTypeSolicit, &dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: pxeMAC}, withArch(iana.EFI_BC), withRapidCommit),
			src: linkLocal(pxeMAC), wantType: dhcpv6.MessageTypeReply, wantURL: "tftp://[fd00:6::1]/ipxe.efi", wantAddr: true},
		{name: "iPXE, DUID-UUID, MAC from the EUI-64 link-local", msg: clientMsg(dhcpv6.MessageTypeSolicit, uuidDUID, withUserClass("iPXE")),
			src: linkLocal(pxeMAC), wantType: dhcpv6.MessageTypeAdvertise, wantURL: "http://[fd00:6::1]/boot/52:54:00:a6:00:01.ipxe", wantAddr: true},
		{name: "ipxebin's iPXE (user class Tinkerbell)", msg: clientMsg(dhcpv6.MessageTypeSolicit, uuidDUID, withUserClass("Tinkerbell")),
			src: linkLocal(pxeMAC), wantType: dhcpv6.MessageTypeAdvertise, wantURL: "http://[fd00:6::1]/boot/52:54:00:a6:00:01.ipxe", wantAddr: true},
		{name: "iPXE request", msg: clientMsg(dhcpv6.MessageTypeRequest, uuidDUID, withUserClass("iPXE"), withServer(srvDUID)),
			src: linkLocal(pxeMAC), wantType: dhcpv6.MessageTypeReply, wantURL: "http://[fd00:6::1]/boot/52:54:00:a6:00:01.ipxe", wantAddr: true},
		{name: "UEFI HTTP boot of an HTTPBoot host", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(httpMAC), withArch(iana.Arch(16)), withVendorClass("HTTPClient:Arch:00016:UNDI:003000")),
			src: linkLocal(httpMAC), wantType: dhcpv6.MessageTypeAdvertise, wantURL: "http://[fd00:6::1]/ipxe6/ipxe.efi", wantAddr: true, wantVC: true},
		{name: "UEFI HTTP boot of a PXE host: address only", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC), withArch(iana.Arch(16))),
			src: linkLocal(pxeMAC), wantType: dhcpv6.MessageTypeAdvertise, wantAddr: true},
		{name: "firmware PXE of an HTTPBoot host (the BMC's PXE override)", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(httpMAC), withArch(iana.EFI_X86_64)),
			src: linkLocal(httpMAC), wantType: dhcpv6.MessageTypeAdvertise, wantURL: "tftp://[fd00:6::1]/ipxe.efi", wantAddr: true},
		{name: "host not network booting: address only", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(diskMAC), withArch(iana.EFI_X86_64)),
			src: linkLocal(diskMAC), wantType: dhcpv6.MessageTypeAdvertise, wantAddr: true},
		{name: "an OS (no arch, no class): address only", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC)),
			src: linkLocal(pxeMAC), wantType: dhcpv6.MessageTypeAdvertise, wantAddr: true},
		{name: "information-request gets the boot URL, no address", msg: func() *dhcpv6.Message {
			m := &dhcpv6.Message{MessageType: dhcpv6.MessageTypeInformationRequest}
			m.AddOption(dhcpv6.OptClientID(uuidDUID))
			m.AddOption(&dhcpv6.OptUserClass{UserClasses: [][]byte{[]byte("iPXE")}})
			return m
		}(), src: linkLocal(pxeMAC), wantType: dhcpv6.MessageTypeReply, wantURL: "http://[fd00:6::1]/boot/52:54:00:a6:00:01.ipxe"},
		{name: "relayed, MAC from option 79", msg: func() dhcpv6.DHCPv6 {
			r, _ := dhcpv6.EncapsulateRelay(clientMsg(dhcpv6.MessageTypeSolicit, uuidDUID, withArch(iana.EFI_X86_64)),
				dhcpv6.MessageTypeRelayForward, net.ParseIP("2001:db8:1::1"), net.ParseIP("2001:db8:1::99"))
			r.AddOption(dhcpv6.OptClientLinkLayerAddress(iana.HWTypeEthernet, pxeMAC))
			r.AddOption(dhcpv6.OptInterfaceID([]byte("eth7")))
			return r
		}(), src: netip.MustParseAddr("2001:db8:1::1"), wantType: dhcpv6.MessageTypeAdvertise, wantURL: "tftp://[fd00:6::1]/ipxe.efi", wantAddr: true},
		{name: "unknown MAC", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(unknMAC), withArch(iana.EFI_X86_64)), src: linkLocal(unknMAC), drop: "unknown_host"},
		{name: "not accepted", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(newMAC), withArch(iana.EFI_X86_64)), src: linkLocal(newMAC), drop: "unknown_host"},
		{name: "no MAC anywhere", msg: clientMsg(dhcpv6.MessageTypeSolicit, uuidDUID), src: netip.MustParseAddr("fd00:6::55"), drop: "no_mac"},
		{name: "request for another server", msg: clientMsg(dhcpv6.MessageTypeRequest, llt(pxeMAC), withServer([]byte{0, 3, 0, 1, 9, 9, 9, 9, 9, 9})), src: linkLocal(pxeMAC), drop: "other_server"},
		{name: "request without server ID", msg: clientMsg(dhcpv6.MessageTypeRequest, llt(pxeMAC)), src: linkLocal(pxeMAC), drop: "other_server"},
		{name: "solicit naming a server", msg: clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC), withServer(srvDUID)), src: linkLocal(pxeMAC), drop: "invalid"},
		{name: "no client ID", msg: clientMsg(dhcpv6.MessageTypeSolicit, nil), src: linkLocal(pxeMAC), drop: "invalid"},
		{name: "a server's message", msg: &dhcpv6.Message{MessageType: dhcpv6.MessageTypeAdvertise}, src: linkLocal(pxeMAC), drop: "not_client_message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(t)
			res := s.handle(context.Background(), tc.msg, tc.src)
			if res.drop != tc.drop {
				t.Fatalf("drop %q, want %q", res.drop, tc.drop)
			}
			if tc.drop != "" {
				return
			}
			// The wire form must parse back.
			d, err := dhcpv6.FromBytes(res.reply.ToBytes())
			if err != nil {
				t.Fatal(err)
			}
			if tc.msg.IsRelay() != d.IsRelay() {
				t.Fatalf("relayed %v, reply relayed %v", tc.msg.IsRelay(), d.IsRelay())
			}
			m := inner(t, d)
			if m.MessageType != tc.wantType {
				t.Errorf("type %v, want %v", m.MessageType, tc.wantType)
			}
			if got := m.Options.BootFileURL(); got != tc.wantURL {
				t.Errorf("boot file URL %q, want %q", got, tc.wantURL)
			}
			if a := addrOf(m); a.IsValid() != tc.wantAddr || (a.IsValid() && !s.opts.Range.Contains(a)) {
				t.Errorf("address %v, want one from the range: %v", a, tc.wantAddr)
			}
			if got := len(m.Options.VendorClass(enterprisePXE)) > 0; got != tc.wantVC {
				t.Errorf("vendor class echoed %v, want %v", got, tc.wantVC)
			}
			if sid := m.Options.ServerID(); sid == nil || string(sid.ToBytes()) != string(srvDUID) {
				t.Errorf("server ID %v", sid)
			}
			if m.Options.ClientID() == nil {
				t.Errorf("no client ID")
			}
			if in, err := tc.msg.GetInnerMessage(); err != nil || m.TransactionID != in.TransactionID {
				t.Errorf("transaction ID %v, want the request's", m.TransactionID)
			}
		})
	}
}

// The firmware (DUID-LLT) and iPXE (DUID-UUID, MAC from its link-local
// address) of one host share its address; the DUID+IAID then finds the
// MAC without the link-local address; a Release frees the address.
func TestLeasesByMACAndDUID(t *testing.T) {
	s := testServer(t)
	ctx := context.Background()
	fw := inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC), withArch(iana.EFI_X86_64)), linkLocal(pxeMAC)).reply)
	ipxe := inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeRequest, uuidDUID, withUserClass("iPXE"), withServer(srvDUID)), linkLocal(pxeMAC)).reply)
	if a, b := addrOf(fw), addrOf(ipxe); !a.IsValid() || a != b {
		t.Fatalf("firmware got %v, iPXE %v: want the same address", a, b)
	}
	other := inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeSolicit, llt(httpMAC)), linkLocal(httpMAC)).reply)
	if addrOf(other) == addrOf(fw) {
		t.Fatalf("two hosts got %v", addrOf(fw))
	}
	// A Renew from a global source address: the DUID+IAID names the MAC.
	renew := s.handle(ctx, clientMsg(dhcpv6.MessageTypeRenew, uuidDUID, withServer(srvDUID)), netip.MustParseAddr("fd00:6::1:5"))
	if renew.drop != "" || addrOf(inner(t, renew.reply)) != addrOf(fw) {
		t.Fatalf("renew: drop %q, reply %v", renew.drop, renew.reply)
	}
	rel := clientMsg(dhcpv6.MessageTypeRelease, llt(pxeMAC), withServer(srvDUID))
	rel.UpdateOption(&dhcpv6.OptIANA{IaId: [4]byte{0, 0, 0, 7}, Options: dhcpv6.IdentityOptions{Options: dhcpv6.Options{&dhcpv6.OptIAAddress{IPv6Addr: addrOf(fw).AsSlice()}}}})
	if res := s.handle(ctx, rel, linkLocal(pxeMAC)); res.drop != "" {
		t.Fatalf("release dropped: %s", res.drop)
	}
	if s.leases.owns(pxe.MACKey(pxeMAC), addrOf(fw)) {
		t.Fatalf("address still leased after Release")
	}
}

// TestAddressOfOnlyAfterReply: the boot binding (AddressOf) holds a
// MAC's address once a Reply gave it, not after an Advertise, and not
// after a Release.
func TestAddressOfOnlyAfterReply(t *testing.T) {
	s := testServer(t)
	ctx := context.Background()
	adv := inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC), withArch(iana.EFI_X86_64)), linkLocal(pxeMAC)).reply)
	if a, ok := s.AddressOf(pxeMAC); ok {
		t.Fatalf("after an Advertise (of %v) AddressOf says %v", addrOf(adv), a)
	}
	rep := inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeRequest, llt(pxeMAC), withServer(srvDUID)), linkLocal(pxeMAC)).reply)
	if a, ok := s.AddressOf(pxeMAC); !ok || a != addrOf(rep) || a != addrOf(adv) {
		t.Fatalf("after the Reply AddressOf = %v, %t; want the leased %v", a, ok, addrOf(rep))
	}
	if a, ok := s.AddressOf(httpMAC); ok {
		t.Fatalf("a MAC that never asked is bound to %v", a)
	}
	rel := clientMsg(dhcpv6.MessageTypeRelease, llt(pxeMAC), withServer(srvDUID))
	rel.UpdateOption(&dhcpv6.OptIANA{IaId: [4]byte{0, 0, 0, 7}, Options: dhcpv6.IdentityOptions{Options: dhcpv6.Options{&dhcpv6.OptIAAddress{IPv6Addr: addrOf(rep).AsSlice()}}}})
	if res := s.handle(ctx, rel, linkLocal(pxeMAC)); res.drop != "" {
		t.Fatalf("release dropped: %s", res.drop)
	}
	if a, ok := s.AddressOf(pxeMAC); ok {
		t.Fatalf("after the Release AddressOf still says %v", a)
	}
}

// TestReservedAddress: a Host's spec.network.address6 is its lease (not
// one of the range), Confirm calls it on-link, and a reserved address a
// client of the range still holds is refused until that lease expires.
func TestReservedAddress(t *testing.T) {
	resMAC := net.HardwareAddr{0x52, 0x54, 0, 0xa6, 0, 9}
	reserved := netip.MustParsePrefix("fd00:6::50/64")
	s := testServer(t, pxe.HostRecord{Name: "reserved", MAC: resMAC, PXE: true, Accepted: true, IP6: reserved})
	ctx := context.Background()
	adv := inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeSolicit, llt(resMAC), withArch(iana.EFI_X86_64)), linkLocal(resMAC)).reply)
	rep := inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeRequest, llt(resMAC), withServer(srvDUID)), linkLocal(resMAC)).reply)
	if addrOf(adv) != reserved.Addr() || addrOf(rep) != reserved.Addr() {
		t.Fatalf("advertised %v, replied %v; want the reservation %v", addrOf(adv), addrOf(rep), reserved.Addr())
	}
	if a, ok := s.AddressOf(resMAC); !ok || a != reserved.Addr() {
		t.Fatalf("AddressOf = %v, %t; want %v", a, ok, reserved.Addr())
	}
	confirm := clientMsg(dhcpv6.MessageTypeConfirm, llt(resMAC))
	confirm.UpdateOption(&dhcpv6.OptIANA{IaId: [4]byte{0, 0, 0, 7}, Options: dhcpv6.IdentityOptions{Options: dhcpv6.Options{&dhcpv6.OptIAAddress{IPv6Addr: reserved.Addr().AsSlice()}}}})
	res := s.handle(ctx, confirm, linkLocal(resMAC))
	if res.drop != "" {
		t.Fatalf("confirm dropped: %s", res.drop)
	}
	if st := res.reply.(*dhcpv6.Message).Options.Status(); st == nil || st.StatusCode != iana.StatusSuccess {
		t.Fatalf("confirm of the reserved address: %v; want success (on link)", st)
	}

	// A reservation made for an address of the range another MAC holds.
	now := time.Now()
	ls := newLeaseStore(Range{Start: netip.MustParseAddr("fd00:6::100"), End: netip.MustParseAddr("fd00:6::1ff")}, func() time.Time { return now })
	held, err := ls.acquire("aa", "k1", time.Hour, true, netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.acquire("bb", "k2", time.Hour, true, held); !errors.Is(err, errReservedInUse) {
		t.Fatalf("reserving %v while another MAC holds it: %v, want errReservedInUse", held, err)
	}
	now = now.Add(2 * time.Hour)
	if a, err := ls.acquire("bb", "k2", time.Hour, true, held); err != nil || a != held {
		t.Fatalf("after the other lease expired: %v, %v; want %v", a, err, held)
	}
	if a, ok := ls.addressOf("aa"); ok {
		t.Fatalf("the expired holder still has %v", a)
	}
}

// TestOnBoundAndRestore: OnBound hears of a lease when a Reply binds it,
// not of an Advertise, and not again for a renewal within a quarter of
// the lease time; a server restored from those leases gives each MAC its
// address again.
func TestOnBoundAndRestore(t *testing.T) {
	var bound []Lease
	s := testServer(t)
	s.opts.OnBound = func(l Lease) { bound = append(bound, l) }
	ctx := context.Background()
	inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC), withArch(iana.EFI_X86_64)), linkLocal(pxeMAC)).reply)
	if len(bound) != 0 {
		t.Fatalf("an Advertise was reported: %+v", bound)
	}
	rep := inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeRequest, llt(pxeMAC), withServer(srvDUID)), linkLocal(pxeMAC)).reply)
	if len(bound) != 1 || bound[0].Addr != addrOf(rep) || bound[0].MAC.String() != pxeMAC.String() || len(bound[0].DUID) == 0 ||
		bound[0].Expires.Before(time.Now().Add(s.opts.LeaseTime-time.Minute)) {
		t.Fatalf("after the Reply of %v OnBound got %+v", addrOf(rep), bound)
	}
	inner(t, s.handle(ctx, clientMsg(dhcpv6.MessageTypeRenew, llt(pxeMAC), withServer(srvDUID)), linkLocal(pxeMAC)).reply)
	if len(bound) != 1 {
		t.Fatalf("a renewal right away was reported again: %+v", bound)
	}

	restored := testServer(t)
	restored.leases = newLeaseStore(restored.opts.Range, time.Now)
	for _, l := range append(bound, Lease{MAC: httpMAC, Addr: netip.MustParseAddr("fd00:9::1"), Expires: time.Now().Add(time.Hour)}) {
		restored.leases.seed(pxe.MACKey(l.MAC), l.Addr, l.Expires)
	}
	if a, ok := restored.AddressOf(pxeMAC); !ok || a != addrOf(rep) {
		t.Fatalf("restored AddressOf = %v, %t; want %v", a, ok, addrOf(rep))
	}
	if a, ok := restored.AddressOf(httpMAC); ok {
		t.Fatalf("a lease outside the range was restored: %v", a)
	}
	again := inner(t, restored.handle(ctx, clientMsg(dhcpv6.MessageTypeSolicit, llt(pxeMAC), withArch(iana.EFI_X86_64)), linkLocal(pxeMAC)).reply)
	if addrOf(again) != addrOf(rep) {
		t.Fatalf("after the restart the MAC was offered %v, want its %v", addrOf(again), addrOf(rep))
	}
}

func TestMACFromEUI64(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string
	}{
		{"fe80::5054:ff:fea6:1", "52:54:00:a6:00:01"},
		{"fe80::1", ""},              // not EUI-64
		{"fd00::5054:ff:fea6:1", ""}, // not link-local
		{"fe80::ff:fe00:1", "02:00:00:00:00:01"},
	} {
		got := macFromEUI64(netip.MustParseAddr(tc.addr))
		if (got == nil && tc.want != "") || (got != nil && got.String() != tc.want) {
			t.Errorf("%s: %v, want %q", tc.addr, got, tc.want)
		}
	}
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"fd00::100-fd00::1ff", true},
		{"fd00::100 - fd00::100", true},
		{"fd00::1ff-fd00::100", false},
		{"fd00::100-fd00::1:0", false}, // not in one /112
		{"10.0.0.1-10.0.0.9", false},
		{"fd00::1", false},
	} {
		if _, err := ParseRange(tc.in); (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.in, err, tc.ok)
		}
	}
}
