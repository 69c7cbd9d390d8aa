package pxe

// BootMethod is how a host's firmware is meant to load iPXE: the Host's
// spec.bootMethod as the boot services need it.
type BootMethod uint8

const (
	// BootMethodPXE: firmware PXE (DHCP vendor class PXEClient, then TFTP).
	// The zero value, so a record built without a method boots as every
	// host did before spec.bootMethod existed.
	BootMethodPXE BootMethod = iota
	// BootMethodHTTP: UEFI HTTP boot (vendor class HTTPClient; the firmware
	// fetches the iPXE EFI binary from an http:// URL in the DHCP offer).
	BootMethodHTTP
)

func (m BootMethod) String() string {
	switch m {
	case BootMethodPXE:
		return "PXE"
	case BootMethodHTTP:
		return "HTTPBoot"
	}
	return "unknown"
}

// BootClient is which network boot client sent a DHCP request, as
// classified from options 60, 77, 93 and 175.
type BootClient uint8

const (
	// ClientNone is not a network boot client (an installed OS's DHCP).
	ClientNone BootClient = iota
	// ClientPXE is firmware PXE: option 60 PXEClient or option 93 with a
	// PXE architecture.
	ClientPXE
	// ClientHTTP is UEFI HTTP boot: option 60 HTTPClient or option 93
	// 15, 16, 18 or 19.
	ClientHTTP
	// ClientIPXE is iPXE itself (user class iPXE or option 175), whichever
	// way the firmware loaded it.
	ClientIPXE
)

func (c BootClient) String() string {
	switch c {
	case ClientNone:
		return "none"
	case ClientPXE:
		return "pxe"
	case ClientHTTP:
		return "http"
	case ClientIPXE:
		return "ipxe"
	}
	return "unknown"
}

// Serves reports whether a host booting by m gets boot options when client
// c asks. UEFI HTTP boot clients are answered only for HTTPBoot hosts: a
// PXE host's firmware that tries HTTP boot first gets no boot file and
// moves on to PXE, booting as it always did. An HTTPBoot host's PXE client
// is still answered: its one-time boot is PXE where the BMC has no HTTP
// boot selector (IPMI; see inventory's bootDevice), and refusing it would
// leave such a Host unbootable. iPXE, the second stage of both, is always
// answered.
func (m BootMethod) Serves(c BootClient) bool {
	switch c {
	case ClientIPXE:
		return m == BootMethodPXE || m == BootMethodHTTP
	case ClientPXE:
		return m == BootMethodPXE || m == BootMethodHTTP
	case ClientHTTP:
		return m == BootMethodHTTP
	}
	return false
}
