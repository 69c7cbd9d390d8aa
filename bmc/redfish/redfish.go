// Package redfish is the Redfish BMC driver (redfish+https:// and
// redfish+http://), built on github.com/stmcginnis/gofish.
//
// Address: redfish+https://host[:port][/redfish/v1/Systems/<id>]. Without a
// system path the driver uses the BMC's only ComputerSystem and fails with
// bmc.ErrUnsupported, naming the IDs, when there are several.
//
// The driver logs in once (SessionService) and reuses the session across
// calls, logs in again once when the BMC expires it, falls back to basic auth
// for services without sessions, never retries rejected credentials (see
// bmc.Options.AuthFailureBackoff), retries 503s honouring Retry-After and
// retries idempotent requests a bounded number of times.
//
// It implements bmc.VirtualMedia (media.go): the system's (or its
// manager's) virtual CD, InsertMedia/EjectMedia actions or PATCH on older
// BMCs, and boot once from Cd.
package redfish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"anvil.dev/anvil/bmc"
)

// URL schemes registered by this package.
const (
	SchemeHTTPS = "redfish+https"
	SchemeHTTP  = "redfish+http"
)

const (
	userAgent   = "anvil-bmc/1"
	serviceRoot = "/redfish/v1"
)

func init() {
	bmc.Register(SchemeHTTPS, New)
	bmc.Register(SchemeHTTP, New)
}

// Driver is a Redfish BMC driver for one ComputerSystem.
type Driver struct {
	addr     string // for messages
	opts     bmc.Options
	endpoint string
	explicit bool // the system path came from the address
	hc       *http.Client
	tr       *transport

	mu         sync.Mutex
	api        *gofish.APIClient
	systemPath string
	mediaPath  string // the virtual CD, once found (media.go)
}

// New creates a driver; it does no network I/O.
func New(addr bmc.Address, opts bmc.Options) (bmc.Driver, error) {
	d := &Driver{addr: addr.String(), opts: opts}
	scheme := "https"
	if addr.Scheme == SchemeHTTP {
		scheme = "http"
		if !opts.AllowPlainHTTP && opts.Credentials != (bmc.Credentials{}) {
			// Basic auth and session logins carry the password as is: anyone
			// on the path (or a spoofed BMC address) would read it.
			return nil, &bmc.Error{Kind: bmc.ErrInvalidAddress, Op: "open", Address: d.addr,
				Err: errors.New("redfish+http:// would send the BMC credentials unencrypted; use redfish+https://, or opt the Host in with spec.bmc.allowPlainHTTP: true")}
		}
	}
	switch p := addr.Path; {
	case p == "" || p == serviceRoot || p == serviceRoot+"/Systems":
	case strings.HasPrefix(p, serviceRoot+"/Systems/") && !strings.Contains(strings.TrimPrefix(p, serviceRoot+"/Systems/"), "/"):
		d.systemPath, d.explicit = p, true
	default:
		return nil, &bmc.Error{Kind: bmc.ErrInvalidAddress, Op: "open", Address: d.addr,
			Err: fmt.Errorf("the path must be empty or %s/Systems/<id>", serviceRoot)}
	}
	host := addr.Host
	if addr.Port != 0 {
		host = addr.HostPort(0)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	d.endpoint = (&url.URL{Scheme: scheme, Host: host}).String()

	base := &http.Transport{
		// BMC networks are reached directly; never through a proxy from
		// the environment.
		Proxy: nil,
		// Every address dialled (after DNS) passes the request-forgery
		// guard, so no request, and no credential, goes to a refused one.
		DialContext: bmc.Dialer(opts.Guard, 30*time.Second).DialContext,
		// The session cache lets a reconnect resume the TLS session: BMCs
		// close idle connections within about a minute, so every power poll
		// connects again, and a resumed handshake spares the BMC's small
		// CPU a signature and us the certificate.
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.DisableCertificateVerification, RootCAs: opts.RootCAs, //nolint:gosec // opt-in
			ClientSessionCache: tls.NewLRUClientSessionCache(4)},
		TLSHandshakeTimeout:   30 * time.Second,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	d.tr = newTransport(base, d.endpoint, opts)
	d.hc = &http.Client{Transport: d.tr, CheckRedirect: d.checkRedirect}
	return d, nil
}

type odataLink struct {
	ID string `json:"@odata.id"`
}

// connect discovers the service (unauthenticated service root), chooses
// session or basic auth, connects gofish and resolves the system path. The
// result is cached; a failure is retried on the next call.
func (d *Driver) connect(ctx context.Context) (*gofish.APIClient, string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.api != nil {
		return d.api.WithContext(ctx), d.systemPath, nil
	}
	var root struct {
		Systems        odataLink
		SessionService odataLink
		Links          struct{ Sessions odataLink }
	}
	status, err := d.getJSON(ctx, serviceRoot+"/", &root)
	if err != nil {
		return nil, "", err
	}
	if status == http.StatusUnauthorized {
		// Not per spec, but some BMCs protect the service root: assume the
		// standard session collection and read it authenticated.
		d.tr.configure(modeSession, serviceRoot+"/SessionService/Sessions")
		if status, err = d.getJSON(ctx, serviceRoot+"/", &root); err != nil {
			return nil, "", err
		}
	}
	if status != http.StatusOK {
		return nil, "", &httpStatusError{Status: status, Path: serviceRoot + "/"}
	}
	switch {
	case root.Links.Sessions.ID != "":
		d.tr.configure(modeSession, strings.TrimRight(root.Links.Sessions.ID, "/"))
	case root.SessionService.ID != "":
		d.tr.configure(modeSession, strings.TrimRight(root.SessionService.ID, "/")+"/Sessions")
	default:
		d.tr.configure(modeBasic, "")
	}
	api, err := gofish.ConnectContext(ctx, gofish.ClientConfig{
		Endpoint:              d.endpoint,
		HTTPClient:            d.hc,
		NoModifyTransport:     true,
		ReuseConnections:      true,
		MaxConcurrentRequests: 1,
	})
	if err != nil {
		return nil, "", err
	}
	if d.systemPath == "" {
		systems := root.Systems.ID
		if systems == "" {
			systems = serviceRoot + "/Systems"
		}
		ids, err := d.members(api, strings.TrimRight(systems, "/"))
		if err != nil {
			return nil, "", err
		}
		switch len(ids) {
		case 0:
			return nil, "", &bmc.Error{Kind: bmc.ErrUnsupported, Err: errors.New("the BMC reports no ComputerSystem")}
		case 1:
			d.systemPath = ids[0]
		default:
			short := make([]string, len(ids))
			for i, id := range ids {
				short[i] = id[strings.LastIndex(id, "/")+1:]
			}
			return nil, "", &bmc.Error{Kind: bmc.ErrUnsupported, Err: fmt.Errorf(
				"the BMC manages %d systems (%s); choose one by adding its path to the address, e.g. %s%s",
				len(ids), strings.Join(short, ", "), strings.TrimRight(d.addr, "/"), ids[0])}
		}
	}
	d.api = api
	return api.WithContext(ctx), d.systemPath, nil
}

// getJSON GETs path through the driver's transport and decodes a 200 body.
func (d *Driver) getJSON(ctx context.Context, path string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.endpoint+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := d.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return 0, fmt.Errorf("decode %s: %w", path, err)
	}
	return resp.StatusCode, nil
}

// members lists the @odata.id of a collection's members.
func (d *Driver) members(api *gofish.APIClient, path string) ([]string, error) {
	resp, err := api.Get(path)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	var coll struct{ Members []odataLink }
	if err := json.NewDecoder(resp.Body).Decode(&coll); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	out := make([]string, 0, len(coll.Members))
	for _, m := range coll.Members {
		if m.ID != "" {
			out = append(out, strings.TrimRight(m.ID, "/"))
		}
	}
	return out, nil
}

// system fetches the ComputerSystem.
func (d *Driver) system(ctx context.Context) (*schemas.ComputerSystem, error) {
	api, path, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	sys, err := schemas.GetComputerSystem(api, path)
	if err != nil {
		return nil, d.systemErr(path, err)
	}
	return sys, nil
}

// systemPower reads only the ComputerSystem's PowerState. This is the power
// poll, every Host every few minutes: decoding the whole ComputerSystem
// through gofish (dozens of nested members and links) was the largest
// part of a poll's CPU in the controllers.
func (d *Driver) systemPower(ctx context.Context) (schemas.PowerState, error) {
	api, path, err := d.connect(ctx)
	if err != nil {
		return "", err
	}
	resp, err := api.Get(path) // gofish turns a non-2xx answer into *schemas.Error
	if err != nil {
		return "", d.systemErr(path, err)
	}
	defer drain(resp)
	var sys struct{ PowerState schemas.PowerState }
	if err := json.NewDecoder(resp.Body).Decode(&sys); err != nil {
		return "", fmt.Errorf("decode %s: %w", path, err)
	}
	return sys.PowerState, nil
}

// systemErr names a missing system when the address chose its path.
func (d *Driver) systemErr(path string, err error) error {
	var re *schemas.Error
	if d.explicit && errors.As(err, &re) && re.HTTPReturnedStatusCode == http.StatusNotFound {
		return &bmc.Error{Kind: bmc.ErrInvalidAddress, Err: fmt.Errorf("the BMC has no system at %s", path)}
	}
	return err
}

func (d *Driver) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.opts.CallTimeout())
}

// PowerState implements bmc.Driver.
func (d *Driver) PowerState(ctx context.Context) (bmc.PowerState, error) {
	ctx, cancel := d.callCtx(ctx)
	defer cancel()
	ps, err := d.systemPower(ctx)
	if err != nil {
		return bmc.PowerStateUnknown, d.fail("read power state", err)
	}
	return powerState(ps), nil
}

func powerState(p schemas.PowerState) bmc.PowerState {
	switch p {
	case schemas.OnPowerState:
		return bmc.PowerStateOn
	case schemas.OffPowerState:
		return bmc.PowerStateOff
	}
	return bmc.PowerStateUnknown
}

// resetCandidates lists, in order of preference, the ResetTypes that perform
// action from the current state. nil means nothing to do.
func resetCandidates(action bmc.PowerAction, cur bmc.PowerState) ([]schemas.ResetType, error) {
	switch action {
	case bmc.PowerOn:
		if cur == bmc.PowerStateOn {
			return nil, nil
		}
		return []schemas.ResetType{schemas.OnResetType, schemas.ForceOnResetType, schemas.PushPowerButtonResetType}, nil
	case bmc.PowerOff:
		if cur == bmc.PowerStateOff {
			return nil, nil
		}
		return []schemas.ResetType{schemas.ForceOffResetType}, nil
	case bmc.PowerGracefulOff:
		if cur == bmc.PowerStateOff {
			return nil, nil
		}
		return []schemas.ResetType{schemas.GracefulShutdownResetType, schemas.PushPowerButtonResetType}, nil
	case bmc.PowerReset:
		if cur == bmc.PowerStateOff {
			return []schemas.ResetType{schemas.OnResetType, schemas.ForceOnResetType, schemas.PushPowerButtonResetType}, nil
		}
		return []schemas.ResetType{schemas.ForceRestartResetType, schemas.PowerCycleResetType}, nil
	}
	return nil, fmt.Errorf("unknown power action %q", action)
}

// SetPower implements bmc.Driver. On (Off) of a server that is already on
// (off) does nothing; Reset of a server that is off powers it on.
func (d *Driver) SetPower(ctx context.Context, action bmc.PowerAction) error {
	op := "power " + string(action)
	ctx, cancel := d.callCtx(ctx)
	defer cancel()
	sys, err := d.system(ctx)
	if err != nil {
		return d.fail(op, err)
	}
	candidates, err := resetCandidates(action, powerState(sys.PowerState))
	if err != nil {
		return &bmc.Error{Kind: bmc.ErrUnsupported, Op: op, Address: d.addr, Err: err}
	}
	if candidates == nil {
		return nil
	}
	allowed, err := sys.GetSupportedResetTypes()
	if err != nil {
		// ActionInfo unreadable: fall back to the preferred reset type.
		d.opts.Log(ctx).V(1).Info("cannot read allowed reset types", "address", d.addr, "error", err.Error())
		allowed = nil
	}
	rt := candidates[0]
	if len(allowed) > 0 {
		i := slices.IndexFunc(candidates, func(c schemas.ResetType) bool { return slices.Contains(allowed, c) })
		if i < 0 {
			return &bmc.Error{Kind: bmc.ErrUnsupported, Op: op, Address: d.addr,
				Err: fmt.Errorf("the system allows reset types %v, none of %v", allowed, candidates)}
		}
		rt = candidates[i]
	}
	if _, err := sys.Reset(rt); err != nil {
		return d.fail(op+" (ResetType "+string(rt)+")", err)
	}
	return nil
}

// SetBootOnce implements bmc.Driver: Boot.BootSourceOverrideTarget Pxe, Hdd,
// Cd or UefiHttp, Enabled Once, and BootSourceOverrideMode UEFI or Legacy
// when the system reports a mode (always UEFI for UefiHttp, which legacy
// BIOS lacks). A target missing from the system's allowable values is
// ErrUnsupported.
func (d *Driver) SetBootOnce(ctx context.Context, dev bmc.BootDevice) error {
	op := "set boot device " + string(dev)
	var target schemas.BootSource
	switch dev {
	case bmc.BootPXE:
		target = schemas.PxeBootSource
	case bmc.BootDisk:
		target = schemas.HddBootSource
	case bmc.BootCD:
		target = schemas.CdBootSource
	case bmc.BootHTTP:
		target = schemas.UefiHTTPBootSource
	default:
		return &bmc.Error{Kind: bmc.ErrUnsupported, Op: op, Address: d.addr, Err: fmt.Errorf("unknown boot device %q", dev)}
	}
	ctx, cancel := d.callCtx(ctx)
	defer cancel()
	for attempt := 0; ; attempt++ {
		sys, err := d.system(ctx)
		if err != nil {
			return d.fail(op, err)
		}
		if allowed := sys.Boot.AllowableBootSourceOverrideTargetValues; len(allowed) > 0 && !slices.Contains(allowed, target) {
			return &bmc.Error{Kind: bmc.ErrUnsupported, Op: op, Address: d.addr,
				Err: fmt.Errorf("boot target %s is not among the allowed %v", target, allowed)}
		}
		boot := &schemas.Boot{BootSourceOverrideTarget: target, BootSourceOverrideEnabled: schemas.OnceBootSourceOverrideEnabled}
		if sys.Boot.BootSourceOverrideMode != "" {
			boot.BootSourceOverrideMode = schemas.LegacyBootSourceOverrideMode
			if d.opts.UEFI || dev == bmc.BootHTTP {
				boot.BootSourceOverrideMode = schemas.UEFIBootSourceOverrideMode
			}
		}
		err = sys.SetBoot(boot)
		if err != nil && attempt == 0 && schemas.Is412PreconditionFailed(err) {
			// The system changed between our GET and PATCH (for example a
			// power transition): read it again and retry once.
			continue
		}
		if err != nil {
			return d.fail(op, err)
		}
		return nil
	}
}

// Facts implements bmc.Driver from the ComputerSystem and its
// EthernetInterfaces (virtual ones, such as VLANs, are skipped).
func (d *Driver) Facts(ctx context.Context) (bmc.Facts, error) {
	ctx, cancel := d.callCtx(ctx)
	defer cancel()
	sys, err := d.system(ctx)
	if err != nil {
		return bmc.Facts{}, d.fail("read facts", err)
	}
	f := bmc.Facts{
		Manufacturer: sys.Manufacturer,
		Model:        sys.Model,
		SerialNumber: sys.SerialNumber,
		UUID:         strings.ToLower(sys.UUID),
		CPUModel:     sys.ProcessorSummary.Model,
	}
	if c := sys.ProcessorSummary.Count; c != nil {
		f.CPUCount = int(*c)
	}
	if m := sys.MemorySummary.TotalSystemMemoryGiB; m != nil {
		f.MemoryMiB = int64(*m * 1024)
	}
	nics, err := sys.EthernetInterfaces()
	if err != nil && len(nics) == 0 {
		return bmc.Facts{}, d.fail("read ethernet interfaces", err)
	}
	for _, n := range nics {
		if n == nil || n.EthernetInterfaceType == schemas.VirtualEthernetDeviceType {
			continue
		}
		mac := n.MACAddress
		if mac == "" {
			mac = n.PermanentMACAddress
		}
		hw, err := net.ParseMAC(mac)
		if err != nil {
			continue
		}
		if s := hw.String(); !slices.Contains(f.MACs, s) {
			f.MACs = append(f.MACs, s)
		}
	}
	return f, nil
}

// Close logs out of the session and drops idle connections.
func (d *Driver) Close(ctx context.Context) error {
	d.mu.Lock()
	d.api, d.mediaPath = nil, ""
	d.mu.Unlock()
	err := d.tr.logout(ctx)
	d.hc.CloseIdleConnections()
	if err != nil {
		return d.fail("log out", err)
	}
	return nil
}

// LoginAttempts reports how many session logins this driver attempted.
func (d *Driver) LoginAttempts() int { return d.tr.loginCount() }

// httpStatusError is a non-2xx answer, summarised.
type httpStatusError struct {
	Status  int
	Path    string
	Code    string
	Message string
	err     error
}

func (e *httpStatusError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Path != "" {
		s += " from " + e.Path
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *httpStatusError) Unwrap() error { return e.err }

// fail turns an error into a *bmc.Error with the right kind.
func (d *Driver) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	e := &bmc.Error{Op: op, Address: d.addr, Err: err}
	var be *bmc.Error
	var re *schemas.Error
	var se *httpStatusError
	var rd *redirectError
	switch {
	case errors.As(err, &rd):
		// Not the *url.Error around it: that repeats the target URL with
		// any user name in it.
		e.Kind, e.Err = bmc.ErrInvalidAddress, rd
	case errors.As(err, &be):
		e.Kind, e.Err = be.Kind, be.Err
	case errors.As(err, &re):
		se := &httpStatusError{Status: re.HTTPReturnedStatusCode, Code: re.Code, Message: re.Message, err: re}
		if re.Code == "" {
			se.Message = "" // a raw body, not a Redfish error: do not repeat it
		}
		e.Kind, e.Err = kindForStatus(se.Status), se
	case errors.As(err, &se):
		e.Kind = kindForStatus(se.Status)
	case errors.Is(err, context.Canceled):
		// The caller gave up; not a BMC condition.
	default:
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) {
			e.Kind = bmc.ErrUnreachable
			if hint := tlsHint(err); hint != "" {
				e.Err = fmt.Errorf("%w (%s)", err, hint)
			}
		}
	}
	return e
}

func kindForStatus(status int) error {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return bmc.ErrAuthFailed
	case status == http.StatusServiceUnavailable:
		return bmc.ErrUnreachable
	case status == http.StatusBadRequest || status == http.StatusNotFound ||
		status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented:
		return bmc.ErrUnsupported
	}
	return nil
}

func tlsHint(err error) string {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var cv *tls.CertificateVerificationError
	if errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci) || errors.As(err, &cv) {
		return "the BMC's TLS certificate is not trusted: provide its CA or set disableCertificateVerification"
	}
	return ""
}
