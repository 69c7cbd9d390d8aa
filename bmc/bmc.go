// Package bmc is Anvil's narrow interface to baseboard management controllers.
//
// A Driver powers a server on and off, sets a one-time boot device and reads a
// few inventory facts. Drivers register themselves by URL scheme (like Metal3's
// bmc package); the controller only ever calls Open (or a Pool) with the Host's
// address and the credentials from its Secret:
//
//	redfish+https://10.0.0.5[:port][/redfish/v1/Systems/<id>]   package bmc/redfish
//	redfish+http://10.0.0.5[:port][/redfish/v1/Systems/<id>]    package bmc/redfish
//	ipmi://10.0.0.5[:port]                                       package bmc/ipmi
//	manual://[label]                                             package bmc/manual
//
// Import anvil.dev/anvil/bmc/drivers to register all of them.
//
// Optional capabilities are interfaces a driver may also implement: a
// VirtualMedia driver attaches a remote ISO as a virtual CD (Redfish; IPMI
// and manual:// have none). Get them with VirtualMediaOf, which turns a
// missing capability into a typed error.
//
// Errors returned by drivers are *Error values whose Kind is one of the
// sentinels below, so callers use errors.Is(err, bmc.ErrAuthFailed) and the
// like to map them to conditions. Error strings never contain passwords.
package bmc

import (
	"context"
	"crypto/x509"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/internal/netguard"
)

// PowerState is the power state a BMC reports.
type PowerState string

// Power states. Transitional states some BMCs report (PoweringOn, PoweringOff,
// Paused) are reported as PowerStateUnknown.
const (
	PowerStateOn      PowerState = "On"
	PowerStateOff     PowerState = "Off"
	PowerStateUnknown PowerState = "Unknown"
)

// PowerAction is a power operation to perform.
type PowerAction string

// Power actions.
const (
	// PowerOn powers the server on. A server that is already on stays on.
	PowerOn PowerAction = "On"
	// PowerOff powers the server off immediately (no OS shutdown).
	PowerOff PowerAction = "Off"
	// PowerGracefulOff asks the OS to shut down (ACPI power button).
	PowerGracefulOff PowerAction = "GracefulOff"
	// PowerReset power-cycles (or hard-resets) a running server so it boots
	// again; a server that is off is powered on instead.
	PowerReset PowerAction = "Reset"
)

// BootDevice is a device for a one-time boot override.
type BootDevice string

// Boot devices.
const (
	BootPXE  BootDevice = "PXE"
	BootDisk BootDevice = "Disk"
	// BootCD boots from the (virtual) CD: Redfish's BootSourceOverrideTarget
	// Cd, after InsertMedia (see VirtualMedia).
	BootCD BootDevice = "CD"
	// BootHTTP boots by UEFI HTTP boot: Redfish's BootSourceOverrideTarget
	// UefiHttp (UEFI mode). IPMI has no such selector (ErrUnsupported).
	BootHTTP BootDevice = "HTTP"
)

// Facts are inventory facts a BMC can report. Zero values mean "not reported".
type Facts struct {
	Manufacturer string
	Model        string
	SerialNumber string
	UUID         string
	CPUCount     int
	CPUModel     string
	MemoryMiB    int64
	// MACs are the host's NIC MAC addresses, lower case, colon separated.
	MACs []string
}

// DefaultTimeout bounds one driver call (all the requests and retries it
// makes) when Options.Timeout is zero. Real BMCs take tens of seconds for
// their first requests, so it is generous.
const DefaultTimeout = 2 * time.Minute

// Options configure a driver. Drivers take everything from here and never read
// the environment.
type Options struct {
	// Address is the full BMC URL, for example
	// "redfish+https://10.0.0.5/redfish/v1/Systems/1" or "ipmi://10.0.0.6:623".
	// It must not carry credentials (user info); such URLs are rejected.
	Address string
	// Credentials to log in with.
	Credentials Credentials
	// DisableCertificateVerification accepts any TLS certificate (Redfish
	// over https). Off by default.
	DisableCertificateVerification bool
	// RootCAs, when set, are the CAs trusted for the BMC's TLS certificate
	// instead of the system pool (for BMCs with a private CA).
	RootCAs *x509.CertPool
	// UEFI selects UEFI (rather than legacy BIOS) for boot overrides.
	UEFI bool
	// Timeout bounds every driver call; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries bounds how often a driver retries a request the BMC answered
	// with "temporarily unavailable" (or a timed-out idempotent request).
	// Zero means the driver's default (3); negative means never retry.
	MaxRetries int
	// AuthFailureBackoff is how long a driver refuses to log in again after the
	// BMC rejected its credentials, so a wrong password does not lock the
	// account or storm the BMC. Zero means 5 minutes; negative disables it.
	// New credentials mean a new driver (see Pool), which is not held back.
	AuthFailureBackoff time.Duration
	// IPMICipherSuite is the RMCP+ cipher suite ID for ipmi://; zero means 3
	// (HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128), which every IPMI 2.0 BMC and
	// ipmi_sim support. 17 is the SHA256 suite newer BMCs prefer.
	IPMICipherSuite int
	// Guard decides which addresses the driver may connect to. The zero
	// value refuses loopback, link-local and cloud metadata addresses (see
	// internal/netguard); Open checks IP literals and the drivers check
	// every address they dial. A Pool sets it from PoolOptions.Guard.
	Guard netguard.Guard
	// AllowPlainHTTP lets a redfish+http:// driver send credentials
	// unencrypted. Off by default: the Host opts in
	// (spec.bmc.allowPlainHTTP).
	AllowPlainHTTP bool
	// Logger receives debug logs. It never sees credentials.
	Logger logr.Logger
}

// Log returns the logger for a call: Options.Logger if set, else the one in
// ctx (logr.FromContextOrDiscard).
func (o Options) Log(ctx context.Context) logr.Logger {
	if o.Logger.GetSink() != nil {
		return o.Logger
	}
	return logr.FromContextOrDiscard(ctx)
}

// CallTimeout returns the per-call deadline to apply.
func (o Options) CallTimeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// Retries returns the bounded retry count to apply.
func (o Options) Retries() int {
	switch {
	case o.MaxRetries < 0:
		return 0
	case o.MaxRetries == 0:
		return 3
	default:
		return o.MaxRetries
	}
}

// AuthBackoff returns the hold-off after an authentication failure.
func (o Options) AuthBackoff() time.Duration {
	switch {
	case o.AuthFailureBackoff < 0:
		return 0
	case o.AuthFailureBackoff == 0:
		return 5 * time.Minute
	default:
		return o.AuthFailureBackoff
	}
}

// Driver talks to one BMC (one managed system). Implementations are safe for
// concurrent use, keep their session between calls, and honour ctx deadlines.
type Driver interface {
	// PowerState reads the current power state.
	PowerState(ctx context.Context) (PowerState, error)
	// SetPower performs a power action. It returns once the BMC accepted the
	// request; the state may change later (poll PowerState).
	SetPower(ctx context.Context, action PowerAction) error
	// SetBootOnce makes the next boot (only) use dev.
	SetBootOnce(ctx context.Context, dev BootDevice) error
	// Facts reads inventory facts.
	Facts(ctx context.Context) (Facts, error)
	// Close logs out and releases the session. The driver is unusable after.
	Close(ctx context.Context) error
}

// Factory creates a driver for an address whose scheme it registered for.
// Factories validate opts and the parsed address but do no network I/O; the
// first call connects.
type Factory func(addr Address, opts Options) (Driver, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes a driver factory available for a URL scheme. It panics on an
// empty scheme or a duplicate registration (a programming error).
func Register(scheme string, f Factory) {
	scheme = strings.ToLower(scheme)
	if scheme == "" || f == nil {
		panic("bmc: Register with empty scheme or nil factory")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[scheme]; dup {
		panic(fmt.Sprintf("bmc: scheme %q registered twice", scheme))
	}
	registry[scheme] = f
}

// Schemes lists the registered URL schemes, sorted.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for s := range registry {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Open parses opts.Address and creates a driver for it. Errors are
// ErrInvalidAddress for unparsable addresses, addresses with credentials in
// them, unknown schemes and hosts opts.Guard refuses (CheckTarget).
func Open(opts Options) (Driver, error) {
	addr, err := ParseAddress(opts.Address)
	if err != nil {
		return nil, err
	}
	registryMu.RLock()
	f, ok := registry[addr.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, &Error{Kind: ErrInvalidAddress, Op: "open", Address: addr.String(),
			Err: fmt.Errorf("unknown scheme %q (registered: %s)", addr.Scheme, strings.Join(Schemes(), ", "))}
	}
	if err := CheckTarget(opts.Guard, addr); err != nil {
		return nil, err
	}
	d, err := f(addr, opts)
	if err != nil {
		return nil, Redact(err, opts.Credentials.Password)
	}
	return d, nil
}
