// Package tftp serves iPXE binaries read-only over TFTP: RFC 1350, with
// the blksize, tsize and windowsize options of RFC 2348, 2349 and 7440.
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
//
// The protocol is ours (packet.go, transfer.go), not a library's: each
// transfer sends a window of blocks with one sendmmsg(2), waits for the
// ACK with one deadline, and keeps its packets in a pooled buffer.
// github.com/pin/tftp, which this package used before, sends in lockstep
// and does not offer windowsize.
package tftp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
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
	// ListenAddr, default 0.0.0.0:69. An IPv6 address (e.g. [::]:69)
	// serves IPv6 only: run one Server per family.
	ListenAddr netip.AddrPort
	// Interface, if set, binds the request socket to it (SO_BINDTODEVICE).
	Interface string
	// Timeout is how long the first copy of a packet (or of a window of
	// blocks) waits for its ACK (default 1s, like tftpd-hpa). Each
	// retransmission of the same packet waits twice as long as the one
	// before, up to MaxTimeout (default 4s), with no random pause. Retries
	// is the retransmissions per packet (default 5); with the defaults a
	// silent client gets copies at 0, 1, 3, 7, 11 and 15s and is abandoned
	// at 19s.
	//
	// Why not shorter, when a PXE segment's round trip is well under a
	// millisecond: one timeout serves every packet, the OACK included, and
	// a client that is slow to acknowledge the OACK (a loaded host or
	// server) then gets it twice. Strict clients abort on that ("unexpected
	// OACK": 12-33 of 200 atftp fetches per run at 250ms with 200 clients
	// on one core; none at 500ms or 1s in the same test).
	Timeout    time.Duration
	MaxTimeout time.Duration
	Retries    int
	// MinTimeout is the floor of a transfer's own timeout (default
	// 200ms, TCP's minimum RTO on Linux). Once a window of blocks has been
	// acknowledged, the transfer waits for the next as RFC 6298 does for
	// TCP: the smoothed round trip plus four times its variation, between
	// MinTimeout and Timeout, so on a link with a millisecond of delay a
	// lost block costs a fifth of a second instead of a second. The OACK
	// and the first block always wait Timeout (a strict client aborts on
	// a second OACK).
	MinTimeout time.Duration
	// TransferTimeout caps one whole transfer (default 5m), so a client
	// that acknowledges just before every timeout cannot hold a slot.
	TransferTimeout time.Duration
	// MaxConcurrent transfers (default 1024). A request beyond it gets an
	// ERROR packet ("server busy"), and the firmware does NOT retry: EDK2's and iPXE's TFTP
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
	// dropped and its slot freed (default 4s: three copies of the packet,
	// sent at 0, 1 and 3 s with the default Timeout). Without it a request
	// that is never acknowledged holds its slot and socket for the whole
	// retransmit budget (19s), and
	// about 70 spoofed requests a second keep every slot taken. Once the
	// first block is acknowledged the full budget applies.
	FirstAckTimeout time.Duration
	// MaxBlockSize caps the negotiated blksize; 0: the MTU of Interface (or
	// of the interface holding ListenAddr) minus the IP, UDP and TFTP
	// headers, and 1468 (a 1500-byte MTU's) when neither tells.
	MaxBlockSize int
	// MaxWindowSize caps the negotiated windowsize (RFC 7440: blocks sent
	// before an ACK is awaited; default 64). OVMF asks for 4.
	MaxWindowSize int
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
	if o.MinTimeout <= 0 || o.MinTimeout > o.Timeout {
		o.MinTimeout = min(200*time.Millisecond, o.Timeout)
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
	if o.MaxWindowSize <= 0 {
		o.MaxWindowSize = 64
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
	errMode     = errors.New("only octet (binary) mode is served")
	errTooSlow  = errors.New("transfer timed out")
)

// Server is a read-only TFTP server.
type Server struct {
	opts     Options
	log      logr.Logger
	root     *os.Root
	conn     *net.UDPConn
	pc       *ipv4.PacketConn // conn, with the request's destination address
	pc6      *ipv6.PacketConn // the same for an IPv6 ListenAddr (pc is nil then)
	maxBlock int
	slots    chan struct{}
	metrics  *metrics
	running  sync.WaitGroup // transfers

	mu       sync.Mutex
	perSrc   map[netip.Addr]int
	refusals map[netip.Addr]int // per-source refusals not yet logged
	lastLog  time.Time
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
	network := "udp4"
	if is6(opts.ListenAddr.Addr()) {
		network = "udp6" // one server per family: a second Server listens on [::]:69
	}
	pconn, err := s.listenConfig().ListenPacket(context.Background(), network, opts.ListenAddr.String())
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("tftp: listen %v: %w", opts.ListenAddr, err)
	}
	s.conn = pconn.(*net.UDPConn)
	// The request's destination address: each transfer answers from it, so
	// a server listening on 0.0.0.0 answers from the address the client
	// asked (a client drops a reply from another).
	if network == "udp6" {
		s.pc6 = ipv6.NewPacketConn(s.conn)
		err = s.pc6.SetControlMessage(ipv6.FlagDst, true)
	} else {
		s.pc = ipv4.NewPacketConn(s.conn)
		err = s.pc.SetControlMessage(ipv4.FlagDst, true)
	}
	if err != nil {
		s.conn.Close()
		root.Close()
		return nil, fmt.Errorf("tftp: IP_PKTINFO on %v: %w", opts.ListenAddr, err)
	}
	s.maxBlock = blockSizeFor(opts)
	return s, nil
}

// listenConfig binds sockets to Options.Interface when there is one.
func (s *Server) listenConfig() *net.ListenConfig {
	lc := &net.ListenConfig{}
	if s.opts.Interface != "" {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = unix.BindToDevice(int(fd), s.opts.Interface) })
			return errors.Join(err, serr)
		}
	}
	return lc
}

// blockSizeFor is the largest blksize the server agrees to.
func blockSizeFor(o Options) int {
	if o.MaxBlockSize > 0 {
		return min(max(o.MaxBlockSize, minBlockSize), maxBlockSize)
	}
	headers := 20 + 8 + 4 // IPv4, UDP, TFTP
	if is6(o.ListenAddr.Addr()) {
		headers += 20 // IPv6's header is 40 bytes
	}
	if o.Interface != "" {
		if ifi, err := net.InterfaceByName(o.Interface); err == nil && ifi.MTU > headers+minBlockSize {
			return min(ifi.MTU-headers, maxBlockSize)
		}
	}
	if a := o.ListenAddr.Addr(); a.IsValid() && !a.IsUnspecified() {
		ifs, _ := net.Interfaces()
		for _, ifi := range ifs {
			addrs, _ := ifi.Addrs()
			for _, ad := range addrs {
				if p, err := netip.ParsePrefix(ad.String()); err == nil && p.Addr() == a && ifi.MTU > headers+minBlockSize {
					return min(ifi.MTU-headers, maxBlockSize)
				}
			}
		}
	}
	return ethernetBlockSize
}

// Addr is the request socket's local address.
func (s *Server) Addr() net.Addr { return s.conn.LocalAddr() }

// Serve answers requests until ctx is done, then waits for running
// transfers (each bounded by TransferTimeout) and returns. Each transfer
// gets a socket of its own, opened on this goroutine's thread, so call
// Serve in the network namespace the server belongs to.
func (s *Server) Serve(ctx context.Context) error {
	defer s.root.Close()
	defer s.running.Wait()
	stop := context.AfterFunc(ctx, func() { _ = s.conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	defer s.conn.Close()
	s.log.Info("serving", "addr", s.conn.LocalAddr().String(), "root", s.opts.Root, "maxBlockSize", s.maxBlock, "maxWindowSize", s.opts.MaxWindowSize)
	buf := make([]byte, 2048)
	for {
		n, dst, from, err := s.readRequest(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("tftp: read request: %w", err)
		}
		peer, ok := from.(*net.UDPAddr)
		if !ok {
			continue
		}
		s.handle(buf[:n], peer, dst)
	}
}

// readRequest reads one request and the unicast address it was sent to
// (nil for a broadcast or multicast one).
func (s *Server) readRequest(buf []byte) (int, net.IP, net.Addr, error) {
	if s.pc6 != nil {
		n, cm, from, err := s.pc6.ReadFrom(buf)
		if cm != nil && !cm.Dst.IsMulticast() {
			return n, cm.Dst, from, err
		}
		return n, nil, from, err
	}
	n, cm, from, err := s.pc.ReadFrom(buf)
	if cm != nil && !cm.Dst.IsMulticast() && !cm.Dst.Equal(net.IPv4bcast) {
		return n, cm.Dst, from, err
	}
	return n, nil, from, err
}

// is6 reports whether a is an IPv6 (not IPv4-mapped) address.
func is6(a netip.Addr) bool { return a.Is6() && !a.Is4In6() }

// refuse answers a request with an ERROR packet from the request socket.
func (s *Server) refuse(peer *net.UDPAddr, code uint16, err error) {
	_, _ = s.conn.WriteToUDP(appendError(nil, code, err.Error()), peer)
}

// handle checks one request and, when it is served, starts its transfer.
func (s *Server) handle(p []byte, peer *net.UDPAddr, local net.IP) {
	req, err := parseRequest(p)
	if err != nil {
		s.metrics.transfers.WithLabelValues("malformed").Inc()
		s.refuse(peer, errCodeIllegalOp, errMalformed)
		return
	}
	log := s.log.WithValues("file", req.filename, "remote", peer.String())
	if req.op == opWRQ {
		s.metrics.transfers.WithLabelValues("write_refused").Inc()
		log.Info("refused write request")
		s.refuse(peer, errCodeAccess, errReadOnly)
		return
	}
	if req.mode != "octet" {
		s.metrics.transfers.WithLabelValues("denied").Inc()
		log.Info("refused", "reason", "mode", "mode", req.mode)
		s.refuse(peer, errCodeIllegalOp, errMode)
		return
	}
	src := peer.AddrPort().Addr().Unmap()
	if !s.acquireSource(src) {
		s.metrics.transfers.WithLabelValues("source_busy").Inc()
		s.logSourceRefusal(src)
		s.refuse(peer, errCodeUndefined, errSrcBusy)
		return
	}
	select {
	case s.slots <- struct{}{}:
	default:
		s.releaseSource(src)
		s.metrics.transfers.WithLabelValues("busy").Inc()
		log.Info("refused: too many concurrent transfers; this host's boot fails (raise --tftp-max-concurrent)", "max", s.opts.MaxConcurrent)
		s.refuse(peer, errCodeUndefined, errBusy)
		return
	}
	release := func() { <-s.slots; s.releaseSource(src) }
	f, fi, err := s.open(req.filename)
	if err != nil {
		release()
		reason, code, clientErr := "not_found", uint16(errCodeNotFound), errNotFound
		if errors.Is(err, safepath.ErrInvalid) || errors.Is(err, safepath.ErrNotRegular) || !errors.Is(err, fs.ErrNotExist) {
			reason, code, clientErr = "denied", errCodeAccess, errDenied
		}
		s.metrics.transfers.WithLabelValues(reason).Inc()
		log.Info("refused", "reason", reason, "error", err.Error())
		s.refuse(peer, code, clientErr)
		return
	}
	// The transfer's socket, here: this goroutine is in the server's
	// network namespace, the transfer's may not be.
	laddr := &net.UDPAddr{IP: local}
	if local.IsLinkLocalUnicast() {
		laddr.Zone = peer.Zone // an IPv6 link-local address needs its interface
	}
	d := net.Dialer{LocalAddr: laddr, ControlContext: func(_ context.Context, nw, addr string, c syscall.RawConn) error {
		if s.opts.Interface == "" {
			return nil
		}
		return s.listenConfig().Control(nw, addr, c)
	}}
	network := "udp4"
	if s.pc6 != nil {
		network = "udp6"
	}
	c, err := d.Dial(network, peer.String())
	if err != nil {
		f.Close()
		release()
		s.metrics.transfers.WithLabelValues("error").Inc()
		log.Error(err, "opening the transfer's socket")
		s.refuse(peer, errCodeUndefined, errors.New("server error"))
		return
	}
	t := &transfer{s: s, conn: c.(*net.UDPConn), file: f, size: fi.Size(), n: negotiate(req, fi.Size(), s.maxBlock, s.opts.MaxWindowSize), log: log}
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		defer release()
		t.run()
	}()
}

// open resolves a request path inside the root. Exposed to the fuzz test.
func (s *Server) open(name string) (*os.File, fs.FileInfo, error) {
	f, fi, _, err := safepath.Open(s.root, name)
	return f, fi, err
}

// retransmitPause is added to Timeout before retransmission number
// attempt (0 for the first) of a packet that went unacknowledged, so that
// the gaps between sends of one packet are timeout, 2x, 4x, ... up to
// maxWait.
func retransmitPause(timeout, maxWait time.Duration, attempt int) time.Duration {
	return backoff.Backoff{Base: timeout, Cap: maxWait}.Step(attempt+1) - timeout
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
			Name: "anvil_tftp_requests_total", Help: "TFTP requests by result (ok, error, size_probe, not_found, denied, busy, source_busy, unacked, write_refused, malformed).",
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
