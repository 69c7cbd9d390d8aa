package dhcp

import (
	"context"
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// staleRenewer is a MemoryLeaseStore whose RenewInMemory always refuses, as
// index.LeaseStore does when the persisted lease is too old.
type staleRenewer struct{ *MemoryLeaseStore }

func (staleRenewer) RenewInMemory(net.HardwareAddr, netip.Addr, time.Duration) (Lease, bool) {
	return Lease{}, false
}

// TestRequestPasses: the memory workers answer every REQUEST that needs no
// lease write, and hand only the rest on to the write workers, so a boot
// storm's writes cannot delay iPXE's and the OS's REQUESTs.
func TestRequestPasses(t *testing.T) {
	const leased = "10.0.0.100"
	type setup struct {
		store   func(t *testing.T, now func() time.Time) LeaseStore
		lease   bool // the MAC got leased (DISCOVER + REQUEST on the write pass) first
		writing bool // a write of the lease is in flight
	}
	memory := func(_ *testing.T, now func() time.Time) LeaseStore {
		return NewMemoryLeaseStore(LeaseStoreOptions{Now: now})
	}
	file := func(t *testing.T, now func() time.Time) LeaseStore {
		st, err := NewFileLeaseStore(filepath.Join(t.TempDir(), "leases.json"), LeaseStoreOptions{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	stale := func(_ *testing.T, now func() time.Time) LeaseStore {
		return staleRenewer{NewMemoryLeaseStore(LeaseStoreOptions{Now: now})}
	}
	for _, tc := range []struct {
		name      string
		setup     setup
		mac, want string
		// memory pass: "ack", "nak", "write" (handed on) or a drop reason
		memory string
		// write pass (only when handed on): "ack" or "nak"
		write      string
		fromMemory float64 // anvil_dhcp_memory_renewals_total after the memory pass
	}{
		{"fresh lease, store renews in memory", setup{store: memory, lease: true}, dynMAC, leased, "ack", "", 1},
		{"store cannot renew without a write", setup{store: stale, lease: true}, dynMAC, leased, "write", "ack", 0},
		{"store without MemoryRenewer (file)", setup{store: file, lease: true}, dynMAC, leased, "write", "ack", 0},
		{"retransmission while the write is in flight", setup{store: memory, lease: true, writing: true}, dynMAC, leased, "request_in_flight", "", 0},
		{"INIT-REBOOT without a lease", setup{store: memory}, dynMAC, "10.0.0.105", "write", "ack", 0},
		// Holding no lease, it is INIT-REBOOT to the memory pass; the write
		// pass finds the address taken.
		{"another MAC's address", setup{store: memory, lease: true}, dyn2MAC, leased, "write", "nak", 0},
		{"its lease is on another address", setup{store: memory, lease: true}, dynMAC, "10.0.0.104", "nak", "", 0},
		{"static address: never written", setup{store: stale}, staticMAC, "10.0.0.5", "ack", "", 0},
		{"static, wrong address", setup{store: stale}, staticMAC, "10.0.0.7", "nak", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			s := testServer(t, ModeFull, func(o *Options) { o.Now = clk.Now; o.Leases = tc.setup.store(t, clk.Now) })
			ctx := context.Background()
			if tc.setup.lease {
				s.handle(ctx, request(t, dynMAC, dhcpv4.MessageTypeDiscover), clientPeer, listenDHCP)
				ack := s.handle(ctx, request(t, dynMAC, dhcpv4.MessageTypeRequest, withRequested(leased), withServerID(srvIP)), clientPeer, listenDHCP)
				if ack.reply == nil || ack.reply.MessageType() != dhcpv4.MessageTypeAck {
					t.Fatalf("lease setup: %+v", ack)
				}
				clk.Advance(10 * time.Second)
			}
			if tc.setup.writing {
				done, ok := s.beginWrite(tc.mac, netip.MustParseAddr(tc.want))
				if !ok {
					t.Fatal("beginWrite refused")
				}
				defer done()
			}
			req := request(t, tc.mac, dhcpv4.MessageTypeRequest, withRequested(tc.want), withServerID(srvIP))
			res := s.handlePass(ctx, req, clientPeer, listenDHCP, passMemory)
			if got := outcome(res); got != tc.memory {
				t.Fatalf("memory pass: %s (%+v), want %s", got, res, tc.memory)
			}
			if got := testutil.ToFloat64(s.metrics.memoryRenewals); got != tc.fromMemory {
				t.Errorf("memory renewals = %v, want %v", got, tc.fromMemory)
			}
			if tc.memory == "ack" && tc.mac == dynMAC {
				// The ACK carries the time the lease has left, not more.
				if lt := res.reply.IPAddressLeaseTime(0); lt <= 0 || lt > time.Hour {
					t.Errorf("memory ACK lease time %v", lt)
				}
			}
			if tc.memory != "write" {
				return
			}
			if got := outcome(s.handlePass(ctx, req, clientPeer, listenDHCP, passAny)); got != tc.write {
				t.Fatalf("write pass: %s, want %s", got, tc.write)
			}
			if tc.write != "ack" {
				return
			}
			l, err := s.opts.Leases.Get(ctx, mac(t, tc.mac))
			if err != nil || l.IP.String() != tc.want || !l.Expires.Equal(clk.Now().Add(time.Hour)) {
				t.Fatalf("lease after the write pass = %v, %v; want %s for an hour", l, err, tc.want)
			}
		})
	}
}

func outcome(r result) string {
	switch {
	case r.write:
		return "write"
	case r.drop != "":
		return r.drop
	case r.reply == nil:
		return "none"
	case r.reply.MessageType() == dhcpv4.MessageTypeAck:
		return "ack"
	case r.reply.MessageType() == dhcpv4.MessageTypeNak:
		return "nak"
	}
	return r.reply.MessageType().String()
}

// TestProcessHandsRequestOn: a REQUEST the memory pass cannot answer moves
// to the write queue already parsed, and a write worker answers it; when
// that queue is full it is dropped and counted as the write queue's. The
// requests come through a relay on loopback, so the one reply sent goes to
// 127.0.0.2.
func TestProcessHandsRequestOn(t *testing.T) {
	clk := newFakeClock()
	s := testServer(t, ModeFull, func(o *Options) {
		o.Now = clk.Now
		o.Leases = staleRenewer{NewMemoryLeaseStore(LeaseStoreOptions{Now: clk.Now})}
		o.QueueSize = 1
		o.Subnets = append(o.Subnets, Subnet{Prefix: netip.MustParsePrefix("127.0.0.0/24"),
			Range: Range{Start: netip.MustParseAddr("127.0.0.100"), End: netip.MustParseAddr("127.0.0.110")}})
	})
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s.conn = conn
	relay := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: serverPort}
	relayed := func(mt dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
		return request(t, dynMAC, mt, append([]dhcpv4.Modifier{dhcpv4.WithGatewayIP(relay.IP)}, mods...)...)
	}
	ctx := context.Background()
	s.handle(ctx, relayed(dhcpv4.MessageTypeDiscover), relay, listenDHCP)
	if ack := s.handle(ctx, relayed(dhcpv4.MessageTypeRequest, withRequested("127.0.0.100"), withServerID(srvIP)), relay, listenDHCP); outcome(ack) != "ack" {
		t.Fatalf("lease setup: %+v", ack)
	}

	pkt := func() packet {
		b := make([]byte, maxPacket)
		n := copy(b, relayed(dhcpv4.MessageTypeRequest, withRequested("127.0.0.100"), withServerID(srvIP)).ToBytes())
		return packet{buf: &b, n: n, peer: relay, on: listenDHCP, mt: dhcpv4.MessageTypeRequest}
	}
	s.process(ctx, pkt(), passMemory)
	if len(s.writeQ) != 1 {
		t.Fatalf("write queue holds %d packets, want 1", len(s.writeQ))
	}
	p := <-s.writeQ
	if p.req == nil || p.req.MessageType() != dhcpv4.MessageTypeRequest || p.start.IsZero() {
		t.Fatalf("handed-on packet: req=%v start=%v", p.req, p.start)
	}
	s.writeQ <- p // the queue is full now
	s.process(ctx, pkt(), passMemory)
	if got := testutil.ToFloat64(s.metrics.queueFull.WithLabelValues(string(queueWrite), "request")); got != 1 {
		t.Errorf("anvil_dhcp_queue_full_total{queue=write,type=request} = %v, want 1", got)
	}

	s.process(ctx, <-s.writeQ, passAny)
	if got := testutil.ToFloat64(s.metrics.replies.WithLabelValues("ack")); got != 1 {
		t.Errorf("ACKs sent = %v, want 1 (dropped: %v)", got, testutil.ToFloat64(s.metrics.dropped.WithLabelValues("write_error")))
	}
	if got := testutil.ToFloat64(s.metrics.received.WithLabelValues("request")); got != 2 {
		t.Errorf("received requests = %v, want 2 (a handed-on packet is counted once)", got)
	}
}
