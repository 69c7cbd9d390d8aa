package lab

import (
	"net/netip"
	"testing"
)

// packet builds an IPv4/TCP packet from src to dst carrying payload.
func packet(src, dst netip.Addr, payload string, pad int) []byte {
	if src.Is6() {
		p := make([]byte, 40+20, 60+len(payload)+pad)
		p[0] = 0x60
		plen := 20 + len(payload)
		p[4], p[5] = byte(plen>>8), byte(plen)
		p[6] = 6 // TCP
		s, d := src.As16(), dst.As16()
		copy(p[8:24], s[:])
		copy(p[24:40], d[:])
		p[40+12] = 5 << 4
		p = append(p, payload...)
		return append(p, make([]byte, pad)...)
	}
	p := make([]byte, 20+20, 40+len(payload)+pad)
	p[0] = 0x45
	total := 40 + len(payload)
	p[2], p[3] = byte(total>>8), byte(total)
	p[9] = 6 // TCP
	s, d := src.As4(), dst.As4()
	copy(p[12:16], s[:])
	copy(p[16:20], d[:])
	p[20+12] = 5 << 4 // data offset: 20 bytes
	p = append(p, payload...)
	return append(p, make([]byte, pad)...)
}

func TestRequestLine(t *testing.T) {
	a := netip.MustParseAddr
	vm, br, other := a("10.211.0.50"), a("10.211.0.1"), a("10.211.0.9")
	vm6, br6, other6 := a("fd00:a11:0:1::10d"), a("fd00:a11:0:1::1"), a("fd00:b::9")
	get := "GET /config/52:54:00:d3:00:10/ignition?cred=x HTTP/1.1\r\nHost: 10.211.0.1\r\n\r\n"
	v4, v6 := netip.PrefixFrom(vm, 32), netip.MustParsePrefix("fd00:a11:0:1::/64")
	for _, tc := range []struct {
		name string
		p    []byte
		src  netip.Prefix
		dst  netip.Addr
		want string
	}{
		{"request", packet(vm, br, get, 0), v4, br, "GET /config/52:54:00:d3:00:10/ignition?cred=x HTTP/1.1"},
		{"HTTP/1.0 HEAD", packet(vm, br, "HEAD /x HTTP/1.0\r\n\r\n", 0), v4, br, "HEAD /x HTTP/1.0"},
		{"padded short frame", packet(vm, br, "GET / HTTP/1.1\r\n", 6), v4, br, "GET / HTTP/1.1"},
		{"another source", packet(other, br, get, 0), v4, br, ""},
		{"to another address", packet(vm, other, get, 0), v4, br, ""},
		{"a response", packet(vm, br, "HTTP/1.1 200 OK\r\n\r\n", 0), v4, br, ""},
		{"no line end", packet(vm, br, "GET /config/abc", 0), v4, br, ""},
		{"not TCP", func() []byte { p := packet(vm, br, get, 0); p[9] = 17; return p }(), v4, br, ""},
		{"truncated", packet(vm, br, get, 0)[:30], v4, br, ""},
		{"IPv6 request from the prefix", packet(vm6, br6, get, 0), v6, br6, "GET /config/52:54:00:d3:00:10/ignition?cred=x HTTP/1.1"},
		{"IPv6 padded", packet(vm6, br6, "GET / HTTP/1.1\r\n", 4), v6, br6, "GET / HTTP/1.1"},
		{"IPv6 from outside the prefix", packet(other6, br6, get, 0), v6, br6, ""},
		{"IPv6 to another address", packet(vm6, other6, get, 0), v6, br6, ""},
		{"IPv6 not TCP", func() []byte { p := packet(vm6, br6, get, 0); p[6] = 17; return p }(), v6, br6, ""},
		{"IPv4 packet, IPv6 sniffer", packet(vm, br, get, 0), v6, br6, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := requestLine(tc.p, tc.src, tc.dst); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
