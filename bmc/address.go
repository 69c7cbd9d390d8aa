package bmc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Address is a parsed BMC URL.
type Address struct {
	// Scheme in lower case, e.g. "redfish+https", "ipmi", "manual".
	Scheme string
	// Host is the host name or IP address, without brackets. Empty only for
	// manual:// addresses.
	Host string
	// Port is the explicit port, or 0.
	Port int
	// Path is the URL path without a trailing slash ("" when absent).
	Path string
}

// String formats the address back into a URL (which never has credentials).
func (a Address) String() string {
	u := url.URL{Scheme: a.Scheme, Host: a.Host, Path: a.Path}
	if a.Port != 0 {
		u.Host = net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
	} else if strings.Contains(a.Host, ":") {
		u.Host = "[" + a.Host + "]"
	}
	return u.String()
}

// HostPort joins the host with the explicit port, or with defaultPort.
func (a Address) HostPort(defaultPort int) string {
	p := a.Port
	if p == 0 {
		p = defaultPort
	}
	return net.JoinHostPort(a.Host, strconv.Itoa(p))
}

// ParseAddress parses and checks a BMC URL. It rejects URLs carrying
// credentials, queries or fragments, bad ports and (except for manual://)
// missing hosts, all with ErrInvalidAddress. Error messages never repeat the
// raw input, since a mistaken URL may hold a password.
func ParseAddress(raw string) (Address, error) {
	fail := func(format string, args ...any) (Address, error) {
		return Address{}, &Error{Kind: ErrInvalidAddress, Op: "parse address", Err: fmt.Errorf(format, args...)}
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return fail("address is empty")
	}
	// Look for user info before url.Parse: its errors quote pieces of the
	// input, and a URL with "user:pass@" must never be echoed.
	if i := strings.Index(raw, "://"); i >= 0 {
		authority := raw[i+3:]
		if j := strings.IndexAny(authority, "/?#"); j >= 0 {
			authority = authority[:j]
		}
		if strings.Contains(authority, "@") {
			return fail("the address must not contain credentials (user info); put them in the credentials Secret")
		}
	} else {
		return fail("the address has no scheme (expected e.g. redfish+https://, ipmi://, manual://)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fail("%v", err)
	}
	if u.User != nil {
		return fail("the address must not contain credentials (user info); put them in the credentials Secret")
	}
	if u.Opaque != "" {
		return fail("the address must look like scheme://host[:port][/path]")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fail("query strings and fragments are not supported in BMC addresses")
	}
	a := Address{Scheme: strings.ToLower(u.Scheme), Host: u.Hostname()}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fail("port %q is not a number between 1 and 65535", p)
		}
		a.Port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return fail("empty port")
	}
	if a.Host == "" && a.Scheme != "manual" {
		return fail("the address has no host")
	}
	a.Path = strings.TrimRight(u.Path, "/")
	return a, nil
}
