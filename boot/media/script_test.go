package media

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"anvil.dev/anvil/pxe/httpboot"
)

func TestKernelIPArg(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0, 1, 2, 3}
	for _, tc := range []struct {
		name string
		n    Net
		want string
	}{
		{"address only", Net{MAC: mac, Address: netip.MustParsePrefix("10.0.0.21/24")}, "ip=10.0.0.21:::255.255.255.0:::off"},
		{"gateway, hostname, dns", Net{MAC: mac, Address: netip.MustParsePrefix("10.1.2.3/16"), Gateway: netip.MustParseAddr("10.1.0.1"),
			Hostname: "node-1", DNS: []netip.Addr{netip.MustParseAddr("10.1.0.53"), netip.MustParseAddr("10.1.0.54"), netip.MustParseAddr("10.1.0.55")}},
			"ip=10.1.2.3::10.1.0.1:255.255.0.0:node-1::off:10.1.0.53:10.1.0.54"},
		{"hostname with a colon dropped", Net{MAC: mac, Address: netip.MustParsePrefix("10.0.0.2/8"), Hostname: "a:b"}, "ip=10.0.0.2:::255.0.0.0:::off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KernelIPArg(tc.n); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScript(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0, 0xab, 2, 3}
	n := Net{MAC: mac, Address: netip.MustParsePrefix("10.0.0.21/24"), Gateway: netip.MustParseAddr("10.0.0.1"), DNS: []netip.Addr{netip.MustParseAddr("10.0.0.53")}}
	boot, err := httpboot.BootScript(httpboot.BootSpec{KernelURL: "/artifacts/vmlinuz", InitrdURLs: []string{"/artifacts/initrd", "https://mirror.example/x.img"},
		Args: []string{"console=ttyS0", "ignition.config.url=http://10.0.0.1/config/abc"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		n       Net
		base    string
		boot    []byte
		want    []string // lines that must be there
		wantErr string
	}{
		{name: "boot script", n: n, base: "http://10.0.0.1/", boot: boot, want: []string{
			"#!ipxe",
			"iseq ${net${idx}/mac} 52:54:00:ab:02:03 && goto found ||",
			"set net${idx}/ip 10.0.0.21",
			"set net${idx}/netmask 255.255.255.0",
			"set net${idx}/gateway 10.0.0.1",
			"set dns 10.0.0.53",
			"ifopen net${idx} || goto nonic",
			"kernel http://10.0.0.1/artifacts/vmlinuz initrd=initrd0 initrd=initrd1 console=ttyS0 ignition.config.url=http://10.0.0.1/config/abc ip=10.0.0.21::10.0.0.1:255.255.255.0:::off:10.0.0.53 BOOTIF=01-52-54-00-ab-02-03",
			"initrd --name initrd0 http://10.0.0.1/artifacts/initrd",
			"initrd --name initrd1 https://mirror.example/x.img",
			"boot",
		}},
		{name: "exit script passes through", n: n, base: "http://10.0.0.1", boot: httpboot.ExitScript(), want: []string{"exit 1"}},
		{name: "unknown host retries over HTTP", n: Net{MAC: mac, Address: n.Address}, base: "https://anvil.example:8443", boot: httpboot.UnknownHostScript(mac, 0),
			want: []string{"chain --replace --autofree https://anvil.example:8443/boot/52:54:00:ab:02:03.ipxe"}},
		{name: "no address", n: Net{MAC: mac}, base: "http://x", boot: boot, wantErr: "spec.network.address"},
		{name: "IPv6 address", n: Net{MAC: mac, Address: netip.MustParsePrefix("fd00::2/64")}, base: "http://x", boot: boot, wantErr: "spec.network.address"},
		{name: "bad base", n: n, base: "ftp://x", boot: boot, wantErr: "base URL"},
		{name: "not a script", n: n, base: "http://x", boot: []byte("kernel x"), wantErr: "#!ipxe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Script(tc.n, tc.base, tc.boot)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(got), "\n")
			for _, w := range tc.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("no line %q in\n%s", w, got)
				}
			}
		})
	}
}
