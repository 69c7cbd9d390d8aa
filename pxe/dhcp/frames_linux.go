package dhcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// frameConn is a packet socket on the server's interface that receives the
// DHCPRELEASE and DHCPDECLINE frames (and nothing else: a BPF filter picks
// them in the kernel) together with their Ethernet source address. A UDP
// socket cannot tell who sent a datagram on the wire; the frame's source
// is what binds a RELEASE or DECLINE to the client holding the lease (see
// Server.fromHolder).
type frameConn struct {
	f  *os.File
	rc interface {
		Read(func(uintptr) bool) error
	}
}

// releaseDeclineFilter passes IPv4 UDP datagrams to port 67 that are an
// unfragmented BOOTREQUEST with the magic cookie and option 53 = 4 or 7
// among its first four options (every client we know puts it first;
// insomniacslk-based ones sort options, so after 50). The packet starts at
// the IP header (SOCK_DGRAM).
func releaseDeclineFilter(port uint16) ([]bpf.RawInstruction, error) {
	const (
		optOff = 8 + 240 // UDP header + BOOTP header and cookie, from X (IP header length)
		steps  = 4
	)
	// Layout: header checks, then `steps` option steps of 6
	// instructions each, then found (3), drop, accept. Jumps to drop and
	// found are patched in at the end.
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 9, Size: 1},                                         // IP protocol
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.IPPROTO_UDP, SkipTrue: 0xff}, // patched below
		bpf.LoadAbsolute{Off: 6, Size: 2},                                         // flags + fragment offset
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x3fff, SkipTrue: 0xff},            // MF or an offset: a fragment
		bpf.LoadMemShift{Off: 0},                                                  // X = IP header length
		bpf.LoadIndirect{Off: 2, Size: 2},                                         // UDP destination port
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(port), SkipTrue: 0xff},
		bpf.LoadIndirect{Off: 8, Size: 1}, // op
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 1, SkipTrue: 0xff},
		bpf.LoadIndirect{Off: 8 + 236, Size: 4}, // magic cookie
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0x63825363, SkipTrue: 0xff},
	}
	for range steps {
		prog = append(prog,
			bpf.LoadIndirect{Off: optOff, Size: 1},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: 53, SkipTrue: 0xfe}, // to found, patched below
			bpf.LoadIndirect{Off: optOff + 1, Size: 1},               // option length
			bpf.ALUOpX{Op: bpf.ALUOpAdd},
			bpf.ALUOpConstant{Op: bpf.ALUOpAdd, Val: 2},
			bpf.TAX{},
		)
	}
	prog = append(prog, bpf.Jump{Skip: 3}) // not among the first options: drop
	found := len(prog)
	prog = append(prog,
		bpf.LoadIndirect{Off: optOff + 2, Size: 1}, // the type
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 4, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 7, SkipTrue: 1},
	)
	drop := len(prog)
	prog = append(prog, bpf.RetConstant{Val: 0}, bpf.RetConstant{Val: 0xffff})
	for i, ins := range prog {
		if j, ok := ins.(bpf.JumpIf); ok {
			switch j.SkipTrue {
			case 0xff:
				j.SkipTrue = uint8(drop - i - 1)
			case 0xfe:
				j.SkipTrue = uint8(found - i - 1)
			}
			prog[i] = j
		}
	}
	return bpf.Assemble(prog)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openFrames opens the packet socket on ifname, in the calling thread's
// network namespace. It needs CAP_NET_RAW.
func openFrames(ifname string, port uint16) (*frameConn, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, err
	}
	raw, err := releaseDeclineFilter(port)
	if err != nil {
		return nil, err
	}
	// Protocol 0 until the filter is in place, so no unfiltered frame is
	// queued in between.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("packet socket: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("packet socket filter: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IP), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("packet socket bind to %s: %w", ifname, err)
	}
	f := os.NewFile(uintptr(fd), "packet:"+ifname)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &frameConn{f: f, rc: rc}, nil
}

func (c *frameConn) Close() error { return c.f.Close() }

// frame is one received datagram: its DHCP payload (in b), IP source and
// destination, UDP source port and Ethernet source.
type frame struct {
	n       int // payload length, copied to the start of b
	src     netip.AddrPort
	dst     netip.Addr
	l2src   net.HardwareAddr
	forHost bool // addressed to this host or broadcast (not outgoing, not another host's)
}

// read blocks for the next frame and moves its UDP payload to the start
// of b. A frame it cannot use comes back with n = 0.
func (c *frameConn) read(b []byte) (frame, error) {
	var (
		n    int
		from unix.Sockaddr
		rerr error
	)
	err := c.rc.Read(func(fd uintptr) bool {
		n, from, rerr = unix.Recvfrom(int(fd), b, 0)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if err != nil {
		return frame{}, err
	}
	if rerr != nil {
		return frame{}, rerr
	}
	var fr frame
	if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Halen == 6 {
		fr.l2src = net.HardwareAddr(append([]byte(nil), ll.Addr[:6]...))
		switch ll.Pkttype {
		case unix.PACKET_HOST, unix.PACKET_BROADCAST, unix.PACKET_MULTICAST:
			fr.forHost = true
		}
	}
	p := b[:n]
	if len(p) < 20 || p[0]>>4 != 4 {
		return frame{}, nil
	}
	ihl := int(p[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(p[2:4]))
	if ihl < 20 || total > len(p) || total < ihl+8 {
		return frame{}, nil
	}
	srcIP := netip.AddrFrom4([4]byte(p[12:16]))
	fr.dst = netip.AddrFrom4([4]byte(p[16:20]))
	udp := p[ihl:total]
	fr.src = netip.AddrPortFrom(srcIP, binary.BigEndian.Uint16(udp[0:2]))
	ulen := int(binary.BigEndian.Uint16(udp[4:6]))
	if ulen < 8 || ulen > len(udp) {
		return frame{}, nil
	}
	fr.n = copy(b, udp[8:ulen])
	return fr, nil
}
