package lab

import "testing"

// packet builds an IPv4/TCP packet from src to dst carrying payload.
func packet(src, dst [4]byte, payload string, pad int) []byte {
	p := make([]byte, 20+20, 40+len(payload)+pad)
	p[0] = 0x45
	total := 40 + len(payload)
	p[2], p[3] = byte(total>>8), byte(total)
	p[9] = 6 // TCP
	copy(p[12:16], src[:])
	copy(p[16:20], dst[:])
	p[20+12] = 5 << 4 // data offset: 20 bytes
	p = append(p, payload...)
	return append(p, make([]byte, pad)...)
}

func TestRequestLine(t *testing.T) {
	vm, br, other := [4]byte{10, 211, 0, 50}, [4]byte{10, 211, 0, 1}, [4]byte{10, 211, 0, 9}
	get := "GET /config/52:54:00:d3:00:10/ignition?cred=x HTTP/1.1\r\nHost: 10.211.0.1\r\n\r\n"
	for _, tc := range []struct {
		name string
		p    []byte
		want string
	}{
		{"request", packet(vm, br, get, 0), "GET /config/52:54:00:d3:00:10/ignition?cred=x HTTP/1.1"},
		{"HTTP/1.0 HEAD", packet(vm, br, "HEAD /x HTTP/1.0\r\n\r\n", 0), "HEAD /x HTTP/1.0"},
		{"padded short frame", packet(vm, br, "GET / HTTP/1.1\r\n", 6), "GET / HTTP/1.1"},
		{"another source", packet(other, br, get, 0), ""},
		{"to another address", packet(vm, other, get, 0), ""},
		{"a response", packet(vm, br, "HTTP/1.1 200 OK\r\n\r\n", 0), ""},
		{"no line end", packet(vm, br, "GET /config/abc", 0), ""},
		{"not TCP", func() []byte { p := packet(vm, br, get, 0); p[9] = 17; return p }(), ""},
		{"truncated", packet(vm, br, get, 0)[:30], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := requestLine(tc.p, vm, br); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
