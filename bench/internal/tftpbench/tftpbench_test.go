package tftpbench

import "testing"

func TestMinPackets(t *testing.T) {
	for _, tc := range []struct {
		size    int64
		blksize int
		want    uint64
	}{
		{0, 512, 2},       // OACK + one empty block
		{511, 512, 2},     // OACK + one short block
		{512, 512, 3},     // a full block must be followed by an empty one
		{74213, 1468, 52}, // undionly.kpxe: 50 full + 1 short + OACK
	} {
		if got := MinPackets(tc.size, tc.blksize); got != tc.want {
			t.Errorf("MinPackets(%d, %d) = %d, want %d", tc.size, tc.blksize, got, tc.want)
		}
	}
}

func TestCells(t *testing.T) {
	o := DefaultOptions()
	c := cells(o)
	if want := len(o.Files)*len(o.BlockSizes)*len(o.Clients) + len(o.WindowClients) + len(o.Impaired); len(c) != want {
		t.Fatalf("%d cells, want %d", len(c), want)
	}
	// Impaired cells come last, so the link is impaired once per subject.
	for i, k := range c {
		if k.impaired != (i >= len(c)-len(o.Impaired)) {
			t.Fatalf("cell %d %+v out of order", i, k)
		}
	}
	last := c[len(c)-len(o.Impaired)-1]
	if last.window != o.WindowSize || last.file != "ipxe.efi" || last.blksize != 1468 {
		t.Errorf("window cell %+v", last)
	}
}
