package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"anvil.dev/anvil/bench/internal/dhcpbench"
	"anvil.dev/anvil/bench/internal/harness"
	"anvil.dev/anvil/bench/internal/httpbench"
	"anvil.dev/anvil/bench/internal/machine"
	"anvil.dev/anvil/bench/internal/netns"
	"anvil.dev/anvil/bench/internal/renderbench"
	"anvil.dev/anvil/bench/internal/report"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/tftpbench"
	"anvil.dev/anvil/test/need"
)

func runCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	smoke := fs.Bool("smoke", false, "a few seconds per benchmark, one run (for CI)")
	only := fs.String("only", "dhcp,tftp,http,render", "comma-separated benchmarks to run")
	runs := fs.Int("runs", 3, "runs per figure (the report shows the median); --smoke forces 1")
	out := fs.String("out", "bench/results.json", "results file")
	keep := fs.Bool("keep", false, "keep the scratch directory (configs, logs)")
	scratch := fs.String("scratch", "", "parent of the scratch directory (lease files live there); default $TMPDIR")
	if err := fs.Parse(args); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		want[strings.TrimSpace(s)] = true
	}
	if *smoke {
		*runs = 1
	}
	network := want["dhcp"] || want["tftp"] || want["http"]
	if network && os.Geteuid() != 0 {
		return errors.New("the network benchmarks need root (network namespaces); run as root or use --only render")
	}
	if network {
		var missing []string
		for _, t := range needTools(want) {
			if _, err := exec.LookPath(t); err != nil {
				if _, serr := os.Stat(t); serr != nil {
					missing = append(missing, t)
				}
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("missing programs %s: run `sudo bash bench/install-peers.sh`", strings.Join(missing, ", "))
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(*scratch, "anvil-bench-")
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil { // atftpd and nginx workers drop privileges
		return err
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	env := &harness.Env{Self: self, Dir: dir, SrvCPU: "0", LoadCPU: "1", Smoke: *smoke, Runs: *runs, Out: os.Stderr}
	if n := numCPU(); n < 2 {
		env.SrvCPU, env.LoadCPU = "", ""
	}

	res := &results.Run{Smoke: *smoke, Started: time.Now().UTC(), Command: "anvil-bench run " + strings.Join(args, " ")}
	res.LoadStart = machine.LoadAvg()
	res.BusyProcs = machine.BusyProcesses(2 * time.Second)
	res.Machine = machine.Describe()
	env.Logf("scratch dir %s; load average %.2f %.2f %.2f", dir, res.LoadStart[0], res.LoadStart[1], res.LoadStart[2])
	stopLoad := sampleLoad(&res.LoadMax)

	if network {
		pair, err := netns.NewPair(netns.DefaultPrefix)
		if err != nil {
			return err
		}
		defer pair.Close()
		env.Pair = pair
	}
	if want["dhcp"] && ctx.Err() == nil {
		o := dhcpbench.DefaultOptions()
		if *smoke {
			o = dhcpbench.SmokeOptions()
		}
		res.DHCP = dhcpbench.Run(ctx, env, o)
	}
	if want["tftp"] && ctx.Err() == nil {
		o := tftpbench.DefaultOptions()
		if *smoke {
			o = tftpbench.SmokeOptions()
		}
		res.TFTP = tftpbench.Run(ctx, env, o)
	}
	if want["http"] && ctx.Err() == nil {
		o := httpbench.DefaultOptions()
		if *smoke {
			o = httpbench.SmokeOptions()
		}
		res.HTTP = httpbench.Run(ctx, env, o)
	}
	if want["render"] && ctx.Err() == nil {
		o := renderbench.DefaultOptions()
		if *smoke {
			o = renderbench.SmokeOptions()
		}
		o.Runs = *runs
		o.ScratchDir = dir
		if root, err := need.RepoRoot(); err == nil {
			o.RepoRoot = root
		}
		env.Logf("render: %d hosts", o.Hosts)
		res.Render = renderbench.Run(ctx, o, env.Logf)
	}
	stopLoad()
	res.LoadEnd = machine.LoadAvg()
	res.Finished = time.Now().UTC()
	if err := results.Write(*out, res); err != nil {
		return err
	}
	env.Logf("wrote %s", *out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return checkSmoke(res)
}

func needTools(want map[string]bool) []string {
	var t []string
	if want["dhcp"] {
		t = append(t, "perfdhcp", "kea-dhcp4", "dnsmasq")
	}
	if want["tftp"] {
		t = append(t, "atftp", "atftpd", "dnsmasq", machine.TftpdHPA())
	}
	if want["http"] {
		t = append(t, "nginx")
	}
	return append(t, "ip", "taskset")
}

func numCPU() int {
	b, err := exec.Command("nproc").Output()
	if err != nil {
		return 1
	}
	var n int
	fmt.Sscan(string(b), &n)
	return n
}

// checkSmoke fails the run when a benchmark produced nothing: a subject that
// did not start or answered nothing. It never judges how fast anything was.
func checkSmoke(r *results.Run) error {
	var errs []error
	if r.DHCP != nil {
		for _, s := range r.DHCP.Subjects {
			if s.Error != "" {
				errs = append(errs, fmt.Errorf("dhcp %s: %s", s.Name, s.Error))
			} else if len(s.Runs) == 0 || s.Runs[0].Steps[0].Acks == 0 {
				errs = append(errs, fmt.Errorf("dhcp %s: no DHCPACK received", s.Name))
			}
		}
	}
	if r.TFTP != nil {
		for _, s := range r.TFTP.Subjects {
			if s.Error != "" {
				errs = append(errs, fmt.Errorf("tftp %s: %s", s.Name, s.Error))
			}
		}
	}
	if r.HTTP != nil {
		for _, s := range r.HTTP.Subjects {
			if s.Error != "" {
				errs = append(errs, fmt.Errorf("http %s: %s", s.Name, s.Error))
			}
		}
	}
	if r.Render != nil {
		for _, s := range r.Render.Subjects {
			if s.Error != "" {
				errs = append(errs, fmt.Errorf("render %s: %s", s.Name, s.Error))
			}
		}
	}
	return errors.Join(errs...)
}

func reportCmd(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "bench/results.json", "results file")
	out := fs.String("out", "bench/RESULTS.md", "report to write (- for stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r, err := results.Read(*in)
	if err != nil {
		return err
	}
	o := report.Options{Plots: map[string]bool{}, ResultsPath: *in}
	w := os.Stdout
	if *out != "-" {
		dir := filepath.Dir(*out)
		if rel, err := filepath.Rel(dir, *in); err == nil {
			o.ResultsPath = rel
		}
		for _, p := range []string{"dhcp-rate.png", "tftp.png", "http.png"} {
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
				o.Plots[p] = true
			}
		}
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return report.Write(w, r, o)
}

// sampleLoad records the highest 1-minute load average every 5 s until the
// returned function is called: the machine may be shared, and the start and
// end values alone can miss a busy middle.
func sampleLoad(max *float64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			if l := machine.LoadAvg()[0]; l > *max {
				*max = l
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
