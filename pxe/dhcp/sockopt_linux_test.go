package dhcp

import (
	"net"
	"testing"
)

// The receive buffer grows beyond the kernel's default (212992 bytes on
// Debian): with SO_RCVBUFFORCE as root, else up to net.core.rmem_max.
func TestSetReadBuffer(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, how, err := setReadBuffer(c, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("asked 4 MiB, kernel reports %d via %s", got, how)
	if how == "SO_RCVBUFFORCE" && got < 4<<20 {
		t.Fatalf("SO_RCVBUFFORCE took but the kernel reports %d bytes, want at least 4 MiB", got)
	}
	if got <= 0 {
		t.Fatalf("kernel reports %d bytes", got)
	}
}
