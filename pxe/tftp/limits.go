package tftp

import (
	"bytes"
	"net/netip"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// acquireSource counts a transfer against its source address, or reports
// that the address already has MaxPerSource.
func (s *Server) acquireSource(src netip.Addr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perSrc[src] >= s.opts.MaxPerSource {
		s.refusals[src]++
		return false
	}
	s.perSrc[src]++
	return true
}

func (s *Server) releaseSource(src netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perSrc[src] <= 1 {
		delete(s.perSrc, src)
	} else {
		s.perSrc[src]--
	}
}

// logSourceRefusal logs per-source refusals at most every 10s (a flood
// would otherwise write a line per packet), with the count per address.
func (s *Server) logSourceRefusal(src netip.Addr) {
	s.mu.Lock()
	if time.Since(s.lastLog) < 10*time.Second {
		s.mu.Unlock()
		return
	}
	s.lastLog = time.Now()
	counts := s.refusals
	s.refusals = map[netip.Addr]int{}
	s.mu.Unlock()
	for a, n := range counts {
		s.log.Info("refused: too many transfers from one address (--tftp-max-per-source)", "remote", a.String(), "refused", n, "max", s.opts.MaxPerSource)
	}
}

// unackedPanic is what backoff panics with; readHandler recovers it.
type unackedPanic struct{}

// firstAck is a transfer waiting for the ACK of its first block.
type firstAck struct {
	by   time.Time // dropped if not acknowledged by then
	done atomic.Bool
}

// watchFirstAck registers the calling goroutine's transfer for backoff.
// pin/tftp runs the read handler, its send loop and the backoff function
// on one goroutine, and the backoff function is the only code of ours that
// runs while a packet goes unanswered; it carries no transfer, so the
// goroutine id ties the two together.
func (s *Server) watchFirstAck(start time.Time) *firstAck {
	fa := &firstAck{by: start.Add(s.opts.FirstAckTimeout)}
	if id := goid(); id != 0 { // 0: no id; then only the full budget applies
		s.unacked.Store(id, fa)
	}
	return fa
}

func (s *Server) unwatch() { s.unacked.Delete(goid()) }

// backoff is pin/tftp's pause before a retransmission. For a transfer
// whose first block is still unacknowledged and whose next copy would go
// out after FirstAckTimeout, it ends the transfer instead: it panics with
// unackedPanic, pin/tftp's ReadFrom closes the transfer socket as the panic
// passes, and readHandler recovers and frees the slot. pin/tftp has no
// other way to stop a transfer from outside its send loop.
func (s *Server) backoff(attempt int) time.Duration {
	pause := retransmitPause(s.opts.Timeout, s.opts.MaxTimeout, attempt)
	if v, ok := s.unacked.Load(goid()); ok {
		fa := v.(*firstAck)
		if !fa.done.Load() && !time.Now().Add(pause).Before(fa.by) {
			panic(unackedPanic{})
		}
	}
	return pause
}

// goid is the calling goroutine's id, from the first line of its stack
// trace ("goroutine 42 [running]:").
func goid() uint64 {
	var buf [40]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
