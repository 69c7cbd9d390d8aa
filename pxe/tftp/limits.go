package tftp

import (
	"net/netip"
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
