package netboot

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/dhcp6"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/pxe/tftp"
)

// Options configures Run. The first group maps one to one to the flags of
// BindFlags; the second is wiring that only code can supply.
type Options struct {
	// DHCP serves DHCPv4 on Interface to the boot MACs of registered,
	// accepted Hosts (nobody else is ever answered).
	DHCP bool
	// DHCPMode: dhcp.ModeFull hands out addresses (a Host's static
	// spec.network.address, else a lease from the range, kept in the
	// Host's status); dhcp.ModeProxy only adds boot options next to
	// another DHCP server.
	DHCPMode dhcp.Mode
	// Interface the DHCP server binds to (required with DHCP), and TFTP
	// too when set.
	Interface string
	// DHCPListen, default 0.0.0.0:67.
	DHCPListen netip.AddrPort
	// ServerIP is the DHCP server identifier, the TFTP next-server and the
	// host of the default HTTPBaseURL. Default: the first IPv4 address of
	// Interface.
	ServerIP netip.Addr
	// Subnets served through relays (giaddr), or the local one in full
	// detail. Full mode only.
	Subnets []dhcp.Subnet
	// Range, Router and DNS describe Interface's own subnet (the prefix
	// comes from the interface address) unless a Subnet already covers
	// ServerIP. Without a Range only Hosts with a static address get one.
	Range  dhcp.Range
	Router netip.Addr
	DNS    []netip.Addr
	// LeaseTime of dynamic leases, default 1h.
	LeaseTime time.Duration
	// DHCP6Interface, DHCP6Range and DHCP6ServerAddr: network boot over
	// IPv6 (DHCPv6, and TFTP on [::] with --tftp); see dhcp6.go.
	DHCP6Interface  string
	DHCP6Range      dhcp6.Range
	DHCP6ServerAddr netip.Addr

	// TFTP serves the iPXE binaries read-only from TFTPRoot.
	TFTP       bool
	TFTPRoot   string
	TFTPListen netip.AddrPort // default 0.0.0.0:69
	// TFTPMaxConcurrent transfers; 0 is tftp's default (1024). Firmware
	// does not retry a refusal (see tftp.Options.MaxConcurrent).
	TFTPMaxConcurrent int
	// TFTPMaxPerSource transfers from one IP address (default 8) and
	// TFTPFirstAckTimeout for a transfer's first block to be acknowledged
	// (default 4s): see tftp.Options.MaxPerSource and FirstAckTimeout.
	TFTPMaxPerSource    int
	TFTPFirstAckTimeout time.Duration

	// HTTPBoot serves /boot/<mac>.ipxe, /artifacts/... (sha256-verified,
	// from ArtifactDir or fetched into CacheDir) and, with IPXEDir,
	// /ipxe/... for UEFI HTTP boot clients.
	HTTPBoot bool
	HTTPAddr string // listen address, default ":80"
	// HTTPBaseURL is the HTTP server as clients reach it (DHCP hands out
	// <HTTPBaseURL>/boot/<mac>.ipxe). Default http://<ServerIP>[:port].
	HTTPBaseURL string
	IPXEDir     string
	ipxe6Dir    string // the iPXE builds with IPv6 (open6), served under /ipxe6/
	// HTTPTLSCertFile, HTTPTLSKeyFile and HTTPTLSCAFile (PEM) switch the
	// HTTP boot server to HTTPS only: it sends the certificate's chain
	// with the CA last, the default HTTPBaseURL is https://, and TFTP and
	// /ipxe/ serve pxe/ipxebin's iPXE EFI builds patched to trust that CA
	// (in place of TFTPRoot and IPXEDir). See tls.go.
	HTTPTLSCertFile string
	HTTPTLSKeyFile  string
	HTTPTLSCAFile   string
	tls             *bootTLS // loaded by Validate
	ArtifactDir     string
	// HTTPMaxConns, HTTPMaxConnsPerSource, HTTPWriteStallTimeout and
	// HTTPMaxRanges limit the HTTP server's clients (0: httpboot's
	// defaults); see the httpboot.Options fields of the same names.
	HTTPMaxConns          int
	HTTPMaxConnsPerSource int
	HTTPWriteStallTimeout time.Duration
	HTTPMaxRanges         int
	// CacheDir is where http(s) artifacts are fetched to: every class's
	// are fetched when it is added or changes (not per request), and
	// served once verified. ArtifactAllow lists the loopback, link-local
	// or metadata prefixes fetches may reach anyway (the request-forgery
	// guard refuses them by default; tests and labs on one host allow
	// 127.0.0.0/8). ArtifactRetryBase spaces retries of a failed fetch
	// (doubling up to 30m; default 30s).
	CacheDir          string
	ArtifactAllow     []netip.Prefix
	ArtifactRetryBase time.Duration

	// Discovery creates a Host (state Discovered, never booted) for each
	// unknown MAC that tries to network boot, in DiscoveryNamespace.
	Discovery          bool
	DiscoveryNamespace string
	// DiscoveryMaxHosts caps the discovered Hosts nobody has accepted
	// (default index.DefaultDiscoveryMaxHosts, 1000); DiscoveryTTL deletes
	// one still not accepted this long after its creation (default
	// index.DefaultDiscoveryTTL, 24h). See index.DiscovererOptions.
	DiscoveryMaxHosts int
	DiscoveryTTL      time.Duration

	// Cache supplies the informers the index registers with: the
	// manager's cache. Required.
	Cache index.Informers
	// Client writes leases (full mode) and creates discovered Hosts.
	// APIReader re-reads a Host after a write conflict (default Client).
	Client    client.Client
	APIReader client.Reader
	// Scripts, if set, builds the /boot/<mac>.ipxe source (for instance
	// to add a one-time boot credential to the kernel arguments); default
	// httpboot.NewScripts over the index.
	Scripts func(Components) (httpboot.ScriptSource, error)
	// Handlers are mounted on the boot HTTP server, pattern -> handler
	// (net/http.ServeMux patterns, e.g. "GET /config/{token}").
	Handlers map[string]http.Handler
	// HTTPHook runs after Handlers are mounted, before serving.
	HTTPHook func(Components, *httpboot.Server) error
	// OnArtifactMismatch is passed to httpboot (called when a file does
	// not match its digest; Components.Index.ClassOfArtifact names the
	// MachineClass).
	OnArtifactMismatch func(httpboot.ArtifactMismatch)
	// OnReady is called once every enabled service is listening.
	OnReady func(Components)
	// Registerer receives the metrics of all services; nil keeps them
	// private.
	Registerer prometheus.Registerer
	// Logger; default logr.FromContextOrDiscard(ctx).
	Logger logr.Logger
}

// Components are the parts Run builds, for the hooks.
type Components struct {
	Index *index.Index
	// Leases is nil unless DHCP runs in full mode. Its AddressOf tells
	// which address a MAC was given.
	Leases *index.LeaseStore
	// Leases6 is nil unless DHCPv6 runs; its AddressOf tells which IPv6
	// address a MAC was given.
	Leases6 *dhcp6.Server
	// HTTP is nil unless HTTPBoot.
	HTTP *httpboot.Server
}

// DefaultOptions returns the defaults BindFlags uses: every service off.
func DefaultOptions() Options {
	return Options{
		DHCPMode:           dhcp.ModeFull,
		DHCPListen:         netip.AddrPortFrom(netip.IPv4Unspecified(), 67),
		LeaseTime:          time.Hour,
		TFTPRoot:           tftp.DefaultRoot,
		TFTPListen:         netip.AddrPortFrom(netip.IPv4Unspecified(), 69),
		HTTPAddr:           ":80",
		ArtifactDir:        "/var/lib/anvil/artifacts",
		DiscoveryNamespace: "default",
		DiscoveryMaxHosts:  index.DefaultDiscoveryMaxHosts,
		DiscoveryTTL:       index.DefaultDiscoveryTTL,

		TFTPMaxPerSource:      8,
		TFTPFirstAckTimeout:   4 * time.Second,
		HTTPMaxConns:          httpboot.DefaultMaxConns,
		HTTPMaxConnsPerSource: httpboot.DefaultMaxConnsPerSource,
		HTTPWriteStallTimeout: httpboot.DefaultWriteStallTimeout,
		HTTPMaxRanges:         httpboot.DefaultMaxRanges,
	}
}

// Enabled reports whether any service is switched on.
func (o *Options) Enabled() bool {
	return o.DHCP || o.TFTP || o.HTTPBoot || o.DHCP6Interface != ""
}

func (o *Options) setDefaults() {
	d := DefaultOptions()
	if o.DHCPMode == "" {
		o.DHCPMode = d.DHCPMode
	}
	if !o.DHCPListen.IsValid() {
		o.DHCPListen = d.DHCPListen
	}
	if o.LeaseTime <= 0 {
		o.LeaseTime = d.LeaseTime
	}
	if o.TFTPRoot == "" {
		o.TFTPRoot = d.TFTPRoot
	}
	if !o.TFTPListen.IsValid() {
		o.TFTPListen = d.TFTPListen
	}
	if o.HTTPAddr == "" {
		o.HTTPAddr = d.HTTPAddr
	}
	if o.APIReader == nil && o.Client != nil {
		o.APIReader = o.Client
	}
}

// Validate applies the defaults of unset fields and checks the options. Its
// messages name the flags, since that is where the values come from.
func (o *Options) Validate() error {
	o.setDefaults()
	var errs []error
	if !o.Enabled() {
		return errors.Join(o.validateDHCP6()...) // a --dhcp6-* flag without --dhcp6-interface
	}
	if o.Cache == nil {
		errs = append(errs, errors.New("netboot: Cache (the manager's cache) is required"))
	}
	if o.DHCP {
		if o.Interface == "" {
			errs = append(errs, errors.New("--dhcp needs --dhcp-interface"))
		}
		if o.DHCPMode != dhcp.ModeFull && o.DHCPMode != dhcp.ModeProxy {
			errs = append(errs, fmt.Errorf("--dhcp-mode %q: want full or proxy", o.DHCPMode))
		}
		if o.DHCPMode == dhcp.ModeFull && o.Client == nil {
			errs = append(errs, errors.New("netboot: full-mode DHCP needs a Client to persist leases"))
		}
	}
	errs = append(errs, o.validateDHCP6()...)
	if o.Discovery {
		if !o.DHCP {
			errs = append(errs, errors.New("--discovery needs --dhcp (hosts are discovered from their DHCP requests)"))
		}
		if o.DiscoveryNamespace == "" {
			errs = append(errs, errors.New("--discovery needs --discovery-namespace"))
		}
		if o.Client == nil {
			errs = append(errs, errors.New("netboot: discovery needs a Client to create Hosts"))
		}
		if o.DiscoveryMaxHosts < 0 {
			errs = append(errs, fmt.Errorf("--discovery-max-hosts %d: want a positive number (0: the default, %d)", o.DiscoveryMaxHosts, index.DefaultDiscoveryMaxHosts))
		}
		if o.DiscoveryTTL < 0 {
			errs = append(errs, fmt.Errorf("--discovery-ttl %v: want a positive duration (0: the default, %v)", o.DiscoveryTTL, index.DefaultDiscoveryTTL))
		}
	}
	for _, l := range []struct {
		flag string
		bad  bool
	}{
		{"--tftp-max-per-source", o.TFTPMaxPerSource < 0},
		{"--tftp-first-ack-timeout", o.TFTPFirstAckTimeout < 0},
		{"--http-max-conns", o.HTTPMaxConns < 0},
		{"--http-max-conns-per-source", o.HTTPMaxConnsPerSource < 0},
		{"--http-write-stall-timeout", o.HTTPWriteStallTimeout < 0},
		{"--http-max-ranges", o.HTTPMaxRanges < 0},
	} {
		if l.bad {
			errs = append(errs, fmt.Errorf("%s must not be negative", l.flag))
		}
	}
	if o.ServerIP.IsValid() && !o.ServerIP.Is4() {
		errs = append(errs, fmt.Errorf("--dhcp-server-ip %v is not IPv4", o.ServerIP))
	}
	if (o.Range != dhcp.Range{}) && !o.Range.IsValid() {
		errs = append(errs, fmt.Errorf("--dhcp-range %v-%v is not a valid IPv4 range", o.Range.Start, o.Range.End))
	}
	if o.HTTPBoot {
		if _, _, err := net.SplitHostPort(o.HTTPAddr); err != nil {
			errs = append(errs, fmt.Errorf("--http-addr %q: %v", o.HTTPAddr, err))
		}
	}
	if o.TLS() {
		var err error
		if o.tls, err = o.loadTLS(time.Now()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// interfaceAddr returns the IPv4 address (with prefix) of ifName: the one
// equal to want when want is valid, else the first.
func interfaceAddr(ifName string, want netip.Addr) (netip.Prefix, error) {
	ifi, err := net.InterfaceByName(ifName)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("interface %q: %w", ifName, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("addresses of %q: %w", ifName, err)
	}
	var first netip.Prefix
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.To4() == nil {
			continue
		}
		ip, _ := netip.AddrFromSlice(n.IP.To4())
		ones, _ := n.Mask.Size()
		p := netip.PrefixFrom(ip, ones)
		if want.IsValid() && ip == want {
			return p, nil
		}
		if !first.IsValid() {
			first = p
		}
	}
	if want.IsValid() {
		return netip.Prefix{}, fmt.Errorf("interface %q has no address %v", ifName, want)
	}
	if !first.IsValid() {
		return netip.Prefix{}, fmt.Errorf("interface %q has no IPv4 address; set --dhcp-server-ip", ifName)
	}
	return first, nil
}

// subnets assembles the full-mode subnets: the explicit ones plus the
// interface's own subnet with Range/Router/DNS.
func (o *Options) subnets(ifAddr netip.Prefix) ([]dhcp.Subnet, error) {
	out := append([]dhcp.Subnet(nil), o.Subnets...)
	local := false
	for _, s := range out {
		if ifAddr.IsValid() && s.Prefix.Contains(ifAddr.Addr()) {
			local = true
		}
	}
	extra := (o.Range != dhcp.Range{}) || o.Router.IsValid() || len(o.DNS) > 0
	switch {
	case local && extra:
		return nil, errors.New("--dhcp-range, --dhcp-router and --dhcp-dns describe the interface's subnet, which a --dhcp-subnet already covers: put them into that --dhcp-subnet")
	case !local && ifAddr.IsValid():
		out = append(out, dhcp.Subnet{Prefix: ifAddr.Masked(), Range: o.Range, Router: o.Router, DNS: o.DNS})
	}
	return out, nil
}

// baseURL is HTTPBaseURL or http://<serverIP>[:port of HTTPAddr].
func (o *Options) baseURL(serverIP netip.Addr) string {
	if o.HTTPBaseURL != "" || !serverIP.IsValid() {
		return o.HTTPBaseURL
	}
	_, port, err := net.SplitHostPort(o.HTTPAddr)
	if o.TLS() {
		return httpsBaseURL(serverIP.String(), port)
	}
	if err != nil || port == "" || port == "80" {
		return "http://" + serverIP.String()
	}
	return "http://" + net.JoinHostPort(serverIP.String(), port)
}
