package install

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unicode/utf16"
)

// GPTPartition is one entry of a GUID partition table.
type GPTPartition struct {
	// Number is the entry's index plus one: the kernel's partition number.
	Number int
	Name   string
	// FirstLBA and LastLBA are inclusive, in SectorSize units.
	FirstLBA, LastLBA uint64
	SectorSize        int64
}

// Offset and Size are the partition's byte range.
func (p GPTPartition) Offset() int64 { return int64(p.FirstLBA) * p.SectorSize }
func (p GPTPartition) Size() int64 {
	return int64(p.LastLBA-p.FirstLBA+1) * p.SectorSize
}

// Limits a table must respect: the spec's 128-byte entries (or a power of
// two multiple) and a bound on what the installer reads.
const (
	gptMinEntrySize = 128
	gptMaxEntries   = 1024
	gptMaxArray     = 1 << 20
)

var gptSignature = []byte("EFI PART")

// FindGPTPartition reads the primary GPT on r (the header at LBA 1, for
// 512- and then 4096-byte sectors) and returns the partition named name.
// The header and entry array CRCs must match: a half-written or foreign
// table is an error, not a guess. A name used twice is an error too.
func FindGPTPartition(r io.ReaderAt, name string) (GPTPartition, error) {
	var lastErr error
	for _, ss := range []int64{512, 4096} {
		parts, err := readGPT(r, ss)
		if errors.Is(err, errNoGPT) {
			continue
		}
		if err != nil {
			lastErr = err
			continue
		}
		var found []GPTPartition
		for _, p := range parts {
			if p.Name == name {
				found = append(found, p)
			}
		}
		switch len(found) {
		case 0:
			var names []string
			for _, p := range parts {
				names = append(names, fmt.Sprintf("%d:%q", p.Number, p.Name))
			}
			return GPTPartition{}, fmt.Errorf("GPT has no partition named %q (partitions %v)", name, names)
		case 1:
			return found[0], nil
		default:
			return GPTPartition{}, fmt.Errorf("GPT has %d partitions named %q", len(found), name)
		}
	}
	if lastErr != nil {
		return GPTPartition{}, lastErr
	}
	return GPTPartition{}, errors.New("no GPT header at LBA 1 (sector size 512 or 4096)")
}

var errNoGPT = errors.New("no GPT signature")

// readGPT parses the header at LBA 1 for sector size ss and returns the
// used entries (type GUID not zero).
func readGPT(r io.ReaderAt, ss int64) ([]GPTPartition, error) {
	hdr := make([]byte, 512)
	if _, err := r.ReadAt(hdr, ss); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errNoGPT
		}
		return nil, fmt.Errorf("reading the GPT header: %w", err)
	}
	if !bytes.Equal(hdr[0:8], gptSignature) {
		return nil, errNoGPT
	}
	le := binary.LittleEndian
	hdrSize := le.Uint32(hdr[12:16])
	if hdrSize < 92 || hdrSize > 512 {
		return nil, fmt.Errorf("GPT header size %d is invalid", hdrSize)
	}
	want := le.Uint32(hdr[16:20])
	h := make([]byte, hdrSize)
	copy(h, hdr[:hdrSize])
	le.PutUint32(h[16:20], 0)
	if got := crc32.ChecksumIEEE(h); got != want {
		return nil, fmt.Errorf("GPT header CRC %08x does not match %08x (damaged or half-written table)", got, want)
	}
	if myLBA := le.Uint64(hdr[24:32]); myLBA != 1 {
		return nil, fmt.Errorf("GPT header at LBA 1 says it is at LBA %d", myLBA)
	}
	entriesLBA := le.Uint64(hdr[72:80])
	n := le.Uint32(hdr[80:84])
	esize := le.Uint32(hdr[84:88])
	arrayCRC := le.Uint32(hdr[88:92])
	if esize < gptMinEntrySize || esize%gptMinEntrySize != 0 || esize&(esize-1) != 0 {
		return nil, fmt.Errorf("GPT entry size %d is invalid", esize)
	}
	if n == 0 || n > gptMaxEntries || uint64(n)*uint64(esize) > gptMaxArray {
		return nil, fmt.Errorf("GPT entry count %d (of %d bytes) is out of range", n, esize)
	}
	if entriesLBA < 2 || entriesLBA > 1<<40 {
		return nil, fmt.Errorf("GPT entries at LBA %d", entriesLBA)
	}
	arr := make([]byte, int(n)*int(esize))
	if _, err := r.ReadAt(arr, int64(entriesLBA)*ss); err != nil {
		return nil, fmt.Errorf("reading the GPT entries: %w", err)
	}
	if got := crc32.ChecksumIEEE(arr); got != arrayCRC {
		return nil, fmt.Errorf("GPT entry array CRC %08x does not match %08x (damaged or half-written table)", got, arrayCRC)
	}
	var out []GPTPartition
	for i := 0; i < int(n); i++ {
		e := arr[i*int(esize) : (i+1)*int(esize)]
		if allZero(e[0:16]) {
			continue // unused entry
		}
		first, last := le.Uint64(e[32:40]), le.Uint64(e[40:48])
		if last < first {
			return nil, fmt.Errorf("GPT entry %d ends (LBA %d) before it starts (LBA %d)", i+1, last, first)
		}
		out = append(out, GPTPartition{Number: i + 1, Name: utf16Name(e[56:128]), FirstLBA: first, LastLBA: last, SectorSize: ss})
	}
	return out, nil
}

// utf16Name decodes a 72-byte UTF-16LE partition name up to its first NUL.
func utf16Name(b []byte) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u))
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
