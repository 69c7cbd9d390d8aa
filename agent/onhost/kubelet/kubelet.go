// Package kubelet restarts and health-checks the kubelet for the agent:
// through systemd when the host runs it, or through the agent's own
// Supervisor otherwise.
package kubelet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Systemd restarts the kubelet unit with systemctl.
type Systemd struct {
	// Unit, default "kubelet".
	Unit string
	// Systemctl, default "systemctl" from PATH.
	Systemctl string
	// Timeout bounds one systemctl call (default 2m; a kubelet may take a
	// while to stop).
	Timeout time.Duration
}

// Restart runs `systemctl restart <unit>`.
func (s Systemd) Restart(ctx context.Context) error {
	unit, bin, timeout := s.Unit, s.Systemctl, s.Timeout
	if unit == "" {
		unit = "kubelet"
	}
	if bin == "" {
		bin = "systemctl"
	}
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "restart", unit).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 512 {
			msg = msg[:512] + "..."
		}
		return fmt.Errorf("systemctl restart %s: %v: %s", unit, err, msg)
	}
	return nil
}

// SystemdRunning reports whether systemd is the init system (the test
// sd_booted(3) uses) below root.
func SystemdRunning(root string) bool {
	fi, err := os.Stat(filepath.Join(root, "run/systemd/system"))
	return err == nil && fi.IsDir()
}

// Healthz checks the kubelet's healthz endpoint.
type Healthz struct {
	// URL, default http://127.0.0.1:10248/healthz (the kubelet's default).
	URL string
	// Client, default one with a 5s timeout and no proxy.
	Client *http.Client
}

// DefaultHealthzURL is where a kubelet serves healthz by default.
const DefaultHealthzURL = "http://127.0.0.1:10248/healthz"

var defaultClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// Check succeeds when healthz answers 200 "ok".
func (h Healthz) Check(ctx context.Context) error {
	u, c := h.URL, h.Client
	if u == "" {
		u = DefaultHealthzURL
	}
	if c == nil {
		c = defaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("kubelet healthz: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	body := strings.TrimSpace(string(b))
	if resp.StatusCode != http.StatusOK || body != "ok" {
		if len(body) > 200 {
			body = body[:200] + "..."
		}
		return fmt.Errorf("kubelet healthz answered %d %q", resp.StatusCode, body)
	}
	return nil
}

// NodeChecker verifies the kubelet's Node: it reports version and is Ready.
type NodeChecker interface {
	Check(ctx context.Context, version string) error
}

// Health is the agent's verdict on a (re)started kubelet: healthz ok,
// then, if Node is set, the Node reports the version and Ready.
type Health struct {
	Healthz Healthz
	Node    NodeChecker
}

// Check runs one round of checks.
func (h Health) Check(ctx context.Context, version string) error {
	if err := h.Healthz.Check(ctx); err != nil {
		return err
	}
	if h.Node == nil {
		return nil
	}
	return h.Node.Check(ctx, version)
}
