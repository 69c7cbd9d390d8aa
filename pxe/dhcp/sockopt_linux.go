package dhcp

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// setReadBuffer asks for a receive buffer of size bytes: SO_RCVBUFFORCE
// first (needs CAP_NET_ADMIN, ignores net.core.rmem_max), else SO_RCVBUF
// (silently capped at rmem_max). It returns what the kernel reports
// afterwards (twice the usable size) and which option took.
func setReadBuffer(c *net.UDPConn, size int) (got int, how string, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, "", err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		how = "SO_RCVBUFFORCE"
		if e := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, size); e != nil {
			how = "SO_RCVBUF"
			if e2 := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, size); e2 != nil {
				serr = fmt.Errorf("SO_RCVBUFFORCE: %w; SO_RCVBUF: %w", e, e2)
				return
			}
		}
		got, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	})
	if err := errors.Join(cerr, serr); err != nil {
		return 0, "", fmt.Errorf("dhcp: receive buffer of %v: %w", c.LocalAddr(), err)
	}
	return got, how, nil
}
