package dhcp

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestPeekType(t *testing.T) {
	valid := func(mt dhcpv4.MessageType, mods ...dhcpv4.Modifier) []byte {
		return request(t, staticMAC, mt, mods...).ToBytes()
	}
	padded := valid(dhcpv4.MessageTypeRequest)
	// Move option 53 behind pad bytes: 240 is where options start.
	padded = append(append(append([]byte{}, padded[:240]...), 0, 0, 0), padded[240:]...)
	noCookie := valid(dhcpv4.MessageTypeDiscover)
	noCookie[236] = 0
	truncated := valid(dhcpv4.MessageTypeDiscover)[:241]
	for _, tc := range []struct {
		name string
		b    []byte
		want dhcpv4.MessageType
	}{
		{"discover", valid(dhcpv4.MessageTypeDiscover), dhcpv4.MessageTypeDiscover},
		{"request", valid(dhcpv4.MessageTypeRequest, withRequested("10.0.0.100")), dhcpv4.MessageTypeRequest},
		{"inform", valid(dhcpv4.MessageTypeInform), dhcpv4.MessageTypeInform},
		{"release", valid(dhcpv4.MessageTypeRelease), dhcpv4.MessageTypeRelease},
		{"after pad bytes", padded, dhcpv4.MessageTypeRequest},
		{"no magic cookie", noCookie, dhcpv4.MessageTypeNone},
		{"truncated options", truncated, dhcpv4.MessageTypeNone},
		{"too short", []byte{1, 1, 6}, dhcpv4.MessageTypeNone},
		{"empty", nil, dhcpv4.MessageTypeNone},
	} {
		if got := peekType(tc.b); got != tc.want {
			t.Errorf("%s: peekType = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestQueueFor(t *testing.T) {
	full := testServer(t, ModeFull)
	proxy := testServer(t, ModeProxy)
	for _, tc := range []struct {
		s    *Server
		mt   dhcpv4.MessageType
		want queueKind
	}{
		{full, dhcpv4.MessageTypeDiscover, queueMemory},
		{full, dhcpv4.MessageTypeInform, queueMemory},
		{full, dhcpv4.MessageTypeRequest, queueMemory}, // handed on to the write queue if it needs a write
		{full, dhcpv4.MessageTypeRelease, queueWrite},
		{full, dhcpv4.MessageTypeDecline, queueWrite},
		{full, dhcpv4.MessageTypeNone, queueWrite},
		{proxy, dhcpv4.MessageTypeRequest, queueMemory},
		{proxy, dhcpv4.MessageTypeDiscover, queueMemory},
	} {
		if got := tc.s.queueFor(tc.mt); got != tc.want {
			t.Errorf("%s mode, %v: queue %s, want %s", tc.s.opts.Mode, tc.mt, got, tc.want)
		}
	}
}

func TestAckLeaseTime(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		expires time.Time
		want    time.Duration
	}{
		{"fresh write: the full time", now.Add(time.Hour), time.Hour},
		{"rounded up beyond it", now.Add(time.Hour + 30*time.Second), time.Hour},
		{"reused lease: what it has left", now.Add(40*time.Minute + 500*time.Millisecond), 40 * time.Minute},
		{"expired (a store bug): the full time", now.Add(-time.Minute), time.Hour},
		{"zero", time.Time{}, time.Hour},
	} {
		if got := ackLeaseTime(Lease{Expires: tc.expires}, now, time.Hour); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// blockingLeases is a MemoryLeaseStore whose Renew waits until released,
// like a lease write to an overloaded API server.
type blockingLeases struct {
	*MemoryLeaseStore
	release chan struct{}
	entered chan net.HardwareAddr
	mu      sync.Mutex
	renews  int
}

func newBlockingLeases() *blockingLeases {
	return &blockingLeases{
		MemoryLeaseStore: NewMemoryLeaseStore(LeaseStoreOptions{}),
		release:          make(chan struct{}),
		entered:          make(chan net.HardwareAddr, 16),
	}
}

func (b *blockingLeases) Renew(ctx context.Context, m net.HardwareAddr, ip netip.Addr, ttl time.Duration) (Lease, error) {
	b.mu.Lock()
	b.renews++
	b.mu.Unlock()
	b.entered <- m
	select {
	case <-b.release:
	case <-ctx.Done():
		return Lease{}, ctx.Err()
	}
	return b.MemoryLeaseStore.Renew(ctx, m, ip, ttl)
}

// TestDiscoverAnsweredWhileWritesBlocked: with every write worker stuck in
// a lease write, DISCOVERs are still answered (the boot storm's first
// wall), and the REQUESTs are answered once the writes complete.
func TestDiscoverAnsweredWhileWritesBlocked(t *testing.T) {
	leases := newBlockingLeases()
	s := testServer(t, ModeFull, func(o *Options) {
		o.Workers, o.DiscoverWorkers = 2, 1
		o.Leases = leases
		o.LeaseWriteTimeout = time.Hour // blocked until released, not until a deadline
	})
	srv, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s.conn = srv
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	var once sync.Once
	unblock := func() { once.Do(func() { close(leases.release) }) }
	defer unblock()

	client, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	// ciaddr = the client's loopback address, so replies are unicast back
	// to its socket (replyDest) instead of broadcast.
	self := dhcpv4.WithClientIP(net.IPv4(127, 0, 0, 1))
	send := func(p *dhcpv4.DHCPv4) {
		t.Helper()
		if _, err := client.WriteToUDP(p.ToBytes(), srv.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() *dhcpv4.DHCPv4 {
		t.Helper()
		buf := make([]byte, maxPacket)
		// A guard against hanging forever, not a timing assertion.
		_ = client.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, _, err := client.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("no reply: %v", err)
		}
		p, err := dhcpv4.FromBytes(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	send(request(t, dynMAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.100"), self))
	send(request(t, dyn2MAC, dhcpv4.MessageTypeRequest, withRequested("10.0.0.101"), self))
	for range 2 {
		<-leases.entered // both write workers are now blocked
	}
	send(request(t, staticMAC, dhcpv4.MessageTypeDiscover, self))
	offer := recv()
	if offer.MessageType() != dhcpv4.MessageTypeOffer || offer.ClientHWAddr.String() != staticMAC {
		t.Fatalf("while the writes are blocked got %v for %s, want an OFFER for %s", offer.MessageType(), offer.ClientHWAddr, staticMAC)
	}
	select {
	case <-leases.release:
		t.Fatal("the writes were released before the OFFER: the test proves nothing")
	default:
	}

	unblock()
	acked := map[string]bool{}
	for range 2 {
		ack := recv()
		if ack.MessageType() != dhcpv4.MessageTypeAck {
			t.Fatalf("after the writes got %v, want ACK", ack.MessageType())
		}
		acked[ack.ClientHWAddr.String()] = true
	}
	if !acked[dynMAC] || !acked[dyn2MAC] {
		t.Fatalf("ACKs for %v, want %s and %s", acked, dynMAC, dyn2MAC)
	}
}

// TestRetransmittedRequestDuringWrite: a REQUEST sent again while its
// TestRetransmittedRequestDuringWrite: a REQUEST retransmitted while its
// MAC's lease write is queued or in flight starts no second write and
// takes no queue slot; it is answered (from memory) when that write lands.
// Another MAC's REQUEST is not held up by it.
func TestRetransmittedRequestDuringWrite(t *testing.T) {
	s, st, relayed, pkt := durableRelayServer(t)
	ctx := context.Background()
	for _, m := range []string{dynMAC, dyn2MAC} {
		s.handle(ctx, relayed(m, dhcpv4.MessageTypeDiscover), pkt(relayed(m, dhcpv4.MessageTypeDiscover)).peer, listenDHCP)
	}
	reqA := relayed(dynMAC, dhcpv4.MessageTypeRequest, withRequested("127.0.0.100"), withServerID(srvIP))
	reqB := relayed(dyn2MAC, dhcpv4.MessageTypeRequest, withRequested("127.0.0.101"), withServerID(srvIP))
	var workers sync.WaitGroup
	write := func() {
		if len(s.writeQ) != 1 {
			t.Fatalf("write queue holds %d, want 1", len(s.writeQ))
		}
		p := <-s.writeQ
		workers.Go(func() { s.run(ctx, p, passAny) })
	}
	s.run(ctx, pkt(reqA), passMemory)
	write()
	s.run(ctx, pkt(reqA), passMemory) // the retransmission
	if len(s.writeQ) != 0 || testutil.ToFloat64(s.metrics.parked) != 1 {
		t.Fatalf("retransmission: queue %d, parked %v; want it parked, not queued", len(s.writeQ), testutil.ToFloat64(s.metrics.parked))
	}
	s.run(ctx, pkt(reqB), passMemory)
	write()
	st.gate <- struct{}{}
	st.gate <- struct{}{}
	workers.Wait()
	if got := testutil.ToFloat64(s.metrics.replies.WithLabelValues("ack")); got != 3 {
		t.Errorf("ACKs = %v, want 3 (A, A's retransmission, B)", got)
	}
	st.mu.Lock()
	writes := st.writes
	st.mu.Unlock()
	if writes != 2 {
		t.Errorf("lease writes = %d, want 2 (one per MAC)", writes)
	}
	// Once written, the next REQUEST is answered from memory.
	s.run(ctx, pkt(reqA), passMemory)
	if got := testutil.ToFloat64(s.metrics.memoryRenewals); got != 1 || len(s.writeQ) != 0 {
		t.Errorf("REQUEST after the write: memory renewals %v, queue %d; want 1, 0", got, len(s.writeQ))
	}
}
