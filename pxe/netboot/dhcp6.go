package netboot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"anvil.dev/anvil/pxe/dhcp6"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/pxe/tftp"
)

// Network boot over IPv6 (off by default): DHCPv6 on DHCP6Interface, and
// with --tftp a second TFTP server on [::]:69 there serving pxe/ipxebin's
// iPXE (Debian 12's has no IPv6). The HTTP boot server's default ":80"
// already listens on IPv6.

const (
	flagDHCP6Interface  = "--dhcp6-interface"
	flagDHCP6Range      = "--dhcp6-range"
	flagDHCP6ServerAddr = "--dhcp6-server-addr"
)

func bindDHCP6Flags(fs *pflag.FlagSet, o *Options) {
	fs.StringVar(&o.DHCP6Interface, flagDHCP6Interface[2:], o.DHCP6Interface, "serve DHCPv6 (network boot over IPv6) on this interface to the boot MACs of registered, accepted Hosts; needs --dhcp6-range (empty: off)")
	fs.Var((*range6Value)(&o.DHCP6Range), flagDHCP6Range[2:], "DHCPv6 address pool FIRST-LAST (IPv6, differing only in the last 16 bits)")
	fs.Var((*addr6Value)(&o.DHCP6ServerAddr), flagDHCP6ServerAddr[2:], "IPv6 address clients reach TFTP and HTTP boot by, in the DHCPv6 boot URLs (default: the first global address of --dhcp6-interface)")
}

type range6Value dhcp6.Range

func (v *range6Value) String() string {
	if r := dhcp6.Range(*v); r.IsValid() {
		return r.Start.String() + "-" + r.End.String()
	}
	return ""
}
func (v *range6Value) Type() string { return "first-last" }
func (v *range6Value) Set(s string) error {
	r, err := dhcp6.ParseRange(s)
	if err != nil {
		return err
	}
	*v = range6Value(r)
	return nil
}

type addr6Value netip.Addr

func (v *addr6Value) String() string {
	if a := netip.Addr(*v); a.IsValid() {
		return a.String()
	}
	return ""
}
func (v *addr6Value) Type() string { return "ipv6" }
func (v *addr6Value) Set(s string) error {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
		return fmt.Errorf("%q is not an IPv6 address", s)
	}
	*v = addr6Value(a)
	return nil
}

// validateDHCP6 checks the IPv6 options; its messages name the flags.
func (o *Options) validateDHCP6() []error {
	var errs []error
	set := o.DHCP6Range != (dhcp6.Range{}) || o.DHCP6ServerAddr.IsValid()
	switch {
	case o.DHCP6Interface == "" && set:
		errs = append(errs, fmt.Errorf("%s and %s need %s", flagDHCP6Range, flagDHCP6ServerAddr, flagDHCP6Interface))
	case o.DHCP6Interface != "" && !o.DHCP6Range.IsValid():
		errs = append(errs, fmt.Errorf("%s needs %s (FIRST-LAST, IPv6)", flagDHCP6Interface, flagDHCP6Range))
	}
	if a := o.DHCP6ServerAddr; a.IsValid() && (!a.Is6() || a.Is4In6()) {
		errs = append(errs, fmt.Errorf("%s %v is not IPv6", flagDHCP6ServerAddr, a))
	}
	return errs
}

// servers6 are the IPv6 services.
type servers6 struct {
	dhcp   *dhcp6.Server
	leases *index.Lease6Writer // keeps the leases in Host status; nil without a client
	tftp   *tftp.Server
	dir    string // TFTP root written here (without HTTPS), removed at the end
	root   string // the iPXE builds with IPv6: TFTP's root, HTTP's /ipxe6/
}

// open6 opens the IPv6 services when DHCP6Interface is set.
func open6(o Options, comp *Components, log logr.Logger) (sv *servers6, err error) {
	if o.DHCP6Interface == "" {
		return nil, nil
	}
	sv = &servers6{}
	defer func() {
		if err != nil {
			sv.release()
			sv = nil
		}
	}()
	addr := o.DHCP6ServerAddr
	if !addr.IsValid() {
		if addr, err = interfaceAddr6(o.DHCP6Interface); err != nil {
			return sv, err
		}
	}
	boot := dhcp6.BootOptions{HTTPBaseURL: o.baseURL6(addr)}
	do := dhcp6.Options{Interface: o.DHCP6Interface, ServerAddr: addr, Backend: comp.Index,
		Range: o.DHCP6Range, LeaseTime: o.LeaseTime, Boot: boot, Registerer: o.Registerer, Logger: log}
	if o.Client != nil {
		// Leases live in memory and in their Hosts' status.leases6, which
		// gives them back after a restart.
		if sv.leases, err = index.NewLease6Writer(index.Lease6WriterOptions{Index: comp.Index, Client: o.Client, APIReader: o.APIReader, Logger: log}); err != nil {
			return sv, err
		}
		for _, l := range comp.Index.Persisted6(time.Now()) {
			do.Restore = append(do.Restore, dhcp6.Lease{MAC: l.MAC, Addr: l.IP, Expires: l.Expires})
		}
		do.OnBound = func(l dhcp6.Lease) {
			sv.leases.Enqueue(index.Lease6{MAC: l.MAC, IP: l.Addr, DUID: l.DUID, Expires: l.Expires})
		}
	}
	sv.dhcp, err = dhcp6.NewServer(do)
	if err != nil {
		return sv, fmt.Errorf("netboot: %s: %w", flagDHCP6Interface, err)
	}
	// With HTTPS, open has pointed TFTPRoot at the CA-trusting copies of
	// pxe/ipxebin's builds (ipxe.efi among them); else its builds as they
	// are. TFTP serves them to firmware PXE, HTTP (/ipxe6/) to UEFI HTTP
	// boot clients.
	root := o.TFTPRoot
	if o.tls == nil {
		if sv.dir, err = os.MkdirTemp("", "anvil-ipxe6-"); err != nil {
			return sv, fmt.Errorf("netboot: iPXE over IPv6: %w", err)
		}
		root = sv.dir
		// The names dhcp6.BootOptions gives: ipxe.efi (x86-64), and
		// ipxebin.SNP, an arm64 build, as snp-arm64.efi.
		for _, b := range []struct {
			name string
			data []byte
		}{{"ipxe.efi", ipxebin.EFI.Data}, {"snp-arm64.efi", ipxebin.SNP.Data}} {
			if err = os.WriteFile(filepath.Join(sv.dir, b.name), b.data, 0o444); err != nil {
				return sv, fmt.Errorf("netboot: iPXE over IPv6: %w", err)
			}
		}
	}
	sv.root = root
	if !o.TFTP {
		return sv, nil
	}
	sv.tftp, err = tftp.NewServer(tftp.Options{Root: root, ListenAddr: netip.AddrPortFrom(netip.IPv6Unspecified(), o.TFTPListen.Port()),
		Interface: o.DHCP6Interface, MaxConcurrent: o.TFTPMaxConcurrent, MaxPerSource: o.TFTPMaxPerSource,
		FirstAckTimeout: o.TFTPFirstAckTimeout, Registerer: o.Registerer, Logger: log.WithName("ipv6")})
	if err != nil {
		return sv, fmt.Errorf("netboot: TFTP over IPv6 on %s: %w", flagDHCP6Interface, err)
	}
	return sv, nil
}

// release closes what open6 opened, for the error path (a tftp.Server
// is released by serving it on a cancelled context).
func (sv *servers6) release() {
	if sv == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if sv.dhcp != nil {
		_ = sv.dhcp.Serve(ctx)
	}
	if sv.tftp != nil {
		_ = sv.tftp.Serve(ctx)
	}
	if sv.dir != "" {
		os.RemoveAll(sv.dir)
	}
}

// start runs the IPv6 services with go (a WaitGroup's Go) and reports
// their end to fail. TFTP opens a socket per transfer on its goroutine,
// so that goroutine joins the calling thread's network namespace first
// (Run's caller may run it inside one).
func (sv *servers6) start(ctx context.Context, goFn func(func()), fail func(string, error)) {
	if sv == nil {
		return
	}
	goFn(func() { fail("DHCPv6", sv.dhcp.Serve(ctx)) })
	if sv.dir != "" {
		goFn(func() { <-ctx.Done(); os.RemoveAll(sv.dir) })
	}
	if sv.leases != nil {
		goFn(func() { sv.leases.Run(ctx) })
	}
	if sv.tftp == nil {
		return
	}
	nsFD, nsErr := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	goFn(func() {
		if nsErr == nil {
			defer unix.Close(nsFD)
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			if err := unix.Setns(nsFD, unix.CLONE_NEWNET); err != nil {
				fail("TFTP over IPv6", fmt.Errorf("joining the network namespace: %w", err))
				_ = sv.tftp.Serve(canceled())
				return
			}
		}
		fail("TFTP over IPv6", sv.tftp.Serve(ctx))
	})
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// interfaceAddr6 is the first global (or ULA) IPv6 address of ifName.
func interfaceAddr6(ifName string) (netip.Addr, error) {
	ifi, err := net.InterfaceByName(ifName)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s %q: %w", flagDHCP6Interface, ifName, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is6() && !p.Addr().Is4In6() && p.Addr().IsGlobalUnicast() {
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, errors.New(flagDHCP6Interface + " " + ifName + " has no global IPv6 address; set " + flagDHCP6ServerAddr)
}

// baseURL6 is the HTTP boot server's URL for IPv6 clients:
// http(s)://[addr][:port of HTTPAddr]. With HTTPS the certificate must
// name addr too.
func (o *Options) baseURL6(addr netip.Addr) string {
	_, port, _ := net.SplitHostPort(o.HTTPAddr)
	scheme, def := "http://", "80"
	if o.TLS() {
		scheme, def = "https://", "443"
	}
	if port == "" || port == def {
		return scheme + "[" + addr.String() + "]"
	}
	return scheme + net.JoinHostPort(addr.String(), port)
}
