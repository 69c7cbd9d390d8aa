// Package manual is the BMC driver for hosts without a usable BMC
// (manual://[label]). It performs nothing: every action returns an error of
// kind bmc.ErrManualActionRequired that carries the requested action, so the
// controller can record a ticket and wait for an administrator to do it and
// acknowledge. Reads succeed with what is known: power state Unknown, no facts.
package manual

import (
	"context"

	"anvil.dev/anvil/bmc"
)

// Scheme is the URL scheme this package registers.
const Scheme = "manual"

func init() {
	bmc.Register(Scheme, New)
}

// Driver is the manual driver.
type Driver struct {
	addr string
}

// New returns a manual driver. Credentials are ignored.
func New(addr bmc.Address, _ bmc.Options) (bmc.Driver, error) {
	return &Driver{addr: addr.String()}, nil
}

func (d *Driver) need(op string, a bmc.ManualAction) error {
	return &bmc.Error{Kind: bmc.ErrManualActionRequired, Op: op, Address: d.addr, Manual: &a}
}

// PowerState always reports bmc.PowerStateUnknown: nobody can measure it.
func (d *Driver) PowerState(context.Context) (bmc.PowerState, error) {
	return bmc.PowerStateUnknown, nil
}

// SetPower returns ErrManualActionRequired carrying the action.
func (d *Driver) SetPower(_ context.Context, action bmc.PowerAction) error {
	return d.need("power "+string(action), bmc.ManualAction{Power: action})
}

// SetBootOnce returns ErrManualActionRequired carrying the boot device.
func (d *Driver) SetBootOnce(_ context.Context, dev bmc.BootDevice) error {
	return d.need("set boot device "+string(dev), bmc.ManualAction{Boot: dev})
}

// Facts returns no facts.
func (d *Driver) Facts(context.Context) (bmc.Facts, error) {
	return bmc.Facts{}, nil
}

// Close does nothing.
func (d *Driver) Close(context.Context) error { return nil }
