package storm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Failure stages, as the report groups them.
const (
	StageDHCP   = "dhcp"
	StageTFTP   = "tftp"
	StageHTTP   = "http"
	StageConfig = "config"
)

// HostResult is one simulated host's boot, as the generator reports it.
type HostResult struct {
	Name string `json:"name"`
	MAC  string `json:"mac"`
	IP   string `json:"ip,omitempty"`
	OK   bool   `json:"ok"`
	// Stage and Reason say where and why a host failed.
	Stage  string `json:"stage,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Start is when the host powered on, from the storm's start; TTLB its
	// time from power-on to the last byte of its config (or to failing).
	Start float64 `json:"start"`
	TTLB  float64 `json:"ttlb"`
	// Steps are the durations of the steps done, in order.
	Steps []Step    `json:"steps"`
	DHCP  dhcpStats `json:"dhcp"`
	TFTP  tftpStats `json:"tftp"`
	// ConfigRetries: config fetches repeated after 5xx or errors.
	ConfigRetries int `json:"configRetries"`
	// ScriptRetries: script fetches repeated because Anvil said "not
	// registered yet, retry".
	ScriptRetries int `json:"scriptRetries"`
}

// Step is one step of a boot and how long it took, in seconds.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Step names, in boot order.
const (
	stepFirmwareDHCP = "dhcp-firmware"
	stepTFTP         = "tftp"
	stepIPXEDHCP     = "dhcp-ipxe"
	stepScript       = "script"
	stepKernel       = "kernel"
	stepInitrd       = "initrd"
	stepOSBoot       = "os-boot"
	stepOSDHCP       = "dhcp-os"
	stepConfig       = "config"
)

// StepNames lists the steps in boot order.
var StepNames = []string{stepFirmwareDHCP, stepTFTP, stepIPXEDHCP, stepScript, stepKernel, stepInitrd, stepOSBoot, stepOSDHCP, stepConfig}

// bootOptions are what every simulated host needs to know.
type bootOptions struct {
	Arch     uint16
	Server   netip.Addr
	BootFile int64 // expected sizes, checked
	Kernel   int64
	Initrds  []int64
	OSBoot   time.Duration
	// HTTPTimeout bounds one artifact request (iPXE has no overall limit,
	// only its TCP and idle timeouts).
	HTTPTimeout time.Duration
	// MaxScriptRetries bounds following "sleep; chain" scripts.
	MaxScriptRetries int
}

// boot runs one host's whole network boot: firmware DHCP, TFTP of the iPXE
// binary, iPXE's DHCP, the script, kernel and initrds over HTTP, the kernel
// booting, the OS's DHCP, and Ignition fetching the config.
func boot(ctx context.Context, d *dhcpConn, o bootOptions, name string, mac net.HardwareAddr, origin time.Time) (r HostResult) {
	r = HostResult{Name: name, MAC: mac.String()}
	t0 := time.Now()
	r.Start = t0.Sub(origin).Seconds()
	last := t0
	step := func(n string) {
		now := time.Now()
		r.Steps = append(r.Steps, Step{n, now.Sub(last).Seconds()})
		last = now
	}
	defer func() { r.TTLB = time.Since(t0).Seconds() }()
	fail := func(stage string, err error) HostResult {
		r.Stage, r.Reason = stage, reason(err)
		return r
	}

	// 1. The firmware's PXE client.
	l, err := d.dora(ctx, mac, firmwareClient(o.Arch), &r.DHCP)
	if err != nil {
		return fail(StageDHCP, err)
	}
	r.IP = l.IP.String()
	step(stepFirmwareDHCP)

	// 2. TFTP of the boot file, from next-server.
	next := l.NextServer
	if !next.IsValid() || next.IsUnspecified() {
		next = o.Server
	}
	n, err := edk2TFTP().fetch(l.IP, next, l.BootFile, &r.TFTP)
	if err != nil {
		return fail(StageTFTP, err)
	}
	if o.BootFile > 0 && n != o.BootFile {
		return fail(StageTFTP, fmt.Errorf("got %d bytes of %s, want %d", n, l.BootFile, o.BootFile))
	}
	step(stepTFTP)

	// 3. iPXE asks again, as iPXE.
	l, err = d.dora(ctx, mac, ipxeClient(o.Arch), &r.DHCP)
	if err != nil {
		return fail(StageDHCP, err)
	}
	r.IP = l.IP.String()
	step(stepIPXEDHCP)

	// 4. The script, from the address iPXE was given.
	hc := newHTTPClient(l.IP, o.HTTPTimeout)
	defer hc.CloseIdleConnections()
	scriptURL := l.BootFile
	var s ipxeScript
	for {
		base, err := url.Parse(scriptURL)
		if err != nil || base.Scheme != "http" {
			return fail(StageHTTP, fmt.Errorf("iPXE boot file is not an http URL: %q", scriptURL))
		}
		body, _, err := get(ctx, hc, "script", scriptURL, true)
		if err != nil {
			return fail(StageHTTP, err)
		}
		if s, err = parseScript(body, base); err != nil {
			return fail(StageHTTP, fmt.Errorf("script: %w", err))
		}
		if s.Chain == "" {
			break
		}
		if r.ScriptRetries >= o.MaxScriptRetries {
			return fail(StageHTTP, fmt.Errorf("script: still %q after %d retries", strings.Join(s.Echo, "; "), r.ScriptRetries))
		}
		r.ScriptRetries++
		if err := sleep(ctx, s.Sleep); err != nil {
			return fail(StageHTTP, err)
		}
		scriptURL = s.Chain
	}
	switch {
	case s.Exit:
		return fail(StageHTTP, errors.New("script says exit: Anvil does not network-boot this host now"))
	case s.Kernel == "":
		return fail(StageHTTP, errors.New("script has no kernel"))
	}
	cfg := s.configURL()
	if cfg == "" {
		why := "no ignition.config.url"
		for _, e := range s.Echo {
			if strings.Contains(e, "no boot credential") {
				why = e
			}
		}
		return fail(StageHTTP, fmt.Errorf("script without credential: %s", why))
	}
	step(stepScript)

	// 5. Kernel and initrds.
	if _, n, err := get(ctx, hc, "kernel", s.Kernel, false); err != nil {
		return fail(StageHTTP, err)
	} else if o.Kernel > 0 && n != o.Kernel {
		return fail(StageHTTP, fmt.Errorf("kernel: %d bytes, want %d", n, o.Kernel))
	}
	step(stepKernel)
	for i, u := range s.Initrds {
		_, n, err := get(ctx, hc, "initrd", u, false)
		if err != nil {
			return fail(StageHTTP, err)
		}
		if i < len(o.Initrds) && n != o.Initrds[i] {
			return fail(StageHTTP, fmt.Errorf("initrd %d: %d bytes, want %d", i, n, o.Initrds[i]))
		}
	}
	step(stepInitrd)
	hc.CloseIdleConnections() // the kernel takes over the NIC

	// 6. The kernel boots (simulated), the initramfs asks DHCP again.
	if err := sleep(ctx, o.OSBoot); err != nil {
		return fail(StageConfig, err)
	}
	step(stepOSBoot)
	l, err = d.dora(ctx, mac, osClient(), &r.DHCP)
	if err != nil {
		return fail(StageDHCP, err)
	}
	r.IP = l.IP.String()
	step(stepOSDHCP)

	// 7. Ignition fetches the config with the credential from the script.
	ic := newHTTPClient(l.IP, o.HTTPTimeout)
	defer ic.CloseIdleConnections()
	if _, err := fetchConfig(ctx, ic, cfg, &r.ConfigRetries); err != nil {
		return fail(StageConfig, err)
	}
	step(stepConfig)
	r.OK = true
	return r
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("host timed out: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

// reason is an error's text with context cancellation named plainly.
func reason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		var dh *errDHCP
		var th *errTFTP
		var hh *errHTTP
		if !errors.As(err, &dh) && !errors.As(err, &th) && !errors.As(err, &hh) {
			return "host timed out (the storm's per-host limit)"
		}
	}
	return err.Error()
}
