package netboot

import (
	"cmp"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/pxe/dhcp"
)

// BindFlags adds the boot service flags to fs, with DefaultOptions as
// defaults (every service off). Usage in `anvil serve`:
//
//	pxeOpts := netboot.DefaultOptions()
//	netboot.BindFlags(cmd.Flags(), &pxeOpts)
//	...
//	netboot.AddToManager(mgr, pxeOpts)
func BindFlags(fs *pflag.FlagSet, o *Options) {
	*o = mergeDefaults(*o)
	fs.BoolVar(&o.DHCP, "dhcp", o.DHCP, "serve DHCP to the boot MACs of registered, accepted Hosts (needs --dhcp-interface)")
	fs.Var((*modeValue)(&o.DHCPMode), "dhcp-mode", "full: hand out addresses (static from Host.spec.network, else leased from --dhcp-range, kept in Host status); proxy: boot options only, next to another DHCP server")
	fs.StringVar(&o.Interface, "dhcp-interface", o.Interface, "network interface DHCP (and TFTP) bind to")
	fs.Var((*addrPortValue)(&o.DHCPListen), "dhcp-listen", "DHCP listen address")
	fs.Var((*addrValue)(&o.ServerIP), "dhcp-server-ip", "DHCP server identifier and TFTP next-server (default: the first IPv4 address of --dhcp-interface)")
	fs.Var((*subnetsValue)(&o.Subnets), "dhcp-subnet", "full mode: a subnet served through a DHCP relay, CIDR[,range=FIRST-LAST][,router=IP][,dns=IP+IP][,lease=DURATION]; repeatable")
	fs.Var((*rangeValue)(&o.Range), "dhcp-range", "full mode: dynamic pool FIRST-LAST on the interface's own subnet (without it, only Hosts with a static address get one)")
	fs.Var((*addrValue)(&o.Router), "dhcp-router", "full mode: default router for the interface's subnet (a Host's spec.network.gateway wins)")
	fs.Var((*addrListValue)(&o.DNS), "dhcp-dns", "full mode: comma-separated DNS servers for the interface's subnet")
	fs.DurationVar(&o.LeaseTime, "dhcp-lease-time", o.LeaseTime, "lease time of dynamic addresses")
	bindDHCP6Flags(fs, o)
	fs.BoolVar(&o.TFTP, "tftp", o.TFTP, "serve the iPXE binaries over TFTP, read-only")
	fs.StringVar(&o.TFTPRoot, "tftp-root", o.TFTPRoot, "directory served over TFTP (Debian package ipxe)")
	fs.Var((*addrPortValue)(&o.TFTPListen), "tftp-addr", "TFTP listen address")
	fs.Var((*positiveInt)(&o.TFTPMaxPerSource), "tftp-max-per-source", "TFTP transfers from one IP address at once (a PXE client runs one or two); more get an ERROR, so one flooding address cannot take every slot")
	fs.Var((*positiveDuration)(&o.TFTPFirstAckTimeout), "tftp-first-ack-timeout", "a TFTP transfer whose first block is not acknowledged within this is dropped and its slot freed (the full retransmit budget applies after that)")
	fs.BoolVar(&o.HTTPBoot, "http-boot", o.HTTPBoot, "serve iPXE scripts (/boot/<mac>.ipxe) and sha256-verified artifacts over HTTP")
	fs.StringVar(&o.HTTPAddr, "http-addr", o.HTTPAddr, "HTTP boot listen address")
	fs.StringVar(&o.HTTPBaseURL, "http-base-url", o.HTTPBaseURL, "HTTP boot server as clients reach it (default http://<dhcp-server-ip>[:port])")
	fs.StringVar(&o.IPXEDir, "http-ipxe-dir", o.IPXEDir, "serve this directory's iPXE binaries under /ipxe/ for UEFI HTTP boot clients (e.g. /usr/lib/ipxe; empty: off)")
	fs.StringVar(&o.HTTPTLSCertFile, "http-tls-cert-file", o.HTTPTLSCertFile, "serve HTTP boot as HTTPS only with this PEM certificate (RSA; may hold intermediates), issued by --http-tls-ca-file; the iPXE binaries served by TFTP and /ipxe/ are then iPXE builds that trust only that CA")
	fs.StringVar(&o.HTTPTLSKeyFile, "http-tls-key-file", o.HTTPTLSKeyFile, "PEM private key of --http-tls-cert-file")
	fs.StringVar(&o.HTTPTLSCAFile, "http-tls-ca-file", o.HTTPTLSCAFile, "PEM certificate of the CA (RSA) that issued --http-tls-cert-file: sent in the TLS chain and built into the iPXE binaries served")
	fs.StringVar(&o.ArtifactDir, "artifact-dir", o.ArtifactDir, "directory MachineClass artifact paths are relative to")
	fs.StringVar(&o.CacheDir, "artifact-cache-dir", o.CacheDir, "directory http(s) MachineClass artifacts are downloaded to (empty: such artifacts are not served)")
	fs.Var((*positiveInt)(&o.HTTPMaxConns), "http-max-conns", "open HTTP boot connections at most (also capped at half the open-file limit); every agent's long poll holds one, so keep it above the number of hosts; more get a 503")
	fs.Var((*positiveInt)(&o.HTTPMaxConnsPerSource), "http-max-conns-per-source", "open HTTP boot connections from one IP address at most (raise it for clients behind NAT or a proxy); more get a 503")
	fs.Var((*positiveDuration)(&o.HTTPWriteStallTimeout), "http-write-stall-timeout", "an HTTP response write that moves no byte for this long closes the connection (no limit on a whole download that keeps moving)")
	fs.Var((*positiveInt)(&o.HTTPMaxRanges), "http-max-ranges", "ranges allowed in one Range header; more get a 416 (a many-range request multiplies the answer)")
	fs.Var((*prefixesValue)(&o.ArtifactAllow), "artifact-allow-cidrs", "comma-separated CIDRs artifact URLs may reach although the request-forgery guard refuses them (loopback, link-local, cloud metadata), e.g. 127.0.0.0/8 for a mirror on this host")
	fs.BoolVar(&o.Discovery, "discovery", o.Discovery, "create a Host (state Discovered, never booted) for each unknown MAC that tries to network boot")
	fs.StringVar(&o.DiscoveryNamespace, "discovery-namespace", o.DiscoveryNamespace, "namespace of discovered Hosts")
	fs.IntVar(&o.DiscoveryMaxHosts, "discovery-max-hosts", o.DiscoveryMaxHosts, "at most this many discovered Hosts not yet accepted; at the cap new MACs create none")
	fs.DurationVar(&o.DiscoveryTTL, "discovery-ttl", o.DiscoveryTTL, "delete a discovered Host not accepted (no BMC added) this long after its creation; it is discovered again if it still tries to boot")
}

// mergeDefaults fills o's zero flag fields from DefaultOptions, so a caller
// may pre-set some.
func mergeDefaults(o Options) Options {
	d := DefaultOptions()
	o.DHCPMode = cmp.Or(o.DHCPMode, d.DHCPMode)
	if !o.DHCPListen.IsValid() {
		o.DHCPListen = d.DHCPListen
	}
	o.LeaseTime = cmp.Or(o.LeaseTime, d.LeaseTime)
	o.TFTPRoot = cmp.Or(o.TFTPRoot, d.TFTPRoot)
	if !o.TFTPListen.IsValid() {
		o.TFTPListen = d.TFTPListen
	}
	o.HTTPAddr = cmp.Or(o.HTTPAddr, d.HTTPAddr)
	o.ArtifactDir = cmp.Or(o.ArtifactDir, d.ArtifactDir)
	o.DiscoveryNamespace = cmp.Or(o.DiscoveryNamespace, d.DiscoveryNamespace)
	o.DiscoveryMaxHosts = cmp.Or(o.DiscoveryMaxHosts, d.DiscoveryMaxHosts)
	o.DiscoveryTTL = cmp.Or(o.DiscoveryTTL, d.DiscoveryTTL)
	o.TFTPMaxPerSource = cmp.Or(o.TFTPMaxPerSource, d.TFTPMaxPerSource)
	o.TFTPFirstAckTimeout = cmp.Or(o.TFTPFirstAckTimeout, d.TFTPFirstAckTimeout)
	o.HTTPMaxConns = cmp.Or(o.HTTPMaxConns, d.HTTPMaxConns)
	o.HTTPMaxConnsPerSource = cmp.Or(o.HTTPMaxConnsPerSource, d.HTTPMaxConnsPerSource)
	o.HTTPWriteStallTimeout = cmp.Or(o.HTTPWriteStallTimeout, d.HTTPWriteStallTimeout)
	o.HTTPMaxRanges = cmp.Or(o.HTTPMaxRanges, d.HTTPMaxRanges)
	return o
}

// positiveInt is an int flag that must be at least 1 (0 would silently
// mean the default in Options).
type positiveInt int

func (v *positiveInt) String() string { return strconv.Itoa(int(*v)) }
func (v *positiveInt) Type() string   { return "int" }
func (v *positiveInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return fmt.Errorf("%q: want a whole number, at least 1", s)
	}
	*v = positiveInt(n)
	return nil
}

// positiveDuration is a duration flag that must be above zero.
type positiveDuration time.Duration

func (v *positiveDuration) String() string { return time.Duration(*v).String() }
func (v *positiveDuration) Type() string   { return "duration" }
func (v *positiveDuration) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want a positive duration, e.g. 30s", s)
	}
	*v = positiveDuration(d)
	return nil
}

type modeValue dhcp.Mode

func (v *modeValue) String() string { return string(*v) }
func (v *modeValue) Type() string   { return "full|proxy" }
func (v *modeValue) Set(s string) error {
	switch m := dhcp.Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case dhcp.ModeFull, dhcp.ModeProxy:
		*v = modeValue(m)
		return nil
	}
	return fmt.Errorf("want full or proxy")
}

type addrValue netip.Addr

func (v *addrValue) String() string {
	if a := netip.Addr(*v); a.IsValid() {
		return a.String()
	}
	return ""
}
func (v *addrValue) Type() string { return "ip" }
func (v *addrValue) Set(s string) error {
	a, err := parseIPv4(s)
	if err != nil {
		return err
	}
	*v = addrValue(a)
	return nil
}

func parseIPv4(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || !a.Is4() {
		return netip.Addr{}, fmt.Errorf("%q is not an IPv4 address", s)
	}
	return a, nil
}

type addrPortValue netip.AddrPort

func (v *addrPortValue) String() string {
	if a := netip.AddrPort(*v); a.IsValid() {
		return a.String()
	}
	return ""
}
func (v *addrPortValue) Type() string { return "ip:port" }
func (v *addrPortValue) Set(s string) error {
	a, err := netip.ParseAddrPort(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not ip:port", s)
	}
	*v = addrPortValue(a)
	return nil
}

type addrListValue []netip.Addr

func (v *addrListValue) String() string {
	parts := make([]string, len(*v))
	for i, a := range *v {
		parts[i] = a.String()
	}
	return strings.Join(parts, ",")
}
func (v *addrListValue) Type() string { return "ips" }
func (v *addrListValue) Set(s string) error {
	var out []netip.Addr
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		a, err := parseIPv4(f)
		if err != nil {
			return err
		}
		out = append(out, a)
	}
	*v = out
	return nil
}

type rangeValue dhcp.Range

func (v *rangeValue) String() string {
	if r := dhcp.Range(*v); r.IsValid() {
		return r.Start.String() + "-" + r.End.String()
	}
	return ""
}
func (v *rangeValue) Type() string { return "first-last" }
func (v *rangeValue) Set(s string) error {
	r, err := parseRange(s)
	if err != nil {
		return err
	}
	*v = rangeValue(r)
	return nil
}

func parseRange(s string) (dhcp.Range, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		return dhcp.Range{}, fmt.Errorf("range %q: want FIRST-LAST", s)
	}
	start, err1 := parseIPv4(a)
	end, err2 := parseIPv4(b)
	r := dhcp.Range{Start: start, End: end}
	if err1 != nil || err2 != nil || !r.IsValid() {
		return dhcp.Range{}, fmt.Errorf("range %q: want FIRST-LAST, two IPv4 addresses in order", s)
	}
	return r, nil
}

// subnetsValue appends one subnet per flag occurrence.
type subnetsValue []dhcp.Subnet

func (v *subnetsValue) String() string {
	parts := make([]string, len(*v))
	for i, s := range *v {
		parts[i] = formatSubnet(s)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
func (v *subnetsValue) Type() string { return "subnet" }
func (v *subnetsValue) Set(s string) error {
	sn, err := ParseSubnet(s)
	if err != nil {
		return err
	}
	*v = append(*v, sn)
	return nil
}

// ParseSubnet parses CIDR[,range=FIRST-LAST][,router=IP][,dns=IP+IP][,lease=DURATION].
func ParseSubnet(s string) (dhcp.Subnet, error) {
	fields := strings.Split(strings.TrimSpace(s), ",")
	p, err := netip.ParsePrefix(strings.TrimSpace(fields[0]))
	if err != nil || !p.Addr().Is4() {
		return dhcp.Subnet{}, fmt.Errorf("subnet %q: want an IPv4 CIDR first, e.g. 10.0.1.0/24", s)
	}
	sn := dhcp.Subnet{Prefix: p.Masked()}
	for _, f := range fields[1:] {
		k, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return dhcp.Subnet{}, fmt.Errorf("subnet %q: %q is not key=value", s, f)
		}
		switch k {
		case "range":
			if sn.Range, err = parseRange(val); err != nil {
				return dhcp.Subnet{}, fmt.Errorf("subnet %q: %w", s, err)
			}
			if !sn.Prefix.Contains(sn.Range.Start) || !sn.Prefix.Contains(sn.Range.End) {
				return dhcp.Subnet{}, fmt.Errorf("subnet %q: range outside the subnet", s)
			}
		case "router":
			if sn.Router, err = parseIPv4(val); err != nil {
				return dhcp.Subnet{}, fmt.Errorf("subnet %q: router: %w", s, err)
			}
		case "dns":
			for _, d := range strings.Split(val, "+") {
				a, err := parseIPv4(d)
				if err != nil {
					return dhcp.Subnet{}, fmt.Errorf("subnet %q: dns: %w", s, err)
				}
				sn.DNS = append(sn.DNS, a)
			}
		case "lease":
			if sn.LeaseTime, err = time.ParseDuration(val); err != nil || sn.LeaseTime <= 0 {
				return dhcp.Subnet{}, fmt.Errorf("subnet %q: lease %q is not a positive duration", s, val)
			}
		default:
			return dhcp.Subnet{}, fmt.Errorf("subnet %q: unknown key %q (range, router, dns, lease)", s, k)
		}
	}
	return sn, nil
}

func formatSubnet(s dhcp.Subnet) string {
	out := s.Prefix.String()
	if s.Range.IsValid() {
		out += ",range=" + s.Range.Start.String() + "-" + s.Range.End.String()
	}
	if s.Router.IsValid() {
		out += ",router=" + s.Router.String()
	}
	if len(s.DNS) > 0 {
		d := make([]string, len(s.DNS))
		for i, a := range s.DNS {
			d[i] = a.String()
		}
		out += ",dns=" + strings.Join(d, "+")
	}
	if s.LeaseTime > 0 {
		out += ",lease=" + s.LeaseTime.String()
	}
	return out
}

type prefixesValue []netip.Prefix

func (v *prefixesValue) String() string {
	parts := make([]string, len(*v))
	for i, p := range *v {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}
func (v *prefixesValue) Type() string { return "cidrs" }
func (v *prefixesValue) Set(s string) error {
	p, err := netguard.ParsePrefixes("artifact-allow-cidrs", s)
	if err != nil {
		return err
	}
	*v = append(*v, p...)
	return nil
}
