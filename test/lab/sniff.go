package lab

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Sniffer sees the plain-HTTP request lines VMs send to the bridge, as
// anyone on the segment could. A test uses it to learn a one-time URL a VM
// fetched (a boot credential in its query) and check that the URL is
// refused when replayed. What it captures holds secrets: do not log it.
type Sniffer struct {
	f    *os.File
	mu   sync.Mutex
	seen []string
	done chan struct{}
}

// SniffHTTP starts capturing, on the bridge, the request lines ("GET
// /path?query HTTP/1.1") of TCP segments from src to the bridge's address.
// A request line split over two segments is missed (iPXE, Ignition and Go
// send a request's head in one). Close stops it.
func (l *Lab) SniffHTTP(src netip.Addr) (*Sniffer, error) {
	return l.SniffHTTPFrom(netip.PrefixFrom(src, src.BitLen()))
}

// SniffHTTPFrom is SniffHTTP for every source in a prefix: IPv4 to the
// bridge's IPv4 address, or IPv6 to its IPv6 one (Options.Subnet6).
func (l *Lab) SniffHTTPFrom(src netip.Prefix) (*Sniffer, error) {
	proto, dst := int(htons(unix.ETH_P_IP)), l.bridge.Addr()
	switch {
	case src.Addr().Is6() && !src.Addr().Is4In6():
		if !l.bridge6.IsValid() {
			return nil, fmt.Errorf("lab: sniff: %s is IPv6 and the lab has no IPv6 segment", src)
		}
		proto, dst = int(htons(unix.ETH_P_IPV6)), l.bridge6.Addr()
	case !src.Addr().Is4():
		return nil, fmt.Errorf("lab: sniff: %s is not an address prefix", src)
	}
	var fd int
	err := l.ns.Do(func() error {
		br, err := net.InterfaceByName(BridgeName)
		if err != nil {
			return err
		}
		// Datagram packet socket: IP packets without the Ethernet header.
		if fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, proto); err != nil {
			return err
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: uint16(proto), Ifindex: br.Index}); err != nil {
			unix.Close(fd)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lab: sniff on %s: %w", BridgeName, err)
	}
	// Non-blocking: the runtime's poller reads it, and Close wakes the reader.
	s := &Sniffer{f: os.NewFile(uintptr(fd), "packet:"+BridgeName), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		buf := make([]byte, 65536)
		for {
			n, err := s.f.Read(buf)
			if err != nil {
				return
			}
			if line := requestLine(buf[:n], src, dst); line != "" {
				s.mu.Lock()
				s.seen = append(s.seen, line)
				s.mu.Unlock()
			}
		}
	}()
	return s, nil
}

// Requests returns the request lines seen so far, oldest first.
func (s *Sniffer) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// Close stops capturing.
func (s *Sniffer) Close() error {
	err := s.f.Close()
	<-s.done
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// requestLine returns the HTTP request line that IP packet p from an
// address in src to dst carries at the start of its TCP payload, or "".
func requestLine(p []byte, src netip.Prefix, dst netip.Addr) string {
	tcp := tcpPayload(p, src, dst)
	if len(tcp) < 20 {
		return ""
	}
	off := int(tcp[12]>>4) * 4
	if off < 20 || len(tcp) < off {
		return ""
	}
	payload := tcp[off:]
	end := bytes.Index(payload, []byte("\r\n"))
	if end < 0 {
		return ""
	}
	line := string(payload[:end])
	if !strings.HasSuffix(line, " HTTP/1.1") && !strings.HasSuffix(line, " HTTP/1.0") {
		return ""
	}
	for _, m := range []string{"GET ", "HEAD ", "POST ", "PUT "} {
		if strings.HasPrefix(line, m) {
			return line
		}
	}
	return ""
}

// tcpPayload returns the TCP segment IPv4 or IPv6 (no extension headers)
// packet p carries from an address in src to dst, or nil.
func tcpPayload(p []byte, src netip.Prefix, dst netip.Addr) []byte {
	var from, to netip.Addr
	switch {
	case len(p) >= 20 && p[0]>>4 == 4 && dst.Is4():
		ihl := int(p[0]&0x0f) * 4
		if p[9] != unix.IPPROTO_TCP || ihl < 20 || len(p) < ihl+20 {
			return nil
		}
		from, to = netip.AddrFrom4([4]byte(p[12:16])), netip.AddrFrom4([4]byte(p[16:20]))
		if total := int(p[2])<<8 | int(p[3]); total >= ihl+20 && total < len(p) {
			p = p[:total] // short frames' Ethernet padding
		}
		p = p[ihl:]
	case len(p) >= 60 && p[0]>>4 == 6 && dst.Is6():
		if p[6] != unix.IPPROTO_TCP {
			return nil
		}
		from, to = netip.AddrFrom16([16]byte(p[8:24])), netip.AddrFrom16([16]byte(p[24:40]))
		if plen := int(p[4])<<8 | int(p[5]); plen >= 20 && 40+plen < len(p) {
			p = p[:40+plen]
		}
		p = p[40:]
	default:
		return nil
	}
	if !src.Contains(from) || to != dst {
		return nil
	}
	return p
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
