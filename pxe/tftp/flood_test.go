package tftp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/test/netnstest"
)

// plainRRQ asks for name without options (the answer is DATA block 1),
// optionRRQ with blksize and tsize, as firmware does (the answer is an
// OACK).
func plainRRQ(name string) []byte { return append([]byte{0, 1}, name+"\x00octet\x00"...) }
func optionRRQ(name string) []byte {
	return append([]byte{0, 1}, name+"\x00octet\x00blksize\x001024\x00tsize\x000\x00"...)
}

// rrqFlood sends the RRQ from each of n sockets bound to
// src (inside the client namespace) and reads the first answer of each:
// a DATA block or an OACK means the server holds a transfer slot for it, an ERROR
// that it was refused. Nothing is ever acknowledged. The sockets stay open
// until the test ends.
func rrqFlood(t *testing.T, e *tftpEnv, src netip.Addr, rrq []byte, n int) (held, refused int, tids []*net.UDPAddr) {
	t.Helper()
	conns := make([]*net.UDPConn, n)
	must(t, e.pair.Cli.Do(func() error {
		for i := range conns {
			c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: src.AsSlice()})
			if err != nil {
				return err
			}
			t.Cleanup(func() { c.Close() })
			conns[i] = c
		}
		return nil
	}))
	dst := &net.UDPAddr{IP: e.pair.SrvIP.AsSlice(), Port: 69}
	for _, c := range conns {
		_, err := c.WriteToUDP(rrq, dst)
		must(t, err)
	}
	buf := make([]byte, 1024)
	for i, c := range conns {
		must(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
		k, from, err := c.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("flood socket %d: no answer to its RRQ: %v", i, err)
		}
		switch op := binary.BigEndian.Uint16(buf[:k]); op {
		case 3, 6: // DATA, OACK
			held++
			tids = append(tids, from)
		case 5: // ERROR
			refused++
		default:
			t.Fatalf("flood socket %d: opcode %d", i, op)
		}
	}
	return held, refused, tids
}

// One address floods un-acknowledged RRQs, more than the server has slots.
// Another host on the segment must still get its file with a real client.
// Before the per-source limit the flood took every slot for the whole
// retransmit budget and atftp got "server busy".
func TestFloodFromOneSourceDoesNotStopAnother(t *testing.T) {
	netnstest.RequireCommands(t, "atftp", "ip")
	root, _ := testRoot(t)
	const slots = 32
	e := startInNetnsWith(t, root, func(o *Options) { o.MaxConcurrent = slots })
	flooder := e.pair.CliIP.Next()
	e.pair.Cli.Exec(t, "ip", "addr", "add", netip.PrefixFrom(flooder, e.pair.Subnet.Bits()).String(), "dev", e.pair.CliIf)

	held, refused, _ := rrqFlood(t, e, flooder, plainRRQ("boot.bin"), slots+8)
	t.Logf("flood from %v: %d transfers held, %d refused", flooder, held, refused)

	// atftp's source is the interface's primary address, CliIP.
	local := filepath.Join(e.dir, "legit")
	if out, err := tftpClients[0].get(e, "boot.bin", local); err != nil {
		t.Fatalf("real client from %v refused while %v floods: %v\n%s", e.pair.CliIP, flooder, err, out)
	}
	if sha256File(t, local) != sha256File(t, filepath.Join(root, "boot.bin")) {
		t.Fatal("content differs")
	}
	if held >= slots {
		t.Errorf("one address held %d of %d transfer slots", held, slots)
	}
	if got := testutil.ToFloat64(e.srv.metrics.transfers.WithLabelValues("source_busy")); got != float64(refused) {
		t.Errorf("source_busy = %v, want %d", got, refused)
	}
}

// A transfer whose first block is never acknowledged is dropped before its
// retransmit budget runs out, whether the unanswered packet is DATA block 1
// or the OACK: its socket is closed (a packet to it gets ICMP port
// unreachable) and its slot serves the next request, here with a single
// slot. Before, the slot stayed taken for the whole budget.
func TestUnacknowledgedTransferIsReclaimed(t *testing.T) {
	netnstest.RequireCommands(t, "atftp", "ip")
	root, _ := testRoot(t)
	e := startInNetnsWith(t, root, func(o *Options) { o.MaxConcurrent = 1 })
	unacked := e.srv.metrics.transfers.WithLabelValues("unacked")

	for i, rrq := range [][]byte{plainRRQ("boot.bin"), optionRRQ("boot.bin")} {
		held, _, tids := rrqFlood(t, e, e.pair.CliIP, rrq, 1)
		if held != 1 {
			t.Fatalf("RRQ %d was refused", i)
		}
		if !netnstest.WaitFor(60*time.Second, func() bool { return testutil.ToFloat64(unacked) == float64(i+1) }) {
			t.Fatalf("RRQ %d: the un-acknowledged transfer was not dropped (unacked = %v)", i, testutil.ToFloat64(unacked))
		}

		// Its socket is gone: a stray packet to the transfer's port is
		// answered with port unreachable (ECONNREFUSED on a connected
		// socket).
		var probe *net.UDPConn
		must(t, e.pair.Cli.Do(func() (err error) { probe, err = net.DialUDP("udp4", nil, tids[0]); return err }))
		refused := false
		buf := make([]byte, 1024)
		for j := 0; j < 20 && !refused; j++ {
			_, err := probe.Write([]byte{0, 9, 'x'}) // not a TFTP packet: ignored by a live transfer
			must(t, err)
			must(t, probe.SetReadDeadline(time.Now().Add(500*time.Millisecond)))
			_, err = probe.Read(buf)
			refused = errors.Is(err, syscall.ECONNREFUSED)
		}
		probe.Close()
		if !refused {
			t.Errorf("RRQ %d: transfer socket %v still open after the transfer was dropped", i, tids[0])
		}

		local := filepath.Join(e.dir, fmt.Sprintf("after%d", i))
		if out, err := tftpClients[0].get(e, "boot.bin", local); err != nil {
			t.Fatalf("RRQ %d: the slot was not freed: %v\n%s", i, err, out)
		}
	}
}
