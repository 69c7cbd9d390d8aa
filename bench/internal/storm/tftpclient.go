package storm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// TFTP opcodes (RFC 1350, 2347).
const (
	opRRQ   = 1
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6
)

// tftpClient is EDK2's PXE TFTP client (PxeBcMtftp): a size probe (RRQ with
// tsize and blksize, OACK, then an ERROR to end it) followed by the read
// (RRQ with blksize and windowsize), 4 s per packet, 6 tries. With the
// windowsize the server's OACK grants, it acknowledges every window's last
// block (or the file's), and on a block out of order the last one it has
// in order, once (RFC 7440, as EDK2's Mtftp4 does).
type tftpClient struct {
	Timeout    time.Duration
	Tries      int
	BlockSize  int
	WindowSize int    // asked for; the server's OACK says what it grants
	Probe      bool   // ask the size first, as EDK2 does
	Port       uint16 // server port, 69 if 0
}

func edk2TFTP() tftpClient {
	return tftpClient{Timeout: 4 * time.Second, Tries: 6, BlockSize: 1468, WindowSize: 4, Probe: true}
}

// tftpStats counts one host's TFTP retransmissions.
type tftpStats struct {
	Retries int `json:"retries"` // RRQs and ACKs sent again after a timeout
	DupData int `json:"dupData"` // DATA blocks received twice or out of order (a retransmission or a loss)
}

// errTFTP is a TFTP failure with a short reason.
type errTFTP struct{ reason string }

func (e *errTFTP) Error() string { return "TFTP: " + e.reason }

// fetch reads file from server as the firmware does, from local address
// from (the leased address), and returns the bytes received.
func (c tftpClient) fetch(from, server netip.Addr, file string, st *tftpStats) (int64, error) {
	if c.Probe {
		if _, err := c.transfer(from, server, file, true, st); err != nil {
			return 0, err
		}
	}
	return c.transfer(from, server, file, false, st)
}

func (c tftpClient) transfer(from, server netip.Addr, file string, probe bool, st *tftpStats) (int64, error) {
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(from, 0)))
	if err != nil {
		return 0, &errTFTP{"socket: " + err.Error()}
	}
	defer conn.Close()
	opts := [][2]string{{"blksize", strconv.Itoa(c.BlockSize)}}
	if probe {
		opts = [][2]string{{"tsize", "0"}, {"blksize", strconv.Itoa(c.BlockSize)}}
	} else if c.WindowSize > 1 {
		opts = append(opts, [2]string{"windowsize", strconv.Itoa(c.WindowSize)})
	}
	rrq := rrqPacket(file, opts)
	port := c.Port
	if port == 0 {
		port = 69
	}
	srv := net.UDPAddrFromAddrPort(netip.AddrPortFrom(server, port))
	var peer *net.UDPAddr // the server's transfer port, from its first answer
	last := rrq           // what to send again on a timeout
	lastTo := srv
	blksize := 512
	var got int64
	next := uint16(1)
	window := 1       // blocks per ACK, as the OACK grants
	sinceAck := 0     // blocks in order since the last ACK
	gapAcked := false // a block out of order was answered with an ACK since the last in-order one
	buf := make([]byte, 65536)
	tries := 0
	if _, err := conn.WriteToUDP(rrq, srv); err != nil {
		return 0, &errTFTP{"send RRQ: " + err.Error()}
	}
	for {
		_ = conn.SetReadDeadline(time.Now().Add(c.Timeout))
		n, from, err := conn.ReadFromUDP(buf)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return got, &errTFTP{"read: " + err.Error()}
			}
			tries++
			if tries >= c.Tries {
				what := "DATA"
				if peer == nil {
					what = "an answer to the RRQ"
				}
				return got, &errTFTP{fmt.Sprintf("timeout: no %s after %d tries of %s", what, c.Tries, c.Timeout)}
			}
			st.Retries++
			if _, err := conn.WriteToUDP(last, lastTo); err != nil {
				return got, &errTFTP{"send: " + err.Error()}
			}
			continue
		}
		if peer == nil {
			if !from.IP.Equal(srv.IP) {
				continue
			}
			peer = from
		} else if from.Port != peer.Port || !from.IP.Equal(peer.IP) {
			continue // another transfer's packet (RFC 1350: wrong TID)
		}
		p := buf[:n]
		if len(p) < 4 {
			continue
		}
		switch binary.BigEndian.Uint16(p) {
		case opERROR:
			code := binary.BigEndian.Uint16(p[2:])
			msg, _, _ := bytes.Cut(p[4:], []byte{0})
			return got, &errTFTP{fmt.Sprintf("server sent ERROR %d %q", code, msg)}
		case opOACK:
			o := parseOptions(p[2:])
			if probe {
				// The size is known: end the transfer as EDK2 does.
				_, _ = conn.WriteToUDP(errorPacket(8, "size probe"), peer)
				if _, ok := o["tsize"]; !ok {
					return 0, &errTFTP{"OACK without tsize"}
				}
				return 0, nil
			}
			if v, ok := o["blksize"]; ok {
				if b, err := strconv.Atoi(v); err == nil && b >= 8 && b <= c.BlockSize {
					blksize = b
				}
			}
			if v, ok := o["windowsize"]; ok {
				if w, err := strconv.Atoi(v); err == nil && w >= 1 && w <= max(c.WindowSize, 1) {
					window = w
				}
			}
			last, lastTo, tries = ackPacket(0), peer, 0
			if _, err := conn.WriteToUDP(last, peer); err != nil {
				return got, &errTFTP{"send ACK: " + err.Error()}
			}
		case opDATA:
			if probe {
				// No OACK: the server ignored the options; its size is
				// unknown, which EDK2 treats as a failure of the probe.
				_, _ = conn.WriteToUDP(errorPacket(8, "size probe"), peer)
				return 0, &errTFTP{"server answered the size probe with DATA (no tsize)"}
			}
			block := binary.BigEndian.Uint16(p[2:])
			data := p[4:]
			if block != next {
				// Sent again (our ACK was lost) or a gap (a block was):
				// say once what we have.
				st.DupData++
				if !gapAcked {
					gapAcked, sinceAck = true, 0
					last, lastTo = ackPacket(next-1), peer
					_, _ = conn.WriteToUDP(last, peer)
				}
				continue
			}
			got += int64(len(data))
			next++
			sinceAck++
			gapAcked = false
			final := len(data) < blksize
			if final || sinceAck >= window {
				last, lastTo, tries, sinceAck = ackPacket(block), peer, 0, 0
				if _, err := conn.WriteToUDP(last, peer); err != nil {
					return got, &errTFTP{"send ACK: " + err.Error()}
				}
			}
			if final {
				return got, nil
			}
		}
	}
}

func rrqPacket(file string, opts [][2]string) []byte {
	b := []byte{0, opRRQ}
	b = append(append(b, file...), 0)
	b = append(append(b, "octet"...), 0)
	for _, o := range opts {
		b = append(append(b, o[0]...), 0)
		b = append(append(b, o[1]...), 0)
	}
	return b
}

func ackPacket(block uint16) []byte {
	return []byte{0, opACK, byte(block >> 8), byte(block)}
}

func errorPacket(code uint16, msg string) []byte {
	b := []byte{0, opERROR, byte(code >> 8), byte(code)}
	return append(append(b, msg...), 0)
}

func parseOptions(b []byte) map[string]string {
	o := map[string]string{}
	parts := bytes.Split(b, []byte{0})
	for i := 0; i+1 < len(parts); i += 2 {
		o[string(bytes.ToLower(parts[i]))] = string(parts[i+1])
	}
	return o
}
