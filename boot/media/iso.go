// Package media builds the small per-boot ISO a BMC attaches as a virtual
// CD (Host spec.bootMethod VirtualMedia): an ISO 9660 image whose El Torito
// catalog has one UEFI no-emulation entry pointing at a FAT12 EFI system
// image (BOOTX64.EFI and the boot script). Firmware boots the FAT image;
// the ISO 9660 side only lists it. It is written here, not with a
// library: the formats are small for a handful of files and the output is
// deterministic.
package media

import (
	"encoding/binary"
	"errors"
	"fmt"
)

const isoSector = 2048

// ISO returns a UEFI-bootable ISO 9660 image that boots the FAT image
// esp (see FAT12) from El Torito platform 0xEF, no emulation. The FAT
// image is also visible in the ISO as /EFIBOOT.IMG.
func ISO(esp []byte) ([]byte, error) {
	if len(esp) == 0 || len(esp)%sectorSize != 0 {
		return nil, errors.New("media: the EFI system image must be whole 512-byte sectors")
	}
	if len(esp)/sectorSize > 0xFFFF {
		// The catalog's sector count is 16 bits of 512-byte sectors.
		return nil, fmt.Errorf("media: EFI system image of %d bytes is over El Torito's 32 MiB", len(esp))
	}
	const (
		pvdLBA, brLBA, termLBA = 16, 17, 18
		lPathLBA, mPathLBA     = 19, 20
		rootLBA, catalogLBA    = 21, 22
		espLBA                 = 23
	)
	espSectors := (len(esp) + isoSector - 1) / isoSector
	total := espLBA + espSectors
	img := make([]byte, total*isoSector)
	sec := func(n int) []byte { return img[n*isoSector : (n+1)*isoSector] }

	// Root directory: ".", "..", EFIBOOT.IMG;1.
	root := sec(rootLBA)
	off := copy(root, dirRecord([]byte{0}, rootLBA, isoSector, true))
	off += copy(root[off:], dirRecord([]byte{1}, rootLBA, isoSector, true))
	copy(root[off:], dirRecord([]byte("EFIBOOT.IMG;1"), espLBA, len(esp), false))

	// Path tables: the root alone.
	for _, pt := range []struct {
		lba int
		bo  binary.ByteOrder
	}{{lPathLBA, binary.LittleEndian}, {mPathLBA, binary.BigEndian}} {
		t := sec(pt.lba)
		t[0] = 1
		pt.bo.PutUint32(t[2:], rootLBA)
		pt.bo.PutUint16(t[6:], 1)
	}
	const pathTableSize = 10

	pvd := sec(pvdLBA)
	pvd[0] = 1
	copy(pvd[1:], "CD001")
	pvd[6] = 1
	copy(pvd[8:40], pad("", 32))
	copy(pvd[40:72], pad("ANVIL_BOOT", 32))
	both32(pvd[80:], total)
	both16(pvd[120:], 1)
	both16(pvd[124:], 1)
	both16(pvd[128:], isoSector)
	both32(pvd[132:], pathTableSize)
	binary.LittleEndian.PutUint32(pvd[140:], lPathLBA)
	binary.BigEndian.PutUint32(pvd[148:], mPathLBA)
	copy(pvd[156:190], dirRecord([]byte{0}, rootLBA, isoSector, true))
	copy(pvd[190:813], pad("", 813-190)) // set, publisher, preparer, application, file ids
	for _, o := range []int{813, 830, 864} {
		copy(pvd[o:], "2020010100000000") // created, modified, effective; tz byte 0 (GMT)
	}
	copy(pvd[847:], "0000000000000000") // never expires
	pvd[881] = 1

	br := sec(brLBA)
	copy(br[1:], "CD001")
	br[6] = 1
	copy(br[7:], "EL TORITO SPECIFICATION")
	binary.LittleEndian.PutUint32(br[71:], catalogLBA)

	term := sec(termLBA)
	term[0] = 255
	copy(term[1:], "CD001")
	term[6] = 1

	cat := sec(catalogLBA)
	cat[0] = 1    // validation entry
	cat[1] = 0xEF // platform: EFI
	cat[30], cat[31] = 0x55, 0xAA
	var sum uint16
	for i := 0; i < 32; i += 2 {
		sum += binary.LittleEndian.Uint16(cat[i:])
	}
	binary.LittleEndian.PutUint16(cat[28:], -sum)
	d := cat[32:64] // initial/default entry
	d[0] = 0x88     // bootable
	d[1] = 0        // no emulation
	binary.LittleEndian.PutUint16(d[6:], uint16(len(esp)/sectorSize))
	binary.LittleEndian.PutUint32(d[8:], espLBA)

	copy(img[espLBA*isoSector:], esp)
	return img, nil
}

// Build is FAT12 then ISO.
func Build(files []File) ([]byte, error) {
	esp, err := FAT12(files)
	if err != nil {
		return nil, err
	}
	return ISO(esp)
}

func dirRecord(name []byte, lba, size int, dir bool) []byte {
	n := 33 + len(name)
	if n%2 == 1 {
		n++
	}
	r := make([]byte, n)
	r[0] = byte(n)
	both32(r[2:], lba)
	both32(r[10:], size)
	copy(r[18:], []byte{120, 1, 1, 0, 0, 0, 0}) // 2020-01-01 00:00 GMT
	if dir {
		r[25] = 2
	}
	both16(r[28:], 1)
	r[32] = byte(len(name))
	copy(r[33:], name)
	return r
}

func both16(b []byte, v int) {
	binary.LittleEndian.PutUint16(b, uint16(v))
	binary.BigEndian.PutUint16(b[2:], uint16(v))
}

func both32(b []byte, v int) {
	binary.LittleEndian.PutUint32(b, uint32(v))
	binary.BigEndian.PutUint32(b[4:], uint32(v))
}

func pad(s string, n int) string { return fmt.Sprintf("%-*s", n, s) }
