// Package ipmi is the IPMI 2.0 (RMCP+, "lanplus") BMC driver for
// ipmi://host[:port] (default port 623), built on github.com/bougou/go-ipmi.
//
// It keeps one RMCP+ session per driver and reuses it across calls (go-ipmi
// keeps it alive), opening a new one when it goes stale. Power control is
// Chassis Control; boot override is the Boot Flags parameter (#5) of Set
// System Boot Options, valid for the next boot only, with the EFI bit when
// Options.UEFI is set. IPMI says a BMC may drop the override if no boot
// follows within 60 seconds, so power on (or reset) right after setting it.
package ipmi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
	"github.com/bougou/go-ipmi/pkg/types"

	"anvil.dev/anvil/bmc"
)

// Scheme is the URL scheme this package registers.
const Scheme = "ipmi"

// DefaultPort is the RMCP port.
const DefaultPort = 623

// DefaultCipherSuite is used when Options.IPMICipherSuite is zero:
// HMAC-SHA1 authentication, HMAC-SHA1-96 integrity, AES-CBC-128
// confidentiality — supported by every IPMI 2.0 BMC and by ipmi_sim.
const DefaultCipherSuite = 3

// exchangeRetries is how often go-ipmi retransmits a request that got no
// reply.
const exchangeRetries = 2

// exchangeTimeout is how long go-ipmi waits for one reply before
// retransmitting: up to 5 s, since real BMCs take seconds to answer, but
// small enough that all attempts (and a reconnect after a stale session) fit
// into the call's deadline.
func exchangeTimeout(call time.Duration) time.Duration {
	return min(max(call/8, time.Second), 5*time.Second)
}

func init() {
	bmc.Register(Scheme, New)
}

// Driver is an IPMI driver.
type Driver struct {
	addr     string
	host     string
	port     int
	opts     bmc.Options
	cipher   types.CipherSuiteID
	mu       sync.Mutex // one exchange at a time: an IPMI session is sequential
	c        *client.Client
	authErr  error
	authTime time.Time
}

// New creates a driver; it does no network I/O.
func New(addr bmc.Address, opts bmc.Options) (bmc.Driver, error) {
	d := &Driver{addr: addr.String(), host: addr.Host, port: addr.Port, opts: opts}
	if d.port == 0 {
		d.port = DefaultPort
	}
	if addr.Path != "" {
		return nil, &bmc.Error{Kind: bmc.ErrInvalidAddress, Op: "open", Address: d.addr, Err: errors.New("ipmi:// addresses take no path")}
	}
	cs := opts.IPMICipherSuite
	if cs == 0 {
		cs = DefaultCipherSuite
	}
	if cs < 0 || cs > 255 {
		return nil, &bmc.Error{Kind: bmc.ErrInvalidAddress, Op: "open", Address: d.addr, Err: fmt.Errorf("cipher suite %d out of range", cs)}
	}
	if _, _, _, ok := types.GetCipherSuiteAlgorithms(types.CipherSuiteID(cs)); !ok {
		return nil, &bmc.Error{Kind: bmc.ErrUnsupported, Op: "open", Address: d.addr, Err: fmt.Errorf("cipher suite %d is not supported", cs)}
	}
	d.cipher = types.CipherSuiteID(cs)
	return d, nil
}

// session returns a connected client, connecting if needed. Caller holds mu.
func (d *Driver) session(ctx context.Context) (*client.Client, bool, error) {
	if d.c != nil {
		return d.c, true, nil
	}
	if backoff := d.opts.AuthBackoff(); d.authErr != nil && backoff > 0 {
		if since := time.Since(d.authTime); since < backoff {
			return nil, false, &bmc.Error{Kind: bmc.ErrAuthFailed, Err: fmt.Errorf(
				"not retrying for %s after the BMC rejected the credentials for user %q: %w",
				(backoff - since).Round(time.Second), d.opts.Credentials.Username, d.authErr)}
		}
	}
	c, err := client.NewClient(d.host, d.port, d.opts.Credentials.Username, d.opts.Credentials.Password)
	if err != nil {
		return nil, false, &bmc.Error{Kind: bmc.ErrAuthFailed, Err: errors.New("user name too long for IPMI (16 bytes at most)")}
	}
	// The guarded dialer checks the resolved address before the first
	// datagram (go-ipmi resolves and dials through it).
	c.WithUDPProxy(bmc.Dialer(d.opts.Guard, exchangeTimeout(d.opts.CallTimeout()))).
		WithCipherSuiteID(d.cipher).
		WithMaxPrivilegeLevel(types.PrivilegeLevelAdministrator).
		WithTimeout(exchangeTimeout(d.opts.CallTimeout())).
		WithRetry(exchangeRetries)
	if err := c.Connect(ctx); err != nil {
		// Release the UDP socket. There is no session to close, so do not
		// wait for the BMC: a cancelled context makes go-ipmi skip the
		// Close Session exchange.
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = closeQuietly(done, c)
		if aerr := authError(err); aerr != nil {
			d.authErr, d.authTime = aerr, time.Now()
			return nil, false, &bmc.Error{Kind: bmc.ErrAuthFailed, Err: aerr}
		}
		return nil, false, err
	}
	d.authErr = nil
	d.c = c
	return c, false, nil
}

// closeQuietly closes a client that may be half set up (go-ipmi's Close
// panics on a second call).
func closeQuietly(ctx context.Context, c *client.Client) (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("close failed")
		}
	}()
	return c.Close(ctx)
}

// dropSession forgets (and closes) a session that stopped working. Caller
// holds mu.
func (d *Driver) dropSession() {
	if d.c != nil {
		// Try to free the BMC's session slot, but do not wait long for a
		// BMC that stopped answering.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = closeQuietly(ctx, d.c)
		cancel()
		d.c = nil
	}
}

// authStatusCodes are the RMCP+ status codes a BMC uses to refuse a user,
// its password or its privilege level.
var authStatusCodes = []types.RmcpStatusCode{
	types.RmcpStatusCodeUnauthorizedName, types.RmcpStatusCodeInvalidIntegrityCheckValue,
	types.RmcpStatusCodeUnauthorizedRoleOfPriLevel, types.RmcpStatusCodeInvalidRole,
	types.RmcpStatusCodeUnauthorizedGUID,
}

// authError recognises RAKP failures and returns a short cause: a wrong
// password shows as an authentication code mismatch, an unknown user or a
// forbidden privilege as an RMCP+ status code. go-ipmi flattens the errors of
// its cipher suite attempts into text (%v), so the chain cannot be unwrapped
// and the text is what there is to match.
func authError(err error) error {
	if errors.Is(err, client.ErrRAKPAuthentication) || strings.Contains(err.Error(), client.ErrRAKPAuthentication.Error()) {
		return fmt.Errorf("the BMC rejected the credentials: %w", client.ErrRAKPAuthentication)
	}
	for _, code := range authStatusCodes {
		se := types.NewRmcpStatusError(code)
		var got *types.RmcpStatusError
		if (errors.As(err, &got) && got.StatusCode() == code) || strings.Contains(err.Error(), se.Error()) {
			return fmt.Errorf("the BMC rejected the session: %w", se)
		}
	}
	return nil
}

// do runs fn on the session. A failure on a reused session that is not an
// IPMI completion code (the BMC answered) is retried once on a fresh session
// when retry allows: BMCs drop idle sessions.
func (d *Driver) do(ctx context.Context, op string, retry bool, fn func(c *client.Client) error) error {
	ctx, cancel := context.WithTimeout(ctx, d.opts.CallTimeout())
	defer cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	for attempt := 0; ; attempt++ {
		c, reused, err := d.session(ctx)
		if err != nil {
			return d.fail(op, err)
		}
		err = fn(c)
		if err == nil {
			return nil
		}
		if _, answered := types.IsResponseError(err); !answered {
			d.dropSession()
			if reused && retry && attempt == 0 && ctx.Err() == nil {
				d.opts.Log(ctx).V(1).Info("IPMI session failed, reconnecting", "address", d.addr, "error", err.Error())
				continue
			}
		}
		return d.fail(op, err)
	}
}

func (d *Driver) fail(op string, err error) error {
	e := &bmc.Error{Op: op, Address: d.addr, Err: err}
	var be *bmc.Error
	var re *types.ResponseError
	var ne net.Error
	switch {
	case errors.As(err, &be):
		e.Kind, e.Err = be.Kind, be.Err
	case errors.As(err, &re):
		switch re.CompletionCode() {
		case types.CodeInvalidCommand, types.CodeRequestDataFieldInvalid, types.CodeInvalidCommandForLUN,
			types.CodeIllegalCommand, types.CodeNotSupported, types.CodeParameterNotSupported:
			e.Kind = bmc.ErrUnsupported
		case types.CodeInsufficientPrivilege:
			e.Kind = bmc.ErrAuthFailed
		case types.CodeNodeBusy, types.CodeProcessTimeout:
			e.Kind = bmc.ErrUnreachable
		}
	case errors.Is(err, context.Canceled):
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne):
		e.Kind = bmc.ErrUnreachable
	case strings.Contains(err.Error(), "IPMI LAN:") || strings.Contains(err.Error(), "Get Channel Authentication Capabilities"):
		// go-ipmi's UDP exchange failures (no reply, no matching reply).
		e.Kind = bmc.ErrUnreachable
	}
	return e
}

// PowerState implements bmc.Driver (Get Chassis Status).
func (d *Driver) PowerState(ctx context.Context) (bmc.PowerState, error) {
	st := bmc.PowerStateUnknown
	err := d.do(ctx, "read power state", true, func(c *client.Client) error {
		res, err := c.GetChassisStatus(ctx)
		if err != nil {
			return err
		}
		st = bmc.PowerStateOff
		if res.PowerIsOn {
			st = bmc.PowerStateOn
		}
		return nil
	})
	return st, err
}

// SetPower implements bmc.Driver (Chassis Control): On = power up, Off =
// power down, GracefulOff = soft shutdown (ACPI), Reset = power cycle, or
// power up when the server is off (a cycle of a server that is off is an
// error on many BMCs).
func (d *Driver) SetPower(ctx context.Context, action bmc.PowerAction) error {
	op := "power " + string(action)
	var ctl chassis.ChassisControl
	switch action {
	case bmc.PowerOn:
		ctl = chassis.ChassisControlPowerUp
	case bmc.PowerOff:
		ctl = chassis.ChassisControlPowerDown
	case bmc.PowerGracefulOff:
		ctl = chassis.ChassisControlSoftShutdown
	case bmc.PowerReset:
		ctl = chassis.ChassisControlPowerCycle
	default:
		return &bmc.Error{Kind: bmc.ErrUnsupported, Op: op, Address: d.addr, Err: fmt.Errorf("unknown power action %q", action)}
	}
	// A power cycle is not idempotent: never replay it on a new session.
	return d.do(ctx, op, action != bmc.PowerReset, func(c *client.Client) error {
		if action == bmc.PowerReset {
			res, err := c.GetChassisStatus(ctx)
			if err != nil {
				return err
			}
			if !res.PowerIsOn {
				ctl = chassis.ChassisControlPowerUp
			}
		}
		_, err := c.ChassisControl(ctx, ctl)
		return err
	})
}

// SetBootOnce implements bmc.Driver (Set System Boot Options, boot flags,
// next boot only).
func (d *Driver) SetBootOnce(ctx context.Context, dev bmc.BootDevice) error {
	op := "set boot device " + string(dev)
	var sel types.BootDeviceSelector
	switch dev {
	case bmc.BootPXE:
		sel = types.BootDeviceSelectorForcePXE
	case bmc.BootDisk:
		sel = types.BootDeviceSelectorForceHardDrive
	case bmc.BootHTTP:
		return &bmc.Error{Kind: bmc.ErrUnsupported, Op: op, Address: d.addr, Err: errors.New("IPMI has no UEFI HTTP boot selector (boot device PXE is the nearest)")}
	default:
		return &bmc.Error{Kind: bmc.ErrUnsupported, Op: op, Address: d.addr, Err: fmt.Errorf("unknown boot device %q", dev)}
	}
	bootType := types.BIOSBootTypeLegacy
	if d.opts.UEFI {
		bootType = types.BIOSBootTypeEFI
	}
	return d.do(ctx, op, true, func(c *client.Client) error {
		return c.SetBootDevice(ctx, sel, bootType, false)
	})
}

// Facts implements bmc.Driver with what IPMI offers: the system GUID (as
// SMBIOS encodes it, which is what the host's dmidecode and most BMCs show)
// and FRU 0 product and board info. IPMI reports no CPUs, memory or host
// MACs. A BMC without FRU data still yields the GUID.
func (d *Driver) Facts(ctx context.Context) (bmc.Facts, error) {
	var f bmc.Facts
	err := d.do(ctx, "read facts", true, func(c *client.Client) error {
		f = bmc.Facts{}
		if _, err := c.GetDeviceID(ctx); err != nil {
			return err
		}
		if g, err := c.GetSystemGUID(ctx); err == nil {
			if u, err := types.ParseGUID(g.GUID[:], types.GUIDModeSMBIOS); err == nil && !allSame(g.GUID[:]) {
				f.UUID = u.String()
			}
		} else if _, answered := types.IsResponseError(err); !answered {
			return err
		}
		fru, err := c.GetFRU(ctx, 0, "")
		if err != nil {
			if _, answered := types.IsResponseError(err); !answered && !strings.Contains(err.Error(), "FRU") {
				return err
			}
			d.opts.Log(ctx).V(1).Info("no FRU data", "address", d.addr, "error", err.Error())
			return nil
		}
		if p := fru.ProductInfoArea; p != nil {
			f.Manufacturer = fruString(p.ManufacturerTypeLength, p.Manufacturer)
			f.Model = fruString(p.NameTypeLength, p.Name)
			f.SerialNumber = fruString(p.SerialNumberTypeLength, p.SerialNumber)
		}
		if b := fru.BoardInfoArea; b != nil {
			if f.Manufacturer == "" {
				f.Manufacturer = fruString(b.ManufacturerTypeLength, b.Manufacturer)
			}
			if f.Model == "" {
				f.Model = fruString(b.ProductNameTypeLength, b.ProductName)
			}
			if f.SerialNumber == "" {
				f.SerialNumber = fruString(b.SerialNumberTypeLength, b.SerialNumber)
			}
		}
		return nil
	})
	return f, err
}

func allSame(b []byte) bool {
	for _, c := range b {
		if c != b[0] {
			return false
		}
	}
	return true
}

func fruString(tl types.TypeLength, raw []byte) string {
	chars, err := tl.Chars(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.TrimRight(string(chars), "\x00"))
}

// Close closes the RMCP+ session.
func (d *Driver) Close(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		return nil
	}
	c := d.c
	d.c = nil
	if err := closeQuietly(ctx, c); err != nil {
		return d.fail("close session", err)
	}
	return nil
}
