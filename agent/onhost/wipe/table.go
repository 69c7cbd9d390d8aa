package wipe

import (
	"bytes"
	"encoding/binary"
	"io"
)

// Partition is a byte range on a disk that may carry its own signatures.
type Partition struct {
	// Number as the kernel numbers it (0 when only the table knows it).
	Number int
	Start  int64
	Size   int64
}

// tablePartitions reads the partition ranges an MBR or GPT on r describes
// (primary GPT header, else the backup at the last sector). It is liberal:
// it only decides which extra ranges get zeroed, and zeroing a bogus range
// of a disk being wiped does no harm. Ranges are clipped to size.
func tablePartitions(r io.ReaderAt, size int64, sectorSize int64) []Partition {
	if sectorSize <= 0 {
		sectorSize = 512
	}
	var out []Partition
	add := func(start, length int64) {
		if start <= 0 || length <= 0 || start >= size {
			return
		}
		if start+length > size || start+length < 0 {
			length = size - start
		}
		out = append(out, Partition{Start: start, Size: length})
	}
	mbr := make([]byte, 512)
	if _, err := r.ReadAt(mbr, 0); err != nil {
		return nil
	}
	if mbr[510] == 0x55 && mbr[511] == 0xAA {
		for i := 0; i < 4; i++ {
			e := mbr[446+16*i : 446+16*(i+1)]
			typ := e[4]
			lba := int64(binary.LittleEndian.Uint32(e[8:12]))
			n := int64(binary.LittleEndian.Uint32(e[12:16]))
			switch typ {
			case 0, 0xEE: // empty, or GPT protective (the GPT is read below)
			case 0x05, 0x0F, 0x85:
				add(lba*512, n*512)
				out = append(out, extended(r, size, lba)...)
			default:
				add(lba*512, n*512)
			}
		}
	}
	// Look for a GPT even without a protective MBR: a damaged MBR must not
	// hide partitions with filesystems in them.
	for _, ss := range []int64{sectorSize, 512, 4096} {
		if ps := gptPartitions(r, size, ss); len(ps) > 0 {
			for _, p := range ps {
				add(p.Start, p.Size)
			}
			break
		}
	}
	return out
}

// extended follows the EBR chain of an MBR extended partition (bounded).
func extended(r io.ReaderAt, size int64, base int64) []Partition {
	var out []Partition
	ebr := make([]byte, 512)
	next := base
	for i := 0; i < 128; i++ {
		if next*512 >= size || r == nil {
			break
		}
		if _, err := r.ReadAt(ebr, next*512); err != nil || ebr[510] != 0x55 || ebr[511] != 0xAA {
			break
		}
		e1, e2 := ebr[446:462], ebr[462:478]
		if e1[4] != 0 {
			start := (next + int64(binary.LittleEndian.Uint32(e1[8:12]))) * 512
			n := int64(binary.LittleEndian.Uint32(e1[12:16])) * 512
			if start > 0 && start < size && n > 0 {
				out = append(out, Partition{Start: start, Size: min(n, size-start)})
			}
		}
		if e2[4] == 0 {
			break
		}
		nxt := base + int64(binary.LittleEndian.Uint32(e2[8:12]))
		if nxt <= next {
			break
		}
		next = nxt
	}
	return out
}

var gptSignature = []byte("EFI PART")

func gptPartitions(r io.ReaderAt, size, ss int64) []Partition {
	if size < 3*ss {
		return nil
	}
	for _, hdrLBA := range []int64{1, size/ss - 1} {
		hdr := make([]byte, 92)
		if _, err := r.ReadAt(hdr, hdrLBA*ss); err != nil || !bytes.Equal(hdr[:8], gptSignature) {
			continue
		}
		entLBA := int64(binary.LittleEndian.Uint64(hdr[72:80]))
		count := int64(binary.LittleEndian.Uint32(hdr[80:84]))
		esz := int64(binary.LittleEndian.Uint32(hdr[84:88]))
		if count <= 0 || count > 1024 || esz < 128 || esz > 4096 || entLBA <= 0 || entLBA*ss+count*esz > size {
			continue
		}
		buf := make([]byte, count*esz)
		if _, err := r.ReadAt(buf, entLBA*ss); err != nil {
			continue
		}
		var out []Partition
		for i := int64(0); i < count; i++ {
			e := buf[i*esz : (i+1)*esz]
			if allZero(e[:16]) {
				continue
			}
			first := int64(binary.LittleEndian.Uint64(e[32:40]))
			last := int64(binary.LittleEndian.Uint64(e[40:48]))
			if first <= 0 || last < first || last >= size/ss {
				continue
			}
			out = append(out, Partition{Start: first * ss, Size: (last - first + 1) * ss})
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
