package httpboot

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/test/netnstest"
)

const artifactEndpoint = "GET /artifacts/{path...}"

func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func hexSum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// holdHandler stands in for the agent's long poll (GET actions?waitSeconds=N):
// it holds each request until release is closed, then answers.
type holdHandler struct {
	arrived atomic.Int32
	release chan struct{}
	once    sync.Once
}

func (h *holdHandler) releaseAll() { h.once.Do(func() { close(h.release) }) }

func (h *holdHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.arrived.Add(1)
	select {
	case <-h.release:
	case <-r.Context().Done():
		return
	}
	_, _ = io.WriteString(w, "none\n")
}

// limitEnv serves a 4 MiB artifact ("big") and GET /hold from a server
// namespace, with small TCP buffers on both sides (so a client that does
// not read blocks the server's writes after some 100 KiB, not 10 MiB).
type limitEnv struct {
	pair *netnstest.Pair
	srv  *Server
	hold *holdHandler
	big  []byte
	base string
	// upload gets the result of each POST /upload handler's body read.
	upload chan error
}

func startLimitEnv(t *testing.T, mutate func(*Options)) *limitEnv {
	t.Helper()
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "curl", "ip", "sysctl")
	p := netnstest.NewPair(t, netnstest.PairOptions{CliAddress: true})
	p.Srv.Exec(t, "sysctl", "-q", "-w", "net.ipv4.tcp_wmem=4096 16384 65536")
	p.Cli.Exec(t, "sysctl", "-q", "-w", "net.ipv4.tcp_rmem=4096 16384 65536")
	e := &limitEnv{pair: p, hold: &holdHandler{release: make(chan struct{})}, big: make([]byte, 4<<20), upload: make(chan error, 4)}
	_, _ = rand.Read(e.big)
	dir := t.TempDir()
	noErr(t, os.WriteFile(filepath.Join(dir, "big"), e.big, 0o644))
	noErr(t, os.WriteFile(filepath.Join(dir, "small"), []byte("small artifact\n"), 0o644))
	opts := Options{ArtifactDir: dir, Artifacts: ArtifactMap{"big": {SHA256: hexSum(e.big)}, "small": {SHA256: hexSum([]byte("small artifact\n"))}},
		Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 0})}
	if mutate != nil {
		mutate(&opts)
	}
	var err error
	e.srv, err = New(opts)
	noErr(t, err)
	noErr(t, e.srv.Handle("GET /hold", e.hold))
	noErr(t, e.srv.Handle("POST /upload", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if err == nil && r.URL.Query().Has("think") {
			// Work on after the whole body came, for longer than the
			// stall timeout: the request must not be cancelled.
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
				err = fmt.Errorf("request cancelled while the handler worked: %w", context.Cause(r.Context()))
			}
		}
		e.upload <- err
	})))
	var ln net.Listener
	noErr(t, p.Srv.Do(func() (err error) { ln, err = net.Listen("tcp4", p.SrvIP.String()+":80"); return err }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		e.hold.releaseAll()
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Serve did not return")
		}
	})
	e.base = "http://" + p.SrvIP.String()
	return e
}

// dial opens a TCP connection from src in the client namespace, with a
// 4 KiB receive buffer.
func (e *limitEnv) dial(t *testing.T, src netip.Addr) net.Conn {
	t.Helper()
	var c net.Conn
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src.AsSlice()}, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	noErr(t, e.pair.Cli.Do(func() (err error) { c, err = d.Dial("tcp4", e.pair.SrvIP.String()+":80"); return err }))
	t.Cleanup(func() { c.Close() })
	return c
}

func (e *limitEnv) curl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return e.pair.Cli.Output(60*time.Second, "curl", append([]string{"-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download}"}, args...)...)
}

// pacedReader reads like a slow but steady client: 64 KiB, then a pause.
type pacedReader struct {
	r    io.Reader
	left int
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		time.Sleep(100 * time.Millisecond)
		p.left = 64 << 10
	}
	n, err := p.r.Read(b[:min(len(b), p.left)])
	p.left -= n
	return n, err
}

// A client that asks for an artifact and stops reading is dropped once a
// write has made no progress for WriteStallTimeout; one that reads slowly
// but steadily gets the whole file although it takes several times as
// long. Before the stall rule the first held its connection (and the open
// artifact) for ever.
func TestSlowReaderDroppedProgressingReaderCompletes(t *testing.T) {
	e := startLimitEnv(t, func(o *Options) { o.WriteStallTimeout = 2 * time.Second })
	ok := e.srv.metrics.requests.WithLabelValues(artifactEndpoint, "200")

	t.Run("stalled reader dropped", func(t *testing.T) {
		c := e.dial(t, e.pair.CliIP)
		_, err := io.WriteString(c, "GET /artifacts/big HTTP/1.1\r\nHost: boot\r\n\r\n")
		noErr(t, err)
		// The request is counted when its handler returns: only once the
		// server gave up on the write.
		if !netnstest.WaitFor(90*time.Second, func() bool { return testutil.ToFloat64(ok) == 1 }) {
			t.Fatal("the server still writes to a client that stopped reading")
		}
		noErr(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
		n, err := io.Copy(io.Discard, c)
		if n >= int64(len(e.big)) {
			t.Fatalf("got %d bytes (%v): the whole file, not cut off", n, err)
		}
		t.Logf("stalled client got %d of %d bytes, then %v", n, len(e.big), err)
	})

	t.Run("slow steady reader completes", func(t *testing.T) {
		c := e.dial(t, e.pair.CliIP)
		_, err := io.WriteString(c, "GET /artifacts/big HTTP/1.1\r\nHost: boot\r\nConnection: close\r\n\r\n")
		noErr(t, err)
		start := time.Now()
		resp, err := http.ReadResponse(bufio.NewReaderSize(&pacedReader{r: c}, 64<<10), nil)
		noErr(t, err)
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 || hexSum(body) != hexSum(e.big) {
			t.Fatalf("status %d, %d bytes, %v", resp.StatusCode, len(body), err)
		}
		t.Logf("slow reader took %v (stall timeout 2s)", time.Since(start).Round(time.Millisecond))
	})
}

// A client that sends its headers and then stops sending the body it
// announced is dropped once a body read has waited WriteStallTimeout;
// before, the handler (and the connection) waited for ever.
func TestStalledRequestBodyDropped(t *testing.T) {
	e := startLimitEnv(t, func(o *Options) { o.WriteStallTimeout = 2 * time.Second })
	c := e.dial(t, e.pair.CliIP)
	_, err := io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: boot\r\nContent-Length: 100\r\n\r\n0123456789")
	noErr(t, err)
	select {
	case err := <-e.upload:
		if err == nil {
			t.Fatal("the body read succeeded although 90 of 100 bytes never came")
		}
		t.Logf("body read ended with %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("the handler still waits for the rest of the body")
	}

	// A complete body, then a handler that takes longer than the stall
	// timeout to answer (an agent report): it is not cancelled.
	c = e.dial(t, e.pair.CliIP)
	_, err = io.WriteString(c, "POST /upload?think HTTP/1.1\r\nHost: boot\r\nContent-Length: 10\r\n\r\n0123456789")
	noErr(t, err)
	if err := <-e.upload; err != nil {
		t.Fatal(err)
	}
}

// One address holding MaxConnsPerSource connections (long polls here) gets
// a 503 for the next one, while another address is still served; over
// MaxConns every address gets a 503 until connections close.
func TestConnectionCaps(t *testing.T) {
	t.Run("per source", func(t *testing.T) {
		e := startLimitEnv(t, func(o *Options) { o.MaxConnsPerSource = 4 })
		a := e.pair.CliIP.Next()
		e.pair.Cli.Exec(t, "ip", "addr", "add", netip.PrefixFrom(a, e.pair.Subnet.Bits()).String(), "dev", e.pair.CliIf)
		held := e.holdFrom(t, a, 4)

		if out, err := e.curl(t, "--interface", a.String(), e.base+"/artifacts/small"); !strings.HasPrefix(out, "503 ") {
			t.Fatalf("fifth connection from %v: %q %v, want a 503", a, out, err)
		}
		if out, err := e.curl(t, e.base+"/artifacts/small"); err != nil || out != "200 15" {
			t.Fatalf("other address %v: %q %v", e.pair.CliIP, out, err)
		}
		if got := testutil.ToFloat64(e.srv.metrics.refused.WithLabelValues("per_source")); got != 1 {
			t.Errorf("refused{per_source} = %v", got)
		}
		e.hold.releaseAll()
		e.expectAnswers(t, held)
	})
	t.Run("total", func(t *testing.T) {
		e := startLimitEnv(t, func(o *Options) { o.MaxConns = 4 })
		a := e.pair.CliIP.Next()
		e.pair.Cli.Exec(t, "ip", "addr", "add", netip.PrefixFrom(a, e.pair.Subnet.Bits()).String(), "dev", e.pair.CliIf)
		held := e.holdFrom(t, a, 4)
		if out, err := e.curl(t, e.base+"/artifacts/small"); !strings.HasPrefix(out, "503 ") {
			t.Fatalf("connection over the total cap: %q %v, want a 503", out, err)
		}
		e.hold.releaseAll()
		e.expectAnswers(t, held)
		// The held connections are closed (Connection: close): the
		// capacity is back. Polled, as the server closes them after
		// answering.
		var out string
		if !netnstest.WaitFor(30*time.Second, func() bool { out, _ = e.curl(t, e.base+"/artifacts/small"); return out == "200 15" }) {
			t.Fatalf("after the held connections closed: %q", out)
		}
	})
}

// holdFrom opens n long polls from src and waits until the handler holds
// them all.
func (e *limitEnv) holdFrom(t *testing.T, src netip.Addr, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c := e.dial(t, src)
		_, err := io.WriteString(c, "GET /hold HTTP/1.1\r\nHost: boot\r\nConnection: close\r\n\r\n")
		noErr(t, err)
		conns = append(conns, c)
	}
	if !netnstest.WaitFor(30*time.Second, func() bool { return e.hold.arrived.Load() == int32(n) }) {
		t.Fatalf("%d of %d long polls arrived", e.hold.arrived.Load(), n)
	}
	return conns
}

func (e *limitEnv) expectAnswers(t *testing.T, conns []net.Conn) {
	t.Helper()
	for i, c := range conns {
		noErr(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("held connection %d: %v %v", i, resp, err)
		}
	}
}

// A Range header with 60,000 one-byte ranges gets a short 416, not a 9 MB
// multipart answer; a few ranges still get their multipart 206. (The big
// request goes over a plain socket: curl 7.88 sends only the first ~140 KB
// of a 240 KB header when the socket does not take it at once.)
func TestManyRangesRefused(t *testing.T) {
	e := startLimitEnv(t, nil)
	c := e.dial(t, e.pair.CliIP)
	_, err := io.WriteString(c, "GET /artifacts/big HTTP/1.1\r\nHost: boot\r\nConnection: close\r\n"+
		"Range: bytes="+strings.Repeat("0-0,", 59_999)+"0-0\r\n\r\n")
	noErr(t, err)
	noErr(t, c.SetReadDeadline(time.Now().Add(60*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 64<<10), nil)
	noErr(t, err)
	n, err := io.Copy(io.Discard, resp.Body)
	noErr(t, err)
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable || n > 1024 {
		t.Fatalf("60,000 ranges: status %d, %d bytes; want a short 416", resp.StatusCode, n)
	}
	out, err := e.curl(t, "-r", "0-9,100-109,1000-1009", e.base+"/artifacts/big")
	if err != nil || !strings.HasPrefix(out, "206 ") {
		t.Fatalf("three ranges: %q %v", out, err)
	}
}

// 1,100 agents, each from its own address, hold a long poll open for
// longer than the write stall timeout: with the default caps every one is
// held and then answered. Loopback: 127.1.x.y are all local addresses.
func TestHeldLongPollsAtScale(t *testing.T) {
	const n = 1100
	hold := &holdHandler{release: make(chan struct{})}
	s, err := New(Options{WriteStallTimeout: time.Second, Logger: testr.NewWithOptions(t, testr.Options{Verbosity: -1})})
	noErr(t, err)
	noErr(t, s.Handle("GET /agent/v1/actions", hold))
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	noErr(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	errs := make(chan error, n)
	for i := range n {
		go func() {
			src := &net.TCPAddr{IP: net.IPv4(127, 1, byte(i/250), byte(i%250+1))}
			c, err := (&net.Dialer{LocalAddr: src}).Dial("tcp4", ln.Addr().String())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(3 * time.Minute))
			if _, err := io.WriteString(c, "GET /agent/v1/actions?waitSeconds=300 HTTP/1.1\r\nHost: boot\r\n\r\n"); err != nil {
				errs <- err
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil && resp.StatusCode != 200 {
				err = fmt.Errorf("%v: status %d", src, resp.StatusCode)
			}
			errs <- err
		}()
	}
	if !netnstest.WaitFor(2*time.Minute, func() bool { return hold.arrived.Load() == n }) {
		t.Fatalf("%d of %d long polls held", hold.arrived.Load(), n)
	}
	// Idle for longer than the stall timeout, as a long poll is.
	time.Sleep(2 * time.Second)
	close(hold.release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// With a low open-file limit the connection cap shrinks to half of it
// (one descriptor each) and the files open to serve them to a quarter, so
// HTTP cannot use up the descriptors TFTP, DHCP and the API client need.
func TestConnCapFollowsFileLimit(t *testing.T) {
	var orig syscall.Rlimit
	noErr(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig))
	low := orig
	low.Cur = 400
	noErr(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	if got := fdShare(DefaultMaxConns, testr.New(t)); got != 200 {
		t.Errorf("cap with RLIMIT_NOFILE 400: %d, want 200", got)
	}
	if got := fdShare(50, testr.New(t)); got != 50 {
		t.Errorf("a cap below the file limit's share changed: %d", got)
	}
	if got := fileShare(DefaultMaxConns); got != 100 {
		t.Errorf("open files with RLIMIT_NOFILE 400: %d, want 100", got)
	}
	if got := fileShare(30); got != 30 {
		t.Errorf("open files with 30 connections: %d, want 30 (each download holds a connection)", got)
	}
}

// A request for a file while every file slot is taken gets a 503 with
// Retry-After and is counted; a released slot serves the next.
func TestFileSlots(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	slots := make(fileSlots, 1)
	if !slots.take(httptest.NewRecorder(), m) {
		t.Fatal("the first slot was refused")
	}
	w := httptest.NewRecorder()
	if slots.take(w, m) {
		t.Fatal("a second file was opened with one slot")
	}
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "too many downloads") {
		t.Fatalf("refusal: %d %q %q, want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	if n := testutil.ToFloat64(m.refused.WithLabelValues("files")); n != 1 {
		t.Fatalf("refusals counted: %v, want 1", n)
	}
	slots.release()
	if !slots.take(httptest.NewRecorder(), m) {
		t.Fatal("a released slot was not given again")
	}
}

// The per-source cap counts an IPv6 client by its /64.
func TestSourceOf(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"10.0.0.7:4242", "10.0.0.7"},
		{"[::ffff:10.0.0.7]:4242", "10.0.0.7"},
		{"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:80", "2001:db8:1:2::"},
	} {
		got := sourceOf(net.TCPAddrFromAddrPort(netip.MustParseAddrPort(tt.addr)))
		if got.String() != tt.want {
			t.Errorf("sourceOf(%s) = %v, want %s", tt.addr, got, tt.want)
		}
	}
}
