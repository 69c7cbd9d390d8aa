package dhcp

import (
	"encoding/binary"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"golang.org/x/net/bpf"
)

// ipUDP wraps payload in an IPv4 + UDP header, as a SOCK_DGRAM packet
// socket sees it.
func ipUDP(payload []byte, dport uint16, frag uint16) []byte {
	b := make([]byte, 28+len(payload))
	b[0], b[8], b[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	binary.BigEndian.PutUint16(b[6:], frag)
	copy(b[12:], []byte{10, 0, 0, 9})
	copy(b[16:], []byte{10, 0, 0, 1})
	binary.BigEndian.PutUint16(b[20:], 68)
	binary.BigEndian.PutUint16(b[22:], dport)
	binary.BigEndian.PutUint16(b[24:], uint16(8+len(payload)))
	copy(b[28:], payload)
	return b
}

// TestReleaseDeclineFilter: the kernel filter of the frame socket passes
// RELEASE and DECLINE to port 67 and nothing else.
func TestReleaseDeclineFilter(t *testing.T) {
	raw, err := releaseDeclineFilter(67)
	if err != nil {
		t.Fatal(err)
	}
	prog, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("filter does not disassemble")
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	release := request(t, dynMAC, dhcpv4.MessageTypeRelease, withServerID(srvIP)).ToBytes()
	// insomniacslk sorts options: 50 comes before 53.
	decline := request(t, dynMAC, dhcpv4.MessageTypeDecline, withRequested("10.0.0.100"), withServerID(srvIP)).ToBytes()
	reply := request(t, dynMAC, dhcpv4.MessageTypeRelease).ToBytes()
	reply[0] = 2
	for _, tc := range []struct {
		name string
		pkt  []byte
		pass bool
	}{
		{"release", ipUDP(release, 67, 0), true},
		{"decline after option 50", ipUDP(decline, 67, 0), true},
		{"release, DF set", ipUDP(release, 67, 0x4000), true},
		{"discover", ipUDP(request(t, dynMAC, dhcpv4.MessageTypeDiscover).ToBytes(), 67, 0), false},
		{"request", ipUDP(request(t, dynMAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.100")).ToBytes(), 67, 0), false},
		{"release to port 68", ipUDP(release, 68, 0), false},
		{"boot reply", ipUDP(reply, 67, 0), false},
		{"first fragment", ipUDP(release, 67, 0x2000), false},
		{"truncated", ipUDP(release, 67, 0)[:200], false},
	} {
		n, err := vm.Run(tc.pkt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (n > 0) != tc.pass {
			t.Errorf("%s: filter returned %d, want pass=%v", tc.name, n, tc.pass)
		}
	}
}
