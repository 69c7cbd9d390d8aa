package dhcp6

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/pxe"
)

// Range is an inclusive range of IPv6 addresses handed out by IA_NA.
type Range struct {
	Start, End netip.Addr
}

// IsValid reports whether r is a non-empty IPv6 range inside one /112
// (at most 65,536 addresses: the allocator's scan stays bounded).
func (r Range) IsValid() bool {
	if !r.Start.Is6() || !r.End.Is6() || r.Start.Is4In6() || r.Start.Compare(r.End) > 0 {
		return false
	}
	s, e := r.Start.As16(), r.End.As16()
	return [14]byte(s[:14]) == [14]byte(e[:14])
}

// Contains reports whether a lies in r.
func (r Range) Contains(a netip.Addr) bool {
	return r.IsValid() && a.Is6() && r.Start.Compare(a) <= 0 && a.Compare(r.End) <= 0
}

func (r Range) size() int {
	s, e := r.Start.As16(), r.End.As16()
	return int(uint16(e[14])<<8|uint16(e[15])) - int(uint16(s[14])<<8|uint16(s[15])) + 1
}

// at returns the i-th address of r (0 <= i < size).
func (r Range) at(i int) netip.Addr {
	b := r.Start.As16()
	v := int(uint16(b[14])<<8|uint16(b[15])) + i
	b[14], b[15] = byte(v>>8), byte(v)
	return netip.AddrFrom16(b)
}

// ParseRange parses "start-end", both IPv6 addresses in one /112.
func ParseRange(s string) (Range, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return Range{}, fmt.Errorf("range %q: want <start>-<end>", s)
	}
	start, err1 := netip.ParseAddr(strings.TrimSpace(a))
	end, err2 := netip.ParseAddr(strings.TrimSpace(b))
	r := Range{Start: start, End: end}
	if err := errors.Join(err1, err2); err != nil || !r.IsValid() {
		return Range{}, fmt.Errorf("range %q: want two IPv6 addresses, start <= end, differing only in the last 16 bits", s)
	}
	return r, nil
}

// BootOptions decides option 59 (boot file URL) by client.
type BootOptions struct {
	// HTTPBaseURL is pxe/httpboot as IPv6 clients reach it, without a
	// trailing slash, e.g. "http://[fd00::1]". Default
	// "http://[<ServerAddr>]". iPXE gets <HTTPBaseURL>/boot/<mac>.ipxe,
	// UEFI HTTP boot <HTTPBaseURL>/ipxe6/<UEFIX8664File> (httpboot's
	// IPXE6Dir: iPXE builds with IPv6).
	HTTPBaseURL string
	// TFTPBaseURL is the TFTP server for firmware PXE, default
	// "tftp://[<ServerAddr>]".
	TFTPBaseURL string
	// UEFIX8664File for arch 7/9 (and 16 over HTTP). Default "ipxe.efi":
	// firmware PXE over IPv6 needs an iPXE built with IPv6, which Debian
	// 12's snponly.efi is not; pxe/ipxebin's EFI build (ipxe.efi, iPXE's
	// own NIC drivers) is, and is x86-64 (its snp.efi is an arm64 build).
	UEFIX8664File string
	// UEFIARM64File for arch 11 (and 19). Default "snp-arm64.efi".
	UEFIARM64File string
}

// Options configures a Server. Interface, Backend and Range are required.
type Options struct {
	// Interface the server binds to (SO_BINDTODEVICE) and joins
	// ff02::1:2 on. Required.
	Interface string
	// ListenPort, default 547 (tests use others).
	ListenPort uint16
	// ServerAddr is the server's IPv6 address clients reach it by (the
	// default boot URLs' host). Default: the first global or ULA address
	// of Interface.
	ServerAddr netip.Addr
	// ServerDUID identifies the server (option 2). Default DUID-LL of
	// Interface's MAC.
	ServerDUID []byte
	Backend    pxe.Backend
	// Range is the pool IA_NA addresses come from; a HostRecord's IP6 (a
	// reservation) is handed out instead.
	Range Range
	// DNS servers (option 23), if any.
	DNS []netip.Addr
	// LeaseTime is the valid lifetime; preferred is the same, T1 half, T2
	// 4/5. Default 1h.
	LeaseTime time.Duration
	Boot      BootOptions
	// Workers answer packets (default 4); QueueSize bounds the backlog
	// (default 1024; a full queue drops, the client retransmits).
	Workers   int
	QueueSize int
	// OnBound, if set, is told of a lease a Reply bound when it is new,
	// has moved, or its expiry has moved by more than a quarter of
	// LeaseTime since it was last told: the caller keeps it (Host
	// status.leases6), so that Restore can give it back after a restart.
	// It runs on the serving goroutine and must not block.
	OnBound func(Lease)
	// Restore are leases to start with (those OnBound was told of before
	// a restart). Expired ones, ones outside Range and ones whose address
	// another restored lease holds are skipped.
	Restore []Lease
	// LookupTimeout bounds one Backend read. Default 2s.
	LookupTimeout time.Duration
	Registerer    prometheus.Registerer
	Logger        logr.Logger
	Now           func() time.Time
}

// Lease is an IA_NA lease of a host's boot MAC.
type Lease struct {
	MAC  net.HardwareAddr
	Addr netip.Addr
	// DUID of the client the Reply went to (OnBound; empty in Restore).
	DUID    []byte
	Expires time.Time
}

func (o *Options) setDefaults() {
	if o.ListenPort == 0 {
		o.ListenPort = 547
	}
	if o.LeaseTime <= 0 {
		o.LeaseTime = time.Hour
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1024
	}
	if o.LookupTimeout <= 0 {
		o.LookupTimeout = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	b := &o.Boot
	host := "[" + o.ServerAddr.String() + "]"
	if b.HTTPBaseURL == "" {
		b.HTTPBaseURL = "http://" + host
	}
	if b.TFTPBaseURL == "" {
		b.TFTPBaseURL = "tftp://" + host
	}
	b.HTTPBaseURL = strings.TrimRight(b.HTTPBaseURL, "/")
	b.TFTPBaseURL = strings.TrimRight(b.TFTPBaseURL, "/")
	if b.UEFIX8664File == "" {
		b.UEFIX8664File = "ipxe.efi"
	}
	if b.UEFIARM64File == "" {
		b.UEFIARM64File = "snp-arm64.efi"
	}
}

// validate runs after ServerAddr is known and defaults are set.
func (o *Options) validate() error {
	var errs []error
	if o.Backend == nil {
		errs = append(errs, errors.New("a Backend is required"))
	}
	if !o.ServerAddr.Is6() || o.ServerAddr.Is4In6() {
		errs = append(errs, fmt.Errorf("ServerAddr %v is not an IPv6 address", o.ServerAddr))
	}
	if !o.Range.IsValid() {
		errs = append(errs, fmt.Errorf("range %v-%v: want IPv6 start <= end differing only in the last 16 bits", o.Range.Start, o.Range.End))
	}
	if len(o.ServerDUID) < 2 {
		errs = append(errs, errors.New("ServerDUID is empty"))
	}
	return errors.Join(errs...)
}

// interfaceAddr returns the first global unicast (or ULA) IPv6 address of
// ifi, for ServerAddr's default.
func interfaceAddr(ifi *net.Interface) (netip.Addr, error) {
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is6() && !p.Addr().Is4In6() && p.Addr().IsGlobalUnicast() {
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("interface %s has no global IPv6 address; set ServerAddr", ifi.Name)
}
