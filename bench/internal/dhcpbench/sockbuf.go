package dhcpbench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// serverReadBuffer is the receive buffer Anvil's DHCP server asks for
// (pxe/dhcp Options.ReadBuffer's default, with SO_RCVBUFFORCE).
const serverReadBuffer = 4 << 20

// setPeerReadBuffers gives every socket of process pid the receive buffer
// Anvil's server gives its own, so a peer does not drop bursts for want of
// a setting Anvil has. Kea and dnsmasq have no option for it, and
// net.core.rmem_default, which they would inherit, is read-only outside the
// initial network namespace on this kernel (and global there, so setting it
// would change every other process's sockets too). So the bench takes a
// copy of each socket descriptor with pidfd_getfd (Linux 5.6, root) and
// sets SO_RCVBUFFORCE on it: the option belongs to the socket, not the
// descriptor. It returns how many sockets it set and the size the kernel
// reports for the last (twice the usable size).
func setPeerReadBuffers(pid, size int) (n, got int, err error) {
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pfd)
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || !strings.HasPrefix(link, "socket:") {
			continue
		}
		target, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fd, err := unix.PidfdGetfd(pfd, target, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf("pidfd_getfd %d/%d: %w", pid, target, err))
			continue
		}
		if t, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err == nil && (t == unix.SOCK_DGRAM || t == unix.SOCK_RAW) {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, size); err != nil {
				errs = append(errs, fmt.Errorf("SO_RCVBUFFORCE on %d/%d: %w", pid, target, err))
			} else {
				n++
				got, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
			}
		}
		unix.Close(fd)
	}
	if n == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("process %d has no datagram or raw socket", pid))
	}
	return n, got, errors.Join(errs...)
}
