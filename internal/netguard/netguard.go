// Package netguard is the server-side request forgery guard for every
// outgoing connection whose target an API user chooses: ticket webhooks,
// BMC addresses and MachineClass artifact URLs. A user who can write such
// an address must not be able to make Anvil carry credentials to, or probe,
// Anvil's own loopback services, a cloud metadata service or a link-local
// neighbour.
//
// Private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) are allowed: BMCs,
// mirrors and ticketing systems live there. Loopback, link-local and the
// well-known metadata addresses are refused unless allowed, and unspecified
// and multicast targets always. The check runs on the address actually
// dialled (Control), so a name that resolves to a refused address, or DNS
// that changes between check and dial, cannot route around it.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrDenied marks a target the guard refused.
var ErrDenied = errors.New("target address refused by the request-forgery guard")

// metadata are cloud metadata services. They stay refused where loopback or
// link-local targets are allowed; only Allow opens them.
var metadata = []netip.Prefix{
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS over IPv6
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud
	netip.MustParsePrefix("169.254.169.254/32"), // named for the error message
	netip.MustParsePrefix("169.254.170.2/32"),   // AWS ECS task credentials
}

// Guard decides which addresses may be dialled. The zero value is the
// strict default.
type Guard struct {
	// AllowLoopback allows 127.0.0.0/8, ::1 and the name localhost.
	AllowLoopback bool
	// AllowLinkLocal allows 169.254.0.0/16 and fe80::/10 (metadata
	// addresses there are allowed only through Allow).
	AllowLinkLocal bool
	// Allow lists prefixes an admin opened explicitly; they win over every
	// refusal but unspecified and multicast.
	Allow []netip.Prefix
}

// ParsePrefixes parses a comma-separated list of CIDRs (or bare addresses)
// for a flag; flag names the flag in the error.
func ParsePrefixes(flag, list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("--%s: %q is neither a CIDR nor an address", flag, s)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("--%s: %q is not a CIDR: %v", flag, s, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (g Guard) allowed(a netip.Addr) bool {
	for _, p := range g.Allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// CheckAddr says whether an IP address may be dialled.
func (g Guard) CheckAddr(a netip.Addr) error {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return fmt.Errorf("%w: invalid address", ErrDenied)
	case a.IsUnspecified(), a.IsMulticast():
		return fmt.Errorf("%w: %s is unspecified or multicast", ErrDenied, a)
	case g.allowed(a):
		return nil
	}
	for _, p := range metadata {
		if p.Contains(a) {
			return fmt.Errorf("%w: %s is a cloud metadata address (allow it explicitly if it is really the target)", ErrDenied, a)
		}
	}
	switch {
	case a.IsLoopback() && !g.AllowLoopback:
		return fmt.Errorf("%w: %s is loopback (not allowed)", ErrDenied, a)
	case a.IsLinkLocalUnicast() && !g.AllowLinkLocal:
		return fmt.Errorf("%w: %s is link-local (not allowed)", ErrDenied, a)
	}
	return nil
}

// CheckIP is CheckAddr for a net.IP.
func (g Guard) CheckIP(ip net.IP) error {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return fmt.Errorf("%w: %q is not an IP address", ErrDenied, ip)
	}
	return g.CheckAddr(a)
}

// CheckHost checks a host name or IP literal as written by a user, before
// any lookup: IP literals and localhost are decided here, other names at
// dial time by Control.
func (g Guard) CheckHost(host string) error {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return g.CheckAddr(a)
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if (h == "localhost" || strings.HasSuffix(h, ".localhost")) && !g.AllowLoopback {
		return fmt.Errorf("%w: %s (loopback targets are not allowed)", ErrDenied, host)
	}
	return nil
}

// Control is a net.Dialer Control function: it checks each address right
// before connecting.
func (g Guard) Control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrDenied, host)
	}
	return g.CheckAddr(a)
}

// Dialer is a net.Dialer that refuses what the guard refuses.
func (g Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: g.Control}
}
