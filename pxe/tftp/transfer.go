package tftp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/ipv4"
)

// transfer sends one file to one client over a socket connected to it (the
// kernel drops packets from any other address or port: RFC 1350's
// transfer ID).
type transfer struct {
	s    *Server
	conn *net.UDPConn
	file *os.File
	size int64
	n    negotiated
	log  logr.Logger
}

// outcome of a transfer, for the metrics.
type outcome string

const (
	outcomeOK        outcome = "ok"
	outcomeSizeProbe outcome = "size_probe"
	outcomeUnacked   outcome = "unacked"
	outcomeError     outcome = "error"
)

// errUnacked: the first block went unacknowledged for FirstAckTimeout.
var errUnacked = errors.New("first block not acknowledged")

// errClient: the client sent an ERROR packet.
type errClient struct {
	code uint16
	msg  string
}

func (e errClient) Error() string { return fmt.Sprintf("client error %d: %s", e.code, e.msg) }

func (t *transfer) run() {
	defer t.conn.Close()
	defer t.file.Close()
	s := t.s
	s.metrics.active.Inc()
	defer s.metrics.active.Dec()
	start := time.Now()
	sent, err := t.send(start)
	s.metrics.bytes.Add(float64(sent))
	s.metrics.duration.Observe(time.Since(start).Seconds())
	var ce errClient
	switch {
	case err == nil:
		s.metrics.transfers.WithLabelValues(string(outcomeOK)).Inc()
		t.log.V(1).Info("sent", "bytes", sent, "duration", time.Since(start).String(), "blksize", t.n.blockSize, "windowsize", t.n.windowSize)
	case errors.As(err, &ce) && ce.code == errCodeOptionRefused && sent == 0:
		// PXE firmware (OVMF, Intel) often asks with tsize, reads the size
		// from the OACK and aborts with error code 8 before asking again:
		// that is a size probe, not a failure.
		s.metrics.transfers.WithLabelValues(string(outcomeSizeProbe)).Inc()
		t.log.V(1).Info("client ended the transfer after option negotiation (size probe)")
	case errors.Is(err, errUnacked):
		s.metrics.transfers.WithLabelValues(string(outcomeUnacked)).Inc()
		t.log.V(1).Info("dropped: first block not acknowledged", "after", time.Since(start).String())
	default:
		s.metrics.transfers.WithLabelValues(string(outcomeError)).Inc()
		t.log.Info("transfer failed", "bytes", sent, "error", err.Error())
		if !errors.As(err, &ce) {
			msg := "transfer failed"
			if errors.Is(err, errTooSlow) {
				msg = errTooSlow.Error()
			}
			_, _ = t.conn.Write(appendError(nil, errCodeUndefined, msg))
		}
	}
}

// send runs the transfer: the OACK when options were accepted, then the
// file in windows of n.windowSize blocks (RFC 7440; 1 is RFC 1350's
// lockstep). The client's ACK of block k says it has every block up to
// k: the next window starts at k+1, whether k ended the window or a loss
// cut it short. An ACK that acknowledges nothing new is ignored (no resend
// on a duplicate: the Sorcerer's Apprentice bug). Returns the file bytes
// acknowledged.
func (t *transfer) send(start time.Time) (int64, error) {
	o := t.s.opts
	bs := int64(t.n.blockSize)
	// Blocks 1..last; the last is short, empty when size is a multiple of
	// the block size.
	last := uint64(t.size/bs) + 1
	deadline := start.Add(o.TransferTimeout)
	firstBy := start.Add(o.FirstAckTimeout)

	win := getWindow(t.n.windowSize, t.n.blockSize)
	defer putWindow(win)
	var oack []byte // built once, sent again if it is not acknowledged
	pc := ipv4.NewPacketConn(t.conn)
	rbuf := make([]byte, 4+512)

	var acked uint64 // blocks 1..acked are acknowledged; 0 also covers the OACK
	oackPending := len(t.n.oack) > 0
	attempt := 0
	var rtt rttEstimate
	refused := false // the socket reported ICMP port unreachable since the last progress
	for acked < last || oackPending {
		now := time.Now()
		if !now.Before(deadline) {
			return t.bytesAcked(acked, last, bs), errTooSlow
		}
		if acked == 0 && attempt > 0 && !now.Before(firstBy) {
			// Without this a request never acknowledged holds its slot and
			// socket for the whole retransmit budget, and a flood of them
			// every slot.
			return 0, errUnacked
		}
		// The window: the OACK alone, or blocks acked+1..end.
		var end uint64
		if oackPending {
			if oack == nil {
				oack = appendOACK(nil, t.n.oack)
			}
			win.msgs[0].Buffers[0], win.msgs[0].Buffers[1] = oack, nil
			end = 0
			if err := writeAll(pc, win.msgs[:1]); err != nil {
				return 0, err
			}
		} else {
			end = min(acked+uint64(t.n.windowSize), last)
			k, err := t.fill(win, acked+1, end, bs)
			if err != nil {
				return int64(acked) * bs, err
			}
			if err := writeAll(pc, win.msgs[:k]); err != nil {
				return int64(acked) * bs, err
			}
		}
		// The timeout (Timeout, or the transfer's own once block 1 is
		// acknowledged), then twice that for each retransmission, up to
		// MaxTimeout; until the first block is acknowledged, no later than
		// FirstAckTimeout.
		sentAt := time.Now()
		base := o.Timeout
		if acked > 0 {
			base = rtt.timeout(o.MinTimeout, o.Timeout)
		}
		wait := base + retransmitPause(base, o.MaxTimeout, attempt)
		until := earliest(now.Add(wait), deadline)
		if acked == 0 {
			// At least one Timeout, whatever FirstAckTimeout says.
			until = earliest(until, latest(firstBy, now.Add(o.Timeout)))
		}
		if err := t.conn.SetReadDeadline(until); err != nil {
			return t.bytesAcked(acked, last, bs), err
		}
		progress := false
		for !progress {
			n, err := t.conn.Read(rbuf)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					break
				}
				// A connected UDP socket reports the client's ICMP port
				// unreachable here, ahead of datagrams already queued (a
				// client's last ACK, then its port closed under a packet we
				// sent it again): read on once; twice without progress, the
				// client is gone.
				if errors.Is(err, syscall.ECONNREFUSED) && !refused {
					refused = true
					continue
				}
				return t.bytesAcked(acked, last, bs), err
			}
			if code, msg, ok := parseError(rbuf[:n]); ok {
				return t.bytesAcked(acked, last, bs), errClient{code, msg}
			}
			w, ok := parseAck(rbuf[:n])
			if !ok {
				continue
			}
			if oackPending {
				if w == 0 {
					oackPending, progress = false, true
				}
				continue
			}
			// The block the ACK names, among acked+1..end (block numbers
			// wrap at 65536; a window is never that long).
			if d := uint64(w - uint16(acked)); d >= 1 && d <= end-acked {
				acked += d
				progress = true
			}
		}
		if progress {
			refused = false
			if attempt == 0 { // Karn: no sample from a retransmitted window
				rtt.sample(time.Since(sentAt))
			}
			attempt = 0
			continue
		}
		attempt++
		if attempt > o.Retries {
			return t.bytesAcked(acked, last, bs), fmt.Errorf("no ACK after %d retransmissions (block %d)", o.Retries, acked+1)
		}
	}
	return t.size, nil
}

// rttEstimate is RFC 6298's smoothed round trip and its variation.
type rttEstimate struct{ srtt, rttvar time.Duration }

func (r *rttEstimate) sample(d time.Duration) {
	if r.srtt == 0 {
		r.srtt, r.rttvar = d, d/2
		return
	}
	diff := r.srtt - d
	if diff < 0 {
		diff = -diff
	}
	r.rttvar = (3*r.rttvar + diff) / 4
	r.srtt = (7*r.srtt + d) / 8
}

// timeout is srtt + 4 rttvar between lo and hi; hi before any sample.
func (r *rttEstimate) timeout(lo, hi time.Duration) time.Duration {
	if r.srtt == 0 {
		return hi
	}
	return min(max(r.srtt+4*r.rttvar, lo), hi)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// bytesAcked is the file bytes in blocks 1..acked.
func (t *transfer) bytesAcked(acked, last uint64, bs int64) int64 {
	if acked >= last {
		return t.size
	}
	return int64(acked) * bs
}

// fill makes the DATA packets of blocks first..last (1-based, at most a
// window) with one read of the file: each packet is its 4-byte header and
// its block's slice of the window's data, sent as two iovecs, so the
// blocks are neither read one by one nor copied. Returns the packet count.
func (t *transfer) fill(win *window, first, last uint64, bs int64) (int, error) {
	k := int(last - first + 1)
	n, err := t.file.ReadAt(win.data[:int64(k)*bs], int64(first-1)*bs)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("reading %s: %w", t.file.Name(), err)
	}
	for i := range k {
		h := win.hdrs[4*i : 4*i+4]
		binary.BigEndian.PutUint16(h[0:], opDATA)
		binary.BigEndian.PutUint16(h[2:], uint16(first+uint64(i)))
		lo, hi := min(int64(i)*bs, int64(n)), min(int64(i+1)*bs, int64(n))
		win.msgs[i].Buffers[0], win.msgs[i].Buffers[1] = h, win.data[lo:hi]
	}
	return k, nil
}

// writeAll sends every message, in as few sendmmsg(2) calls as the
// kernel allows.
func writeAll(pc *ipv4.PacketConn, msgs []ipv4.Message) error {
	for len(msgs) > 0 {
		n, err := pc.WriteBatch(msgs, 0)
		if err != nil {
			return err
		}
		msgs = msgs[n:]
	}
	return nil
}

// window holds a transfer's packet headers, the data of one window of
// blocks (contiguous, so one read fills it) and the messages that point at
// both.
type window struct {
	class int
	hdrs  []byte // 4 bytes per block
	data  []byte // blockSize bytes per block
	msgs  []ipv4.Message
	slab  []byte
}

// windowPools keep windows by size class (the slab's length rounded up to
// a power of two), so transfers reuse them instead of allocating.
var windowPools [32]sync.Pool

func getWindow(size, blockSize int) *window {
	need := size * (4 + blockSize)
	class := bits.Len(uint(need - 1))
	w, _ := windowPools[class].Get().(*window)
	if w == nil {
		w = &window{class: class, slab: make([]byte, 1<<class)}
	}
	w.hdrs = w.slab[: 4*size : 4*size]
	w.data = w.slab[4*size : need : need]
	for len(w.msgs) < size {
		w.msgs = append(w.msgs, ipv4.Message{Buffers: make([][]byte, 2)})
	}
	w.msgs = w.msgs[:size]
	return w
}

func putWindow(w *window) { windowPools[w.class].Put(w) }
