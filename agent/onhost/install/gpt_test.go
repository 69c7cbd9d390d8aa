package install

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"
	"unicode/utf16"
)

type testEntry struct {
	name        string
	first, last uint64
	unused      bool // zero type GUID
}

// buildGPT lays out a protective-MBR-less disk image with a primary GPT
// for sector size ss: header at LBA 1, entries at LBA 2. edit may change
// the header or the array after the CRCs are computed (to damage them)
// or before (fix = true recomputes them afterwards).
func buildGPT(ss int64, nEntries, esize int, entries []testEntry, edit func(hdr, arr []byte), fix bool) []byte {
	le := binary.LittleEndian
	arr := make([]byte, nEntries*esize)
	for i, e := range entries {
		b := arr[i*esize:]
		if !e.unused {
			copy(b[0:16], []byte("linuxfstypeguid!"))
			copy(b[16:32], []byte("uniquepartguid00"))
		}
		le.PutUint64(b[32:40], e.first)
		le.PutUint64(b[40:48], e.last)
		for j, c := range utf16.Encode([]rune(e.name)) {
			if 56+2*j+1 < 128 {
				le.PutUint16(b[56+2*j:], c)
			}
		}
	}
	hdr := make([]byte, 92)
	copy(hdr, "EFI PART")
	le.PutUint32(hdr[8:12], 0x00010000)
	le.PutUint32(hdr[12:16], 92)
	le.PutUint64(hdr[24:32], 1)
	le.PutUint64(hdr[72:80], 2)
	le.PutUint32(hdr[80:84], uint32(nEntries))
	le.PutUint32(hdr[84:88], uint32(esize))
	crcs := func() {
		le.PutUint32(hdr[88:92], crc32.ChecksumIEEE(arr))
		le.PutUint32(hdr[16:20], 0)
		le.PutUint32(hdr[16:20], crc32.ChecksumIEEE(hdr))
	}
	if fix && edit != nil {
		edit(hdr, arr)
	}
	crcs()
	if !fix && edit != nil {
		edit(hdr, arr)
	}
	img := make([]byte, 2*ss+int64(len(arr))+ss)
	copy(img[ss:], hdr)
	copy(img[2*ss:], arr)
	return img
}

func TestFindGPTPartition(t *testing.T) {
	three := []testEntry{{name: "anvil-bios", first: 2048, last: 4095}, {name: "anvil-esp", first: 4096, last: 20479}, {name: "anvil-root", first: 20480, last: 81886}}
	long := strings.Repeat("x", 36) // the most a 72-byte name holds
	tests := []struct {
		name    string
		img     []byte
		find    string
		wantNum int
		wantOff int64
		wantErr string
	}{
		{name: "third of three", img: buildGPT(512, 128, 128, three, nil, false), find: "anvil-root", wantNum: 3, wantOff: 20480 * 512},
		{name: "4096-byte sectors", img: buildGPT(4096, 128, 128, three, nil, false), find: "anvil-root", wantNum: 3, wantOff: 20480 * 4096},
		{name: "entries of 256 bytes", img: buildGPT(512, 64, 256, three, nil, false), find: "anvil-esp", wantNum: 2, wantOff: 4096 * 512},
		{name: "unused entries keep their numbers", img: buildGPT(512, 128, 128, []testEntry{{unused: true}, {name: "anvil-root", first: 34, last: 100}}, nil, false),
			find: "anvil-root", wantNum: 2, wantOff: 34 * 512},
		{name: "unused entry with the name does not count", img: buildGPT(512, 128, 128, []testEntry{{name: "anvil-root", unused: true, first: 34, last: 40}}, nil, false),
			find: "anvil-root", wantErr: `no partition named "anvil-root"`},
		{name: "full-length name", img: buildGPT(512, 128, 128, []testEntry{{name: long, first: 34, last: 100}}, nil, false), find: long, wantNum: 1, wantOff: 34 * 512},
		{name: "non-ASCII name", img: buildGPT(512, 128, 128, []testEntry{{name: "wurzel-ä-𝔸", first: 34, last: 100}}, nil, false), find: "wurzel-ä-𝔸", wantNum: 1, wantOff: 34 * 512},
		{name: "prefix is not a match", img: buildGPT(512, 128, 128, []testEntry{{name: "anvil-root2", first: 34, last: 100}}, nil, false),
			find: "anvil-root", wantErr: `no partition named "anvil-root" (partitions [1:"anvil-root2"])`},
		{name: "name twice", img: buildGPT(512, 128, 128, []testEntry{{name: "anvil-root", first: 34, last: 100}, {name: "anvil-root", first: 101, last: 200}}, nil, false),
			find: "anvil-root", wantErr: "2 partitions named"},
		{name: "no table", img: make([]byte, 64<<10), find: "anvil-root", wantErr: "no GPT header"},
		{name: "too short for a header", img: make([]byte, 100), find: "anvil-root", wantErr: "no GPT header"},
		{name: "header CRC damaged", img: buildGPT(512, 128, 128, three, func(h, _ []byte) { h[40]++ }, false), find: "anvil-root", wantErr: "GPT header CRC"},
		{name: "entry array damaged (a name changed)", img: buildGPT(512, 128, 128, three, func(_, a []byte) { a[2*128+56] = 'A' }, false),
			find: "anvil-root", wantErr: "entry array CRC"},
		{name: "entry size not a power of two", img: buildGPT(512, 64, 384, three, nil, false), find: "anvil-root", wantErr: "entry size 384"},
		{name: "entry size too small", img: buildGPT(512, 128, 128, three, func(h, _ []byte) { binary.LittleEndian.PutUint32(h[84:88], 64) }, true),
			find: "anvil-root", wantErr: "entry size 64"},
		{name: "too many entries", img: buildGPT(512, 128, 128, three, func(h, _ []byte) { binary.LittleEndian.PutUint32(h[80:84], 1<<20) }, true),
			find: "anvil-root", wantErr: "entry count"},
		{name: "header claims another LBA", img: buildGPT(512, 128, 128, three, func(h, _ []byte) { binary.LittleEndian.PutUint64(h[24:32], 7) }, true),
			find: "anvil-root", wantErr: "says it is at LBA 7"},
		{name: "entry ends before it starts", img: buildGPT(512, 128, 128, []testEntry{{name: "anvil-root", first: 100, last: 34}}, nil, false),
			find: "anvil-root", wantErr: "ends (LBA 34) before it starts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := FindGPTPartition(bytes.NewReader(tt.img), tt.find)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Number != tt.wantNum || p.Offset() != tt.wantOff || p.Name != tt.find {
				t.Errorf("got partition %d %q at %d, want %d at %d", p.Number, p.Name, p.Offset(), tt.wantNum, tt.wantOff)
			}
		})
	}
}

func TestGPTPartitionSize(t *testing.T) {
	p := GPTPartition{FirstLBA: 2048, LastLBA: 4095, SectorSize: 512}
	if p.Size() != 1<<20 {
		t.Errorf("size %d, want 1 MiB", p.Size())
	}
}
