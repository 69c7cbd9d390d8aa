// Package ipxebin holds the iPXE builds Anvil serves where Debian's package
// falls short. Debian 12's ipxe (a 2019 snapshot) has no HTTPS and no
// autoexec.ipxe on EFI; these builds have both, and IPv6.
//
// They are tinkerbell/ipxedust's builds of iPXE commit 9062544f (iPXE is
// GPL-2.0-or-later or UBDL; its source is https://github.com/ipxe/ipxe at
// that commit), taken from the ipxedust Go module at the version pinned in
// go.mod, so a clone needs nothing beside it.
package ipxebin

import "github.com/tinkerbell/ipxedust/binary"

// Build is one iPXE binary.
type Build struct {
	// Name is the file name it is served under.
	Name string
	// Data is the binary as built; never modify it (see Clone).
	Data []byte
}

// Clone returns a copy of the binary that can be patched.
func (b Build) Clone() []byte { return append([]byte(nil), b.Data...) }

var (
	// EFI is the x86-64 UEFI build with all of iPXE's own NIC drivers.
	EFI = Build{Name: "ipxe.efi", Data: binary.IpxeEFI}
	// SNP is the arm64 (aarch64) UEFI build that drives the NIC through
	// the firmware's SNP. ipxedust has no x86-64 SNP build: x86-64
	// firmware chains EFI, which carries its own drivers.
	SNP = Build{Name: "snp.efi", Data: binary.SNP}
)
