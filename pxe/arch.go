package pxe

import (
	"strconv"
	"strings"
)

// Arch is a client system architecture as announced in DHCP option 93
// (RFC 4578, IANA "Processor Architecture Types"), in readable form. It says
// both the CPU and the firmware type, because that is what decides which
// boot file a client can run.
type Arch string

// Known client architectures. Several option 93 codes map to the same Arch
// (7 and 9 are both x86-64 UEFI in practice).
const (
	ArchUnknown       Arch = ""
	ArchX86BIOS       Arch = "x86-bios"         // 0: legacy BIOS PXE (x86 and x86-64)
	ArchIA32UEFI      Arch = "ia32-uefi"        // 6
	ArchX8664UEFI     Arch = "x86_64-uefi"      // 7, 9
	ArchARM32UEFI     Arch = "arm32-uefi"       // 10
	ArchARM64UEFI     Arch = "arm64-uefi"       // 11
	ArchIA32UEFIHTTP  Arch = "ia32-uefi-http"   // 15
	ArchX8664UEFIHTTP Arch = "x86_64-uefi-http" // 16
	ArchARM32UEFIHTTP Arch = "arm32-uefi-http"  // 18
	ArchARM64UEFIHTTP Arch = "arm64-uefi-http"  // 19
)

// ArchFromOption93 maps an option 93 code to an Arch; unknown codes give
// ArchUnknown.
func ArchFromOption93(code uint16) Arch {
	switch code {
	case 0:
		return ArchX86BIOS
	case 6:
		return ArchIA32UEFI
	case 7, 9:
		return ArchX8664UEFI
	case 10:
		return ArchARM32UEFI
	case 11:
		return ArchARM64UEFI
	case 15:
		return ArchIA32UEFIHTTP
	case 16:
		return ArchX8664UEFIHTTP
	case 18:
		return ArchARM32UEFIHTTP
	case 19:
		return ArchARM64UEFIHTTP
	}
	return ArchUnknown
}

// ArchFromVendorClass parses the architecture field of a PXE vendor class
// identifier ("PXEClient:Arch:00007:UNDI:003016" or "HTTPClient:Arch:00016").
// Clients that omit option 93 still send it there.
func ArchFromVendorClass(vc string) (Arch, bool) {
	_, rest, ok := strings.Cut(vc, ":Arch:")
	if !ok || len(rest) < 5 {
		return ArchUnknown, false
	}
	n, err := strconv.ParseUint(rest[:5], 10, 16)
	if err != nil {
		return ArchUnknown, false
	}
	a := ArchFromOption93(uint16(n))
	return a, a != ArchUnknown
}

// UEFI reports whether the client firmware is UEFI.
func (a Arch) UEFI() bool { return a != ArchUnknown && a != ArchX86BIOS }

// HTTPBoot reports whether the client is a UEFI HTTP boot client, which takes
// a URL as its boot file instead of a TFTP path.
func (a Arch) HTTPBoot() bool { return strings.HasSuffix(string(a), "-http") }

// CPU returns the processor architecture in Kubernetes/Go style: "amd64",
// "386", "arm64", "arm", or "" when unknown. BIOS clients report "amd64"
// because option 93 cannot tell 32- from 64-bit BIOS machines and nothing
// provisioned today is 32-bit.
func (a Arch) CPU() string {
	switch {
	case a == ArchX86BIOS, strings.HasPrefix(string(a), "x86_64"):
		return "amd64"
	case strings.HasPrefix(string(a), "ia32"):
		return "386"
	case strings.HasPrefix(string(a), "arm64"):
		return "arm64"
	case strings.HasPrefix(string(a), "arm32"):
		return "arm"
	}
	return ""
}
