// Package dhcp6 is Anvil's DHCPv6 server for network boot over IPv6, built
// on github.com/insomniacslk/dhcp's dhcpv6. Like pxe/dhcp it answers only
// hosts the Backend knows and has accepted, from memory: Solicit
// (Advertise, or Reply with Rapid Commit), Request, Renew, Rebind,
// Confirm, Release, Decline and Information-request, directly or through
// relays (Relay-forw/Relay-repl, option 79 for the client's MAC). It gives
// one IA_NA address per host from a range, and option 59 (boot file URL)
// by client: firmware PXE gets tftp://[server]/ipxe.efi, UEFI HTTP boot
// http://[server]/ipxe/ipxe.efi, iPXE its script's URL (no boot loop).
//
// Leases live in memory only (not durable) this round.
package dhcp6

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/server6"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/ipv6"

	"anvil.dev/anvil/pxe"
)

// Server is a DHCPv6 server bound to one interface.
type Server struct {
	opts    Options
	log     logr.Logger
	conn    *net.UDPConn
	leases  *leaseStore
	queue   chan packet
	packets *prometheus.CounterVec
}

type packet struct {
	data []byte
	peer *net.UDPAddr
}

// NewServer opens the socket on Options.Interface (port 547, joined to
// ff02::1:2) in the calling goroutine's network namespace.
func NewServer(opts Options) (*Server, error) {
	if opts.Interface == "" {
		return nil, errors.New("dhcp6: an Interface is required")
	}
	ifi, err := net.InterfaceByName(opts.Interface)
	if err != nil {
		return nil, fmt.Errorf("dhcp6: interface %q: %w", opts.Interface, err)
	}
	if !opts.ServerAddr.IsValid() {
		if opts.ServerAddr, err = interfaceAddr(ifi); err != nil {
			return nil, fmt.Errorf("dhcp6: %w", err)
		}
	}
	if len(opts.ServerDUID) == 0 && len(ifi.HardwareAddr) > 0 {
		opts.ServerDUID = (&dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: ifi.HardwareAddr}).ToBytes()
	}
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("dhcp6: %w", err)
	}
	conn, err := server6.NewIPv6UDPConn(opts.Interface, &net.UDPAddr{IP: net.IPv6unspecified, Port: int(opts.ListenPort)})
	if err != nil {
		return nil, fmt.Errorf("dhcp6: listen on %s port %d: %w", opts.Interface, opts.ListenPort, err)
	}
	p := ipv6.NewPacketConn(conn)
	for _, g := range []net.IP{dhcpv6.AllDHCPRelayAgentsAndServers, dhcpv6.AllDHCPServers} {
		if err := p.JoinGroup(ifi, &net.UDPAddr{IP: g}); err != nil {
			conn.Close()
			return nil, fmt.Errorf("dhcp6: join %v on %s: %w", g, opts.Interface, err)
		}
	}
	reg := opts.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	s := &Server{
		opts:   opts,
		log:    opts.Logger.WithName("dhcp6"),
		conn:   conn,
		leases: newLeaseStore(opts.Range, opts.Now),
		queue:  make(chan packet, opts.QueueSize),
		packets: pxe.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_dhcp6_packets_total",
			Help: "DHCPv6 client messages by type and result (answered, or the reason dropped).",
		}, []string{"type", "result"})),
	}
	restored := 0
	for _, l := range opts.Restore {
		if s.leases.seed(pxe.MACKey(l.MAC), l.Addr, l.Expires) {
			restored++
		}
	}
	if len(opts.Restore) > 0 {
		s.log.Info("DHCPv6 leases restored", "restored", restored, "skipped", len(opts.Restore)-restored)
	}
	return s, nil
}

// AddressOf returns the address mac's unexpired lease holds, once a Reply
// gave it (an Advertise alone binds nothing). The boot scripts and the
// config endpoint bind an IPv6 client's boot credential to it, as they do
// an IPv4 client's to its DHCPv4 lease. Leases are in memory: after a
// restart a host has none until it renews.
func (s *Server) AddressOf(mac net.HardwareAddr) (netip.Addr, bool) {
	return s.leases.addressOf(pxe.MACKey(mac))
}

// Addr is the socket's local address.
func (s *Server) Addr() net.Addr { return s.conn.LocalAddr() }

// Serve answers packets until ctx is done.
func (s *Server) Serve(ctx context.Context) error {
	s.log.Info("serving", "interface", s.opts.Interface, "port", s.opts.ListenPort, "server", s.opts.ServerAddr.String(),
		"range", s.opts.Range.Start.String()+"-"+s.opts.Range.End.String())
	stop := context.AfterFunc(ctx, func() { _ = s.conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	defer s.conn.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(s.queue)
	for range s.opts.Workers {
		wg.Go(func() {
			for p := range s.queue {
				s.serveOne(ctx, p)
			}
		})
	}
	buf := make([]byte, 65536)
	for {
		n, peer, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("dhcp6: read: %w", err)
		}
		select {
		case s.queue <- packet{data: append([]byte(nil), buf[:n]...), peer: peer}:
		default:
			s.packets.WithLabelValues("unknown", "queue_full").Inc()
		}
	}
}

func (s *Server) serveOne(ctx context.Context, p packet) {
	m, err := dhcpv6.FromBytes(p.data)
	if err != nil {
		s.packets.WithLabelValues("unknown", "invalid").Inc()
		return
	}
	src, _ := netip.AddrFromSlice(p.peer.IP)
	res := s.handle(ctx, m, src.Unmap())
	if res.drop != "" {
		s.packets.WithLabelValues(res.mtype, res.drop).Inc()
		s.log.V(1).Info("dropped", "type", res.mtype, "reason", res.drop, "peer", p.peer.String())
		return
	}
	// A client listens on 546 and a relay on 547: both are the source port.
	if _, err := s.conn.WriteToUDP(res.reply.ToBytes(), p.peer); err != nil {
		s.packets.WithLabelValues(res.mtype, "send_error").Inc()
		s.log.Error(err, "send", "peer", p.peer.String())
		return
	}
	s.packets.WithLabelValues(res.mtype, "answered").Inc()
	s.log.V(1).Info("answered", "type", res.mtype, "peer", p.peer.String(), "reply", res.reply.Summary())
}
