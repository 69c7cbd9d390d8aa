package storm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"anvil.dev/anvil/bench/internal/dhcpbench"
)

// dhcpConn is the load side's one DHCP client socket (0.0.0.0:68 on the
// load interface). Every simulated host sends its DISCOVERs and REQUESTs
// through it with its own chaddr and transaction ID, and the server's
// broadcast replies are handed to the host waiting on that transaction.
type dhcpConn struct {
	conn *net.UDPConn

	mu      sync.Mutex
	waiters map[dhcpv4.TransactionID]chan *dhcpv4.DHCPv4
}

func openDHCP(iface string) (*dhcpConn, error) {
	conn, err := dhcpbench.ClientSocket(iface)
	if err != nil {
		return nil, err
	}
	d := &dhcpConn{conn: conn, waiters: map[dhcpv4.TransactionID]chan *dhcpv4.DHCPv4{}}
	go d.read()
	return d, nil
}

func (d *dhcpConn) Close() error { return d.conn.Close() }

func (d *dhcpConn) read() {
	buf := make([]byte, 4096)
	for {
		n, _, err := d.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p, err := dhcpv4.FromBytes(buf[:n])
		if err != nil || p.OpCode != dhcpv4.OpcodeBootReply {
			continue
		}
		d.mu.Lock()
		ch := d.waiters[p.TransactionID]
		d.mu.Unlock()
		if ch != nil {
			select {
			case ch <- p:
			default: // the host is not listening (an extra reply): drop
			}
		}
	}
}

func (d *dhcpConn) register(xid dhcpv4.TransactionID) chan *dhcpv4.DHCPv4 {
	ch := make(chan *dhcpv4.DHCPv4, 8)
	d.mu.Lock()
	d.waiters[xid] = ch
	d.mu.Unlock()
	return ch
}

func (d *dhcpConn) unregister(xid dhcpv4.TransactionID) {
	d.mu.Lock()
	delete(d.waiters, xid)
	d.mu.Unlock()
}

var bcast = &net.UDPAddr{IP: net.IPv4bcast, Port: 67}

func (d *dhcpConn) send(p *dhcpv4.DHCPv4) error {
	_, err := d.conn.WriteToUDP(p.ToBytes(), bcast)
	return err
}

// dhcpClient is how one kind of DHCP client behaves: the firmware's PXE
// client, iPXE, or the installed OS.
type dhcpClient struct {
	name string
	// discover and request are the retransmission windows: a message is
	// sent, the client waits that long for an answer, then sends again;
	// after the last window it gives up.
	discover, request []time.Duration
	// collect: wait out the whole discover window gathering offers before
	// choosing one (EDK2's PXE client does: it returns EFI_NOT_READY for
	// every offer until the window ends), instead of taking the first.
	collect bool
	// bootFile: offers without a boot file are ignored (a PXE client has
	// nothing to boot from them).
	bootFile bool
	// options are the client's identifying options (vendor class, arch,
	// user class, ...), on DISCOVER and REQUEST alike.
	options func() []dhcpv4.Option
}

const (
	optPXEClientNDI = 94
	optIPXEEncap    = 175
)

// firmwareClient is EDK2's UEFI PXE client (OVMF, most x86-64 servers):
// PXE 2.1 timeouts 4, 8, 16, 32 s for DISCOVER and REQUEST.
func firmwareClient(arch uint16) dhcpClient {
	return dhcpClient{
		name:     "firmware",
		discover: secs(4, 8, 16, 32), request: secs(4, 8, 16, 32),
		collect: true, bootFile: true,
		options: func() []dhcpv4.Option {
			return []dhcpv4.Option{
				dhcpv4.OptClassIdentifier(fmt.Sprintf("PXEClient:Arch:%05d:UNDI:003000", arch)),
				dhcpv4.OptGeneric(dhcpv4.OptionClientSystemArchitectureType, []byte{byte(arch >> 8), byte(arch)}),
				dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(optPXEClientNDI), []byte{1, 3, 0}),
				dhcpv4.OptMaxMessageSize(1472),
				dhcpv4.OptParameterRequestList(codes(1, 2, 3, 4, 5, 6, 12, 13, 15, 17, 18, 22, 23, 28, 40, 41, 42, 43, 50, 51, 54, 58, 59, 60, 66, 67, 97, 128, 129, 130, 131, 132, 133, 134, 135)...),
			}
		},
	}
}

// ipxeClient is iPXE's DHCP (config/dhcp.h defaults): DISCOVER at 1, 2, 4,
// 8 s, REQUEST at 0.25 ... 8 s; an offer carrying "PXEClient" is taken at
// once (iPXE waits for ProxyDHCP only when the offer lacks it).
func ipxeClient(arch uint16) dhcpClient {
	return dhcpClient{
		name:     "ipxe",
		discover: secs(1, 2, 4, 8), request: secs(0.25, 0.5, 1, 2, 4, 8),
		bootFile: true,
		options: func() []dhcpv4.Option {
			return []dhcpv4.Option{
				dhcpv4.OptClassIdentifier(fmt.Sprintf("PXEClient:Arch:%05d:UNDI:003010", arch)),
				dhcpv4.OptGeneric(dhcpv4.OptionClientSystemArchitectureType, []byte{byte(arch >> 8), byte(arch)}),
				dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(optPXEClientNDI), []byte{1, 3, 10}),
				// iPXE sends option 77 as the bare string, not RFC 3004.
				dhcpv4.OptGeneric(dhcpv4.OptionUserClassInformation, []byte("iPXE")),
				dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(optIPXEEncap), []byte{0xb1, 0x05, 0x01, 0x80, 0x86, 0x10, 0x0e, 0x13, 0x01, 0x01, 0x11, 0x01, 0x01}),
				dhcpv4.OptMaxMessageSize(1472),
				dhcpv4.OptParameterRequestList(codes(1, 3, 6, 7, 12, 15, 17, 26, 43, 60, 66, 67, 119, 128, 129, 130, 131, 132, 133, 134, 135, 175, 203)...),
			}
		},
	}
}

// osClient is the installed OS's DHCP in the initramfs (NetworkManager's
// internal client): no PXE options, RFC 2131 backoff, about 45 s in all.
func osClient() dhcpClient {
	return dhcpClient{
		name:     "os",
		discover: secs(4, 8, 16, 17), request: secs(4, 8, 16, 17),
		options: func() []dhcpv4.Option {
			return []dhcpv4.Option{
				dhcpv4.OptParameterRequestList(codes(1, 3, 6, 12, 15, 26, 28, 42, 51, 54, 58, 59, 119, 121)...),
			}
		},
	}
}

func codes(c ...uint8) []dhcpv4.OptionCode {
	out := make([]dhcpv4.OptionCode, len(c))
	for i, x := range c {
		out[i] = dhcpv4.GenericOptionCode(x)
	}
	return out
}

func secs(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, x := range s {
		out[i] = time.Duration(x * float64(time.Second))
	}
	return out
}

// lease is what a finished DORA gave the host.
type lease struct {
	IP         netip.Addr
	Server     netip.Addr // server identifier
	NextServer netip.Addr // siaddr
	BootFile   string
}

// dhcpStats counts one host's DHCP retransmissions.
type dhcpStats struct {
	DiscoverRetries int `json:"discoverRetries"`
	RequestRetries  int `json:"requestRetries"`
	Naks            int `json:"naks"`
	OffersIgnored   int `json:"offersIgnored"`
}

// errDHCP is a DHCP failure with a short reason.
type errDHCP struct{ client, reason string }

func (e *errDHCP) Error() string { return e.client + " DHCP: " + e.reason }

// maxNakRestarts bounds DISCOVER-again loops after NAKs.
const maxNakRestarts = 3

// dora runs DISCOVER-OFFER-REQUEST-ACK for mac the way c does.
func (d *dhcpConn) dora(ctx context.Context, mac net.HardwareAddr, c dhcpClient, st *dhcpStats) (lease, error) {
	for restart := 0; ; restart++ {
		l, nak, err := d.doraOnce(ctx, mac, c, st)
		if !nak {
			return l, err
		}
		st.Naks++
		if restart >= maxNakRestarts {
			return lease{}, &errDHCP{c.name, "NAK after REQUEST, again and again"}
		}
	}
}

func (d *dhcpConn) doraOnce(ctx context.Context, mac net.HardwareAddr, c dhcpClient, st *dhcpStats) (lease, bool, error) {
	xid, err := dhcpv4.GenerateTransactionID()
	if err != nil {
		return lease{}, false, err
	}
	ch := d.register(xid)
	defer d.unregister(xid)
	mods := []dhcpv4.Modifier{dhcpv4.WithTransactionID(xid), dhcpv4.WithHwAddr(mac)}
	for _, o := range c.options() {
		mods = append(mods, dhcpv4.WithOption(o))
	}
	disc := newPacket(append(mods, dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover))...)

	var offer *dhcpv4.DHCPv4
	start := time.Now()
	for i, w := range c.discover {
		if i > 0 {
			st.DiscoverRetries++
		}
		disc.NumSeconds = uint16(time.Since(start) / time.Second)
		if err := d.send(disc); err != nil {
			return lease{}, false, &errDHCP{c.name, "send DISCOVER: " + err.Error()}
		}
		if err := waitReplies(ctx, ch, w, func(p *dhcpv4.DHCPv4) bool {
			if p.MessageType() != dhcpv4.MessageTypeOffer || !sameMAC(p.ClientHWAddr, mac) {
				return false
			}
			if c.bootFile && bootFileOf(p) == "" {
				st.OffersIgnored++
				return false
			}
			if offer == nil {
				offer = p
			}
			return !c.collect
		}); err != nil {
			return lease{}, false, err
		}
		if offer != nil {
			break
		}
	}
	if offer == nil {
		return lease{}, false, &errDHCP{c.name, fmt.Sprintf("no usable OFFER after %d DISCOVERs", len(c.discover))}
	}

	req := newPacket(append(mods, dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(offer.YourIPAddr)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(offer.ServerIdentifier())))...)
	var ack *dhcpv4.DHCPv4
	nak := false
	for i, w := range c.request {
		if i > 0 {
			st.RequestRetries++
		}
		req.NumSeconds = uint16(time.Since(start) / time.Second)
		if err := d.send(req); err != nil {
			return lease{}, false, &errDHCP{c.name, "send REQUEST: " + err.Error()}
		}
		if err := waitReplies(ctx, ch, w, func(p *dhcpv4.DHCPv4) bool {
			if !sameMAC(p.ClientHWAddr, mac) {
				return false
			}
			switch p.MessageType() {
			case dhcpv4.MessageTypeAck:
				ack = p
				return true
			case dhcpv4.MessageTypeNak:
				nak = true
				return true
			}
			return false
		}); err != nil {
			return lease{}, false, err
		}
		if ack != nil || nak {
			break
		}
	}
	if nak {
		return lease{}, true, nil
	}
	if ack == nil {
		return lease{}, false, &errDHCP{c.name, fmt.Sprintf("no ACK after %d REQUESTs", len(c.request))}
	}
	l := lease{BootFile: bootFileOf(ack)}
	l.IP, _ = netip.AddrFromSlice(ack.YourIPAddr.To4())
	l.Server, _ = netip.AddrFromSlice(ack.ServerIdentifier().To4())
	l.NextServer, _ = netip.AddrFromSlice(ack.ServerIPAddr.To4())
	if !l.IP.IsValid() || l.IP.IsUnspecified() {
		return lease{}, false, &errDHCP{c.name, "ACK without an address"}
	}
	if c.bootFile && l.BootFile == "" {
		return lease{}, false, &errDHCP{c.name, "ACK without a boot file"}
	}
	return l, false, nil
}

func newPacket(mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	p, err := dhcpv4.New(mods...)
	if err != nil {
		panic(err) // only the random transaction ID can fail, and it is set
	}
	return p
}

// waitReplies feeds replies to take until it returns true or w passes.
func waitReplies(ctx context.Context, ch chan *dhcpv4.DHCPv4, w time.Duration, take func(*dhcpv4.DHCPv4) bool) error {
	t := time.NewTimer(w)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		case p := <-ch:
			if take(p) {
				return nil
			}
		}
	}
}

func sameMAC(a, b net.HardwareAddr) bool {
	return len(a) >= 6 && len(b) >= 6 && string(a[:6]) == string(b[:6])
}

// bootFileOf is option 67, else the file field.
func bootFileOf(p *dhcpv4.DHCPv4) string {
	if f := p.BootFileNameOption(); f != "" {
		return f
	}
	return p.BootFileName
}
