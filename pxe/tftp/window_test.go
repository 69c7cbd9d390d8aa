package tftp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/test/netnstest"
)

// loopServer serves root on 127.0.0.1 with the retransmission timeout
// and its cap.
func loopServer(t *testing.T, root string, timeout, maxTimeout time.Duration) *Server {
	t.Helper()
	s, err := NewServer(Options{Root: root, ListenAddr: netip.MustParseAddrPort("127.0.0.1:0"),
		Timeout: timeout, MaxTimeout: maxTimeout, Registerer: prometheus.NewRegistry()})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

// quietServer is a loopServer whose timeout is long: these tests lose
// blocks on purpose, and a loss must be repaired by the client's ACK, not
// by a retransmission a loaded machine might cause anyway.
func quietServer(t *testing.T, root string) *Server {
	return loopServer(t, root, 2*time.Second, 4*time.Second)
}

// testFile writes n bytes of a pattern that differs from block to block.
func testFile(t *testing.T, root, name string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/509)
	}
	must(t, os.WriteFile(filepath.Join(root, name), b, 0o644))
	return b
}

// windowClient is an RFC 7440 client: it acknowledges the last block of
// each window of windowSize blocks, or the last block it has in order as
// soon as one arrives out of order (a loss), and ignores the copies drop
// says are lost.
type windowClient struct {
	blockSize, windowSize int
	// drop(block, copy) reports whether the copy-th copy (0-based) of a
	// block (1-based, not wrapped) is lost.
	drop func(block uint64, copy int) bool

	acks     int            // ACKs sent, the OACK's included
	copies   map[uint64]int // DATA packets received per block
	sequence []uint64       // blocks in the order received (lost ones too)
}

func (c *windowClient) fetch(t *testing.T, server net.Addr, name string) []byte {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	must(t, err)
	defer conn.Close()
	rrq := append([]byte{0, opRRQ}, name+"\x00octet\x00"...)
	if c.blockSize != 0 {
		rrq = append(rrq, "blksize\x00"+strconv.Itoa(c.blockSize)+"\x00"...)
	}
	if c.windowSize != 0 {
		rrq = append(rrq, "windowsize\x00"+strconv.Itoa(c.windowSize)+"\x00"...)
	}
	_, err = conn.WriteTo(rrq, server)
	must(t, err)
	bs, ws := max(c.blockSize, 0), max(c.windowSize, 1)
	if bs == 0 {
		bs = defaultBlockSize
	}
	c.copies = map[uint64]int{}
	var got bytes.Buffer
	var have uint64 // blocks 1..have received in order
	inWindow := 0
	var tid net.Addr
	ack := func(b uint64) {
		p := binary.BigEndian.AppendUint16([]byte{0, opACK}, uint16(b))
		_, err := conn.WriteTo(p, tid)
		must(t, err)
		c.acks++
		inWindow = 0
	}
	buf := make([]byte, 4+bs+16)
	for {
		must(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after block %d: %v", have, err)
		}
		tid = from
		switch binary.BigEndian.Uint16(buf) {
		case opOACK:
			if c.blockSize == 0 && c.windowSize == 0 {
				t.Fatal("OACK to a request without options")
			}
			for name, v := range map[string]int{"blksize": c.blockSize, "windowsize": c.windowSize} {
				if want := name + "\x00" + strconv.Itoa(v) + "\x00"; v != 0 && !bytes.Contains(buf[2:n], []byte(want)) {
					t.Fatalf("OACK %q lacks %q", buf[2:n], want)
				}
			}
			ack(0)
		case opDATA:
			// The block number (wrapped) closest after have.
			b := have + uint64(binary.BigEndian.Uint16(buf[2:])-uint16(have))
			c.sequence = append(c.sequence, b)
			cp := c.copies[b]
			c.copies[b]++
			if c.drop != nil && c.drop(b, cp) {
				continue
			}
			if b != have+1 {
				if b > have+1 { // a gap: say what we have, once per window
					if inWindow >= 0 {
						ack(have)
						inWindow = -1
					}
				}
				continue
			}
			have = b
			got.Write(buf[4:n])
			if inWindow < 0 {
				inWindow = 0
			}
			inWindow++
			if n-4 < bs {
				ack(have)
				return got.Bytes()
			}
			if inWindow == ws {
				ack(have)
			}
		case opERROR:
			code, msg, _ := parseError(buf[:n])
			t.Fatalf("ERROR %d %q after block %d", code, msg, have)
		default:
			t.Fatalf("unexpected packet % x", buf[:min(n, 16)])
		}
	}
}

// With windowsize 4 the server sends four blocks per ACK; a block lost in
// the middle of a window is acknowledged short of the window's end, and the
// server sends again from the lost block, not the whole file or nothing.
func TestWindowedTransfer(t *testing.T) {
	root := t.TempDir()
	want := testFile(t, root, "f.bin", 512*99+100) // 100 blocks
	s := quietServer(t, root)
	c := &windowClient{blockSize: 512, windowSize: 4, drop: func(b uint64, copy int) bool { return b == 10 && copy == 0 }}
	got := c.fetch(t, s.Addr(), "f.bin")
	if !bytes.Equal(got, want) {
		t.Fatalf("received %d bytes, want %d identical", len(got), len(want))
	}
	// One ACK per window of 4 (25), the OACK's, and the one that reported
	// the loss; lockstep would be 101.
	if c.acks > 30 {
		t.Errorf("client sent %d ACKs for 100 blocks in windows of 4", c.acks)
	}
	if c.copies[10] != 2 {
		t.Errorf("block 10 (lost once) arrived %d times, want 2", c.copies[10])
	}
	if c.copies[1] != 1 || c.copies[100] != 1 {
		t.Errorf("blocks 1 and 100 arrived %d and %d times, want once", c.copies[1], c.copies[100])
	}
	waitCounter(t, s.metrics.transfers.WithLabelValues("ok"), 1)
}

// Block numbers are 16 bits: a transfer of more than 65535 blocks wraps to
// 0 and goes on (as iPXE and EDK2 expect); the ACKs are matched within the
// window across the wrap.
func TestBlockNumberRollover(t *testing.T) {
	root := t.TempDir()
	want := testFile(t, root, "big.bin", 8*70000+3) // 70001 blocks of 8 bytes
	s := quietServer(t, root)
	c := &windowClient{blockSize: 8, windowSize: 32}
	got := c.fetch(t, s.Addr(), "big.bin")
	if !bytes.Equal(got, want) {
		t.Fatalf("received %d bytes, want %d identical", len(got), len(want))
	}
	waitCounter(t, s.metrics.transfers.WithLabelValues("ok"), 1)
}

// A duplicate ACK is not answered with a duplicate block (the Sorcerer's
// Apprentice bug of RFC 1350's first servers): after block 1 is
// acknowledged twice, block 2 comes once, then block 3.
func TestDuplicateAckIsNotAnswered(t *testing.T) {
	root := t.TempDir()
	want := testFile(t, root, "f.bin", 512*3)
	s := quietServer(t, root)
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	must(t, err)
	defer conn.Close()
	_, err = conn.WriteTo(append([]byte{0, opRRQ}, "f.bin\x00octet\x00"...), s.Addr())
	must(t, err)
	buf := make([]byte, 600)
	read := func() (uint16, int, net.Addr) {
		must(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, from, err := conn.ReadFrom(buf)
		must(t, err)
		if binary.BigEndian.Uint16(buf) != opDATA {
			t.Fatalf("want DATA, got % x", buf[:min(n, 16)])
		}
		return binary.BigEndian.Uint16(buf[2:]), n, from
	}
	ack := func(to net.Addr, b uint16) {
		_, err := conn.WriteTo([]byte{0, opACK, byte(b >> 8), byte(b)}, to)
		must(t, err)
	}
	var got bytes.Buffer
	b, n, tid := read()
	if b != 1 {
		t.Fatalf("first block %d", b)
	}
	got.Write(buf[4:n])
	ack(tid, 1)
	ack(tid, 1)
	for next := uint16(2); ; next++ {
		b, n, _ = read()
		if b != next {
			t.Fatalf("after a duplicate ACK of block %d: block %d, want %d", next-1, b, next)
		}
		got.Write(buf[4:n])
		ack(tid, b)
		if n-4 < 512 {
			break
		}
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("received %d bytes, want %d identical", got.Len(), len(want))
	}
}

// waitCounter waits until c reaches want (the server counts a transfer
// when its goroutine ends, a moment after the client's last ACK).
func waitCounter(t *testing.T, c prometheus.Counter, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(c) < want {
		if time.Now().After(deadline) {
			t.Fatalf("counter at %v, want %v", testutil.ToFloat64(c), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// atftp (Debian's, 0.8) asks for windowsize as OVMF does and gets the file
// in windows: the server's OACK carries the option back.
func TestAtftpWindowsize(t *testing.T) {
	netnstest.RequireCommands(t, "atftp", "ip")
	src := filepath.Join(DefaultRoot, "snponly.efi")
	_, err := os.Stat(src)
	netnstest.Require(t, err == nil, "%s missing (install Debian package ipxe)", src)
	e := startInNetns(t, "")
	for _, w := range []int{4, 16} {
		t.Run(fmt.Sprint("windowsize ", w), func(t *testing.T) {
			local := filepath.Join(e.dir, fmt.Sprintf("w%d.efi", w))
			out, err := e.pair.Cli.Output(60*time.Second, "atftp", "--trace", "--option", "blksize 1468", "--option", fmt.Sprintf("windowsize %d", w),
				"-g", "-r", "snponly.efi", "-l", local, e.pair.SrvIP.String())
			if err != nil {
				t.Fatalf("atftp: %v\n%s", err, out)
			}
			if !strings.Contains(out, fmt.Sprintf("windowsize: %d", w)) {
				t.Fatalf("the OACK did not carry windowsize %d:\n%s", w, lastLines(out, 20))
			}
			if got, want := sha256File(t, local), sha256File(t, src); got != want {
				t.Fatalf("sha256 %s, want %s", got, want)
			}
		})
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
