package dhcpbench

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

func TestPackets(t *testing.T) {
	mac := net.HardwareAddr{0x0e, 0xab, 0, 0, 1, 2}
	for _, tc := range []struct {
		name    string
		msgType byte
		want    dhcpv4.MessageType
	}{
		{"discover", 1, dhcpv4.MessageTypeDiscover},
		{"request", 3, dhcpv4.MessageTypeRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPacket(tc.msgType)
			buf := p.fill(nil, 0xdeadbeef, mac, [4]byte{198, 18, 16, 1}, [4]byte{198, 18, 0, 1})
			if len(buf) != minPacket {
				t.Errorf("length %d, want %d (BOOTP minimum)", len(buf), minPacket)
			}
			// An independent parser must read it as firmware's packet.
			m, err := dhcpv4.FromBytes(buf)
			if err != nil {
				t.Fatal(err)
			}
			if m.OpCode != dhcpv4.OpcodeBootRequest || m.MessageType() != tc.want || m.TransactionID != [4]byte{0xde, 0xad, 0xbe, 0xef} {
				t.Errorf("op %v type %v xid %v", m.OpCode, m.MessageType(), m.TransactionID)
			}
			if !m.IsBroadcast() || !m.GatewayIPAddr.IsUnspecified() || !m.ClientIPAddr.IsUnspecified() {
				t.Errorf("want broadcast flag, giaddr 0, ciaddr 0: flags %#x giaddr %v ciaddr %v", m.Flags, m.GatewayIPAddr, m.ClientIPAddr)
			}
			if m.ClientHWAddr.String() != mac.String() {
				t.Errorf("chaddr %v", m.ClientHWAddr)
			}
			if tc.msgType == 3 {
				if got := m.RequestedIPAddress(); !got.Equal(net.IPv4(198, 18, 16, 1)) {
					t.Errorf("requested address %v", got)
				}
				if got := m.ServerIdentifier(); !got.Equal(net.IPv4(198, 18, 0, 1)) {
					t.Errorf("server identifier %v", got)
				}
			}
			// Filling a reused buffer leaves nothing of the last exchange.
			again := p.fill(buf, 1, net.HardwareAddr{1, 2, 3, 4, 5, 6}, [4]byte{}, [4]byte{})
			if m2, _ := dhcpv4.FromBytes(again); m2 == nil || m2.ClientHWAddr.String() != "01:02:03:04:05:06" {
				t.Errorf("reused buffer: %v", m2)
			}
		})
	}
}

func TestParseReply(t *testing.T) {
	offer, err := dhcpv4.New(dhcpv4.WithTransactionID([4]byte{0, 0, 0, 7}),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeOffer),
		dhcpv4.WithYourIP(net.IPv4(198, 18, 16, 9)),
		dhcpv4.WithServerIP(net.IPv4(198, 18, 0, 1)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(198, 18, 0, 1))))
	if err != nil {
		t.Fatal(err)
	}
	offer.OpCode = dhcpv4.OpcodeBootReply
	good := offer.ToBytes()
	r, err := parseReply(good)
	if err != nil {
		t.Fatal(err)
	}
	if r.xid != 7 || r.msgType != 2 || r.yiaddr != [4]byte{198, 18, 16, 9} || r.serverID != [4]byte{198, 18, 0, 1} {
		t.Errorf("parsed %+v", r)
	}
	request := newPacket(3).fill(nil, 7, net.HardwareAddr{1, 2, 3, 4, 5, 6}, [4]byte{}, [4]byte{})
	noType := append([]byte{}, good[:offOptions]...)
	noType = append(noType, 255)
	badCookie := append([]byte{}, good...)
	badCookie[offMagic] = 0
	truncated := append([]byte{}, good[:offOptions]...)
	truncated = append(truncated, 54, 4, 1)
	for name, b := range map[string][]byte{
		"a request": request, "too short": good[:100], "no message type": noType,
		"bad cookie": badCookie, "truncated option": truncated,
	} {
		if _, err := parseReply(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestDueCount(t *testing.T) {
	for _, tc := range []struct {
		elapsed     time.Duration
		rate, total int
		want        int
	}{
		{0, 1000, 5000, 1},                          // the first at once
		{999 * time.Microsecond, 1000, 5000, 1},     // the second at 1 ms
		{time.Millisecond, 1000, 5000, 2},           //
		{time.Second, 1000, 5000, 1001},             //
		{10 * time.Second, 1000, 5000, 5000},        // never more than total
		{500 * time.Millisecond, 30000, 1e6, 15001}, //
		{time.Second, 0, 10, 0},                     // no rate, nothing due
		{-time.Second, 10, 10, 0},
	} {
		if got := dueCount(tc.elapsed, tc.rate, tc.total); got != tc.want {
			t.Errorf("dueCount(%v, %d, %d) = %d, want %d", tc.elapsed, tc.rate, tc.total, got, tc.want)
		}
	}
}

func TestReadMACsAndPercentile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("0e:ab:00:00:00:01\n\n0e:ab:00:00:00:02\n"), 0o644)
	if m, err := ReadMACs(ok); err != nil || len(m) != 2 || m[1].String() != "0e:ab:00:00:00:02" {
		t.Errorf("ReadMACs = %v, %v", m, err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("0e:ab:00:00:00:01\nnot-a-mac\n"), 0o644)
	if _, err := ReadMACs(bad); err == nil {
		t.Error("a bad line was accepted")
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if _, err := ReadMACs(empty); err == nil {
		t.Error("an empty list was accepted")
	}
}
