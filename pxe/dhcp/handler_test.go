package dhcp

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/pxe"
)

var (
	srvIP     = netip.MustParseAddr("10.0.0.1")
	staticMAC = "52:54:00:00:00:01"
	dynMAC    = "52:54:00:00:00:02"
	dyn2MAC   = "52:54:00:00:00:03"
	diskMAC   = "52:54:00:00:00:04" // PXE=false
	unaccMAC  = "52:54:00:00:00:05" // Accepted=false
	httpMAC   = "52:54:00:00:00:06" // BootMethodHTTP
	unknMAC   = "52:54:00:00:00:99"
	relayIP   = net.ParseIP("10.1.0.1").To4()
)

func testBackend(t testing.TB) *pxe.StaticBackend {
	return pxe.NewStaticBackend(
		pxe.HostRecord{Name: "static", MAC: mac(t, staticMAC), Hostname: "node-1", IP: netip.MustParsePrefix("10.0.0.5/24"),
			DNS: []netip.Addr{netip.MustParseAddr("10.0.0.53")}, PXE: true, Accepted: true},
		pxe.HostRecord{Name: "dyn", MAC: mac(t, dynMAC), PXE: true, Accepted: true},
		pxe.HostRecord{Name: "dyn2", MAC: mac(t, dyn2MAC), PXE: true, Accepted: true},
		pxe.HostRecord{Name: "disk", MAC: mac(t, diskMAC), IP: netip.MustParsePrefix("10.0.0.6/24"), PXE: false, Accepted: true},
		pxe.HostRecord{Name: "unaccepted", MAC: mac(t, unaccMAC), IP: netip.MustParsePrefix("10.0.0.7/24"), PXE: true, Accepted: false},
		pxe.HostRecord{Name: "http", MAC: mac(t, httpMAC), IP: netip.MustParsePrefix("10.0.0.8/24"), PXE: true, Accepted: true,
			BootMethod: pxe.BootMethodHTTP},
	)
}

type discovered struct {
	mu   sync.Mutex
	macs []string
	arch []pxe.Arch
}

func (d *discovered) fn(m net.HardwareAddr, a pxe.Arch, _ string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.macs = append(d.macs, m.String())
	d.arch = append(d.arch, a)
}

func (d *discovered) first() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.macs) == 0 {
		return ""
	}
	return d.macs[0]
}

func (d *discovered) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.macs)
}

func testServer(t testing.TB, mode Mode, mutate ...func(*Options)) *Server {
	t.Helper()
	opts := Options{
		Mode:      mode,
		Interface: "test0",
		ServerIP:  srvIP,
		Backend:   testBackend(t),
		Subnets: []Subnet{
			{Prefix: netip.MustParsePrefix("10.0.0.0/24"), Router: netip.MustParseAddr("10.0.0.254"),
				DNS:   []netip.Addr{netip.MustParseAddr("10.0.0.1")},
				Range: Range{Start: netip.MustParseAddr("10.0.0.100"), End: netip.MustParseAddr("10.0.0.110")}},
			{Prefix: netip.MustParsePrefix("10.1.0.0/24"), Router: netip.MustParseAddr("10.1.0.1"),
				Range: Range{Start: netip.MustParseAddr("10.1.0.100"), End: netip.MustParseAddr("10.1.0.110")}},
		},
		Registerer: prometheus.NewRegistry(),
	}
	for _, m := range mutate {
		m(&opts)
	}
	s, err := newServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// request builds a client packet the way a PXE ROM would.
func request(t testing.TB, m string, mt dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	base := []dhcpv4.Modifier{dhcpv4.WithHwAddr(mac(t, m)), dhcpv4.WithMessageType(mt)}
	req, err := dhcpv4.New(append(base, mods...)...)
	if err != nil {
		t.Fatal(err)
	}
	// Round-trip through bytes, as the server sees it.
	req, err = dhcpv4.FromBytes(req.ToBytes())
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func withArch(code uint16) dhcpv4.Modifier {
	return dhcpv4.WithOption(dhcpv4.OptClientArch(iana.Arch(code)))
}

func withVendor(vc string) dhcpv4.Modifier { return dhcpv4.WithOption(dhcpv4.OptClassIdentifier(vc)) }

func withRequested(ip string) dhcpv4.Modifier {
	return dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.ParseIP(ip)))
}

func withServerID(ip netip.Addr) dhcpv4.Modifier {
	return dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IP(ip.AsSlice())))
}

var clientPeer = &net.UDPAddr{IP: net.IPv4zero, Port: 68}

func TestBootFileByArch(t *testing.T) {
	s := testServer(t, ModeFull)
	ctx := context.Background()
	tests := []struct {
		name     string
		mods     []dhcpv4.Modifier
		wantFile string
		wantVC   string
	}{
		{"bios", []dhcpv4.Modifier{withArch(0), withVendor("PXEClient:Arch:00000:UNDI:002001")}, "undionly.kpxe", "PXEClient"},
		{"uefi x64 (7)", []dhcpv4.Modifier{withArch(7), withVendor("PXEClient:Arch:00007:UNDI:003016")}, "snponly.efi", "PXEClient"},
		{"uefi x64 (9)", []dhcpv4.Modifier{withArch(9)}, "snponly.efi", ""},
		{"arm64 uefi", []dhcpv4.Modifier{withArch(11)}, "snp-arm64.efi", ""},
		{"arch only in vendor class", []dhcpv4.Modifier{withVendor("PXEClient:Arch:00007:UNDI:003016")}, "snponly.efi", "PXEClient"},
		// A PXE Host's firmware trying HTTP boot gets its address only (see
		// TestBootMethod for the HTTPBoot Hosts).
		{"uefi http boot of a PXE host", []dhcpv4.Modifier{withArch(16), withVendor("HTTPClient:Arch:00016:UNDI:003001")}, "", ""},
		{"ipxe user class", []dhcpv4.Modifier{withArch(0), withVendor("PXEClient:Arch:00000:UNDI:002001"),
			dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE"))}, "http://10.0.0.1/boot/52:54:00:00:00:01.ipxe", "PXEClient"},
		{"ipxe option 175", []dhcpv4.Modifier{withArch(7), dhcpv4.WithGeneric(dhcpv4.GenericOptionCode(175), []byte{0xb1, 1, 1})},
			"http://10.0.0.1/boot/52:54:00:00:00:01.ipxe", ""},
		{"not a boot client", nil, "", ""},
		{"ia32 uefi without configured file", []dhcpv4.Modifier{withArch(6)}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeDiscover, tt.mods...), clientPeer, listenDHCP)
			if res.reply == nil {
				t.Fatalf("no reply (drop=%q)", res.drop)
			}
			r := res.reply
			if got := r.BootFileNameOption(); got != tt.wantFile {
				t.Errorf("option 67 = %q, want %q", got, tt.wantFile)
			}
			if r.BootFileName != tt.wantFile {
				t.Errorf("file field = %q, want %q", r.BootFileName, tt.wantFile)
			}
			if got := r.ClassIdentifier(); got != tt.wantVC {
				t.Errorf("option 60 = %q, want %q", got, tt.wantVC)
			}
			if tt.wantFile != "" {
				if !r.ServerIPAddr.Equal(net.IP(srvIP.AsSlice())) || r.TFTPServerName() != srvIP.String() {
					t.Errorf("siaddr=%v option66=%q, want %v", r.ServerIPAddr, r.TFTPServerName(), srvIP)
				}
			} else if isSet(r.ServerIPAddr) {
				t.Errorf("siaddr %v set without a boot file", r.ServerIPAddr)
			}
			if got := r.YourIPAddr.String(); got != "10.0.0.5" {
				t.Errorf("yiaddr = %s", got)
			}
		})
	}
}

func TestFullModeStaticHost(t *testing.T) {
	s := testServer(t, ModeFull)
	ctx := context.Background()
	res := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeDiscover, withArch(0)), clientPeer, listenDHCP)
	r := res.reply
	if r == nil || r.MessageType() != dhcpv4.MessageTypeOffer {
		t.Fatalf("DISCOVER: %+v", res)
	}
	checks := map[string][2]string{
		"yiaddr":    {r.YourIPAddr.String(), "10.0.0.5"},
		"mask":      {net.IP(r.SubnetMask()).String(), "255.255.255.0"},
		"router":    {ipList(r.Router()), "10.0.0.254"},
		"dns":       {ipList(r.DNS()), "10.0.0.53"},
		"hostname":  {r.HostName(), "node-1"},
		"server id": {r.ServerIdentifier().String(), "10.0.0.1"},
		"lease":     {r.IPAddressLeaseTime(0).String(), "1h0m0s"},
		"dst":       {res.dst.String(), "255.255.255.255:68"},
	}
	for k, v := range checks {
		if v[0] != v[1] {
			t.Errorf("%s = %q, want %q", k, v[0], v[1])
		}
	}
	// REQUEST for the reserved address: ACK. For another one: NAK.
	ack := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeRequest, withArch(0), withRequested("10.0.0.5"), withServerID(srvIP)), clientPeer, listenDHCP)
	if ack.reply == nil || ack.reply.MessageType() != dhcpv4.MessageTypeAck || ack.reply.YourIPAddr.String() != "10.0.0.5" {
		t.Fatalf("REQUEST own address: %+v", ack)
	}
	nak := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.9")), clientPeer, listenDHCP)
	if nak.reply == nil || nak.reply.MessageType() != dhcpv4.MessageTypeNak || nak.dst.String() != "255.255.255.255:68" {
		t.Fatalf("REQUEST foreign address: %+v", nak)
	}
	// A REQUEST for another server's offer is not ours to answer.
	other := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.5"), withServerID(netip.MustParseAddr("10.0.0.2"))), clientPeer, listenDHCP)
	if other.reply != nil || other.drop != "other_server" {
		t.Fatalf("REQUEST to other server: %+v", other)
	}
	// RENEWING: unicast from ciaddr, answered to ciaddr.
	renew := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeRequest, dhcpv4.WithClientIP(net.ParseIP("10.0.0.5"))),
		&net.UDPAddr{IP: net.ParseIP("10.0.0.5"), Port: 68}, listenDHCP)
	if renew.reply == nil || renew.reply.MessageType() != dhcpv4.MessageTypeAck || renew.dst.String() != "10.0.0.5:68" {
		t.Fatalf("RENEW: %+v", renew)
	}
}

func ipList(ips []net.IP) string {
	var s []string
	for _, ip := range ips {
		s = append(s, ip.String())
	}
	return strings.Join(s, ",")
}

func TestFullModeDynamic(t *testing.T) {
	clk := newFakeClock()
	s := testServer(t, ModeFull, func(o *Options) { o.Now = clk.Now; o.Leases = NewMemoryLeaseStore(LeaseStoreOptions{Now: clk.Now}) })
	ctx := context.Background()

	offer := s.handle(ctx, request(t, dynMAC, dhcpv4.MessageTypeDiscover), clientPeer, listenDHCP)
	if offer.reply == nil || offer.reply.YourIPAddr.String() != "10.0.0.100" {
		t.Fatalf("DISCOVER: %+v", offer)
	}
	if isSet(offer.reply.ServerIPAddr) || offer.reply.BootFileNameOption() != "" {
		t.Errorf("non-PXE client got boot options")
	}
	// Another MAC asking for the offered address gets a different one.
	offer2 := s.handle(ctx, request(t, dyn2MAC, dhcpv4.MessageTypeDiscover, withRequested("10.0.0.100")), clientPeer, listenDHCP)
	if offer2.reply == nil || offer2.reply.YourIPAddr.String() != "10.0.0.101" {
		t.Fatalf("second DISCOVER: %+v", offer2)
	}
	// and cannot REQUEST the first one.
	nak := s.handle(ctx, request(t, dyn2MAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.100"), withServerID(srvIP)), clientPeer, listenDHCP)
	if nak.reply == nil || nak.reply.MessageType() != dhcpv4.MessageTypeNak {
		t.Fatalf("REQUEST of another MAC's address: %+v", nak)
	}
	ack := s.handle(ctx, request(t, dynMAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.100"), withServerID(srvIP)), clientPeer, listenDHCP)
	if ack.reply == nil || ack.reply.MessageType() != dhcpv4.MessageTypeAck {
		t.Fatalf("REQUEST: %+v", ack)
	}
	l, err := s.opts.Leases.Get(ctx, mac(t, dynMAC))
	if err != nil || !l.Expires.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("lease after ACK = %v, %v", l, err)
	}
	// Out-of-subnet request: NAK.
	nak = s.handle(ctx, request(t, dynMAC, dhcpv4.MessageTypeRequest, withRequested("192.168.1.5")), clientPeer, listenDHCP)
	if nak.reply == nil || nak.reply.MessageType() != dhcpv4.MessageTypeNak {
		t.Fatalf("REQUEST outside subnet: %+v", nak)
	}
	// RELEASE from the holder's own frame ends the lease (sticky: still
	// associated, but expired); the same RELEASE from another MAC's frame,
	// or with no frame seen, does nothing.
	release := request(t, dynMAC, dhcpv4.MessageTypeRelease, dhcpv4.WithClientIP(net.ParseIP("10.0.0.100")), withServerID(srvIP))
	for _, from := range []net.HardwareAddr{nil, mac(t, dyn2MAC)} {
		if rel := s.handleFrame(ctx, release, clientPeer, listenDHCP, passAny, from); rel.drop != "release_not_from_holder" {
			t.Fatalf("RELEASE from frame %v: %+v", from, rel)
		}
		if l, _ := s.opts.Leases.Get(ctx, mac(t, dynMAC)); !l.Expires.After(clk.Now()) {
			t.Fatalf("lease ended by a RELEASE from frame %v", from)
		}
	}
	rel := s.handleFrame(ctx, release, clientPeer, listenDHCP, passAny, mac(t, dynMAC))
	if rel.reply != nil || rel.drop != "" {
		t.Fatalf("RELEASE: %+v", rel)
	}
	if l, _ := s.opts.Leases.Get(ctx, mac(t, dynMAC)); l.Expires.After(clk.Now()) {
		t.Fatalf("lease still active after RELEASE: %v", l)
	}
	// DECLINE keeps the address out of the pool for everyone.
	s.handle(ctx, request(t, dyn2MAC, dhcpv4.MessageTypeDecline, withRequested("10.0.0.101")), clientPeer, listenDHCP)
	again := s.handle(ctx, request(t, dyn2MAC, dhcpv4.MessageTypeDiscover), clientPeer, listenDHCP)
	if again.reply == nil || again.reply.YourIPAddr.String() == "10.0.0.101" {
		t.Fatalf("declined address offered again: %+v", again)
	}
	// INIT-REBOOT with a free address and no lease record: ACK.
	s2 := testServer(t, ModeFull)
	reboot := s2.handle(ctx, request(t, dynMAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.105")), clientPeer, listenDHCP)
	if reboot.reply == nil || reboot.reply.MessageType() != dhcpv4.MessageTypeAck || reboot.reply.YourIPAddr.String() != "10.0.0.105" {
		t.Fatalf("INIT-REBOOT: %+v", reboot)
	}
}

func TestInform(t *testing.T) {
	s := testServer(t, ModeFull)
	res := s.handle(context.Background(), request(t, staticMAC, dhcpv4.MessageTypeInform, dhcpv4.WithClientIP(net.ParseIP("10.0.0.5"))),
		&net.UDPAddr{IP: net.ParseIP("10.0.0.5"), Port: 68}, listenDHCP)
	r := res.reply
	if r == nil || r.MessageType() != dhcpv4.MessageTypeAck || isSet(r.YourIPAddr) || r.Options.Has(dhcpv4.OptionIPAddressLeaseTime) {
		t.Fatalf("INFORM: %+v", res)
	}
	if res.dst.String() != "10.0.0.5:68" || ipList(r.DNS()) != "10.0.0.53" {
		t.Fatalf("INFORM reply dst=%v dns=%v", res.dst, r.DNS())
	}
}

func TestUnknownAndUnacceptedHosts(t *testing.T) {
	var d discovered
	clk := newFakeClock()
	s := testServer(t, ModeFull, func(o *Options) {
		o.Discovery = DiscoveryOptions{OnDiscover: d.fn, Interval: time.Minute}
		o.Now = clk.Now
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	s.disc.start(ctx, &wg)
	defer func() { cancel(); wg.Wait() }()

	for _, m := range []string{unknMAC, unknMAC, unaccMAC} {
		res := s.handle(ctx, request(t, m, dhcpv4.MessageTypeDiscover, withArch(7)), clientPeer, listenDHCP)
		if res.reply != nil || res.drop != "unknown_host" {
			t.Fatalf("%s: got %+v, want no reply", m, res)
		}
	}
	// REQUESTs are not reported (only DISCOVER).
	s.handle(ctx, request(t, unknMAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.100")), clientPeer, listenDHCP)
	// report decides while handle runs and delivers in order on one
	// goroutine: once a marker queued now arrives, any wrong report from
	// the requests above would have arrived before it.
	const markerMAC = "52:54:00:00:00:77"
	mk, _ := net.ParseMAC(markerMAC)
	s.disc.report(mk, pxe.ArchX86BIOS, "")
	waitFor(t, func() bool { return d.count() >= 3 })
	d.mu.Lock()
	macs, arch := slices.Clone(d.macs), slices.Clone(d.arch)
	d.mu.Unlock() // not held across Fatalf: the delivering goroutine needs it to stop
	if len(macs) != 3 || macs[0] != unknMAC || macs[1] != unaccMAC || arch[0] != pxe.ArchX8664UEFI || macs[2] != markerMAC {
		t.Fatalf("discovered %v %v, want %s and %s, then the marker %s", macs, arch, unknMAC, unaccMAC, markerMAC)
	}
	// After the interval the MAC is reported again.
	clk.Advance(2 * time.Minute)
	s.handle(ctx, request(t, unknMAC, dhcpv4.MessageTypeDiscover), clientPeer, listenDHCP)
	waitFor(t, func() bool { return d.count() == 4 })
	if got := testutil.ToFloat64(s.metrics.discover.WithLabelValues("duplicate")); got != 1 {
		t.Errorf("duplicate reports = %v, want 1", got)
	}
}

func TestDiscoveryRateLimit(t *testing.T) {
	var d discovered
	clk := newFakeClock()
	s := testServer(t, ModeFull, func(o *Options) {
		o.Discovery = DiscoveryOptions{OnDiscover: d.fn, PerMinute: 3}
		o.Now = clk.Now
	})
	for i := range 10 {
		m := net.HardwareAddr{0x02, 0, 0, 0, 1, byte(i)}
		s.disc.report(m, pxe.ArchX86BIOS, "")
	}
	if got := len(s.disc.events); got != 3 {
		t.Fatalf("queued %d reports, want 3 (rate limit)", got)
	}
	if got := testutil.ToFloat64(s.metrics.discover.WithLabelValues("rate_limited")); got != 7 {
		t.Fatalf("rate_limited = %v, want 7", got)
	}
}

func TestPXEFalseGetsAddressButNoBootFile(t *testing.T) {
	s := testServer(t, ModeFull)
	res := s.handle(context.Background(), request(t, diskMAC, dhcpv4.MessageTypeDiscover, withArch(0), withVendor("PXEClient:Arch:00000:UNDI:002001")), clientPeer, listenDHCP)
	if res.reply == nil || res.reply.YourIPAddr.String() != "10.0.0.6" {
		t.Fatalf("DISCOVER: %+v", res)
	}
	if f := res.reply.BootFileNameOption(); f != "" || res.reply.BootFileName != "" {
		t.Fatalf("host not meant to PXE boot got boot file %q", f)
	}
}

func TestRelay(t *testing.T) {
	s := testServer(t, ModeFull)
	ctx := context.Background()
	relayed := func(mt dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
		return request(t, dynMAC, mt, append([]dhcpv4.Modifier{dhcpv4.WithGatewayIP(relayIP),
			dhcpv4.WithOption(dhcpv4.OptRelayAgentInfo(dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(1), []byte("port7"))))}, mods...)...)
	}
	relayPeer := &net.UDPAddr{IP: relayIP, Port: 67}
	res := s.handle(ctx, relayed(dhcpv4.MessageTypeDiscover, withArch(7)), relayPeer, listenDHCP)
	r := res.reply
	if r == nil {
		t.Fatalf("relayed DISCOVER not answered: %q", res.drop)
	}
	if res.dst.String() != "10.1.0.1:67" {
		t.Errorf("reply sent to %v, want the relay 10.1.0.1:67", res.dst)
	}
	if r.YourIPAddr.String() != "10.1.0.100" || net.IP(r.SubnetMask()).String() != "255.255.255.0" || ipList(r.Router()) != "10.1.0.1" {
		t.Errorf("relayed offer: yiaddr=%v mask=%v router=%v; want the 10.1.0.0/24 subnet", r.YourIPAddr, net.IP(r.SubnetMask()), r.Router())
	}
	if !r.GatewayIPAddr.Equal(relayIP) || r.RelayAgentInfo() == nil {
		t.Errorf("giaddr %v / option 82 %v not echoed", r.GatewayIPAddr, r.RelayAgentInfo())
	}
	if r.BootFileNameOption() != "snponly.efi" {
		t.Errorf("boot file %q", r.BootFileNameOption())
	}
	nak := s.handle(ctx, relayed(dhcpv4.MessageTypeRequest, withRequested("10.0.0.100")), relayPeer, listenDHCP)
	if nak.reply == nil || nak.reply.MessageType() != dhcpv4.MessageTypeNak || nak.dst.String() != "10.1.0.1:67" || !nak.reply.IsBroadcast() {
		t.Fatalf("relayed REQUEST for the wrong subnet: %+v", nak)
	}
	// A relay on a network we do not serve: no answer.
	stray := request(t, dynMAC, dhcpv4.MessageTypeDiscover, dhcpv4.WithGatewayIP(net.ParseIP("192.168.9.1")))
	if res := s.handle(ctx, stray, relayPeer, listenDHCP); res.reply != nil || res.drop != "no_subnet" {
		t.Fatalf("unknown relay subnet: %+v", res)
	}
}

func TestProxyMode(t *testing.T) {
	s := testServer(t, ModeProxy, func(o *Options) { o.Subnets = nil })
	ctx := context.Background()
	pxeMods := []dhcpv4.Modifier{withArch(0), withVendor("PXEClient:Arch:00000:UNDI:002001"),
		dhcpv4.WithGeneric(dhcpv4.OptionClientMachineIdentifier, append([]byte{0}, make([]byte, 16)...))}

	res := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeDiscover, pxeMods...), clientPeer, listenDHCP)
	r := res.reply
	if r == nil || r.MessageType() != dhcpv4.MessageTypeOffer {
		t.Fatalf("proxy DISCOVER: %+v", res)
	}
	if isSet(r.YourIPAddr) || r.Options.Has(dhcpv4.OptionIPAddressLeaseTime) || r.Options.Has(dhcpv4.OptionSubnetMask) {
		t.Errorf("proxy offer carries address information: yiaddr=%v", r.YourIPAddr)
	}
	if r.ClassIdentifier() != "PXEClient" || r.BootFileNameOption() != "undionly.kpxe" || r.ServerIdentifier().String() != "10.0.0.1" {
		t.Errorf("proxy offer: vc=%q file=%q sid=%v", r.ClassIdentifier(), r.BootFileNameOption(), r.ServerIdentifier())
	}
	if got := r.Options.Get(dhcpv4.OptionVendorSpecificInformation); string(got) != string([]byte{6, 1, 8, 255}) {
		t.Errorf("option 43 = %v", got)
	}
	if !r.Options.Has(dhcpv4.OptionClientMachineIdentifier) {
		t.Errorf("option 97 not echoed")
	}
	if res.dst.String() != "255.255.255.255:68" {
		t.Errorf("dst %v", res.dst)
	}
	// The client's REQUEST to the real DHCP server (port 67) is not ours.
	if res := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeRequest, pxeMods...), clientPeer, listenDHCP); res.reply != nil {
		t.Errorf("proxy answered a REQUEST on port 67")
	}
	// Boot server request on port 4011: ACK unicast back to the client.
	peer := &net.UDPAddr{IP: net.ParseIP("10.0.0.77"), Port: 68}
	ack := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeRequest, append(pxeMods, dhcpv4.WithClientIP(peer.IP))...), peer, listenPXE)
	if ack.reply == nil || ack.reply.MessageType() != dhcpv4.MessageTypeAck || ack.dst != peer || ack.reply.BootFileNameOption() != "undionly.kpxe" {
		t.Fatalf("port 4011 REQUEST: %+v", ack)
	}
	// iPXE behind the proxy gets the script.
	ipxe := s.handle(ctx, request(t, staticMAC, dhcpv4.MessageTypeDiscover, append(pxeMods, dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE")))...), clientPeer, listenDHCP)
	if ipxe.reply == nil || ipxe.reply.BootFileNameOption() != "http://10.0.0.1/boot/52:54:00:00:00:01.ipxe" {
		t.Fatalf("iPXE via proxy: %+v", ipxe)
	}
	// Non-PXE clients, hosts not meant to PXE boot and unknown hosts: silence.
	for name, req := range map[string]*dhcpv4.DHCPv4{
		"non-pxe client": request(t, staticMAC, dhcpv4.MessageTypeDiscover),
		"pxe=false":      request(t, diskMAC, dhcpv4.MessageTypeDiscover, pxeMods...),
		"unknown":        request(t, unknMAC, dhcpv4.MessageTypeDiscover, pxeMods...),
		"unaccepted":     request(t, unaccMAC, dhcpv4.MessageTypeDiscover, pxeMods...),
	} {
		if res := s.handle(ctx, req, clientPeer, listenDHCP); res.reply != nil {
			t.Errorf("%s: proxy answered", name)
		}
	}
}

func TestInvalidPacketsDropped(t *testing.T) {
	s := testServer(t, ModeFull)
	ctx := context.Background()
	reply, _ := dhcpv4.NewReplyFromRequest(request(t, staticMAC, dhcpv4.MessageTypeDiscover))
	noType := request(t, staticMAC, dhcpv4.MessageTypeDiscover)
	noType.Options.Del(dhcpv4.OptionDHCPMessageType)
	tokenRing := request(t, staticMAC, dhcpv4.MessageTypeDiscover)
	tokenRing.HWType = iana.HWTypeExperimentalEthernet
	for name, req := range map[string]*dhcpv4.DHCPv4{"reply": reply, "bootp": noType, "hwtype": tokenRing} {
		if res := s.handle(ctx, req, clientPeer, listenDHCP); res.reply != nil || res.drop == "" {
			t.Errorf("%s: %+v", name, res)
		}
	}
}

func TestProcessCountsMalformed(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := testServer(t, ModeFull, func(o *Options) { o.Registerer = reg })
	for _, b := range [][]byte{nil, {1, 2, 3}, make([]byte, 240)} {
		buf := make([]byte, maxPacket)
		n := copy(buf, b)
		s.process(context.Background(), packet{buf: &buf, n: n, peer: clientPeer}, passMemory)
	}
	if got := testutil.ToFloat64(s.metrics.dropped.WithLabelValues("malformed")); got != 3 {
		t.Fatalf("malformed drops = %v, want 3", got)
	}
	if n, err := testutil.GatherAndCount(reg, "anvil_dhcp_packets_dropped_total"); err != nil || n == 0 {
		t.Fatalf("metric not in the passed registry: %d, %v", n, err)
	}
}

func TestProcessRecoversFromPanic(t *testing.T) {
	s := testServer(t, ModeFull, func(o *Options) { o.Backend = panicBackend{} })
	buf := make([]byte, maxPacket)
	n := copy(buf, request(t, staticMAC, dhcpv4.MessageTypeDiscover).ToBytes())
	s.process(context.Background(), packet{buf: &buf, n: n, peer: clientPeer}, passMemory)
	if got := testutil.ToFloat64(s.metrics.dropped.WithLabelValues("panic")); got != 1 {
		t.Fatalf("panic drops = %v, want 1", got)
	}
}

type panicBackend struct{}

func (panicBackend) Lookup(context.Context, net.HardwareAddr) (pxe.HostRecord, error) {
	panic("backend bug")
}

func TestOptionsValidation(t *testing.T) {
	base := func() Options {
		return Options{Interface: "x", ServerIP: srvIP, Backend: testBackend(t),
			Subnets: []Subnet{{Prefix: netip.MustParsePrefix("10.0.0.0/24")}}}
	}
	tests := map[string]func(*Options){
		"no backend": func(o *Options) { o.Backend = nil },
		"no subnet":  func(o *Options) { o.Subnets = nil },
		"bad mode":   func(o *Options) { o.Mode = "relay" },
		"range outside": func(o *Options) {
			o.Subnets[0].Range = Range{netip.MustParseAddr("10.9.0.1"), netip.MustParseAddr("10.9.0.2")}
		},
		"reversed range": func(o *Options) {
			o.Subnets[0].Range = Range{netip.MustParseAddr("10.0.0.9"), netip.MustParseAddr("10.0.0.2")}
		},
		"ipv6 server ip":     func(o *Options) { o.ServerIP = netip.MustParseAddr("::1") },
		"long boot filename": func(o *Options) { o.Boot.BIOSFile = strings.Repeat("x", 128) },
	}
	if _, err := newServer(base()); err != nil {
		t.Fatalf("valid options rejected: %v", err)
	}
	for name, mutate := range tests {
		o := base()
		mutate(&o)
		if _, err := newServer(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReadDropsWhenQueueFull: the read loop never blocks on busy workers;
// packets beyond their queue are dropped and counted, by queue and type,
// and a full queue of one kind leaves the other alone.
func TestReadDropsWhenQueueFull(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mt        dhcpv4.MessageType
		queue     queueKind
		typ       string
		full, not func(*Server) chan packet
	}{
		{"discover to the memory queue", dhcpv4.MessageTypeDiscover, queueMemory, "discover",
			func(s *Server) chan packet { return s.memQ }, func(s *Server) chan packet { return s.writeQ }},
		{"request to the memory queue", dhcpv4.MessageTypeRequest, queueMemory, "request",
			func(s *Server) chan packet { return s.memQ }, func(s *Server) chan packet { return s.writeQ }},
		{"release to the write queue", dhcpv4.MessageTypeRelease, queueWrite, "release",
			func(s *Server) chan packet { return s.writeQ }, func(s *Server) chan packet { return s.memQ }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(t, ModeFull, func(o *Options) { o.QueueSize, o.DiscoverQueueSize = 2, 2 })
			conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.read(ctx, conn, listenDHCP) }() // no workers: nothing drains the queues
			client, err := net.DialUDP("udp4", nil, conn.LocalAddr().(*net.UDPAddr))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			pkt := request(t, staticMAC, tc.mt).ToBytes()
			for range 6 {
				if _, err := client.Write(pkt); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, func() bool { return testutil.ToFloat64(s.metrics.dropped.WithLabelValues("queue_full")) == 4 })
			if got := testutil.ToFloat64(s.metrics.queueFull.WithLabelValues(string(tc.queue), tc.typ)); got != 4 {
				t.Errorf("anvil_dhcp_queue_full_total{queue=%q,type=%q} = %v, want 4", tc.queue, tc.typ, got)
			}
			if n := len(tc.full(s)); n != 2 {
				t.Errorf("queue holds %d packets, want 2", n)
			}
			if n := len(tc.not(s)); n != 0 {
				t.Errorf("the other queue holds %d packets, want 0", n)
			}
			cancel()
			conn.Close()
			if err := <-done; err != nil {
				t.Fatalf("read: %v", err)
			}
		})
	}
}
