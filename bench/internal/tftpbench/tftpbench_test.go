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
	if want := len(o.Files)*len(o.BlockSizes)*len(o.Clients) + len(o.WindowSizes)*len(o.WindowClients) + len(o.Impaired); len(c) != want {
		t.Fatalf("%d cells, want %d", len(c), want)
	}
	// Impaired cells come last, so the link is impaired once per subject.
	for i, k := range c {
		if k.impaired != (i >= len(c)-len(o.Impaired)) {
			t.Fatalf("cell %d %+v out of order", i, k)
		}
	}
	// Every window size asked for has a cell per client count, on ipxe.efi
	// at blksize 1468.
	seen := map[[2]int]bool{}
	for _, k := range c {
		if k.window == 0 || k.impaired {
			continue
		}
		if k.file != "ipxe.efi" || k.blksize != 1468 {
			t.Errorf("window cell %+v", k)
		}
		seen[[2]int{k.window, k.clients}] = true
	}
	for _, w := range o.WindowSizes {
		for _, n := range o.WindowClients {
			if !seen[[2]int{w, n}] {
				t.Errorf("no cell for windowsize %d, %d clients", w, n)
			}
		}
	}
}
