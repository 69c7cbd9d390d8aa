package httpboot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"anvil.dev/anvil/pxe"
)

// ScriptRequest is one iPXE client asking for its boot script.
type ScriptRequest struct {
	// MAC from the URL (/boot/<mac>.ipxe), validated.
	MAC net.HardwareAddr
	// RemoteAddr is the TCP peer; a ScriptSource that hands out
	// credentials can check it against the address DHCP leased to MAC.
	RemoteAddr netip.AddrPort
}

// ScriptSource renders the iPXE script for GET /boot/<mac>.ipxe. It is
// called once per request (never for HEAD) and may mint one-time
// credentials; the response is sent with Cache-Control: no-store.
// Errors become HTTP 500 and are logged, so they must not contain secrets.
type ScriptSource interface {
	Script(ctx context.Context, req ScriptRequest) ([]byte, error)
}

// ErrRateLimited is returned (wrapped or not) by a ScriptSource that refuses
// a request because its source address asked too often; the server answers
// 429 with Retry-After.
var ErrRateLimited = errors.New("too many boot script requests from this address")

// ScriptSourceFunc adapts a function to ScriptSource.
type ScriptSourceFunc func(ctx context.Context, req ScriptRequest) ([]byte, error)

// Script implements ScriptSource.
func (f ScriptSourceFunc) Script(ctx context.Context, req ScriptRequest) ([]byte, error) {
	return f(ctx, req)
}

// BootSpec is what a host boots: a kernel, its initrds and the kernel
// command line. URLs are absolute http(s) URLs or server-relative paths
// such as /artifacts/vmlinuz, which iPXE resolves against the script's URL.
type BootSpec struct {
	KernelURL  string
	InitrdURLs []string
	Args       []string
}

// BootSpecSource returns the BootSpec for a host that is meant to PXE boot
// (e.g. from its Machine's MachineClass).
type BootSpecSource interface {
	BootSpec(ctx context.Context, host pxe.HostRecord) (BootSpec, error)
}

// BootSpecFunc adapts a function to BootSpecSource.
type BootSpecFunc func(ctx context.Context, host pxe.HostRecord) (BootSpec, error)

// BootSpec implements BootSpecSource.
func (f BootSpecFunc) BootSpec(ctx context.Context, host pxe.HostRecord) (BootSpec, error) {
	return f(ctx, host)
}

// ScriptOptions configures the default ScriptSource.
type ScriptOptions struct {
	Backend   pxe.Backend    // required
	BootSpecs BootSpecSource // required
	// RetryDelay is how long an unregistered host waits before asking
	// again. Default 10s.
	RetryDelay time.Duration
}

// Scripts is the default ScriptSource: boot the BootSpec while the host is
// meant to PXE boot, exit to the local disk otherwise, and make unknown or
// unaccepted hosts wait and retry.
type Scripts struct {
	opts ScriptOptions
}

// NewScripts returns the default ScriptSource.
func NewScripts(opts ScriptOptions) (*Scripts, error) {
	if opts.Backend == nil || opts.BootSpecs == nil {
		return nil, errors.New("httpboot: ScriptOptions needs Backend and BootSpecs")
	}
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = 10 * time.Second
	}
	return &Scripts{opts: opts}, nil
}

// Script implements ScriptSource.
func (s *Scripts) Script(ctx context.Context, req ScriptRequest) ([]byte, error) {
	rec, err := s.opts.Backend.Lookup(ctx, req.MAC)
	switch {
	case errors.Is(err, pxe.ErrNotFound), err == nil && !rec.Accepted:
		return UnknownHostScript(req.MAC, s.opts.RetryDelay), nil
	case err != nil:
		return nil, fmt.Errorf("lookup %s: %w", req.MAC, err)
	case !rec.PXE:
		return ExitScript(), nil
	}
	spec, err := s.opts.BootSpecs.BootSpec(ctx, rec)
	if err != nil {
		return nil, fmt.Errorf("boot spec for %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	return BootScript(WithCAInitrd(ctx, spec))
}

// ExitScript makes iPXE return to the firmware, which then boots the next
// device (the local disk). It exits with a failure status: a UEFI boot
// manager that sees a boot option return EFI_SUCCESS stops and shows its
// menu (UEFI 2.x, 3.1.1; EDK2's BdsDxe does), while a failure moves it to
// the next option. BIOS firmware goes on to the next device either way.
func ExitScript() []byte {
	return []byte("#!ipxe\necho Anvil: not network booting this host now, booting from local disk\nexit 1\n")
}

// UnknownHostScript tells the console that the MAC is not registered (or
// not accepted) and asks again after delay. The chain replaces the running
// script, so retries do not stack up; the relative URL resolves against
// the script's own URL.
func UnknownHostScript(mac net.HardwareAddr, delay time.Duration) []byte {
	return retryScript(mac, delay, "is not registered or not accepted")
}

// BootChangedScript asks the host to fetch its script again after delay:
// its Host's boot changed while the script was being decided (the boot
// server's informer was behind the API server). The next answer is for
// the boot the Host is in then, or ExitScript if it is in none.
func BootChangedScript(mac net.HardwareAddr, delay time.Duration) []byte {
	return retryScript(mac, delay, "changed its network boot while answering")
}

// retryScript: what is a fixed text (no iPXE syntax in it).
func retryScript(mac net.HardwareAddr, delay time.Duration, what string) []byte {
	m := pxe.MACKey(mac) // hex and colons only: safe in a script
	secs := max(1, int(delay.Round(time.Second)/time.Second))
	return fmt.Appendf(nil, "#!ipxe\necho Anvil: MAC %s %s, retrying in %d seconds\nsleep %d\nchain --replace --autofree /boot/%s.ipxe\n",
		m, what, secs, secs, m)
}

// BootScript renders a BootSpec as an iPXE script. iPXE has no quoting:
// its parser splits on whitespace, treats a token starting with '#' as a
// comment, "||", "&&" and ";" as command separators and expands "${...}"
// settings. Every URL and argument is therefore checked instead of escaped,
// and anything that the parser would not pass through verbatim is an error.
// Initrds are named and referenced with initrd=<name>, which the Linux EFI
// stub needs under UEFI and BIOS kernels ignore.
func BootScript(spec BootSpec) ([]byte, error) {
	if err := checkURL(spec.KernelURL); err != nil {
		return nil, fmt.Errorf("kernel URL: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("#!ipxe\n")
	b.WriteString("kernel " + spec.KernelURL)
	for i := range spec.InitrdURLs {
		fmt.Fprintf(&b, " initrd=initrd%d", i)
	}
	for i, a := range spec.Args {
		if err := checkToken(a); err != nil {
			return nil, fmt.Errorf("kernel argument %d: %w", i, err)
		}
		b.WriteString(" " + a)
	}
	b.WriteString("\n")
	for i, u := range spec.InitrdURLs {
		if err := checkURL(u); err != nil {
			return nil, fmt.Errorf("initrd URL %d: %w", i, err)
		}
		fmt.Fprintf(&b, "initrd --name initrd%d %s\n", i, u)
	}
	b.WriteString("boot\n")
	return b.Bytes(), nil
}

// ErrUnsafeToken is wrapped by BootScript for values iPXE cannot carry.
var ErrUnsafeToken = errors.New("not representable in an iPXE script")

func checkToken(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrUnsafeToken)
	case s[0] == '#':
		return fmt.Errorf("%w: starts a comment", ErrUnsafeToken)
	case s == "||" || s == "&&" || s == ";":
		return fmt.Errorf("%w: command separator", ErrUnsafeToken)
	case strings.Contains(s, "${"):
		return fmt.Errorf("%w: contains a ${...} expansion", ErrUnsafeToken)
	case len(s) > 4096:
		return fmt.Errorf("%w: too long", ErrUnsafeToken)
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f {
			// Non-ASCII too: kernel command lines are ASCII, and Unicode
			// spaces (U+00A0, ...) would split the token for some readers.
			return fmt.Errorf("%w: whitespace, control or non-ASCII character", ErrUnsafeToken)
		}
	}
	return nil
}

func checkURL(s string) error {
	if err := checkToken(s); err != nil {
		return err
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsafeToken, err)
	}
	if u.Scheme == "" && u.Host == "" && strings.HasPrefix(u.Path, "/") {
		return nil // server-relative: iPXE resolves it against the script's URL
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: want an http(s) URL or an absolute path", ErrUnsafeToken)
	}
	return nil
}
