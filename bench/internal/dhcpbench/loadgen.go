package dhcpbench

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"anvil.dev/anvil/bench/internal/stats"
)

// The broadcast load generator (`anvil-bench load dhcp`) sends as PXE
// firmware does: from 0.0.0.0:68 to 255.255.255.255:67, giaddr 0, the
// broadcast flag set, and takes the server's broadcast replies on the same
// socket. perfdhcp cannot: with -l it still fills giaddr with its own
// address, so servers answer it as a relay (unicast to port 67).
//
// It is built to cost little per exchange so that it is not the limit
// first: packets come from templates (only xid, chaddr and two option
// values are written per send), one socket, one sending and one receiving
// goroutine, no goroutine or allocation per exchange.

// LoadOptions configure Load.
type LoadOptions struct {
	Interface string
	// MACFile is perfdhcp's -M format: one MAC per line; every exchange
	// picks one at random, as perfdhcp does.
	MACFile string
	Rate    int     // DORA exchanges started per second
	Seconds float64 // how long to keep starting them
	// Wait is how long to wait for late replies after the last DISCOVER
	// (perfdhcp's -W).
	Wait time.Duration
	Seed uint64
}

// LoadResult is what Load prints as one JSON line.
type LoadResult struct {
	Discovers int `json:"discovers"`
	Offers    int `json:"offers"`
	Requests  int `json:"requests"`
	Acks      int `json:"acks"`
	// SendSeconds is how long sending took (Seconds, or longer when the
	// generator fell behind).
	SendSeconds float64 `json:"sendSeconds"`
	// P50 and P99 are DISCOVER-OFFER and REQUEST-ACK round trips pooled,
	// in ms, as perfdhcp's -x t gives them.
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	// CPU is the generator's own CPU (user+system, all threads) while it
	// was sending, in cores: near 1 means it, not the server, is the limit.
	CPU float64 `json:"cpu"`
}

// BOOTP header offsets (RFC 2131 figure 1).
const (
	offXID     = 4
	offFlags   = 10
	offYIAddr  = 16
	offGIAddr  = 24
	offCHAddr  = 28
	offMagic   = 236
	offOptions = 240
	minPacket  = 300 // BOOTP's minimum; firmware pads to it
)

// packet is a template and where its per-exchange fields go.
type packet struct {
	b            []byte
	reqIP, srvID int // offsets of option 50's and 54's values (REQUEST only), 0 if absent
}

// newPacket builds a DHCPDISCOVER (msgType 1) or DHCPREQUEST (3) template
// with the broadcast flag and giaddr 0; REQUEST carries options 50 and 54
// (SELECTING state, RFC 2131 4.3.2).
func newPacket(msgType byte) packet {
	b := make([]byte, offOptions, minPacket)
	b[0], b[1], b[2] = 1, 1, 6 // BOOTREQUEST, Ethernet, hlen 6
	binary.BigEndian.PutUint16(b[offFlags:], 0x8000)
	copy(b[offMagic:], []byte{99, 130, 83, 99})
	var p packet
	b = append(b, 53, 1, msgType)
	if msgType == 3 {
		b = append(b, 50, 4, 0, 0, 0, 0)
		p.reqIP = len(b) - 4
		b = append(b, 54, 4, 0, 0, 0, 0)
		p.srvID = len(b) - 4
	}
	prl := []byte{1, 3, 6, 12, 15, 28, 51, 54}
	b = append(b, 55, byte(len(prl)))
	b = append(b, prl...)
	b = append(b, 255)
	for len(b) < minPacket {
		b = append(b, 0)
	}
	p.b = b
	return p
}

// fill writes one exchange's fields into buf (a copy of the template).
func (p packet) fill(buf []byte, xid uint32, mac net.HardwareAddr, reqIP, srvID [4]byte) []byte {
	buf = append(buf[:0], p.b...)
	binary.BigEndian.PutUint32(buf[offXID:], xid)
	copy(buf[offCHAddr:], mac)
	if p.reqIP > 0 {
		copy(buf[p.reqIP:], reqIP[:])
		copy(buf[p.srvID:], srvID[:])
	}
	return buf
}

// reply is what the generator reads from a server's answer.
type reply struct {
	xid      uint32
	msgType  byte // 2 OFFER, 5 ACK, 6 NAK
	yiaddr   [4]byte
	serverID [4]byte
}

// parseReply reads a BOOTREPLY's xid, yiaddr, message type and server
// identifier without building an options map.
func parseReply(b []byte) (reply, error) {
	var r reply
	if len(b) < offOptions || b[0] != 2 {
		return r, errors.New("not a BOOTREPLY")
	}
	if b[offMagic] != 99 || b[offMagic+1] != 130 || b[offMagic+2] != 83 || b[offMagic+3] != 99 {
		return r, errors.New("no DHCP magic cookie")
	}
	r.xid = binary.BigEndian.Uint32(b[offXID:])
	copy(r.yiaddr[:], b[offYIAddr:offYIAddr+4])
	for i := offOptions; i < len(b); {
		code := b[i]
		if code == 255 {
			break
		}
		if code == 0 {
			i++
			continue
		}
		if i+1 >= len(b) || i+2+int(b[i+1]) > len(b) {
			return r, errors.New("truncated option")
		}
		v := b[i+2 : i+2+int(b[i+1])]
		switch {
		case code == 53 && len(v) == 1:
			r.msgType = v[0]
		case code == 54 && len(v) == 4:
			copy(r.serverID[:], v)
		}
		i += 2 + len(v)
	}
	if r.msgType == 0 {
		return r, errors.New("no message type")
	}
	return r, nil
}

// dueCount is how many exchanges should have started after elapsed at
// rate per second: the first at once, then one every 1/rate, at most total.
func dueCount(elapsed time.Duration, rate, total int) int {
	if rate <= 0 || elapsed < 0 {
		return 0
	}
	n := int(math.Floor(elapsed.Seconds()*float64(rate))) + 1
	return min(n, total)
}

// batch is n messages with a buffer of size bytes each, to addr.
func batch(n, size int, addr net.Addr) []ipv4.Message {
	ms := make([]ipv4.Message, n)
	for i := range ms {
		ms[i] = ipv4.Message{Buffers: [][]byte{make([]byte, size)}, Addr: addr}
	}
	return ms
}

// exchange is one DORA; times are ns since the start, 0 = not yet.
type exchange struct {
	mac                       int32
	discover, offer, req, ack atomic.Int64
}

// ReadMACs reads a -M file.
func ReadMACs(path string) ([]net.HardwareAddr, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []net.HardwareAddr
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		m, err := net.ParseMAC(line)
		if err != nil || len(m) != 6 {
			return nil, fmt.Errorf("%s: %q is not an Ethernet MAC", path, line)
		}
		out = append(out, m)
	}
	if len(out) == 0 && sc.Err() == nil {
		return nil, fmt.Errorf("%s: no MACs", path)
	}
	return out, sc.Err()
}

// Load runs one fixed-rate step and writes a LoadResult line to w.
func Load(ctx context.Context, o LoadOptions, w io.Writer) error {
	if o.Interface == "" || o.MACFile == "" || o.Rate <= 0 || o.Seconds <= 0 {
		return errors.New("load dhcp: --iface, --macs, --rate and --seconds are required")
	}
	macs, err := ReadMACs(o.MACFile)
	if err != nil {
		return fmt.Errorf("--macs: %w", err)
	}
	conn, err := ClientSocket(o.Interface)
	if err != nil {
		return err
	}
	defer conn.Close()
	total := int(math.Ceil(float64(o.Rate) * o.Seconds))
	ex := make([]exchange, total)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	for i := range ex {
		ex[i].mac = int32(rng.IntN(len(macs)))
	}
	base := rng.Uint32()
	dst := netip.AddrPortFrom(netip.AddrFrom4([4]byte{255, 255, 255, 255}), 67)
	start := time.Now()
	since := func() int64 { return int64(time.Since(start)) }

	var sent atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	pc := ipv4.NewPacketConn(conn)
	dstAddr := net.UDPAddrFromAddrPort(dst)
	go func() { // receiver: OFFER -> REQUEST at once; ACK ends the exchange
		defer wg.Done()
		req := newPacket(3)
		// recvmmsg and sendmmsg: under load a wake-up reads (and answers)
		// many replies with two system calls instead of two per reply.
		in, out := batch(64, 2048, nil), batch(64, minPacket, dstAddr)
		for {
			k, err := pc.ReadBatch(in, 0)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			nout := 0
			for _, m := range in[:k] {
				r, err := parseReply(m.Buffers[0][:m.N])
				if err != nil {
					continue
				}
				i := int64(r.xid - base)
				if i < 0 || i >= sent.Load() {
					continue // not ours (another step's late reply)
				}
				e := &ex[i]
				switch r.msgType {
				case 2:
					if !e.offer.CompareAndSwap(0, since()) {
						continue // a duplicate OFFER
					}
					out[nout].Buffers[0] = req.fill(out[nout].Buffers[0], r.xid, macs[e.mac], r.yiaddr, r.serverID)
					e.req.Store(since())
					nout++
				case 5:
					if e.req.Load() != 0 {
						e.ack.CompareAndSwap(0, since())
					}
				}
			}
			if nout > 0 {
				sendAll(pc, out[:nout])
			}
		}
	}()

	cpu0 := cpuSeconds()
	disc := newPacket(1)
	out := batch(64, minPacket, dstAddr)
	deadline := time.Duration(o.Seconds * float64(time.Second))
	n := 0
	for n < total && ctx.Err() == nil {
		el := time.Since(start)
		if el > deadline+time.Second/10 {
			break // fell behind: what was sent is the result (the report flags it)
		}
		for due := dueCount(el, o.Rate, total); n < due; {
			k := 0
			for ; k < len(out) && n < due; k, n = k+1, n+1 {
				ex[n].discover.Store(since())
				out[k].Buffers[0] = disc.fill(out[k].Buffers[0], base+uint32(n), macs[ex[n].mac], [4]byte{}, [4]byte{})
			}
			sent.Store(int64(n))
			sendAll(pc, out[:k])
		}
		if n < total {
			next := time.Duration(float64(n) / float64(o.Rate) * float64(time.Second))
			if d := next - time.Since(start); d > 0 {
				time.Sleep(max(d, 200*time.Microsecond)) // batch sends rather than wake per packet
			}
		}
	}
	sendSecs := time.Since(start).Seconds()
	cpu := (cpuSeconds() - cpu0) / sendSecs
	select {
	case <-time.After(o.Wait):
	case <-ctx.Done():
	}
	conn.Close()
	wg.Wait()

	res := LoadResult{SendSeconds: sendSecs, CPU: cpu}
	var delays []float64
	for i := range n {
		e := &ex[i]
		res.Discovers++
		d, of, rq, ak := e.discover.Load(), e.offer.Load(), e.req.Load(), e.ack.Load()
		if of != 0 {
			res.Offers++
			delays = append(delays, float64(of-d)/1e6)
		}
		if rq != 0 {
			res.Requests++
		}
		if ak != 0 {
			res.Acks++
			delays = append(delays, float64(ak-rq)/1e6)
		}
	}
	res.P50, res.P99 = stats.Finite(stats.Percentile(delays, 50)), stats.Finite(stats.Percentile(delays, 99))
	return json.NewEncoder(w).Encode(res)
}

// sendAll sends every message: sendmmsg may take only part of a batch,
// and a message left unsent would count against the server as a drop.
func sendAll(pc *ipv4.PacketConn, msgs []ipv4.Message) {
	for len(msgs) > 0 {
		n, err := pc.WriteBatch(msgs, 0)
		if err != nil || n == 0 {
			return // the socket is closed or failing: the step's counts say so
		}
		msgs = msgs[n:]
	}
}

// cpuSeconds is this process's user+system time (every thread).
func cpuSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// ClientSocket is a client's DHCP socket: 0.0.0.0:68 on iface, allowed to
// broadcast, with buffers large enough that a load generator's own socket
// drops nothing at the rates it offers (this generator's and the boot
// storm's simulated hosts').
func ClientSocket(iface string) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			for _, o := range [][2]int{{unix.SO_BROADCAST, 1}, {unix.SO_REUSEADDR, 1}, {unix.SO_RCVBUFFORCE, 8 << 20}, {unix.SO_SNDBUFFORCE, 4 << 20}} {
				if e := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, o[0], o[1]); e != nil && serr == nil {
					serr = e
				}
			}
			if e := unix.BindToDevice(int(fd), iface); e != nil && serr == nil {
				serr = e
			}
		})
		return errors.Join(err, serr)
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp4", "0.0.0.0:68")
	if err != nil {
		return nil, fmt.Errorf("DHCP client socket on --iface %s: %w", iface, err)
	}
	return pc.(*net.UDPConn), nil
}
