// Package tftp serves iPXE binaries read-only over TFTP (RFC 1350, with the
// blksize and tsize options of RFC 2348/2349) using github.com/pin/tftp/v3.
//
// Files come from one root directory, by default DefaultRoot, where the
// Debian package "ipxe" installs undionly.kpxe and snponly.efi. Request
// names are confined to that root: absolute paths, ".." elements, NUL and
// control bytes and backslashes are refused outright, and files are opened
// through os.Root, which refuses symlinks that resolve outside the root.
// (Debian's /usr/lib/ipxe/ipxe.efi is such a symlink, into /boot; serve
// snponly.efi, or point Root at a directory holding real files.)
// Write requests are refused. Concurrency (in total and per client
// address), the wait for a transfer's first ACK and transfer time are
// bounded.
package tftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/pin/tftp/v3"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"

	"anvil.dev/anvil/internal/backoff"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/internal/safepath"
)

// DefaultRoot is where Debian's ipxe package installs the iPXE binaries.
const DefaultRoot = "/usr/lib/ipxe"

// Options configures a Server. The zero value serves DefaultRoot on
// 0.0.0.0:69 on all interfaces.
type Options struct {
	// Root directory served read-only. Default DefaultRoot.
	Root string
	// ListenAddr, default 0.0.0.0:69.
	ListenAddr netip.AddrPort
	// Interface, if set, binds the request socket to it (SO_BINDTODEVICE).
	Interface string
	// Timeout is how long the first copy of a packet waits for its ACK
	// (default 1s, like tftpd-hpa). Each retransmission of the same packet
	// waits twice as long as the one before, up to MaxTimeout (default
	// 4s), with no random pause (pin/tftp's default adds 0-1s to every
	// retransmission). Retries is the retransmissions per packet (default
	// 5); with the defaults a silent client is abandoned after 16s.
	//
	// Why not shorter, when a PXE segment's round trip is well under a
	// millisecond: pin/tftp has one timeout for every packet, the OACK
	// included, and a client that is slow to acknowledge the OACK (a
	// loaded host or server) then gets it twice. Strict clients abort on
	// that ("unexpected OACK": 12-33 of 200 atftp fetches per run at 250ms
	// with 200 clients on one core; none at 500ms or 1s in the same test).
	Timeout    time.Duration
	MaxTimeout time.Duration
	Retries    int
	// TransferTimeout caps one whole transfer (default 5m), so a client
	// that acknowledges just before every timeout cannot hold a slot.
	TransferTimeout time.Duration
	// MaxConcurrent transfers (default 1024). A request beyond it gets an
	// ERROR packet ("server busy"; pin/tftp sends it with code 1, "file
	// not found"), and the firmware does NOT retry: EDK2's and iPXE's TFTP
	// clients end the boot on any ERROR, so every refusal is a failed
	// boot. Keep it above the number of hosts that may power on at once;
	// a transfer costs only a goroutine, a UDP socket and two block-sized
	// buffers. The bound exists so a flood cannot exhaust file
	// descriptors.
	MaxConcurrent int
	// MaxPerSource transfers from one IP address at once (default 8; a
	// PXE client runs one or two). A request beyond it gets the same
	// ERROR as a busy server, so one flooding address cannot take the
	// slots other hosts boot with. Raise it only for clients behind NAT.
	MaxPerSource int
	// FirstAckTimeout is how long a transfer may wait for the ACK of its
	// first DATA block (after the OACK, when there is one) before it is
	// dropped and its slot freed (default 4s: the first three copies of
	// the packet, sent at 0, 1 and 3 s with the default Timeout, each get
	// their full wait). Without it a request that is never acknowledged
	// holds its slot and socket for the whole retransmit budget (16s), and
	// about 70 spoofed requests a second keep every slot taken. Once the
	// first block is acknowledged the full budget applies.
	FirstAckTimeout time.Duration
	// MaxBlockSize caps the negotiated blksize; 0 lets pin/tftp use the
	// interface MTU minus headers.
	MaxBlockSize int
	// Registerer receives the metrics; nil keeps them private.
	Registerer prometheus.Registerer
	Logger     logr.Logger
}

func (o *Options) setDefaults() {
	if o.Root == "" {
		o.Root = DefaultRoot
	}
	if !o.ListenAddr.IsValid() {
		o.ListenAddr = netip.AddrPortFrom(netip.IPv4Unspecified(), 69)
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.MaxTimeout < o.Timeout {
		o.MaxTimeout = max(4*time.Second, o.Timeout)
	}
	if o.Retries <= 0 {
		o.Retries = 5
	}
	if o.TransferTimeout <= 0 {
		o.TransferTimeout = 5 * time.Minute
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 1024
	}
	if o.MaxPerSource <= 0 {
		o.MaxPerSource = 8
	}
	if o.FirstAckTimeout <= 0 {
		o.FirstAckTimeout = 4 * o.Timeout
	}
}

// Errors sent to clients. They say nothing about the server's file system.
var (
	errNotFound = errors.New("file not found")
	errDenied   = errors.New("access violation")
	errBusy     = errors.New("server busy") // firmware gives up on it: see Options.MaxConcurrent
	errSrcBusy  = errors.New("server busy: too many transfers from your address")
	errReadOnly = errors.New("access violation: read-only server")
	errTooSlow  = errors.New("transfer timed out")
)

// Server is a read-only TFTP server.
type Server struct {
	opts    Options
	log     logr.Logger
	root    *os.Root
	conn    net.PacketConn
	srv     *tftp.Server
	slots   chan struct{}
	metrics *metrics

	mu       sync.Mutex
	perSrc   map[netip.Addr]int
	refusals map[netip.Addr]int // per-source refusals not yet logged
	lastLog  time.Time

	// unacked maps the goroutine running a transfer that has not had its
	// first ACK to that transfer: see backoff.
	unacked sync.Map // uint64 -> *firstAck
}

// NewServer opens the root directory and the UDP socket (in the calling
// thread's network namespace).
func NewServer(opts Options) (*Server, error) {
	opts.setDefaults()
	root, err := os.OpenRoot(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("tftp: open root: %w", err)
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger.WithName("tftp"),
		root:     root,
		slots:    make(chan struct{}, opts.MaxConcurrent),
		metrics:  newMetrics(opts.Registerer),
		perSrc:   map[netip.Addr]int{},
		refusals: map[netip.Addr]int{},
	}
	lc := net.ListenConfig{}
	if opts.Interface != "" {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = unix.BindToDevice(int(fd), opts.Interface) })
			return errors.Join(err, serr)
		}
	}
	s.conn, err = lc.ListenPacket(context.Background(), "udp4", opts.ListenAddr.String())
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("tftp: listen %v: %w", opts.ListenAddr, err)
	}
	s.srv = tftp.NewServer(s.readHandler, s.writeHandler)
	s.srv.SetTimeout(opts.Timeout)
	s.srv.SetRetries(opts.Retries)
	// pin/tftp's default backoff sleeps a random 0-1s before every
	// retransmission, on top of the timeout: with our old 2s timeout each
	// lost block cost about 2.5s. Ours doubles the wait instead.
	s.srv.SetBackoff(s.backoff)
	if opts.MaxBlockSize > 0 {
		s.srv.SetBlockSize(opts.MaxBlockSize)
	}
	s.srv.SetHook(hook{s})
	return s, nil
}

// Addr is the request socket's local address.
func (s *Server) Addr() net.Addr { return s.conn.LocalAddr() }

// Serve answers requests until ctx is done, then waits for running
// transfers (each bounded by TransferTimeout) and returns. pin/tftp opens a
// socket per transfer from this goroutine's thread, so call Serve in the
// network namespace the server belongs to.
func (s *Server) Serve(ctx context.Context) error {
	defer s.root.Close()
	stop := context.AfterFunc(ctx, s.srv.Shutdown)
	defer stop()
	s.log.Info("serving", "addr", s.conn.LocalAddr().String(), "root", s.opts.Root)
	err := s.srv.Serve(s.conn)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// open resolves a request path inside the root. Exposed to the fuzz test.
func (s *Server) open(name string) (*os.File, fs.FileInfo, error) {
	f, fi, _, err := safepath.Open(s.root, name)
	return f, fi, err
}

func (s *Server) readHandler(filename string, rf io.ReaderFrom) (err error) {
	var src netip.Addr
	remote := ""
	if ot, ok := rf.(tftp.OutgoingTransfer); ok {
		ra := ot.RemoteAddr()
		remote = ra.String()
		src = ra.AddrPort().Addr().Unmap()
	}
	log := s.log.WithValues("file", filename, "remote", remote)
	if !s.acquireSource(src) {
		s.metrics.transfers.WithLabelValues("source_busy").Inc()
		s.logSourceRefusal(src)
		return errSrcBusy
	}
	defer s.releaseSource(src)
	select {
	case s.slots <- struct{}{}:
	default:
		s.metrics.transfers.WithLabelValues("busy").Inc()
		log.Info("refused: too many concurrent transfers; this host's boot fails (raise --tftp-max-concurrent)", "max", s.opts.MaxConcurrent)
		return errBusy
	}
	defer func() { <-s.slots }()

	f, fi, err := s.open(filename)
	if err != nil {
		reason, clientErr := "not_found", errNotFound
		if errors.Is(err, safepath.ErrInvalid) || errors.Is(err, safepath.ErrNotRegular) || !errors.Is(err, fs.ErrNotExist) {
			reason, clientErr = "denied", errDenied
		}
		s.metrics.transfers.WithLabelValues(reason).Inc()
		log.Info("refused", "reason", reason, "error", err.Error())
		return clientErr
	}
	defer f.Close()
	if ot, ok := rf.(tftp.OutgoingTransfer); ok {
		ot.SetSize(fi.Size())
	}
	s.metrics.active.Inc()
	defer s.metrics.active.Dec()
	start := time.Now()
	fa := s.watchFirstAck(start)
	defer s.unwatch()
	defer func() {
		// backoff ends a transfer whose first ACK is overdue by panicking
		// out of pin/tftp's send loop; pin/tftp's ReadFrom closes the
		// transfer's socket on the way out.
		if r := recover(); r != nil {
			if _, ok := r.(unackedPanic); !ok {
				panic(r)
			}
			s.metrics.transfers.WithLabelValues("unacked").Inc()
			log.V(1).Info("dropped: first block not acknowledged", "after", time.Since(start).String())
			err = nil
		}
	}()
	r := &limitedReader{r: f, deadline: start.Add(s.opts.TransferTimeout), ack: fa}
	n, err := rf.ReadFrom(r)
	s.metrics.bytes.Add(float64(n))
	s.metrics.duration.Observe(time.Since(start).Seconds())
	if err != nil {
		// PXE firmware (OVMF, Intel) often asks with tsize, reads the
		// size from the OACK and aborts with error code 8 before asking
		// again: that is a size probe, not a failure.
		if n == 0 && strings.Contains(err.Error(), "code=8") {
			s.metrics.transfers.WithLabelValues("size_probe").Inc()
			log.V(1).Info("client ended the transfer after option negotiation (size probe)")
			return nil
		}
		s.metrics.transfers.WithLabelValues("error").Inc()
		log.Info("transfer failed", "bytes", n, "error", err.Error())
		return nil // pin/tftp already sent the error packet
	}
	s.metrics.transfers.WithLabelValues("ok").Inc()
	log.V(1).Info("sent", "bytes", n, "duration", time.Since(start).String())
	return nil
}

func (s *Server) writeHandler(filename string, wt io.WriterTo) error {
	s.metrics.transfers.WithLabelValues("write_refused").Inc()
	s.log.Info("refused write request", "file", filename)
	return errReadOnly
}

// retransmitPause is what pin/tftp sleeps before retransmission number
// attempt (0 for the first) after a send has waited timeout for its ACK in
// vain, so that the gaps between sends of one packet are timeout, 2x, 4x,
// ... up to maxWait. pin/tftp does not read during the pause: an ACK that
// arrives then is read after the retransmission (which the client answers
// with a duplicate ACK that is ignored), so nothing is lost but time.
func retransmitPause(timeout, maxWait time.Duration, attempt int) time.Duration {
	return backoff.Backoff{Base: timeout, Cap: maxWait}.Step(attempt+1) - timeout
}

// limitedReader fails the transfer once its deadline has passed, and tells
// ack when pin/tftp asks for the second block: it does that only after the
// first was acknowledged.
type limitedReader struct {
	r        io.Reader
	deadline time.Time
	ack      *firstAck
	first    int   // len(p) of the first Read: the block size
	n        int64 // bytes returned so far
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if time.Now().After(l.deadline) {
		return 0, errTooSlow
	}
	if l.first == 0 {
		l.first = len(p)
	} else if l.n >= int64(l.first) && l.ack != nil {
		l.ack.done.Store(true)
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

// hook logs protocol-level failures pin/tftp reports (client gone, too
// many retransmissions).
type hook struct{ s *Server }

func (h hook) OnSuccess(tftp.TransferStats) {}

func (h hook) OnFailure(st tftp.TransferStats, err error) {
	h.s.log.V(1).Info("transfer error", "file", st.Filename, "remote", st.RemoteAddr.String(), "error", err.Error())
}

type metrics struct {
	transfers *prometheus.CounterVec
	bytes     prometheus.Counter
	active    prometheus.Gauge
	duration  prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_tftp_requests_total", Help: "TFTP requests by result (ok, error, size_probe, not_found, denied, busy, source_busy, unacked, write_refused).",
		}, []string{"result"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "anvil_tftp_bytes_sent_total", Help: "File bytes sent over TFTP.",
		}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "anvil_tftp_active_transfers", Help: "TFTP transfers in progress.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "anvil_tftp_transfer_duration_seconds", Help: "Duration of TFTP transfers.",
			Buckets: prometheus.ExponentialBuckets(0.005, 3, 10),
		}),
	}
	if reg != nil {
		m.transfers = pxe.Register(reg, m.transfers)
		m.bytes = pxe.Register(reg, m.bytes)
		m.active = pxe.Register(reg, m.active)
		m.duration = pxe.Register(reg, m.duration)
	}
	return m
}
