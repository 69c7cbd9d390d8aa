package tftp

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// A client that loses blocks (it does not acknowledge them) still gets the
// whole file: the server resends each lost block, also when the same block
// is lost twice in a row (the second retransmission comes after the longer
// wait). Plain RFC 1350 on loopback, no options, so blocks are 512 bytes.
func TestLostBlocksAreResent(t *testing.T) {
	root := t.TempDir()
	want := testFile(t, root, "f.bin", 512*6+100) // 7 blocks
	s := loopServer(t, root, 50*time.Millisecond, 200*time.Millisecond)

	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	must(t, err)
	defer c.Close()
	rrq := append([]byte{0, 1}, "f.bin\x00octet\x00"...)
	_, err = c.WriteTo(rrq, s.Addr())
	must(t, err)

	// Block 2 is ignored once, block 5 twice.
	ignore := map[uint16]int{2: 1, 5: 2}
	seen := map[uint16]int{}
	var got bytes.Buffer
	buf := make([]byte, 1024)
	next := uint16(1)
	for {
		must(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			t.Fatalf("waiting for block %d: %v (seen %v)", next, err, seen)
		}
		if n < 4 || binary.BigEndian.Uint16(buf) != 3 {
			t.Fatalf("expected DATA, got % x", buf[:min(n, 32)])
		}
		blk := binary.BigEndian.Uint16(buf[2:])
		seen[blk]++
		if ignore[blk] > 0 {
			ignore[blk]--
			continue
		}
		if blk == next {
			got.Write(buf[4:n])
			next++
		}
		ack := []byte{0, 4, 0, 0}
		binary.BigEndian.PutUint16(ack[2:], blk)
		_, err = c.WriteTo(ack, from)
		must(t, err)
		if blk == next-1 && n-4 < 512 {
			break
		}
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("received %d bytes, want %d identical", got.Len(), len(want))
	}
	// At least: a loaded machine may add a spurious retransmission.
	if seen[2] < 2 || seen[5] < 3 {
		t.Errorf("copies of block 2 = %d (want 2), of block 5 = %d (want 3)", seen[2], seen[5])
	}
}
