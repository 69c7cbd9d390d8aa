package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf16"
)

// File is one file of the EFI system image, by absolute slash path
// (/EFI/BOOT/BOOTX64.EFI). Directories are implied by the paths.
type File struct {
	Path string
	Data []byte
}

const (
	sectorSize  = 512
	rootEntries = 32 // two sectors; the image holds a handful of names
	fat12Max    = 4084
	dirEntry    = 32
)

// fixedDate is every timestamp in the image (2020-01-01 00:00), so that
// the same files always make the same bytes.
const fixedDate = (2020-1980)<<9 | 1<<5 | 1

type fatNode struct {
	name     string
	dir      bool
	data     []byte
	children []*fatNode
	cluster  int
	clusters int
}

// FAT12 builds a FAT12 filesystem image holding files: a floppy-style
// layout (one reserved sector, two FATs, a fixed root directory) that
// UEFI's FAT driver, Linux and mtools all read. The cluster size is the
// smallest that keeps it FAT12 (at most 4084 clusters: FAT type is decided
// by the cluster count alone). Long names get VFAT long-name entries,
// which UEFI's driver reads (iPXE looks for "autoexec.ipxe", not 8.3).
func FAT12(files []File) ([]byte, error) {
	root := &fatNode{dir: true}
	for _, f := range files {
		if err := addFile(root, f); err != nil {
			return nil, err
		}
	}
	for spc := 1; spc <= 64; spc *= 2 {
		csize := spc * sectorSize
		n := max(1, countClusters(root, csize, true)) // fsck.fat wants a data cluster
		if n <= fat12Max {
			return layoutFAT(root, spc, n)
		}
	}
	return nil, errors.New("media: files too large for a FAT12 image")
}

func addFile(root *fatNode, f File) error {
	p := path.Clean(f.Path)
	if !strings.HasPrefix(p, "/") || p == "/" {
		return fmt.Errorf("media: file path %q: want an absolute file path", f.Path)
	}
	parts := strings.Split(p[1:], "/")
	dir := root
	for i, name := range parts {
		if len(name) > 255 || strings.ContainsAny(name, "\\:*?\"<>|") {
			return fmt.Errorf("media: file path %q: name %q not allowed on FAT", f.Path, name)
		}
		var found *fatNode
		for _, c := range dir.children {
			if strings.EqualFold(c.name, name) {
				found = c
			}
		}
		last := i == len(parts)-1
		switch {
		case found != nil && (last || !found.dir):
			return fmt.Errorf("media: file path %q: %q already exists", f.Path, name)
		case found != nil:
			dir = found
		case last:
			dir.children = append(dir.children, &fatNode{name: name, data: f.Data})
		default:
			found = &fatNode{name: name, dir: true}
			dir.children = append(dir.children, found)
			dir = found
		}
	}
	return nil
}

// entries is the number of 32-byte entries a directory needs.
func entries(d *fatNode, isRoot bool) int {
	n := 0
	if !isRoot {
		n = 2 // . and ..
	}
	for _, c := range d.children {
		n++
		if _, ok := shortName(c.name); !ok {
			n += (len(utf16.Encode([]rune(c.name))) + 12) / 13
		}
	}
	return n
}

func countClusters(d *fatNode, csize int, isRoot bool) int {
	n := 0
	if !isRoot {
		d.clusters = max(1, (entries(d, false)*dirEntry+csize-1)/csize)
		n += d.clusters
	}
	for _, c := range d.children {
		if c.dir {
			n += countClusters(c, csize, false)
		} else {
			c.clusters = (len(c.data) + csize - 1) / csize
			n += c.clusters
		}
	}
	return n
}

func layoutFAT(root *fatNode, spc, nclusters int) ([]byte, error) {
	if entries(root, true) > rootEntries {
		return nil, fmt.Errorf("media: more than %d entries in the image's root directory", rootEntries)
	}
	fatSectors := ((nclusters+2)*3/2 + 1 + sectorSize - 1) / sectorSize
	rootSectors := rootEntries * dirEntry / sectorSize
	dataStart := 1 + 2*fatSectors + rootSectors
	total := dataStart + nclusters*spc
	img := make([]byte, total*sectorSize)
	fat := make([]byte, fatSectors*sectorSize)
	set12(fat, 0, 0xFF8)
	set12(fat, 1, 0xFFF)

	next := 2
	var alloc func(d *fatNode)
	alloc = func(d *fatNode) {
		for _, c := range d.children {
			if c.clusters > 0 {
				c.cluster = next
				for i := range c.clusters {
					v := next + 1
					if i == c.clusters-1 {
						v = 0xFFF
					}
					set12(fat, next, v)
					next++
				}
			}
			if c.dir {
				alloc(c)
			}
		}
	}
	alloc(root)
	cl := func(n int) []byte { // a chain's bytes: its clusters are contiguous
		off := (dataStart + (n-2)*spc) * sectorSize
		return img[off:]
	}
	var write func(d *fatNode, parent int, isRoot bool, out []byte)
	write = func(d *fatNode, parent int, isRoot bool, out []byte) {
		var ents [][]byte
		if !isRoot {
			ents = append(ents, dirent([11]byte([]byte(".          ")), 0x10, d.cluster, 0),
				dirent([11]byte([]byte("..         ")), 0x10, parent, 0))
		}
		aliases := 0
		for _, c := range d.children {
			sn, ok := shortName(c.name)
			if !ok {
				aliases++
				sn = aliasName(c.name, aliases)
				ents = append(ents, lfnEntries(c.name, sn)...)
			}
			attr, size := byte(0x20), len(c.data)
			if c.dir {
				attr, size = 0x10, 0
				parentCluster := d.cluster // 0 for the root, as FAT wants in ..
				write(c, parentCluster, false, cl(c.cluster))
			} else if c.clusters > 0 {
				copy(cl(c.cluster), c.data)
			}
			ents = append(ents, dirent(sn, attr, c.cluster, size))
		}
		for i, e := range ents {
			copy(out[i*dirEntry:], e)
		}
	}
	write(root, 0, true, img[(1+2*fatSectors)*sectorSize:])

	bs := img[:sectorSize]
	copy(bs, []byte{0xEB, 0x3C, 0x90})
	copy(bs[3:], "ANVIL   ")
	binary.LittleEndian.PutUint16(bs[11:], sectorSize)
	bs[13] = byte(spc)
	binary.LittleEndian.PutUint16(bs[14:], 1) // reserved sectors
	bs[16] = 2                                // FATs
	binary.LittleEndian.PutUint16(bs[17:], rootEntries)
	if total < 0x10000 {
		binary.LittleEndian.PutUint16(bs[19:], uint16(total))
	} else {
		binary.LittleEndian.PutUint32(bs[32:], uint32(total))
	}
	bs[21] = 0xF8
	binary.LittleEndian.PutUint16(bs[22:], uint16(fatSectors))
	binary.LittleEndian.PutUint16(bs[24:], 32) // sectors per track
	binary.LittleEndian.PutUint16(bs[26:], 64) // heads
	bs[36] = 0x80
	bs[38] = 0x29
	binary.LittleEndian.PutUint32(bs[39:], 0x414E5649)
	copy(bs[43:], "NO NAME    ") // no volume label entry: fsck.fat wants the two to agree
	copy(bs[54:], "FAT12   ")
	bs[510], bs[511] = 0x55, 0xAA
	copy(img[sectorSize:], fat)
	copy(img[(1+fatSectors)*sectorSize:], fat)
	return img, nil
}

func set12(fat []byte, n, v int) {
	off := n * 3 / 2
	if n%2 == 0 {
		fat[off] = byte(v)
		fat[off+1] = fat[off+1]&0xF0 | byte(v>>8)&0x0F
	} else {
		fat[off] = fat[off]&0x0F | byte(v<<4)
		fat[off+1] = byte(v >> 4)
	}
}

func dirent(name [11]byte, attr byte, cluster, size int) []byte {
	e := make([]byte, dirEntry)
	copy(e, name[:])
	e[11] = attr
	for _, off := range []int{16, 18, 24} { // created, accessed, written
		binary.LittleEndian.PutUint16(e[off:], fixedDate)
	}
	binary.LittleEndian.PutUint16(e[26:], uint16(cluster))
	binary.LittleEndian.PutUint32(e[28:], uint32(size))
	return e
}

// shortName returns name as an 8.3 entry name when it is one already
// (upper case, 8.3 characters).
func shortName(name string) ([11]byte, bool) {
	var sn [11]byte
	for i := range sn {
		sn[i] = ' '
	}
	base, ext, _ := strings.Cut(name, ".")
	if base == "" || len(base) > 8 || len(ext) > 3 || strings.Contains(ext, ".") {
		return sn, false
	}
	for _, r := range base + ext {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("$%'-_@~`!(){}^#&", r)) {
			return sn, false
		}
	}
	copy(sn[:], base)
	copy(sn[8:], ext)
	return sn, true
}

// aliasName is the 8.3 alias of a long name: its first six usable
// characters, ~n, and the first three of its extension.
func aliasName(name string, n int) [11]byte {
	clean := func(s string, max int) string {
		var b []byte
		for _, r := range strings.ToUpper(s) {
			if len(b) == max {
				break
			}
			if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				b = append(b, byte(r))
			}
		}
		return string(b)
	}
	base, ext := name, ""
	if i := strings.LastIndex(name, "."); i > 0 {
		base, ext = name[:i], name[i+1:]
	}
	tail := fmt.Sprintf("~%d", n)
	var sn [11]byte
	copy(sn[:], fmt.Sprintf("%-8s%-3s", clean(base, 8-len(tail))+tail, clean(ext, 3)))
	return sn
}

// lfnEntries are the VFAT long-name entries for name, in on-disk order
// (last part first), each carrying the alias's checksum.
func lfnEntries(name string, alias [11]byte) [][]byte {
	var sum byte
	for _, c := range alias {
		sum = (sum>>1 | sum<<7) + c
	}
	u := utf16.Encode([]rune(name))
	n := (len(u) + 12) / 13
	if len(u)%13 != 0 {
		u = append(u, 0)
	}
	for len(u) < n*13 {
		u = append(u, 0xFFFF)
	}
	slots := []int{1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30}
	var out [][]byte
	for seq := n; seq >= 1; seq-- {
		e := make([]byte, dirEntry)
		e[0] = byte(seq)
		if seq == n {
			e[0] |= 0x40
		}
		e[11], e[13] = 0x0F, sum
		for i, off := range slots {
			binary.LittleEndian.PutUint16(e[off:], u[(seq-1)*13+i])
		}
		out = append(out, e)
	}
	return out
}
