// Package dhcpbench measures DHCP DORA rates in two modes, relayed
// (perfdhcp, which always sets giaddr) and broadcast as firmware sends
// (Load, `anvil-bench load dhcp`), against the product path (`anvil serve
// --dhcp` answering from Host objects in a real API server), Anvil's
// pxe/dhcp alone, kea-dhcp4 (memfile) and dnsmasq, all holding the same
// reservations.
package dhcpbench

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"anvil.dev/anvil/pxe"
)

// Reservation is one host every subject knows: a MAC with a fixed address.
type Reservation struct {
	MAC      net.HardwareAddr
	IP       netip.Addr
	Hostname string
}

// Reservations returns n reservations inside prefix (a /16 or larger):
// locally administered MACs 0e:ab:00:xx:xx:xx and addresses from the
// prefix's 16th /24 on, 250 per /24, so they never collide with the two
// addresses of the veth pair.
func Reservations(prefix netip.Prefix, n int) ([]Reservation, error) {
	if prefix.Bits() > 16 || !prefix.Addr().Is4() {
		return nil, fmt.Errorf("dhcpbench: prefix %v must be an IPv4 /16 or larger", prefix)
	}
	if n > 250*200 {
		return nil, fmt.Errorf("dhcpbench: at most %d reservations", 250*200)
	}
	base := prefix.Masked().Addr().As4()
	out := make([]Reservation, n)
	for i := range n {
		a := base
		a[2] += byte(16 + i/250)
		a[3] = byte(1 + i%250)
		out[i] = Reservation{
			MAC:      net.HardwareAddr{0x0e, 0xab, 0x00, byte(i >> 16), byte(i >> 8), byte(i)},
			IP:       netip.AddrFrom4(a),
			Hostname: fmt.Sprintf("node-%05d", i),
		}
	}
	return out, nil
}

// Records turns reservations into Anvil host records (accepted, static
// address, not network booting: perfdhcp is a plain DHCP client).
func Records(rs []Reservation, bits int) []pxe.HostRecord {
	out := make([]pxe.HostRecord, len(rs))
	for i, r := range rs {
		out[i] = pxe.HostRecord{
			Name: r.Hostname, Namespace: "bench", MAC: r.MAC, Hostname: r.Hostname,
			IP: netip.PrefixFrom(r.IP, bits), Accepted: true,
		}
	}
	return out
}

// WriteMACList writes perfdhcp's -M file: one MAC per line.
func WriteMACList(path string, rs []Reservation) error {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.MAC.String())
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
