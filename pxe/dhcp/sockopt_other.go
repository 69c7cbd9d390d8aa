//go:build !linux

package dhcp

import "net"

// setReadBuffer uses the portable SO_RCVBUF call where SO_RCVBUFFORCE does
// not exist; the granted size is not known.
func setReadBuffer(c *net.UDPConn, size int) (int, string, error) {
	return 0, "SO_RCVBUF", c.SetReadBuffer(size)
}
