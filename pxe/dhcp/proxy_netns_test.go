package dhcp

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"

	"anvil.dev/anvil/test/netnstest"
)

// TestProxyModeNextToDnsmasq runs dnsmasq (addresses, no boot options) and
// our ProxyDHCP on the same segment. A plain OS client (udhcpc) gets
// dnsmasq's address and no boot file: the proxy stays silent. A PXE client
// (the PXE 2.1 ROM exchange, scripted with UDP sockets because dhclient and
// udhcpc do not merge ProxyDHCP offers; the QEMU test covers a real ROM)
// sees both offers, takes dnsmasq's address, asks the proxy on port 4011
// and ends up with our boot file.
func TestProxyModeNextToDnsmasq(t *testing.T) {
	netnstest.RequireCommands(t, "busybox", "dnsmasq", "ip")
	e := newRealEnv(t)
	p := e.pair
	proxyIP := e.addr(2)
	p.Srv.Exec(t, "ip", "addr", "add", proxyIP.String()+"/24", "dev", p.SrvIf)

	var dnsmasqOut netnstest.SyncBuffer
	p.Srv.Start(t, &dnsmasqOut, &dnsmasqOut, "dnsmasq", "--no-daemon", "--port=0", "--conf-file=/dev/null",
		"--log-dhcp", "--no-ping", "--interface="+p.SrvIf, "--bind-interfaces", // sets SO_REUSEADDR/SO_REUSEPORT on port 67, so the proxy can bind it too
		"--pid-file="+filepath.Join(e.dir, "dnsmasq.pid"),
		"--dhcp-leasefile="+filepath.Join(e.dir, "dnsmasq.leases"),
		fmt.Sprintf("--dhcp-range=%s,%s,255.255.255.0,1h", e.addr(150), e.addr(160)))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dnsmasq:\n%s", dnsmasqOut.String())
		}
	})
	if !netnstest.WaitFor(10*time.Second, func() bool { return strings.Contains(dnsmasqOut.String(), "DHCP, IP range") }) {
		t.Fatalf("dnsmasq did not start:\n%s", dnsmasqOut.String())
	}

	opts := e.options(t, nil)
	opts.Mode = ModeProxy
	opts.Subnets = nil
	opts.ServerIP = proxyIP
	e.start(t, opts)

	inRange := func(ip string) bool {
		a, err := netip.ParseAddr(ip)
		return err == nil && Range{Start: e.addr(150), End: e.addr(160)}.Contains(a)
	}

	t.Run("plain client gets dnsmasq only", func(t *testing.T) {
		// -B: ask for broadcast replies. dnsmasq's unicast replies to an
		// unconfigured client do not reach udhcpc over veth (measured: the
		// same happens with no proxy running).
		env, err := e.udhcpc(t, realStaticMAC, "-B")
		if err != nil {
			t.Fatal(err)
		}
		if !inRange(env["ip"]) || env["serverid"] != p.SrvIP.String() || env["boot_file"] != "" {
			t.Fatalf("ip=%q serverid=%q boot_file=%q; want a dnsmasq address and no boot file", env["ip"], env["serverid"], env["boot_file"])
		}
	})

	t.Run("pxe client", func(t *testing.T) {
		p.SetCliMAC(t, mac(t, realStaticMAC))
		pxeMods := []dhcpv4.Modifier{
			dhcpv4.WithHwAddr(mac(t, realStaticMAC)), dhcpv4.WithBroadcast(true),
			withArch(0), withVendor("PXEClient:Arch:00000:UNDI:002001"),
		}
		var conn *net.UDPConn
		must(t, p.Cli.Do(func() (err error) {
			conn, err = server4.NewIPv4UDPConn(p.CliIf, &net.UDPAddr{Port: clientPort})
			return err
		}))
		defer conn.Close()

		discover, err := dhcpv4.NewDiscovery(mac(t, realStaticMAC), pxeMods...)
		must(t, err)
		offers := exchange(t, conn, discover, &net.UDPAddr{IP: net.IPv4bcast, Port: serverPort}, 3*time.Second, 2)
		var dhcpOffer, proxyOffer *dhcpv4.DHCPv4
		for _, o := range offers {
			switch {
			case o.MessageType() != dhcpv4.MessageTypeOffer:
			case isSet(o.YourIPAddr):
				dhcpOffer = o
			case o.ClassIdentifier() == "PXEClient":
				proxyOffer = o
			}
		}
		if dhcpOffer == nil || proxyOffer == nil {
			t.Fatalf("want one address offer and one ProxyDHCP offer, got %d: %v", len(offers), offers)
		}
		if !inRange(dhcpOffer.YourIPAddr.String()) || dhcpOffer.BootFileNameOption() != "" {
			t.Errorf("dnsmasq offer yiaddr=%v file=%q", dhcpOffer.YourIPAddr, dhcpOffer.BootFileNameOption())
		}
		if proxyOffer.BootFileName != "undionly.kpxe" || !proxyOffer.ServerIPAddr.Equal(net.IP(proxyIP.AsSlice())) ||
			!proxyOffer.ServerIdentifier().Equal(net.IP(proxyIP.AsSlice())) {
			t.Errorf("proxy offer file=%q siaddr=%v sid=%v", proxyOffer.BootFileName, proxyOffer.ServerIPAddr, proxyOffer.ServerIdentifier())
		}

		// Take the address from dnsmasq.
		req, err := dhcpv4.NewRequestFromOffer(dhcpOffer, pxeMods...)
		must(t, err)
		acks := exchange(t, conn, req, &net.UDPAddr{IP: net.IPv4bcast, Port: serverPort}, 3*time.Second, 1)
		var ack *dhcpv4.DHCPv4
		for _, a := range acks {
			if a.MessageType() == dhcpv4.MessageTypeAck {
				ack = a
			}
		}
		if ack == nil || !ack.YourIPAddr.Equal(dhcpOffer.YourIPAddr) {
			t.Fatalf("no ACK from dnsmasq: %v", acks)
		}
		ip := ack.YourIPAddr.String()
		p.Cli.Exec(t, "ip", "addr", "add", ip+"/24", "dev", p.CliIf)

		// Boot server request to the proxy on port 4011, as PXE ROMs and
		// iPXE do after a ProxyDHCP offer.
		// The same socket now sends from the configured address.
		bootReq, err := dhcpv4.New(append(pxeMods[:1], dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
			dhcpv4.WithClientIP(ack.YourIPAddr), withArch(0), withVendor("PXEClient:Arch:00000:UNDI:002001"))...)
		must(t, err)
		replies := exchange(t, conn, bootReq, &net.UDPAddr{IP: net.IP(proxyIP.AsSlice()), Port: 4011}, 3*time.Second, 1)
		if len(replies) != 1 || replies[0].MessageType() != dhcpv4.MessageTypeAck || replies[0].BootFileName != "undionly.kpxe" {
			t.Fatalf("port 4011 reply: %v", replies)
		}
		t.Logf("PXE client: address %s from dnsmasq, boot file %q from %v", ip, replies[0].BootFileName, replies[0].ServerIPAddr)
	})
}

// exchange sends msg to dst and collects replies with msg's transaction ID
// until want replies arrived or the timeout passed.
func exchange(t *testing.T, conn *net.UDPConn, msg *dhcpv4.DHCPv4, dst *net.UDPAddr, timeout time.Duration, want int) []*dhcpv4.DHCPv4 {
	t.Helper()
	// Retransmit like a PXE ROM does (up to 4 tries), so a reply lost to a
	// busy machine does not fail the test; replies are kept once per server.
	var out []*dhcpv4.DHCPv4
	seen := map[string]bool{}
	buf := make([]byte, maxPacket)
	for try := 0; try < 4 && len(out) < want; try++ {
		if _, err := conn.WriteToUDP(msg.ToBytes(), dst); err != nil {
			t.Fatalf("send %v: %v", msg.MessageType(), err)
		}
		deadline := time.Now().Add(timeout)
		for len(out) < want {
			_ = conn.SetReadDeadline(deadline)
			n, _, err := conn.ReadFromUDP(buf)
			if err != nil {
				break // timeout: send again
			}
			r, err := dhcpv4.FromBytes(buf[:n])
			if err != nil || r.OpCode != dhcpv4.OpcodeBootReply || r.TransactionID != msg.TransactionID {
				continue
			}
			key := r.ServerIdentifier().String() + "/" + r.MessageType().String()
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, r)
		}
	}
	return out
}
