package delivery

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/pxe/httpboot"
)

func TestBaseURL(t *testing.T) {
	tests := []struct {
		name     string
		explicit string
		local    net.Addr
		tls      bool // the request came over HTTPS
		want     string
		wantErr  bool
	}{
		{"explicit wins", "http://boot.example:8080/", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, false, "http://boot.example:8080", false},
		{"port 80 is left out", "", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, false, "http://10.0.0.1", false},
		{"other ports are kept", "", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 8080}, false, "http://10.0.0.1:8080", false},
		{"IPv6", "", &net.TCPAddr{IP: net.ParseIP("fd00::1"), Port: 80}, false, "http://[fd00::1]", false},
		{"IPv4-mapped IPv6 is IPv4", "", &net.TCPAddr{IP: net.ParseIP("::ffff:10.0.0.1"), Port: 81}, false, "http://10.0.0.1:81", false},
		{"HTTPS: port 443 is left out", "", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 443}, true, "https://10.0.0.1", false},
		{"HTTPS: port 80 is kept", "", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, true, "https://10.0.0.1:80", false},
		{"HTTPS: IPv6", "", &net.TCPAddr{IP: net.ParseIP("fd00::1"), Port: 443}, true, "https://[fd00::1]", false},
		{"no local address", "", nil, false, "", true},
		{"unspecified", "", &net.TCPAddr{IP: net.IPv4zero, Port: 80}, false, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.local != nil {
				ctx = context.WithValue(ctx, http.LocalAddrContextKey, tc.local)
			}
			if tc.tls {
				ctx = httpboot.ContextWithTLS(ctx)
			}
			got, err := baseURL(ctx, tc.explicit)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("baseURL = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// The config arguments survive iPXE's parser checks (BootScript refuses
// anything iPXE would not pass through verbatim).
func TestConfigArgsInScript(t *testing.T) {
	const cred = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCde"
	tests := []struct {
		format string
		want   []string
	}{
		{FormatButane, []string{" ignition.config.url=http://10.0.0.1/config/52:54:00:00:00:01/ignition?cred=" + cred + " ", " ignition.platform.id=metal\n"}},
		{FormatCloudInit, []string{" ds=nocloud-net;s=http://10.0.0.1/config/52:54:00:00:00:01/nocloud/" + cred + "/\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			spec := httpboot.BootSpec{KernelURL: "/artifacts/k", InitrdURLs: []string{"/artifacts/i"}, Args: []string{"console=ttyS0"}}
			spec.Args = append(spec.Args, configArgs(tc.format, "http://10.0.0.1/config/", "52:54:00:00:00:01", cred)...)
			s, err := httpboot.BootScript(spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(s), w) {
					t.Fatalf("script lacks %q:\n%s", w, s)
				}
			}
		})
	}
}

func TestRedactNoCloud(t *testing.T) {
	const cred = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCde"
	tests := []struct {
		path, want string
		ok         bool
	}{
		{"/config/52:54:00:00:00:01/nocloud/" + cred + "/user-data", "/config/52:54:00:00:00:01/nocloud/cred-sha256-" + bootcred.HashCredential(cred)[:12] + "/user-data", true},
		{"/config/52:54:00:00:00:01/nocloud/not-a-credential/meta-data", "/config/52:54:00:00:00:01/nocloud/redacted/meta-data", true},
		{"/config/52:54:00:00:00:01/ignition", "", false},
		{"/boot/52:54:00:00:00:01.ipxe", "", false},
	}
	for _, tc := range tests {
		got, ok := redactNoCloud(tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("redactNoCloud(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}

// TestWhichBootsGetACredential is the script choice for a Host the index
// lets network-boot: which boots get a credential (and which config), by
// state and boot request purpose.
func TestWhichBootsGetACredential(t *testing.T) {
	host := func(state metalv1.HostState, purpose metalv1.BootPurpose) *metalv1.Host {
		h := &metalv1.Host{Status: metalv1.HostStatus{State: state, BootRequestID: "b1"}}
		if purpose != "none" {
			h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1", Purpose: purpose}
		}
		return h
	}
	tests := []struct {
		state                      metalv1.HostState
		purpose                    metalv1.BootPurpose
		provision, wipe, rejoin, c bool
	}{
		{metalv1.HostProvisioning, metalv1.BootPurposeProvision, true, false, false, true},
		{metalv1.HostProvisioning, "", true, false, false, true}, // the CRD default
		{metalv1.HostDeprovisioning, metalv1.BootPurposeWipe, false, true, false, true},
		{metalv1.HostProvisioned, metalv1.BootPurposeRejoin, false, false, true, true},
		// The Host controller has not moved the state yet: no credential.
		{metalv1.HostProvisioning, metalv1.BootPurposeRejoin, false, false, false, false},
		{metalv1.HostDeprovisioning, metalv1.BootPurposeRejoin, false, false, false, false},
		{metalv1.HostProvisioned, metalv1.BootPurposeProvision, false, false, false, false},
		{metalv1.HostProvisioned, "none", false, false, false, false},
		{metalv1.HostAvailable, metalv1.BootPurposeRejoin, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.state)+"/"+string(tt.purpose), func(t *testing.T) {
			h := host(tt.state, tt.purpose)
			if got := [4]bool{provisioning(h), wiping(h), rejoining(h), credentialed(h)}; got != [4]bool{tt.provision, tt.wipe, tt.rejoin, tt.c} {
				t.Fatalf("provisioning, wiping, rejoining, credentialed = %v, want %v", got, [4]bool{tt.provision, tt.wipe, tt.rejoin, tt.c})
			}
		})
	}
}

// TestRejoinConfigVersion: a first boot installs spec.version; a rejoin
// the version the Node last ran, which after a rolled-back upgrade is not
// spec.version.
func TestRejoinConfigVersion(t *testing.T) {
	m := func(spec, running string) *metalv1.Machine {
		return &metalv1.Machine{Spec: metalv1.MachineSpec{Version: spec}, Status: metalv1.MachineStatus{Version: running}}
	}
	provisioningHost := &metalv1.Host{Spec: metalv1.HostSpec{BootRequest: &metalv1.BootRequest{ID: "p1", Purpose: metalv1.BootPurposeProvision}},
		Status: metalv1.HostStatus{State: metalv1.HostProvisioning}}
	rejoinHost := &metalv1.Host{Spec: metalv1.HostSpec{BootRequest: &metalv1.BootRequest{ID: "j1", Purpose: metalv1.BootPurposeRejoin}},
		Status: metalv1.HostStatus{State: metalv1.HostProvisioned}}
	tests := []struct {
		name string
		h    *metalv1.Host
		m    *metalv1.Machine
		want string
	}{
		{"first boot", provisioningHost, m("v1.36.3", ""), "v1.36.3"},
		{"provisioning again after a replacement kept status.version", provisioningHost, m("v1.37.2", "v1.36.3"), "v1.37.2"},
		{"rejoin after an upgrade", rejoinHost, m("v1.37.2", "v1.37.2"), "v1.37.2"},
		{"rejoin after a rolled-back upgrade", rejoinHost, m("v1.37.2", "v1.36.3"), "v1.36.3"},
		{"rejoin, no Node version recorded", rejoinHost, m("v1.37.2", ""), "v1.37.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kubeletVersion(tt.h, tt.m); got != tt.want {
				t.Fatalf("kubeletVersion = %s, want %s", got, tt.want)
			}
		})
	}
}

type addrs map[string]netip.Addr

func (a addrs) AddressOf(mac net.HardwareAddr) (netip.Addr, bool) {
	v, ok := a[mac.String()]
	return v, ok
}

// TestBindingByFamily: an IPv6 request is bound to the MAC's DHCPv6
// address, an IPv4 one to its DHCPv4 lease (or static address), so
// neither family's address lets the other's requests through.
func TestBindingByFamily(t *testing.T) {
	mac, _ := net.ParseMAC("52:54:00:00:00:01")
	v4, v6 := netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("fd00::105")
	static := &metalv1.Host{Spec: metalv1.HostSpec{Network: &metalv1.HostNetwork{Address: "10.0.0.9/24"}}}
	static6 := &metalv1.Host{Spec: metalv1.HostSpec{Network: &metalv1.HostNetwork{Address6: "fd00::50/64"}}}
	for _, tc := range []struct {
		name         string
		b            binding
		h            *metalv1.Host
		v6           bool
		want         netip.Addr
		ok, required bool
	}{
		{"v4 request, v4 lease", binding{leases: addrs{mac.String(): v4}, leases6: addrs{mac.String(): v6}}, nil, false, v4, true, true},
		{"v6 request, v6 lease", binding{leases: addrs{mac.String(): v4}, leases6: addrs{mac.String(): v6}}, nil, true, v6, true, true},
		{"v6 request, no v6 lease yet", binding{leases: addrs{mac.String(): v4}, leases6: addrs{}}, nil, true, netip.Addr{}, false, true},
		{"v6 request without DHCPv6: the v4 lease, which cannot match", binding{leases: addrs{mac.String(): v4}}, nil, true, v4, true, true},
		{"v4 request, DHCPv6 only: the static address", binding{leases6: addrs{mac.String(): v6}, mode: BindAddress}, static, false, netip.MustParseAddr("10.0.0.9"), true, true},
		{"v4 request, DHCPv6 only, first-request mode", binding{leases6: addrs{mac.String(): v6}, mode: BindFirstRequest}, nil, false, netip.Addr{}, false, false},
		{"v6 request, reserved address before its lease", binding{leases6: addrs{}}, static6, true, netip.MustParseAddr("fd00::50"), true, true},
		{"v6 request, static IPv6 without DHCPv6", binding{leases: addrs{mac.String(): v4}}, static6, true, netip.MustParseAddr("fd00::50"), true, true},
		{"v6 request, the lease before the reservation", binding{leases6: addrs{mac.String(): v6}}, static6, true, v6, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, required := tc.b.bound(mac, tc.h, tc.v6)
			if got != tc.want || ok != tc.ok || required != tc.required {
				t.Fatalf("bound = %v, %t, %t; want %v, %t, %t", got, ok, required, tc.want, tc.ok, tc.required)
			}
		})
	}
}

func TestIPv6BootArgs(t *testing.T) {
	mac, _ := net.ParseMAC("52:54:00:AA:0b:01")
	for _, tc := range []struct {
		name string
		in   []string
		want string
	}{
		{"adds both", []string{"console=ttyS0"}, "console=ttyS0 ip=dhcp6 BOOTIF=01-52-54-00-aa-0b-01"},
		{"the class's ip= stays", []string{"ip=eth0:dhcp6"}, "ip=eth0:dhcp6 BOOTIF=01-52-54-00-aa-0b-01"},
		{"the class's BOOTIF stays", []string{"BOOTIF=01-00-00-00-00-00-01"}, "BOOTIF=01-00-00-00-00-00-01 ip=dhcp6"},
		{"none before", nil, "ip=dhcp6 BOOTIF=01-52-54-00-aa-0b-01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			if got := strings.Join(ipv6BootArgs(tc.in, mac), " "); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Fatalf("the class's arguments were changed in place: %q", tc.in)
			}
		})
	}
}

func TestAddresses(t *testing.T) {
	now := time.Now()
	lease := func(mac, ip string, exp time.Time) metalv1.DHCPLease {
		return metalv1.DHCPLease{MAC: mac, IP: ip, ExpiresAt: metav1.NewTime(exp)}
	}
	for _, tc := range []struct {
		name string
		h    metalv1.Host
		want string
	}{
		{"static IPv4 and IPv6", metalv1.Host{Spec: metalv1.HostSpec{Network: &metalv1.HostNetwork{Address: "10.0.0.5/24", Address6: "fd00::5/64"}}}, "10.0.0.5 fd00::5"},
		{"static IPv6 only", metalv1.Host{Spec: metalv1.HostSpec{Network: &metalv1.HostNetwork{Address6: "fd00::5/64"}}}, "fd00::5"},
		{"leases when nothing is static", metalv1.Host{Spec: metalv1.HostSpec{BootMACs: []string{"52:54:00:00:00:01"}},
			Status: metalv1.HostStatus{Leases: []metalv1.DHCPLease{lease("52:54:00:00:00:01", "10.0.0.9", now.Add(time.Hour)), lease("52:54:00:00:00:01", "10.0.0.8", now.Add(-time.Hour))}}}, "10.0.0.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(addresses(&tc.h, now), " "); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
