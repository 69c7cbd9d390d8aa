package httpboot

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// Defaults of the connection limits (Options).
const (
	DefaultMaxConns          = 16384
	DefaultMaxConnsPerSource = 16
	DefaultWriteStallTimeout = 30 * time.Second
	DefaultMaxRanges         = 16
)

// maxRefusing bounds the refused connections being answered at once; past
// it a refused connection is closed without an answer.
const maxRefusing = 64

// fdShare caps MaxConns so that HTTP connections, at one descriptor each
// (a held long poll has no other), use at most half of RLIMIT_NOFILE. The
// files they serve, the second descriptor of a download, are capped apart
// at a quarter (fileShare): so at most three quarters are HTTP's, and the
// rest is left to TFTP, DHCP and the API client.
func fdShare(want int, log logr.Logger) int {
	nofile, ok := noFile()
	if !ok {
		return want
	}
	if limit := int(nofile / 2); limit < want {
		log.Info("HTTP connection limit lowered to half the open-file limit (RLIMIT_NOFILE); raise that limit to allow more (--http-max-conns)",
			"requested", want, "effective", max(limit, 1), "nofile", nofile)
		return max(limit, 1)
	}
	return want
}

// fileShare is how many files the server may have open at once to serve
// them (artifacts, iPXE binaries): a quarter of RLIMIT_NOFILE, at most
// conns (each download holds a connection too).
func fileShare(conns int) int {
	nofile, ok := noFile()
	if !ok {
		return conns
	}
	return max(min(int(nofile/4), conns), 1)
}

func noFile() (uint64, bool) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	return rl.Cur, true
}

// fileSlots bounds the files open to serve them. A request over the bound
// gets a 503 with Retry-After: firmware and agents retry, and no request
// fails half-way on a descriptor the process does not have.
type fileSlots chan struct{}

// take reserves a slot, or answers 503 and returns false.
func (f fileSlots) take(w http.ResponseWriter, m *metrics) bool {
	select {
	case f <- struct{}{}:
		return true
	default:
		m.refused.WithLabelValues("files").Inc()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "server busy: too many downloads at once", http.StatusServiceUnavailable)
		return false
	}
}

func (f fileSlots) release() { <-f }

// limitListener caps open connections, in total and per source address,
// and wraps each accepted one in a stallConn. A connection over a cap is
// answered with a 503 and closed: the client sees why, and an agent retries.
type limitListener struct {
	net.Listener
	max, perSource int
	stall          time.Duration
	metrics        *metrics

	mu       sync.Mutex
	open     int
	bySource map[netip.Addr]int
	refusing chan struct{}
}

func newLimitListener(ln net.Listener, maxConns, perSource int, stall time.Duration, m *metrics) *limitListener {
	return &limitListener{Listener: ln, max: maxConns, perSource: perSource, stall: stall, metrics: m,
		bySource: map[netip.Addr]int{}, refusing: make(chan struct{}, maxRefusing)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c.RemoteAddr())
		reason := l.acquire(src)
		if reason == "" {
			return &stallConn{Conn: c, l: l, src: src}, nil
		}
		l.metrics.refused.WithLabelValues(reason).Inc()
		l.refuse(c, reason)
	}
}

// sourceOf is what MaxConnsPerSource counts by: the IPv4 address, or the
// /64 of an IPv6 one (a single host may use any address of its /64).
func sourceOf(a net.Addr) netip.Addr {
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{} // not TCP: no per-source count
	}
	ip := t.AddrPort().Addr().Unmap()
	if ip.Is6() {
		ip = netip.PrefixFrom(ip, 64).Masked().Addr()
	}
	return ip
}

// acquire counts a new connection, or says which cap it is over.
func (l *limitListener) acquire(src netip.Addr) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		return "total"
	}
	if src.IsValid() {
		if l.bySource[src] >= l.perSource {
			return "per_source"
		}
		l.bySource[src]++
	}
	l.open++
	l.metrics.conns.Set(float64(l.open))
	return ""
}

func (l *limitListener) release(src netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	l.metrics.conns.Set(float64(l.open))
	if src.IsValid() {
		if l.bySource[src] <= 1 {
			delete(l.bySource, src)
		} else {
			l.bySource[src]--
		}
	}
}

// refuse answers 503 without reading the request, then reads (and drops)
// what the client sends for a moment before closing: closing a socket
// with unread data sends a reset, which can destroy the answer before the
// client reads it. Refusals in progress are bounded; beyond that, and
// for a client that does not go away, the connection is just closed.
func (l *limitListener) refuse(c net.Conn, reason string) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	msg := "server busy: too many connections\n"
	if reason == "per_source" {
		msg = fmt.Sprintf("server busy: too many connections from your address (at most %d)\n", l.perSource)
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		_, err := fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"+
			"Content-Length: %d\r\nRetry-After: 5\r\nConnection: close\r\n\r\n%s", len(msg), msg)
		if err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// stallConn fails a write that makes no progress for l.stall: each write
// gets that long, and whenever it moved some bytes before the deadline it
// gets that long again for the rest. A firmware on a slow link keeps its
// download however long it takes; a client that stops reading is dropped
// once its socket buffers are full and l.stall has passed. A held long poll
// writes nothing until it answers, so it is not affected. Reads keep the
// http.Server's own deadlines (ReadHeaderTimeout, IdleTimeout).
type stallConn struct {
	net.Conn
	l    *limitListener
	src  netip.Addr
	once sync.Once
}

func (c *stallConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.src) })
	return err
}

func (c *stallConn) renew() error { return c.Conn.SetWriteDeadline(time.Now().Add(c.l.stall)) }

func (c *stallConn) stalled(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.l.metrics.stalls.Inc()
		return true
	}
	return false
}

func (c *stallConn) Write(p []byte) (int, error) {
	n := 0
	for {
		if err := c.renew(); err != nil {
			return n, err
		}
		k, err := c.Conn.Write(p[n:])
		n += k
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || k == 0 {
			c.stalled(err)
			return n, err
		}
	}
}

// ReadFrom keeps sendfile for artifacts (http.ServeContent hands the
// connection an *io.LimitedReader over the *os.File) under the same rule.
// On a deadline the file offset and the limit are set to the first byte
// not sent, whether the kernel's sendfile or a plain copy ran.
func (c *stallConn) ReadFrom(r io.Reader) (int64, error) {
	rf, ok := c.Conn.(io.ReaderFrom)
	lr, _ := r.(*io.LimitedReader)
	var f *os.File
	if lr != nil {
		f, _ = lr.R.(*os.File)
	} else {
		f, _ = r.(*os.File)
	}
	if !ok || f == nil {
		return io.Copy(writerOnly{c}, r)
	}
	var total int64
	for {
		pos, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return total, err
		}
		var limit int64
		if lr != nil {
			limit = lr.N
		}
		if err := c.renew(); err != nil {
			return total, err
		}
		n, err := rf.ReadFrom(r)
		total += n
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || n == 0 {
			c.stalled(err)
			return total, err
		}
		if _, err := f.Seek(pos+n, io.SeekStart); err != nil {
			return total, err
		}
		if lr != nil {
			lr.N = limit - n
		}
	}
}

// CloseWrite lets http.Server half-close as it does on a *net.TCPConn.
func (c *stallConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writerOnly hides ReadFrom so io.Copy does not call it again.
type writerOnly struct{ io.Writer }

// tooManyRanges answers 416 to a Range header with more than max ranges.
// http.ServeContent answers any number with a multipart body whose part
// headers alone can be hundreds of times the request (60,000 one-byte
// ranges: 9 MB); answering the whole file instead would be worse still.
// RFC 9110 (14.2) lets a server refuse such a Range.
func tooManyRanges(w http.ResponseWriter, r *http.Request, maxRanges int) bool {
	for _, v := range r.Header.Values("Range") {
		if strings.Count(v, ",") >= maxRanges {
			http.Error(w, fmt.Sprintf("too many ranges in the Range header (at most %d)", maxRanges), http.StatusRequestedRangeNotSatisfiable)
			return true
		}
	}
	return false
}

// stallBody gives each read of a request body stall to return data (any
// amount), so a client that sends its headers and then trickles or stops
// the body does not hold the handler and the connection for ever. At the
// end of the body net/http clears the read deadline itself as it starts
// its background read, so a handler that works on after reading the body
// (or a held long poll, which has none) is not cancelled by it.
type stallBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	stall time.Duration
}

func (b *stallBody) Read(p []byte) (int, error) {
	_ = b.rc.SetReadDeadline(time.Now().Add(b.stall))
	return b.ReadCloser.Read(p)
}
