package dhcp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/pxe"
)

// Mode selects how the server takes part in DHCP on its segment.
type Mode string

const (
	// ModeFull: the server owns DHCP for its subnets and hands out
	// addresses (static from the HostRecord, or dynamic from a range).
	ModeFull Mode = "full"
	// ModeProxy: someone else's DHCP server hands out addresses; this one
	// only adds boot options (ProxyDHCP, PXE spec 2.1) on port 67 and on
	// the PXE boot-server port 4011.
	ModeProxy Mode = "proxy"
)

// Subnet is one IPv4 network the server hands out addresses on. With relays
// (giaddr) one server serves several subnets; the subnet containing giaddr
// is used, and for directly attached clients the one containing ServerIP.
type Subnet struct {
	// Prefix is the network, e.g. 10.0.0.0/24; its length is the subnet
	// mask handed out with dynamic addresses.
	Prefix netip.Prefix
	// Range is the dynamic pool. Zero: only hosts with a static address
	// get answers. Keep static addresses outside it: the server cannot see
	// other hosts' reservations when allocating.
	Range Range
	// Router (option 3) and DNS (option 6) defaults for this subnet.
	Router netip.Addr
	DNS    []netip.Addr
	// LeaseTime overrides Options.LeaseTime for this subnet.
	LeaseTime time.Duration
}

// BootOptions decides the boot file by client architecture.
type BootOptions struct {
	// NextServer is the TFTP server (siaddr, option 66). Default: ServerIP.
	NextServer netip.Addr
	// HTTPBaseURL is the pxe/httpboot server as seen by clients, without a
	// trailing slash. Default "http://<ServerIP>". iPXE clients get
	// <HTTPBaseURL>/boot/<mac>.ipxe; UEFI HTTP boot clients get
	// <HTTPBaseURL>/ipxe/<UEFI file for their CPU>.
	HTTPBaseURL string
	// BIOSFile for option 93 = 0. Default "undionly.kpxe".
	BIOSFile string
	// UEFIX8664File for option 93 = 7 or 9. Default "snponly.efi": it
	// drives the NIC through the firmware's SNP driver (works on every NIC
	// the firmware supports), and Debian's /usr/lib/ipxe/ipxe.efi is a
	// symlink into /boot, which the confined TFTP root refuses to follow.
	UEFIX8664File string
	// UEFIARM64File for option 93 = 11. Default "snp-arm64.efi" (Debian
	// 12's ipxe package ships no arm64 build; supply your own).
	UEFIARM64File string
	// UEFIIA32File for option 93 = 6. Default "" (no boot file offered).
	UEFIIA32File string
}

// DiscoveryOptions reports unknown or unaccepted MACs that try to boot.
type DiscoveryOptions struct {
	// OnDiscover is called (from a dedicated goroutine, never the packet
	// path) for a MAC that the Backend does not know or has not accepted.
	// Nil disables discovery. Nothing is ever answered for such MACs.
	OnDiscover func(mac net.HardwareAddr, arch pxe.Arch, vendorClass string)
	// Interval deduplicates reports per MAC. Default 10 minutes.
	Interval time.Duration
	// PerMinute caps reports across all MACs. Default 60.
	PerMinute int
}

// Options configures a Server. Interface and Backend are required; full
// mode needs at least one Subnet.
type Options struct {
	Mode Mode // default ModeFull
	// Interface the server binds to (SO_BINDTODEVICE); it never answers
	// on any other. Required.
	Interface string
	// ListenAddr, default 0.0.0.0:67.
	ListenAddr netip.AddrPort
	// PXEPort is the proxy-mode boot-server port. Default 4011; proxy
	// mode only.
	PXEPort uint16
	// ServerIP is the server identifier (option 54) and the default
	// next-server. Default: the first IPv4 address of Interface.
	ServerIP netip.Addr
	Backend  pxe.Backend
	Subnets  []Subnet
	// Leases keeps dynamic leases. Default: a MemoryLeaseStore (not durable;
	// use NewFileLeaseStore or an API-backed store in production).
	Leases LeaseStore
	// LeaseTime, default 1h. OfferHold is how long an offered address is
	// reserved before the REQUEST, default 60s.
	LeaseTime time.Duration
	OfferHold time.Duration
	Boot      BootOptions
	Discovery DiscoveryOptions
	// Packets go to one of two bounded queues, so that a boot storm's lease
	// writes cannot starve the answers from memory:
	//
	//   - DISCOVER, INFORM and REQUEST (and everything in proxy mode, which
	//     never writes) are answered from memory by DiscoverWorkers
	//     (default GOMAXPROCS, at least 2) from a queue of
	//     DiscoverQueueSize (default 1024). A REQUEST is answered there
	//     when it needs no lease write: a static address, or a lease the
	//     store renews in memory (MemoryRenewer; iPXE's and the OS's
	//     REQUESTs right after the firmware's).
	//   - A REQUEST that needs a lease write (the firmware's first, unless
	//     the write its OFFER started has landed; an INIT-REBOOT), the
	//     write an OFFER starts (OfferWriter), RELEASE, DECLINE and
	//     anything else wait for the
	//     LeaseStore (an API round trip with index.LeaseStore), so they get
	//     Workers (default 32, independent of GOMAXPROCS: the workers
	//     wait, they do not compute) from a queue of QueueSize (default
	//     1024). More is not faster when the API server is the
	//     bottleneck: in a 500-host storm on 2 cores, 64 writers pushed the
	//     Host status PATCH to 4.4 s on average and 17 hosts failed; 32:
	//     2.0 s and none failed.
	//
	// A full queue drops the packet (the client retransmits), counted in
	// anvil_dhcp_packets_dropped_total{reason="queue_full"} and by queue
	// and message type in anvil_dhcp_queue_full_total.
	Workers           int
	QueueSize         int
	DiscoverWorkers   int
	DiscoverQueueSize int
	// ReadBuffer is the socket receive buffer asked for (SO_RCVBUFFORCE,
	// else SO_RCVBUF, which the kernel caps at net.core.rmem_max), so a
	// burst waits in the kernel instead of being dropped there. Default
	// 4 MiB; negative keeps the kernel's default.
	ReadBuffer int
	// LookupTimeout bounds one Backend/LeaseStore read. Default 2s.
	LookupTimeout time.Duration
	// LeaseWriteTimeout bounds the lease write of a REQUEST (and of a
	// RELEASE or DECLINE). It is just under the 4 s after which EDK2 sends
	// its REQUEST again (iPXE: 1, 2, 4, 8 s), so a write that cannot make
	// it gives way to the retransmission's. Default 3.5s. A REQUEST
	// retransmitted while its MAC's write is queued or in flight starts no
	// second write and takes no queue slot: the latest copy waits for that
	// write and is answered when it returns (anvil_dhcp_requests_parked_total).
	// A write started at the OFFER (OfferWriter) gets 30 s: no client
	// waits on it directly.
	LeaseWriteTimeout time.Duration
	// Registerer receives the metrics; nil keeps them private.
	Registerer prometheus.Registerer
	Logger     logr.Logger
	// Now is the clock, default time.Now.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.Mode == "" {
		o.Mode = ModeFull
	}
	if !o.ListenAddr.IsValid() {
		o.ListenAddr = netip.AddrPortFrom(netip.IPv4Unspecified(), 67)
	}
	if o.PXEPort == 0 {
		o.PXEPort = 4011
	}
	if o.LeaseTime <= 0 {
		o.LeaseTime = time.Hour
	}
	if o.OfferHold <= 0 {
		o.OfferHold = time.Minute
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1024
	}
	if o.DiscoverWorkers <= 0 {
		o.DiscoverWorkers = max(2, runtime.GOMAXPROCS(0))
	}
	if o.DiscoverQueueSize <= 0 {
		o.DiscoverQueueSize = 1024
	}
	if o.ReadBuffer == 0 {
		o.ReadBuffer = 4 << 20
	}
	if o.LookupTimeout <= 0 {
		o.LookupTimeout = 2 * time.Second
	}
	if o.LeaseWriteTimeout <= 0 {
		o.LeaseWriteTimeout = 3500 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Leases == nil {
		o.Leases = NewMemoryLeaseStore(LeaseStoreOptions{Now: o.Now})
	}
	if o.Discovery.Interval <= 0 {
		o.Discovery.Interval = 10 * time.Minute
	}
	if o.Discovery.PerMinute <= 0 {
		o.Discovery.PerMinute = 60
	}
	b := &o.Boot
	if !b.NextServer.IsValid() {
		b.NextServer = o.ServerIP
	}
	if b.HTTPBaseURL == "" {
		b.HTTPBaseURL = "http://" + o.ServerIP.String()
	}
	b.HTTPBaseURL = strings.TrimRight(b.HTTPBaseURL, "/")
	if b.BIOSFile == "" {
		b.BIOSFile = "undionly.kpxe"
	}
	if b.UEFIX8664File == "" {
		b.UEFIX8664File = "snponly.efi"
	}
	if b.UEFIARM64File == "" {
		b.UEFIARM64File = "snp-arm64.efi"
	}
}

// validate runs after ServerIP is known and defaults are set.
func (o *Options) validate() error {
	var errs []error
	if o.Mode != ModeFull && o.Mode != ModeProxy {
		errs = append(errs, fmt.Errorf("unknown mode %q", o.Mode))
	}
	if o.Backend == nil {
		errs = append(errs, errors.New("a Backend is required"))
	}
	if !o.ServerIP.Is4() {
		errs = append(errs, errors.New("ServerIP must be an IPv4 address"))
	}
	if o.Mode == ModeFull && len(o.Subnets) == 0 {
		errs = append(errs, errors.New("full mode needs at least one Subnet"))
	}
	for i, sn := range o.Subnets {
		if !sn.Prefix.IsValid() || !sn.Prefix.Addr().Is4() {
			errs = append(errs, fmt.Errorf("subnet %d: invalid IPv4 prefix %v", i, sn.Prefix))
			continue
		}
		if sn.Range != (Range{}) {
			if !sn.Range.IsValid() || !sn.Prefix.Contains(sn.Range.Start) || !sn.Prefix.Contains(sn.Range.End) {
				errs = append(errs, fmt.Errorf("subnet %v: range %v-%v is not inside it", sn.Prefix, sn.Range.Start, sn.Range.End))
			} else if sn.Range.size() > maxRangeSize {
				errs = append(errs, fmt.Errorf("subnet %v: range larger than %d addresses", sn.Prefix, maxRangeSize))
			}
		}
	}
	for _, f := range []string{o.Boot.BIOSFile, o.Boot.UEFIX8664File, o.Boot.UEFIARM64File, o.Boot.UEFIIA32File} {
		if len(f) > 127 {
			errs = append(errs, fmt.Errorf("boot file name %q longer than 127 bytes", f))
		}
	}
	return errors.Join(errs...)
}
