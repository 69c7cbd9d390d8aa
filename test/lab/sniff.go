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
	if !src.Is4() {
		return nil, fmt.Errorf("lab: sniff: %s is not an IPv4 address", src)
	}
	proto := int(htons(unix.ETH_P_IP))
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
	dst := l.bridge.Addr().As4()
	from := src.As4()
	go func() {
		defer close(s.done)
		buf := make([]byte, 65536)
		for {
			n, err := s.f.Read(buf)
			if err != nil {
				return
			}
			if line := requestLine(buf[:n], from, dst); line != "" {
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

// requestLine returns the HTTP request line that IPv4 packet p from src to
// dst carries at the start of its TCP payload, or "".
func requestLine(p []byte, src, dst [4]byte) string {
	if len(p) < 20 || p[0]>>4 != 4 || p[9] != unix.IPPROTO_TCP {
		return ""
	}
	ihl := int(p[0]&0x0f) * 4
	if ihl < 20 || len(p) < ihl+20 || !bytes.Equal(p[12:16], src[:]) || !bytes.Equal(p[16:20], dst[:]) {
		return ""
	}
	if total := int(p[2])<<8 | int(p[3]); total >= ihl+20 && total < len(p) {
		p = p[:total] // short frames' Ethernet padding
	}
	tcp := p[ihl:]
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

func htons(v uint16) uint16 { return v<<8 | v>>8 }
