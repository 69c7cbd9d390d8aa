package netguard

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestCheckHost(t *testing.T) {
	strict := Guard{}
	lab := Guard{AllowLoopback: true, AllowLinkLocal: true}
	opened := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32"), netip.MustParsePrefix("127.0.0.0/24")}}
	tests := []struct {
		host                string
		strict, lab, opened bool // accepted by each
	}{
		{"bmc-01.rack4.example.com", true, true, true},
		{"10.1.2.3", true, true, true},
		{"192.168.1.10", true, true, true},
		{"fd12::1", true, true, true},
		{"127.0.0.1", false, true, true},
		{"127.0.1.1", false, true, false},
		{"[::1]", false, true, false},
		{"::ffff:127.0.0.1", false, true, true}, // mapped v4 is the v4 address
		{"localhost", false, true, false},
		{"api.localhost.", false, true, false},
		{"169.254.1.1", false, true, false},
		{"fe80::1", false, true, false},
		{"169.254.169.254", false, false, true}, // metadata: only Allow opens it
		{"fd00:ec2::254", false, false, false},
		{"100.100.100.200", false, false, false},
		{"0.0.0.0", false, false, false},
		{"::", false, false, false},
		{"224.0.0.1", false, false, false},
		{"ff02::1", false, false, false},
	}
	for _, tc := range tests {
		for _, g := range []struct {
			name  string
			guard Guard
			want  bool
		}{{"strict", strict, tc.strict}, {"lab", lab, tc.lab}, {"opened", opened, tc.opened}} {
			err := g.guard.CheckHost(tc.host)
			if (err == nil) != g.want {
				t.Errorf("%s guard, %s: err=%v, want accepted=%t", g.name, tc.host, err, g.want)
			}
			if err != nil && !errors.Is(err, ErrDenied) {
				t.Errorf("%s guard, %s: %v is not ErrDenied", g.name, tc.host, err)
			}
		}
	}
}

func TestParsePrefixes(t *testing.T) {
	got, err := ParsePrefixes("bmc-allow-cidrs", " 10.0.0.0/8, 127.0.0.1 ,fd00::1/64,")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "127.0.0.1/32", "fd00::/64"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("prefix %d = %s, want %s", i, got[i], want[i])
		}
	}
	if _, err := ParsePrefixes("bmc-allow-cidrs", "10.0.0.0/33"); err == nil || !strings.Contains(err.Error(), "--bmc-allow-cidrs") {
		t.Errorf("bad CIDR: err = %v, want one naming the flag", err)
	}
}

// A name that resolves to loopback passes CheckHost (no lookup there) but a
// real dial through the guard's dialer is refused before connecting.
func TestDialerRefusesResolvedLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c, err := Guard{}.Dialer(0).Dial("tcp", net.JoinHostPort("127.0.0.1", port))
	if err == nil {
		c.Close()
		t.Fatal("guarded dialer reached a loopback listener")
	}
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("dial error = %v, want the guard's refusal", err)
	}
	c, err = Guard{AllowLoopback: true}.Dialer(0).Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("loopback allowed, dial: %v", err)
	}
	c.Close()
}
