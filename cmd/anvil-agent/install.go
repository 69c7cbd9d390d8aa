package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/install"
)

// installOptions are the command line of `anvil-agent install`.
type installOptions struct {
	planURL   string
	noReboot  bool
	caFile    string
	root      string
	devDir    string
	logLevel  int
	logFormat string
}

func parseInstallFlags(args []string, stderr io.Writer) (*installOptions, error) {
	o := &installOptions{}
	fs := flag.NewFlagSet("anvil-agent install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.planURL, "plan-url", "", "the install plan URL (default: "+agent.InstallArg+"= from /proc/cmdline)")
	fs.BoolVar(&o.noReboot, "no-reboot", false, "do not reboot after a successful install")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM CA bundle to verify an https plan URL (default: system roots)")
	fs.StringVar(&o.root, "root", "/", "prefix for /proc and /sys")
	fs.StringVar(&o.devDir, "dev-dir", "/dev", "directory of the disk device nodes")
	fs.IntVar(&o.logLevel, "v", 0, "log verbosity")
	fs.StringVar(&o.logFormat, "log-format", "text", "json or text")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("install: unexpected arguments: %v", fs.Args())
	}
	return o, nil
}

// cmdlineArg returns the value of name= on a kernel command line.
func cmdlineArg(cmdline, name string) (string, bool) {
	for _, f := range strings.Fields(cmdline) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return strings.Trim(v, `"`), true
		}
	}
	return "", false
}

// reboot restarts the machine after flushing the disks (a variable for
// tests).
var reboot = func() error {
	unix.Sync()
	return unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
}

// runInstall is `anvil-agent install`: the whole-disk install of a
// provisioning boot (package install), then a reboot into the disk.
func runInstall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseInstallFlags(args, stderr)
	if err != nil {
		return err
	}
	planURL := o.planURL
	if planURL == "" {
		b, err := os.ReadFile(filepath.Join(o.root, "proc/cmdline"))
		if err != nil {
			return fmt.Errorf("install: no --plan-url, and reading the kernel command line: %w", err)
		}
		v, ok := cmdlineArg(string(b), agent.InstallArg)
		if !ok || v == "" {
			return fmt.Errorf("install: no --plan-url and no %s= on the kernel command line", agent.InstallArg)
		}
		planURL = v
	}
	// The URL carries the boot credential: only its host ever shows.
	if u, err := url.Parse(planURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("install: the plan URL (--plan-url or %s=) is not an absolute http(s) URL", agent.InstallArg)
	}
	log := newLogger(stderr, o.logFormat, o.logLevel).WithName("install")
	ctx = logr.NewContext(ctx, log)
	hc, err := newHTTPClient(o.caFile)
	if err != nil {
		return err
	}
	res, err := install.Run(ctx, install.Options{
		PlanURL: planURL, HTTPClient: hc, Root: o.root, DevDir: o.devDir,
		AgentVersion: version, Logger: log,
	})
	if res.Outcome != agent.InstallSucceeded {
		if err == nil {
			err = errors.New("install failed")
		}
		return fmt.Errorf("install failed: %w", err)
	}
	fmt.Fprintf(stdout, "anvil-agent: installed %d bytes (sha256 %s) on %s\n", res.BytesWritten, res.SHA256, res.Device)
	if o.noReboot {
		return err // a result Anvil did not get is still a failure to say
	}
	if err != nil {
		// The disk is good: rebooting into it beats sitting here. Anvil,
		// without the result, boots the installer again, which reinstalls.
		log.Error(err, "the install succeeded but Anvil did not get the result; rebooting anyway")
	}
	fmt.Fprintln(stdout, "anvil-agent: rebooting into the installed system")
	if rerr := reboot(); rerr != nil {
		return fmt.Errorf("install: rebooting: %w", rerr)
	}
	return nil
}
