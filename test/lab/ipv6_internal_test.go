package lab

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"anvil.dev/anvil/test/pxetest"
)

// TestIPv6Segment: on an IPv6 segment a UEFI VM's firmware boots over
// IPv6 only (PXEv4 off), on an IPv4 one over IPv4 only; the segment takes
// UEFI hosts and a /64 only.
func TestIPv6Segment(t *testing.T) {
	for _, tc := range []struct {
		ipv6       bool
		want, lack string
	}{
		{false, "name=opt/org.tianocore/IPv6Support,string=no", "IPv4PXESupport"},
		{true, "name=opt/org.tianocore/IPv4PXESupport,string=n", "IPv6Support"},
	} {
		v := &vm{HostOptions: HostOptions{Name: "h", Firmware: pxetest.UEFI, MemoryMiB: 1024, MAC: net.HardwareAddr{0x52, 0x54, 0, 1, 2, 3}},
			dir: "/lab/hosts/h", tap: "tap0", ipv6: tc.ipv6}
		args := qemuArgs(v, BootPXE)
		if !slices.Contains(args, tc.want) || strings.Contains(strings.Join(args, " "), tc.lack) {
			t.Errorf("ipv6 %t: qemu args %q, want %q and no %s", tc.ipv6, args, tc.want, tc.lack)
		}
	}

	for _, tc := range []struct {
		name    string
		subnet6 string
		fw      pxetest.Firmware
		err     string
	}{
		{"uefi on a /64", "fd00:a11:0:1::/64", pxetest.UEFI, ""},
		{"bios", "fd00:a11:0:1::/64", pxetest.BIOS, "needs firmware"},
		{"not a /64", "fd00:a11::/48", pxetest.UEFI, "need an IPv6 /64"},
		{"IPv4", "10.1.0.0/24", pxetest.UEFI, "need an IPv6 /64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Dir: t.TempDir(), Subnet6: netip.MustParsePrefix(tc.subnet6), Hosts: []HostOptions{{Name: "a", Firmware: tc.fw}}}
			err := o.defaults()
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("defaults: %v, want an error with %q", err, tc.err)
			}
		})
	}
}
