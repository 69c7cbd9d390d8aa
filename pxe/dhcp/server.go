// Package dhcp is Anvil's DHCPv4 server for network boot, built on
// github.com/insomniacslk/dhcp. It answers only hosts the Backend knows and
// has accepted, in one of two modes (see Mode), picks the boot file from the
// client's architecture (option 93) and hands iPXE its HTTP script URL so
// there is no boot loop. Everything is answered from memory: the Backend
// and LeaseStore are expected to be in-memory caches.
//
// Packets are read by one goroutine per socket into pooled buffers and
// handed, by message type, to one of two bounded worker pools: one answers
// DISCOVER and INFORM from memory, the other handles REQUESTs, which may
// wait for their lease write (see Options.Workers). Malformed packets and
// overload are dropped and counted, never fatal.
package dhcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/pxe"
)

// Server is a DHCPv4 server bound to one interface.
type Server struct {
	opts    Options
	log     logr.Logger
	metrics *metrics
	disc    *discoverer

	conn    *net.UDPConn // port 67 (or ListenAddr)
	pxeConn *net.UDPConn // proxy mode: port 4011
	// frames (full mode, Linux, CAP_NET_RAW) receives the RELEASE and
	// DECLINE frames with their Ethernet source; conn then ignores them.
	frames *frameConn

	memQ   chan packet // DISCOVER, INFORM: answered from memory
	writeQ chan packet // REQUEST, RELEASE, DECLINE, other: may wait on a lease write
	bufs   sync.Pool

	mu        sync.Mutex
	declined  map[netip.Addr]declined // held out of the pool after a DECLINE
	exchanges map[string]lastExchange // by MAC: the latest OFFER or ACK

	wmu     sync.Mutex
	writing map[string]*flight // by MAC: lease writes queued or in flight
}

// listener tells the handler which socket a packet came in on.
type listener int

const (
	listenDHCP listener = iota // port 67
	listenPXE                  // port 4011 (proxy mode)
)

type packet struct {
	buf  *[]byte
	n    int
	peer *net.UDPAddr
	on   listener
	mt   dhcpv4.MessageType // peeked, for the queue choice
	// l2src is the Ethernet source of a packet from the frame socket.
	l2src net.HardwareAddr
	// Set when the memory pass hands a REQUEST on to the write queue: the
	// parsed request and when its first pass began.
	req   *dhcpv4.DHCPv4
	start time.Time
	// wip is the address a handed-on REQUEST asks for; flight is set (to
	// the MAC) when this packet's processing owns that MAC's flight and
	// must end it.
	wip    netip.Addr
	flight string
	// ahead: not a packet from the wire but the lease write an OFFER
	// started (see OfferWriter).
	ahead *aheadWrite
}

// aheadWrite is the lease write of an offered address, started when the
// OFFER is sent so that it is durable, or nearly, when the REQUEST comes.
type aheadWrite struct {
	mac net.HardwareAddr
	ip  netip.Addr
	ttl time.Duration
}

// aheadWriteTimeout bounds a lease write started at the OFFER. Nobody
// waits on the wire for it (the REQUEST that comes meanwhile is parked),
// so it gets longer than LeaseWriteTimeout: a write cut short is API
// server work wasted, and under a storm that work is the bottleneck.
const aheadWriteTimeout = 30 * time.Second

const maxPacket = 4096

// NewServer validates opts, opens the sockets on opts.Interface and returns
// a server ready to Serve. Sockets are created in the calling thread's
// network namespace.
func NewServer(opts Options) (*Server, error) {
	if opts.Interface == "" {
		return nil, errors.New("dhcp: Interface is required")
	}
	if !opts.ServerIP.IsValid() {
		ip, err := interfaceIPv4(opts.Interface)
		if err != nil {
			return nil, err
		}
		opts.ServerIP = ip
	}
	s, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	la := s.opts.ListenAddr
	s.conn, err = server4.NewIPv4UDPConn(s.opts.Interface, net.UDPAddrFromAddrPort(la))
	if err != nil {
		return nil, fmt.Errorf("dhcp: listen on %s %v: %w", s.opts.Interface, la, err)
	}
	if s.opts.Mode == ModeProxy {
		pa := netip.AddrPortFrom(la.Addr(), s.opts.PXEPort)
		s.pxeConn, err = server4.NewIPv4UDPConn(s.opts.Interface, net.UDPAddrFromAddrPort(pa))
		if err != nil {
			s.conn.Close()
			return nil, fmt.Errorf("dhcp: listen on %s %v: %w", s.opts.Interface, pa, err)
		}
	}
	if s.opts.Mode == ModeFull {
		if s.frames, err = openFrames(s.opts.Interface, la.Port()); err != nil {
			s.log.Error(err, "no packet socket: RELEASEs will be ignored (leases run out instead) and DECLINEs checked only against the exchange, not their sender", "interface", s.opts.Interface)
			s.frames = nil
		}
	}
	for _, c := range []*net.UDPConn{s.conn, s.pxeConn} {
		if c != nil && s.opts.ReadBuffer > 0 {
			got, how, err := setReadBuffer(c, s.opts.ReadBuffer)
			if err != nil {
				s.log.Error(err, "could not enlarge the socket receive buffer; bursts may be dropped by the kernel", "asked", s.opts.ReadBuffer)
				continue
			}
			// The kernel reports twice what it grants (bookkeeping overhead).
			s.log.Info("socket receive buffer", "addr", c.LocalAddr().String(), "asked", s.opts.ReadBuffer, "kernel", got, "via", how)
		}
	}
	return s, nil
}

// newServer builds a server without sockets (used directly by tests).
func newServer(opts Options) (*Server, error) {
	opts.setDefaults()
	for i := range opts.Subnets {
		opts.Subnets[i].Prefix = opts.Subnets[i].Prefix.Masked()
	}
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("dhcp: %w", err)
	}
	s := &Server{
		opts:      opts,
		log:       opts.Logger.WithName("dhcp"),
		metrics:   newMetrics(opts.Registerer),
		memQ:      make(chan packet, opts.DiscoverQueueSize),
		writeQ:    make(chan packet, opts.QueueSize),
		declined:  map[netip.Addr]declined{},
		exchanges: map[string]lastExchange{},
		writing:   map[string]*flight{},
	}
	s.bufs.New = func() any { b := make([]byte, maxPacket); return &b }
	s.disc = newDiscoverer(opts.Discovery, opts.Now, s.log, s.metrics)
	return s, nil
}

func interfaceIPv4(name string) (netip.Addr, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("dhcp: interface %q: %w", name, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("dhcp: addresses of %q: %w", name, err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP.To4()); ok && n.IP.To4() != nil {
				return ip, nil
			}
		}
	}
	return netip.Addr{}, fmt.Errorf("dhcp: interface %q has no IPv4 address; set ServerIP", name)
}

// ServerIP is the server identifier in use.
func (s *Server) ServerIP() netip.Addr { return s.opts.ServerIP }

// Addr is the local address of the main socket.
func (s *Server) Addr() net.Addr { return s.conn.LocalAddr() }

// Serve handles packets until ctx is done, then closes the sockets and
// returns nil (or the first socket error that is not due to shutdown).
func (s *Server) Serve(ctx context.Context) error {
	if s.conn == nil {
		return errors.New("dhcp: server has no socket (use NewServer)")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The memory workers hand REQUESTs on to the write queue, so they
	// stop first (memWG) and the write queue is closed after them.
	var wg, memWG sync.WaitGroup
	for range s.opts.DiscoverWorkers {
		memWG.Go(func() { s.worker(ctx, s.memQ, passMemory) })
	}
	for range s.opts.Workers {
		wg.Go(func() { s.worker(ctx, s.writeQ, passAny) })
	}
	s.disc.start(ctx, &wg)

	errc := make(chan error, 2)
	var readers sync.WaitGroup
	readers.Go(func() { errc <- s.read(ctx, s.conn, listenDHCP) })
	if s.pxeConn != nil {
		readers.Go(func() { errc <- s.read(ctx, s.pxeConn, listenPXE) })
	}
	if s.frames != nil {
		readers.Go(func() { errc <- s.readFrames(ctx) })
	}
	s.log.Info("serving", "mode", s.opts.Mode, "interface", s.opts.Interface, "addr", s.conn.LocalAddr().String(), "serverIP", s.opts.ServerIP.String(),
		"discoverWorkers", s.opts.DiscoverWorkers, "writeWorkers", s.opts.Workers)

	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	s.conn.Close()
	if s.pxeConn != nil {
		s.pxeConn.Close()
	}
	if s.frames != nil {
		s.frames.Close()
	}
	readers.Wait()
	close(s.memQ)
	memWG.Wait()
	close(s.writeQ)
	wg.Wait()
	return err
}

// read is the per-socket read loop. It never blocks on the workers: a full
// queue drops the packet. It looks only at the message type, to pick the
// queue; the workers parse.
func (s *Server) read(ctx context.Context, conn *net.UDPConn, on listener) error {
	for {
		bp := s.bufs.Get().(*[]byte)
		n, peer, err := conn.ReadFromUDP(*bp)
		if err != nil {
			s.bufs.Put(bp)
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.metrics.dropped.WithLabelValues("read_error").Inc()
			s.log.Error(err, "read")
			// Back off briefly so a persistent error cannot spin.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		mt := peekType((*bp)[:n])
		if s.frames != nil && on == listenDHCP && (mt == dhcpv4.MessageTypeRelease || mt == dhcpv4.MessageTypeDecline) {
			s.bufs.Put(bp) // handled from the frame socket, with its sender
			continue
		}
		kind := s.queueFor(mt)
		q := s.writeQ
		if kind == queueMemory {
			q = s.memQ
		}
		select {
		case q <- packet{buf: bp, n: n, peer: peer, on: on, mt: mt}:
		default:
			s.bufs.Put(bp)
			s.metrics.dropped.WithLabelValues("queue_full").Inc()
			s.metrics.queueFull.WithLabelValues(string(kind), msgTypeLabel(mt)).Inc()
		}
	}
}

// readFrames is the read loop of the frame socket: RELEASE and DECLINE
// frames addressed to this server go to the write queue with their
// Ethernet source.
func (s *Server) readFrames(ctx context.Context) error {
	for {
		bp := s.bufs.Get().(*[]byte)
		fr, err := s.frames.read(*bp)
		if err != nil {
			s.bufs.Put(bp)
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) {
				return nil
			}
			s.metrics.dropped.WithLabelValues("read_error").Inc()
			s.log.Error(err, "read frame")
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if fr.n == 0 || !fr.forHost || !s.addressedToUs(fr.dst) {
			s.bufs.Put(bp)
			continue
		}
		mt := peekType((*bp)[:fr.n])
		select {
		case s.writeQ <- packet{buf: bp, n: fr.n, peer: net.UDPAddrFromAddrPort(fr.src), on: listenDHCP, mt: mt, l2src: fr.l2src}:
		default:
			s.bufs.Put(bp)
			s.metrics.dropped.WithLabelValues("queue_full").Inc()
			s.metrics.queueFull.WithLabelValues(string(queueWrite), msgTypeLabel(mt)).Inc()
		}
	}
}

// addressedToUs reports whether the main socket would have received a
// datagram to dst.
func (s *Server) addressedToUs(dst netip.Addr) bool {
	la := s.opts.ListenAddr.Addr()
	if !la.IsUnspecified() {
		return dst == la // a socket bound to an address gets no broadcasts
	}
	return dst == s.opts.ServerIP || dst == netip.AddrFrom4([4]byte{255, 255, 255, 255})
}

func (s *Server) worker(ctx context.Context, q <-chan packet, ps pass) {
	for p := range q {
		s.run(ctx, p, ps)
	}
}

// run processes p, then the REQUESTs parked on the lease writes it ended.
// A parked REQUEST is answered on the write pass: from memory when the
// write it waited for succeeded, else with a write of its own (as its own
// flight, so its retransmissions park in turn). Write workers never send
// to the write queue, which Serve closes while they drain it.
func (s *Server) run(ctx context.Context, p packet, ps pass) {
	next := s.process(ctx, p, ps)
	for next != nil {
		q := *next
		if q.req != nil && s.beginWrite(pxe.MACKey(q.req.ClientHWAddr), q.wip) {
			q.flight = pxe.MACKey(q.req.ClientHWAddr)
		}
		next = s.process(ctx, q, passAny)
	}
}

// process parses, handles and answers one packet, or hands it on to the
// write queue (a REQUEST the memory pass cannot answer), or parks it on
// its MAC's lease write. When p owned a lease write, next is the REQUEST
// parked on it. A panic in the handler is counted and logged; it never
// takes the server down.
func (s *Server) process(ctx context.Context, p packet, ps pass) (next *packet) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	handedOn := false
	defer func() {
		if !handedOn && p.buf != nil {
			s.bufs.Put(p.buf)
		}
	}()
	if p.flight != "" {
		// Runs after the reply is sent: the parked copy comes second.
		defer func() { next = s.endWrite(p.flight) }()
	}
	defer func() {
		if r := recover(); r != nil {
			s.metrics.dropped.WithLabelValues("panic").Inc()
			s.log.Error(fmt.Errorf("panic: %v", r), "handler panicked; packet dropped", "peer", fmt.Sprint(p.peer))
		}
	}()
	if p.ahead != nil {
		s.writeAhead(ctx, p.ahead)
		return nil
	}
	req := p.req
	if req == nil {
		var err error
		req, err = dhcpv4.FromBytes((*p.buf)[:p.n])
		if err != nil {
			s.metrics.received.WithLabelValues("malformed").Inc()
			s.metrics.dropped.WithLabelValues("malformed").Inc()
			s.log.V(1).Info("malformed packet dropped", "peer", p.peer.String(), "error", err.Error())
			return
		}
		s.metrics.received.WithLabelValues(msgTypeLabel(req.MessageType())).Inc()
	}
	res := s.handleFrame(ctx, req, p.peer, p.on, ps, p.l2src)
	if res.write {
		p.req, p.wip = req, res.wip
		handedOn = s.handOn(p)
		return nil
	}
	if res.drop != "" {
		s.metrics.dropped.WithLabelValues(res.drop).Inc()
		s.log.V(1).Info("no reply", "reason", res.drop, "mac", req.ClientHWAddr.String(), "type", req.MessageType().String())
		return
	}
	if res.reply == nil {
		return // handled, nothing to send (RELEASE, DECLINE)
	}
	conn := s.conn
	if p.on == listenPXE {
		conn = s.pxeConn
	}
	if _, err := conn.WriteToUDP(res.reply.ToBytes(), res.dst); err != nil {
		s.metrics.dropped.WithLabelValues("write_error").Inc()
		s.log.Error(err, "send reply", "dst", res.dst.String())
		return
	}
	s.metrics.replies.WithLabelValues(msgTypeLabel(res.reply.MessageType())).Inc()
	s.metrics.latency.Observe(time.Since(p.start).Seconds())
	s.log.V(1).Info("reply", "type", res.reply.MessageType().String(), "mac", req.ClientHWAddr.String(),
		"yiaddr", res.reply.YourIPAddr.String(), "file", res.reply.BootFileName, "dst", res.dst.String())
	if res.ahead != nil && ps == passMemory {
		s.startAhead(res.ahead)
	}
	return nil
}

// handOn moves a REQUEST that needs a lease write from the memory pass to
// the write queue, or parks it on the write of the same lease already
// queued or in flight. It reports whether p is now held (not dropped).
func (s *Server) handOn(p packet) bool {
	mac := pxe.MACKey(p.req.ClientHWAddr)
	if p.wip.IsValid() {
		joined, replaced := s.joinWrite(mac, p.wip, p)
		if replaced != nil {
			s.bufs.Put(replaced.buf)
			s.metrics.dropped.WithLabelValues("request_in_flight").Inc()
		}
		if joined {
			s.metrics.parked.Inc()
			return true
		}
		if s.beginWrite(mac, p.wip) {
			p.flight = mac
		}
	}
	select {
	case s.writeQ <- p:
		return true
	default:
	}
	s.metrics.dropped.WithLabelValues("queue_full").Inc()
	s.metrics.queueFull.WithLabelValues(string(queueWrite), msgTypeLabel(p.mt)).Inc()
	if p.flight != "" {
		if parked := s.endWrite(mac); parked != nil { // parked in between: it is dropped too
			s.bufs.Put(parked.buf)
			s.metrics.dropped.WithLabelValues("queue_full").Inc()
		}
	}
	return false
}

// startAhead queues the lease write of an address just offered, unless
// the MAC has a write queued or in flight. A full write queue skips it:
// the REQUEST then writes, as without it.
func (s *Server) startAhead(a *aheadWrite) {
	mac := pxe.MACKey(a.mac)
	if !s.beginWrite(mac, a.ip) {
		return
	}
	select {
	case s.writeQ <- packet{ahead: a, flight: mac, start: time.Now()}:
		return
	default:
	}
	s.metrics.aheadWrites.WithLabelValues("queue_full").Inc()
	if parked := s.endWrite(mac); parked != nil { // parked in between: it goes its own way
		if !s.handOn(*parked) {
			s.bufs.Put(parked.buf)
		}
	}
}

// writeAhead writes an offered lease (Renew) before its REQUEST comes.
func (s *Server) writeAhead(ctx context.Context, a *aheadWrite) {
	ctx, cancel := context.WithTimeout(ctx, aheadWriteTimeout)
	defer cancel()
	if _, err := s.opts.Leases.Renew(ctx, a.mac, a.ip, a.ttl); err != nil {
		s.metrics.aheadWrites.WithLabelValues("failed").Inc()
		// The REQUEST writes again; its failure, if any, is logged there.
		s.log.V(1).Info("lease write at OFFER failed; the REQUEST will write", "mac", a.mac.String(), "ip", a.ip.String(), "error", err.Error())
		return
	}
	s.metrics.aheadWrites.WithLabelValues("written").Inc()
}

func msgTypeLabel(t dhcpv4.MessageType) string {
	switch t {
	case dhcpv4.MessageTypeDiscover:
		return "discover"
	case dhcpv4.MessageTypeOffer:
		return "offer"
	case dhcpv4.MessageTypeRequest:
		return "request"
	case dhcpv4.MessageTypeDecline:
		return "decline"
	case dhcpv4.MessageTypeAck:
		return "ack"
	case dhcpv4.MessageTypeNak:
		return "nak"
	case dhcpv4.MessageTypeRelease:
		return "release"
	case dhcpv4.MessageTypeInform:
		return "inform"
	case dhcpv4.MessageTypeNone:
		return "none"
	}
	return "other"
}

type metrics struct {
	received  *prometheus.CounterVec
	replies   *prometheus.CounterVec
	dropped   *prometheus.CounterVec
	queueFull *prometheus.CounterVec
	// memoryRenewals: REQUESTs ACKed without a lease write.
	memoryRenewals prometheus.Counter
	parked         prometheus.Counter
	aheadWrites    *prometheus.CounterVec
	discover       *prometheus.CounterVec
	latency        prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_dhcp_packets_received_total", Help: "DHCP packets received, by message type (malformed: could not be parsed).",
		}, []string{"type"}),
		replies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_dhcp_replies_sent_total", Help: "DHCP replies sent, by message type.",
		}, []string{"type"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_dhcp_packets_dropped_total", Help: "DHCP packets not answered, by reason.",
		}, []string{"reason"}),
		queueFull: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_dhcp_queue_full_total", Help: "DHCP packets dropped because their worker queue was full, by queue (memory: DISCOVER, INFORM and REQUEST; write: REQUESTs that need a lease write, RELEASE, DECLINE) and message type.",
		}, []string{"queue", "type"}),
		memoryRenewals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "anvil_dhcp_memory_renewals_total", Help: "REQUESTs ACKed from memory: the lease store held a lease with enough time left, so no write (and no wait in the write queue) was needed.",
		}),
		parked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "anvil_dhcp_requests_parked_total", Help: "REQUESTs that waited for their MAC's lease write already queued or in flight (started by the OFFER, or by an earlier copy) instead of queueing a second one.",
		}),
		aheadWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_dhcp_lease_writes_at_offer_total", Help: "Lease writes started when an OFFER was sent, by result (written, failed: the REQUEST writes again, queue_full: not started).",
		}, []string{"result"}),
		discover: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_dhcp_discovery_events_total", Help: "Unknown or unaccepted MACs seen, by outcome (reported, duplicate, rate_limited, overflow).",
		}, []string{"result"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "anvil_dhcp_reply_duration_seconds", Help: "Time from dequeuing a packet to sending its reply (for a REQUEST handed on to the write queue, including its wait there).",
			Buckets: prometheus.ExponentialBuckets(0.00005, 4, 8),
		}),
	}
	if reg == nil {
		return m
	}
	m.received = pxe.Register(reg, m.received)
	m.replies = pxe.Register(reg, m.replies)
	m.dropped = pxe.Register(reg, m.dropped)
	m.queueFull = pxe.Register(reg, m.queueFull)
	m.memoryRenewals = pxe.Register(reg, m.memoryRenewals)
	m.parked = pxe.Register(reg, m.parked)
	m.aheadWrites = pxe.Register(reg, m.aheadWrites)
	m.discover = pxe.Register(reg, m.discover)
	m.latency = pxe.Register(reg, m.latency)
	return m
}
