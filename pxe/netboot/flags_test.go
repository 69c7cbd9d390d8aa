package netboot_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/netboot"
)

func parse(t *testing.T, args ...string) (netboot.Options, error) {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	var o netboot.Options
	netboot.BindFlags(fs, &o)
	return o, fs.Parse(args)
}

func TestFlagDefaultsAreOff(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.Enabled() || o.DHCP || o.TFTP || o.HTTPBoot || o.Discovery {
		t.Fatalf("a service is on by default: %+v", o)
	}
	want := netboot.DefaultOptions()
	if o.DHCPMode != want.DHCPMode || o.TFTPRoot != "/usr/lib/ipxe" || o.HTTPAddr != ":80" || o.LeaseTime != time.Hour ||
		o.DHCPListen.String() != "0.0.0.0:67" || o.TFTPListen.String() != "0.0.0.0:69" || o.ArtifactDir != want.ArtifactDir ||
		o.TFTPMaxPerSource != 8 || o.TFTPFirstAckTimeout != 4*time.Second || o.HTTPMaxConns != 16384 || o.HTTPMaxConnsPerSource != 16 ||
		o.HTTPWriteStallTimeout != 30*time.Second || o.HTTPMaxRanges != 16 {
		t.Fatalf("defaults: %+v", o)
	}
}

func TestFlagsParse(t *testing.T) {
	o, err := parse(t,
		"--dhcp", "--dhcp-mode=proxy", "--dhcp-interface=eth1", "--dhcp-listen=10.0.0.1:6767",
		"--dhcp-server-ip=10.0.0.1", "--dhcp-range=10.0.0.100-10.0.0.150", "--dhcp-router=10.0.0.254",
		"--dhcp-dns=10.0.0.2,10.0.0.3", "--dhcp-lease-time=30m",
		"--dhcp-subnet=10.1.0.0/24,range=10.1.0.10-10.1.0.20,router=10.1.0.1,dns=10.1.0.2+10.1.0.3,lease=2h",
		"--dhcp-subnet=10.2.0.0/16",
		"--tftp", "--tftp-root=/srv/ipxe", "--tftp-addr=10.0.0.1:69",
		"--http-boot", "--http-addr=:8080", "--http-base-url=http://boot.example:8080", "--http-ipxe-dir=/usr/lib/ipxe",
		"--artifact-dir=/a", "--artifact-cache-dir=/c", "--artifact-allow-cidrs=127.0.0.0/8, 169.254.169.254", "--artifact-allow-cidrs=fd00:ec2::254/128",
		"--discovery", "--discovery-namespace=metal",
		"--tftp-max-per-source=2", "--tftp-first-ack-timeout=3s",
		"--http-max-conns=9000", "--http-max-conns-per-source=64", "--http-write-stall-timeout=1m", "--http-max-ranges=4",
	)
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	checks := []struct {
		name string
		ok   bool
	}{
		{"dhcp", o.DHCP && o.DHCPMode == dhcp.ModeProxy && o.Interface == "eth1" && o.DHCPListen.String() == "10.0.0.1:6767"},
		{"server ip", o.ServerIP == ip("10.0.0.1")},
		{"range", o.Range == dhcp.Range{Start: ip("10.0.0.100"), End: ip("10.0.0.150")}},
		{"router, dns, lease", o.Router == ip("10.0.0.254") && slices.Equal(o.DNS, []netip.Addr{ip("10.0.0.2"), ip("10.0.0.3")}) && o.LeaseTime == 30*time.Minute},
		{"two subnets", len(o.Subnets) == 2 && o.Subnets[0].Prefix.String() == "10.1.0.0/24" && o.Subnets[0].Range.End == ip("10.1.0.20") &&
			o.Subnets[0].Router == ip("10.1.0.1") && len(o.Subnets[0].DNS) == 2 && o.Subnets[0].LeaseTime == 2*time.Hour &&
			o.Subnets[1].Prefix.String() == "10.2.0.0/16"},
		{"tftp", o.TFTP && o.TFTPRoot == "/srv/ipxe" && o.TFTPListen.String() == "10.0.0.1:69"},
		{"http", o.HTTPBoot && o.HTTPAddr == ":8080" && o.HTTPBaseURL == "http://boot.example:8080" && o.IPXEDir == "/usr/lib/ipxe"},
		{"artifacts", o.ArtifactDir == "/a" && o.CacheDir == "/c"},
		{"artifact allow", slices.Equal(o.ArtifactAllow, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("169.254.169.254/32"), netip.MustParsePrefix("fd00:ec2::254/128")})},
		{"discovery", o.Discovery && o.DiscoveryNamespace == "metal"},
		{"tftp limits", o.TFTPMaxPerSource == 2 && o.TFTPFirstAckTimeout == 3*time.Second},
		{"http limits", o.HTTPMaxConns == 9000 && o.HTTPMaxConnsPerSource == 64 && o.HTTPWriteStallTimeout == time.Minute && o.HTTPMaxRanges == 4},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: parsed %+v", c.name, o)
		}
	}
}

func TestBadFlagValues(t *testing.T) {
	tests := []struct {
		arg, want string
	}{
		{"--dhcp-mode=relay", "full or proxy"},
		{"--dhcp-range=10.0.0.9-10.0.0.1", "in order"},
		{"--dhcp-range=10.0.0.9", "FIRST-LAST"},
		{"--dhcp-server-ip=fe80::1", "IPv4"},
		{"--dhcp-dns=10.0.0.1,nope", "IPv4"},
		{"--dhcp-listen=10.0.0.1", "ip:port"},
		{"--dhcp-subnet=10.0.0.0", "CIDR"},
		{"--dhcp-subnet=10.0.0.0/24,range=10.0.1.1-10.0.1.9", "outside"},
		{"--dhcp-subnet=10.0.0.0/24,gateway=10.0.0.1", "unknown key"},
		{"--dhcp-subnet=10.0.0.0/24,lease=-1h", "positive"},
		{"--dhcp-subnet=10.0.0.0/24,router", "key=value"},
		{"--tftp-max-per-source=0", "at least 1"},
		{"--http-max-conns=-5", "at least 1"},
		{"--http-max-conns-per-source=many", "whole number"},
		{"--http-max-ranges=0", "at least 1"},
		{"--http-write-stall-timeout=0s", "positive duration"},
		{"--tftp-first-ack-timeout=soon", "positive duration"},
		{"--artifact-allow-cidrs=127.0.0.0/33", "--artifact-allow-cidrs"},
		{"--artifact-allow-cidrs=localhost", "neither a CIDR nor an address"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			_, err := parse(t, tt.arg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // substrings of the error; none: valid
	}{
		{"nothing enabled is valid", nil, nil},
		{"dhcp without interface", []string{"--dhcp"}, []string{"--dhcp-interface"}},
		{"discovery without dhcp", []string{"--http-boot", "--discovery"}, []string{"--discovery needs --dhcp"}},
		{"discovery without namespace", []string{"--dhcp", "--dhcp-interface=x", "--discovery", "--discovery-namespace="}, []string{"--discovery-namespace"}},
		{"bad http addr", []string{"--http-boot", "--http-addr=80"}, []string{"--http-addr"}},
		{"negative discovery cap", []string{"--dhcp", "--dhcp-interface=x", "--discovery", "--discovery-max-hosts=-1"}, []string{"--discovery-max-hosts"}},
		{"negative discovery ttl", []string{"--dhcp", "--dhcp-interface=x", "--discovery", "--discovery-ttl=-1h"}, []string{"--discovery-ttl"}},
		{"discovery cap and ttl", []string{"--dhcp", "--dhcp-interface=x", "--discovery", "--discovery-max-hosts=50", "--discovery-ttl=2h"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			o.Cache = env.Manager.GetCache()
			o.Client = env.Manager.GetClient()
			err = o.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("error %v, want one mentioning %q", err, w)
				}
			}
		})
	}
}
