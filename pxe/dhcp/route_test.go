package dhcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/pxe"
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
		store func(t *testing.T, now func() time.Time) LeaseStore
		lease bool // the MAC got leased (DISCOVER + REQUEST on the write pass) first
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

// relayServer is a test server whose replies go, through a relay address
// on loopback, to 127.0.0.2 (nobody listens: only the send is counted).
// relayed builds requests from MAC m as relayed by 127.0.0.2, and pkt
// wraps one as it comes off the wire.
func relayServer(t *testing.T, store func(now func() time.Time) LeaseStore, queue int) (s *Server, clk *fakeClock, relayed func(m string, mt dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4, pkt func(*dhcpv4.DHCPv4) packet) {
	t.Helper()
	clk = newFakeClock()
	s = testServer(t, ModeFull, func(o *Options) {
		o.Now = clk.Now
		o.Leases = store(clk.Now)
		o.QueueSize = queue
		o.Subnets = append(o.Subnets, Subnet{Prefix: netip.MustParsePrefix("127.0.0.0/24"),
			Range: Range{Start: netip.MustParseAddr("127.0.0.100"), End: netip.MustParseAddr("127.0.0.110")}})
	})
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s.conn = conn
	relay := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: serverPort}
	relayed = func(m string, mt dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
		return request(t, m, mt, append([]dhcpv4.Modifier{dhcpv4.WithGatewayIP(relay.IP)}, mods...)...)
	}
	pkt = func(d *dhcpv4.DHCPv4) packet {
		b := make([]byte, maxPacket)
		n := copy(b, d.ToBytes())
		return packet{buf: &b, n: n, peer: relay, on: listenDHCP, mt: d.MessageType()}
	}
	return s, clk, relayed, pkt
}

// TestProcessHandsRequestOn: a REQUEST the memory pass cannot answer moves
// to the write queue already parsed, and a write worker answers it; when
// that queue is full it is dropped and counted as the write queue's.
func TestProcessHandsRequestOn(t *testing.T) {
	s, _, relayed, pkt := relayServer(t, func(now func() time.Time) LeaseStore {
		return staleRenewer{NewMemoryLeaseStore(LeaseStoreOptions{Now: now})}
	}, 1)
	ctx := context.Background()
	for _, m := range []string{dynMAC, dyn2MAC} {
		s.handle(ctx, relayed(m, dhcpv4.MessageTypeDiscover), pkt(relayed(m, dhcpv4.MessageTypeDiscover)).peer, listenDHCP)
	}
	req := func(m, ip string) packet {
		return pkt(relayed(m, dhcpv4.MessageTypeRequest, withRequested(ip), withServerID(srvIP)))
	}
	s.run(ctx, req(dynMAC, "127.0.0.100"), passMemory)
	if len(s.writeQ) != 1 {
		t.Fatalf("write queue holds %d packets, want 1", len(s.writeQ))
	}
	p := <-s.writeQ
	if p.req == nil || p.req.MessageType() != dhcpv4.MessageTypeRequest || p.start.IsZero() || p.flight != pxeKey(t, dynMAC) {
		t.Fatalf("handed-on packet: req=%v start=%v flight=%q", p.req, p.start, p.flight)
	}
	s.writeQ <- p // the queue is full now
	s.run(ctx, req(dyn2MAC, "127.0.0.101"), passMemory)
	if got := testutil.ToFloat64(s.metrics.queueFull.WithLabelValues(string(queueWrite), "request")); got != 1 {
		t.Errorf("anvil_dhcp_queue_full_total{queue=write,type=request} = %v, want 1", got)
	}
	if s.beginWrite(pxeKey(t, dyn2MAC), netip.MustParseAddr("127.0.0.101")) == false {
		t.Error("the dropped REQUEST left its MAC's write registered")
	}

	s.run(ctx, <-s.writeQ, passAny)
	if got := testutil.ToFloat64(s.metrics.replies.WithLabelValues("ack")); got != 1 {
		t.Errorf("ACKs sent = %v, want 1 (dropped: %v)", got, testutil.ToFloat64(s.metrics.dropped.WithLabelValues("write_error")))
	}
	if got := testutil.ToFloat64(s.metrics.received.WithLabelValues("request")); got != 2 {
		t.Errorf("received requests = %v, want 2 (a handed-on packet is counted once)", got)
	}
	if s.beginWrite(pxeKey(t, dynMAC), netip.MustParseAddr("127.0.0.100")) == false {
		t.Error("the answered REQUEST left its MAC's write registered")
	}
}

func pxeKey(t *testing.T, m string) string { return pxe.MACKey(mac(t, m)) }

// durableStore plays index.LeaseStore for the server: Renew "writes" (one
// count per write, after the test lets it through on gate, or failing
// while fail is set), and a written lease with half its TTL left is
// renewed in memory. NeedsWrite makes the server write at the OFFER.
type durableStore struct {
	*MemoryLeaseStore
	now  func() time.Time
	gate chan struct{}

	mu      sync.Mutex
	written map[string]Lease
	writes  int
	fail    bool
}

func newDurableStore(now func() time.Time) *durableStore {
	return &durableStore{MemoryLeaseStore: NewMemoryLeaseStore(LeaseStoreOptions{Now: now}), now: now,
		gate: make(chan struct{}, 16), written: map[string]Lease{}}
}

func (d *durableStore) RenewInMemory(m net.HardwareAddr, ip netip.Addr, ttl time.Duration) (Lease, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.written[m.String()]
	if !ok || l.IP != ip || l.Expires.Sub(d.now()) < ttl/2 {
		return Lease{}, false
	}
	return l, true
}

func (d *durableStore) NeedsWrite(m net.HardwareAddr, ip netip.Addr, ttl time.Duration) bool {
	_, fresh := d.RenewInMemory(m, ip, ttl)
	return !fresh
}

func (d *durableStore) Renew(ctx context.Context, m net.HardwareAddr, ip netip.Addr, ttl time.Duration) (Lease, error) {
	if l, ok := d.RenewInMemory(m, ip, ttl); ok {
		return l, nil
	}
	select {
	case <-d.gate:
	case <-ctx.Done():
		return Lease{}, ctx.Err()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail {
		return Lease{}, errors.New("API server unavailable")
	}
	l, err := d.MemoryLeaseStore.Renew(ctx, m, ip, ttl)
	if err == nil {
		d.writes++
		d.written[m.String()] = l
	}
	return l, err
}

// durableRelayServer is relayServer over a durableStore.
func durableRelayServer(t *testing.T) (*Server, *durableStore, func(m string, mt dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4, func(*dhcpv4.DHCPv4) packet) {
	var st *durableStore
	s, _, relayed, pkt := relayServer(t, func(now func() time.Time) LeaseStore {
		st = newDurableStore(now)
		return st
	}, 8)
	return s, st, relayed, pkt
}

// TestOfferStartsTheLeaseWrite: with a durable store, the OFFER starts the
// lease write; the firmware's REQUEST (and its retransmission) waits for
// that write instead of queueing its own, and is ACKed from memory when
// it lands: one write per boot, begun seconds earlier. When the write at
// the OFFER fails, the parked REQUEST writes itself.
func TestOfferStartsTheLeaseWrite(t *testing.T) {
	for _, tc := range []struct {
		name       string
		aheadFails bool
		writes     int
	}{
		{"the write at the OFFER lands", false, 1},
		{"the write at the OFFER fails", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, st, relayed, pkt := durableRelayServer(t)
			ctx := context.Background()
			s.run(ctx, pkt(relayed(dynMAC, dhcpv4.MessageTypeDiscover)), passMemory)
			if got := testutil.ToFloat64(s.metrics.replies.WithLabelValues("offer")); got != 1 {
				t.Fatalf("OFFERs sent = %v, want 1", got)
			}
			if len(s.writeQ) != 1 {
				t.Fatalf("write queue holds %d, want the write of the offer", len(s.writeQ))
			}
			// A retransmitted DISCOVER starts no second write.
			s.run(ctx, pkt(relayed(dynMAC, dhcpv4.MessageTypeDiscover)), passMemory)
			if len(s.writeQ) != 1 {
				t.Fatalf("write queue holds %d after a second DISCOVER, want 1", len(s.writeQ))
			}

			// The REQUEST and its retransmission come while the write waits.
			req := relayed(dynMAC, dhcpv4.MessageTypeRequest, withRequested("127.0.0.100"), withServerID(srvIP))
			s.run(ctx, pkt(req), passMemory)
			s.run(ctx, pkt(req), passMemory)
			if len(s.writeQ) != 1 {
				t.Fatalf("write queue holds %d, want only the write of the offer (the REQUESTs wait for it)", len(s.writeQ))
			}
			if got := testutil.ToFloat64(s.metrics.parked); got != 2 {
				t.Errorf("parked REQUESTs = %v, want 2", got)
			}
			if got := testutil.ToFloat64(s.metrics.dropped.WithLabelValues("request_in_flight")); got != 1 {
				t.Errorf("dropped copies = %v, want 1 (only the latest copy waits)", got)
			}
			if got := testutil.ToFloat64(s.metrics.replies.WithLabelValues("ack")); got != 0 {
				t.Fatalf("ACK sent before the lease was written")
			}

			st.mu.Lock()
			st.fail = tc.aheadFails
			st.mu.Unlock()
			st.gate <- struct{}{}
			if tc.aheadFails {
				// The parked REQUEST's own write, after the failed one.
				go func() {
					for testutil.ToFloat64(s.metrics.aheadWrites.WithLabelValues("failed")) == 0 {
						time.Sleep(time.Millisecond)
					}
					st.mu.Lock()
					st.fail = false
					st.mu.Unlock()
					st.gate <- struct{}{}
				}()
			}
			s.run(ctx, <-s.writeQ, passAny) // the write worker: the write, then the parked REQUEST
			if got := testutil.ToFloat64(s.metrics.replies.WithLabelValues("ack")); got != 1 {
				t.Fatalf("ACKs sent = %v, want 1", got)
			}
			result := "written"
			if tc.aheadFails {
				result = "failed"
			}
			if got := testutil.ToFloat64(s.metrics.aheadWrites.WithLabelValues(result)); got != 1 {
				t.Errorf("anvil_dhcp_lease_writes_at_offer_total{result=%s} = %v, want 1", result, got)
			}
			st.mu.Lock()
			writes, l := st.writes, st.written[mac(t, dynMAC).String()]
			st.mu.Unlock()
			if writes != tc.writes || l.IP != netip.MustParseAddr("127.0.0.100") {
				t.Errorf("store: %d writes, lease %v; want %d write of 127.0.0.100", writes, l, tc.writes)
			}
			if len(s.writeQ) != 0 || !s.beginWrite(pxeKey(t, dynMAC), l.IP) {
				t.Error("the write's flight was not ended")
			}
		})
	}
}

// TestStaticAddressesAreNeverWrittenAhead: an OFFER of a reserved address
// writes nothing, whatever the store.
func TestStaticAddressesAreNeverWrittenAhead(t *testing.T) {
	clk := newFakeClock()
	st := newDurableStore(clk.Now)
	s := testServer(t, ModeFull, func(o *Options) { o.Now = clk.Now; o.Leases = st })
	res := s.handlePass(context.Background(), request(t, staticMAC, dhcpv4.MessageTypeDiscover), clientPeer, listenDHCP, passMemory)
	if outcome(res) != "OFFER" || res.ahead != nil {
		t.Fatalf("static DISCOVER: %s, ahead=%v; want an OFFER and no write", outcome(res), res.ahead)
	}
	res = s.handlePass(context.Background(), request(t, dynMAC, dhcpv4.MessageTypeDiscover), clientPeer, listenDHCP, passMemory)
	if outcome(res) != "OFFER" || res.ahead == nil {
		t.Fatalf("dynamic DISCOVER: %s, ahead=%v; want an OFFER and its write", outcome(res), res.ahead)
	}
}
