package bmc

import (
	"fmt"
	"net"
	"syscall"
	"time"

	"anvil.dev/anvil/internal/netguard"
)

// AllowFlag is the `anvil serve` flag that opens guarded BMC addresses;
// refusals name it so the admin knows what to change.
const AllowFlag = "--bmc-allow-cidrs"

// CheckTarget refuses a BMC address whose host is a loopback, link-local
// or metadata IP literal (or localhost) under g, before any lookup: a Host
// must not make Anvil carry BMC credentials to its own services or a cloud
// metadata endpoint. Names are checked again at dial time (Dialer). manual://
// addresses dial nothing and always pass.
func CheckTarget(g netguard.Guard, addr Address) error {
	if addr.Scheme == "manual" {
		return nil
	}
	if err := g.CheckHost(addr.Host); err != nil {
		return &Error{Kind: ErrInvalidAddress, Op: "check address", Address: addr.String(), Err: refused(err)}
	}
	return nil
}

func refused(err error) error {
	return fmt.Errorf("%w; an admin can allow such BMC addresses with anvil serve %s=<cidr>", err, AllowFlag)
}

// Dialer is a net.Dialer for BMC connections that checks every address it
// is about to connect to against g, so a name resolving to a refused
// address (or DNS that changes after validation) is refused before a single
// byte, let alone a credential, is sent. The refusal is an *Error of kind
// ErrInvalidAddress, which drivers pass through.
func Dialer(g netguard.Guard, timeout time.Duration) *net.Dialer {
	d := g.Dialer(timeout)
	d.Control = func(network, address string, c syscall.RawConn) error {
		if err := g.Control(network, address, c); err != nil {
			return &Error{Kind: ErrInvalidAddress, Op: "dial", Err: refused(err)}
		}
		return nil
	}
	return d
}
