// Package hostimage tests the Debian 12 host OS disk image that
// `make host-image` builds (hack/hostimage): its GPT carries the partition
// names the installer relies on, and the image boots under SeaBIOS and OVMF
// in QEMU, where cloud-init reads an HTTP NoCloud seed and the kubelet runs
// a static pod of our web image through containerd.
package hostimage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf16"
)

// Partition is one GPT entry.
type Partition struct {
	Number     int
	Name       string
	TypeGUID   [16]byte
	FirstLBA   uint64
	LastLBA    uint64
	Attributes uint64
}

// Offset and Size are in bytes (512-byte sectors).
func (p Partition) Offset() int64 { return int64(p.FirstLBA) * 512 }
func (p Partition) Size() int64   { return int64(p.LastLBA-p.FirstLBA+1) * 512 }

// ReadGPT reads the primary GPT of a disk image (512-byte sectors), so the
// test finds partitions by name the way the installer does, not by number.
func ReadGPT(path string) ([]Partition, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hdr := make([]byte, 92)
	if _, err := f.ReadAt(hdr, 512); err != nil {
		return nil, fmt.Errorf("%s: GPT header: %w", path, err)
	}
	if !bytes.Equal(hdr[:8], []byte("EFI PART")) {
		return nil, fmt.Errorf("%s: no GPT header at LBA 1", path)
	}
	le := binary.LittleEndian
	entriesLBA, count, size := le.Uint64(hdr[72:]), le.Uint32(hdr[80:]), le.Uint32(hdr[84:])
	if size < 128 || count > 1024 {
		return nil, fmt.Errorf("%s: GPT header: %d entries of %d bytes", path, count, size)
	}
	buf := make([]byte, int(count)*int(size))
	if _, err := f.ReadAt(buf, int64(entriesLBA)*512); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: GPT entries: %w", path, err)
	}
	var parts []Partition
	for i := range int(count) {
		e := buf[i*int(size) : (i+1)*int(size)]
		var p Partition
		copy(p.TypeGUID[:], e[:16])
		if p.TypeGUID == ([16]byte{}) {
			continue
		}
		p.Number = i + 1
		p.FirstLBA, p.LastLBA, p.Attributes = le.Uint64(e[32:]), le.Uint64(e[40:]), le.Uint64(e[48:])
		var name []uint16
		for j := 56; j+1 < 128; j += 2 {
			c := le.Uint16(e[j:])
			if c == 0 {
				break
			}
			name = append(name, c)
		}
		p.Name = string(utf16.Decode(name))
		parts = append(parts, p)
	}
	return parts, nil
}

// GUID types, as stored on disk (mixed endian).
var (
	TypeBIOSBoot = guid("21686148-6449-6E6F-744E-656564454649")
	TypeESP      = guid("C12A7328-F81F-11D2-BA4B-00A0C93EC93B")
	TypeLinux    = guid("0FC63DAF-8483-4772-8E79-3D69D8477DE4")
)

func guid(s string) [16]byte {
	var b [16]byte
	var raw [16]byte
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			continue
		}
		var v byte
		fmt.Sscanf(s[i:i+2], "%02x", &v)
		raw[n] = v
		n++
		i++
	}
	// The first three fields are little endian on disk.
	b[0], b[1], b[2], b[3] = raw[3], raw[2], raw[1], raw[0]
	b[4], b[5] = raw[5], raw[4]
	b[6], b[7] = raw[7], raw[6]
	copy(b[8:], raw[8:])
	return b
}
