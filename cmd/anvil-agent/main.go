// Command anvil-agent runs on each provisioned host: it reports boot and
// hardware facts to Anvil, and carries out what Anvil asks (upgrade the
// kubelet in place, wipe the disks). It only makes outbound requests.
// `anvil-agent install` runs in the installer initramfs of a provisioning
// boot instead: it writes the OS image to the root disk and reboots.
// Build it static: CGO_ENABLED=0 go build ./cmd/anvil-agent.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/client"
	"anvil.dev/anvil/agent/onhost/daemon"
	"anvil.dev/anvil/agent/onhost/facts"
	"anvil.dev/anvil/agent/onhost/kubelet"
	"anvil.dev/anvil/agent/onhost/nodecheck"
	"anvil.dev/anvil/agent/onhost/upgrade"
	"anvil.dev/anvil/agent/onhost/wipe"
)

// version is set with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "anvil-agent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "install" {
		return runInstall(ctx, args[1:], stdout, stderr)
	}
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.version {
		fmt.Fprintln(stdout, version)
		return nil
	}
	if o.printFacts {
		root := o.root
		if root == "" {
			root = "/"
		}
		r, err := facts.Collect(facts.Options{Root: root, AgentVersion: version})
		if err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	cfg, err := loadConfig(o)
	if err != nil {
		return err
	}
	log := newLogger(stderr, o.logFormat, cfg.LogLevel)
	ctx = logr.NewContext(ctx, log)

	stateDir := filepath.Join(cfg.Root, upgrade.DefaultStateDir)
	unlock, err := lock(stateDir)
	if err != nil {
		return err
	}
	defer unlock()

	httpClient, err := newHTTPClient(cfg.CAFile)
	if err != nil {
		return err
	}
	api, err := client.New(client.Options{
		Endpoint: cfg.Endpoint, Credential: cfg.Credential, HTTPClient: httpClient,
		UserAgent: "anvil-agent/" + version, Logger: log.WithName("client"),
	})
	if err != nil {
		return err
	}

	svc, err := kubeletService(ctx, cfg, log)
	if err != nil {
		return err
	}
	health := kubelet.Health{Healthz: kubelet.Healthz{URL: cfg.Kubelet.HealthzURL}}
	if kc := kubeconfigPath(cfg); kc != "" {
		nodeName := cfg.NodeName
		if nodeName == "" {
			if nodeName, err = os.Hostname(); err != nil {
				return err
			}
		}
		nc, err := nodecheck.New(nodecheck.Options{Kubeconfig: kc, NodeName: nodeName})
		if err != nil {
			return err
		}
		health.Node = nc
	} else {
		log.Info("no kubelet kubeconfig; upgrades are verified through healthz only (the Machine controller checks the Node)")
	}
	up, err := upgrade.New(upgrade.Options{
		Root: cfg.Root, Kubelet: svc, Health: health,
		HealthTimeout: cfg.Kubelet.HealthCheckTimeout.Duration,
		OnPhase:       daemon.ReportProgress(api, log),
		Logger:        log,
	})
	if err != nil {
		return err
	}
	if cfg.Kubelet.BinPath != "" {
		if v, err := up.Adopt(ctx, cfg.Kubelet.BinPath); err != nil {
			log.Error(err, "adopting the installed kubelet")
		} else if v != "" {
			log.Info("kubelet adopted", "version", v)
		}
	}
	var wipeFn func(context.Context) (string, error)
	if !cfg.Wipe.Disabled {
		wopts := wipe.Options{SysRoot: cfg.Root, DevRoot: cfg.Root, Devices: cfg.Wipe.Devices, AllowRootDisk: cfg.Wipe.AllowRootDisk, Logger: log.WithName("wipe")}
		wipeFn = func(ctx context.Context) (string, error) { return wipeSummary(wipe.Wipe(ctx, wopts)) }
	}
	d, err := daemon.New(daemon.Options{
		API: api, Upgrader: up, Wipe: wipeFn, StateDir: stateDir,
		Facts: func(context.Context) (agent.Report, error) {
			return facts.Collect(facts.Options{Root: cfg.Root, AgentVersion: version})
		},
		ReportInterval: cfg.ReportInterval.Duration, PollInterval: cfg.PollInterval.Duration,
		Logger: log,
	})
	if err != nil {
		return err
	}
	log.Info("anvil-agent starting", "version", version, "endpoint", cfg.Endpoint, "root", cfg.Root)
	if o.once {
		return d.Once(ctx)
	}
	if err := d.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// kubeletService picks systemd or the agent's own supervisor.
func kubeletService(ctx context.Context, cfg *Config, log logr.Logger) (upgrade.KubeletService, error) {
	manager := cfg.Kubelet.Manager
	if manager == "" || manager == "auto" {
		manager = "supervisor"
		if kubelet.SystemdRunning(cfg.Root) {
			manager = "systemd"
		}
	}
	if manager == "systemd" {
		return kubelet.Systemd{Unit: cfg.Kubelet.Unit}, nil
	}
	logFile := cfg.Kubelet.LogFile
	if logFile == "" {
		logFile = filepath.Join(cfg.Root, "var/log/anvil-agent/kubelet.log")
	}
	sup, err := kubelet.NewSupervisor(kubelet.SupervisorOptions{
		Binary:  filepath.Join(cfg.Root, upgrade.DefaultKubeletDir, "current", "kubelet"),
		Args:    cfg.Kubelet.Args,
		PIDFile: filepath.Join(cfg.Root, "run/anvil-agent/kubelet.pid"),
		LogFile: logFile,
		Logger:  log.WithName("supervisor"),
	})
	if err != nil {
		return nil, err
	}
	if err := sup.Start(ctx); err != nil {
		// No kubelet installed yet: an upgrade plan installs and starts one.
		log.Error(err, "starting the kubelet")
	}
	return sup, nil
}

func kubeconfigPath(cfg *Config) string {
	if cfg.Kubeconfig != "" {
		return filepath.Join(cfg.Root, cfg.Kubeconfig)
	}
	p := filepath.Join(cfg.Root, "etc/kubernetes/kubelet.conf")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

func newHTTPClient(caFile string) (*http.Client, error) {
	tr := &http.Transport{Proxy: nil, ResponseHeaderTimeout: 20 * time.Second, IdleConnTimeout: time.Minute}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("reading caFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("caFile %s has no PEM certificates", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}, nil
}

func wipeSummary(results []wipe.Result, err error) (string, error) {
	var parts []string
	for _, r := range results {
		if r.Err == nil {
			parts = append(parts, fmt.Sprintf("%s (%d partitions)", r.Disk, r.Partitions))
		}
	}
	if err != nil {
		if len(parts) > 0 {
			return "", fmt.Errorf("%w; wiped %s", err, strings.Join(parts, ", "))
		}
		return "", err
	}
	if len(parts) == 0 {
		return "no disks to wipe", nil
	}
	return "wiped " + strings.Join(parts, ", "), nil
}

// lock keeps a second agent on the same host from running.
func lock(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another anvil-agent holds %s", f.Name())
	}
	return func() { f.Close() }, nil
}

func newLogger(w io.Writer, format string, level int) logr.Logger {
	opts := &slog.HandlerOptions{Level: slog.Level(-level)}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if format == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	return logr.FromSlogHandler(h)
}
