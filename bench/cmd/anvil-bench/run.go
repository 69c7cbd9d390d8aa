package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"anvil.dev/anvil/bench/internal/consolebench"
	"anvil.dev/anvil/bench/internal/dhcpbench"
	"anvil.dev/anvil/bench/internal/harness"
	"anvil.dev/anvil/bench/internal/httpbench"
	"anvil.dev/anvil/bench/internal/machine"
	"anvil.dev/anvil/bench/internal/netns"
	"anvil.dev/anvil/bench/internal/renderbench"
	"anvil.dev/anvil/bench/internal/report"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/scale"
	"anvil.dev/anvil/bench/internal/storm"
	"anvil.dev/anvil/bench/internal/tftpbench"
	"anvil.dev/anvil/test/need"
)

func runCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	smoke := fs.Bool("smoke", false, "a few seconds per benchmark, one run (for CI)")
	only := fs.String("only", "dhcp,tftp,http,render,storm,scale,rollout,console", "comma-separated benchmarks to run")
	runs := fs.Int("runs", 3, "runs per figure (the report shows the median); 1 with --smoke unless given")
	out := fs.String("out", "bench/results.json", "results file")
	keep := fs.Bool("keep", false, "keep the scratch directory (configs, logs)")
	scratch := fs.String("scratch", "", "parent of the scratch directory (lease files live there); default $TMPDIR")
	merge := fs.String("merge", "", "results file to update: keep its other parts, replace only the ones run (instead of --out)")
	anvilBin := fs.String("anvil", "", "anvil binary for the DHCP product path, the boot storm, scale and console (default: go build ./cmd/anvil into the scratch dir)")
	stormSizes := fs.String("storm-sizes", "", "boot storm rack sizes, e.g. 100,500,1000 (default: those; --smoke: 5)")
	stormArgs := fs.String("storm-serve-args", "", "extra flags for both anvil processes of the boot storm, space-separated (e.g. --kube-api-qps=200)")
	stormStatic := fs.Bool("storm-static-addresses", false, "boot storm experiment: give every Host a static address, so DHCP writes no leases")
	stormSpread := fs.Duration("storm-spread", 0, "boot storm: power the hosts on evenly over this long instead of all at once (POST times vary)")
	scaleSizes := fs.String("scale-sizes", "", "controller scale sizes (Hosts = Machines), e.g. 500,1000,2000,5000 (default: those; --smoke: 20)")
	scaleArgs := fs.String("scale-serve-args", "", "extra flags for the controllers' anvil serve in scale and rollout, space-separated (e.g. --kube-api-qps=200)")
	rolloutSize := fs.Int("rollout-machines", 0, "Machines of the rollout benchmark (default 500, maxUnavailable 10%; --smoke: 10)")
	scaleExtra := fs.String("scale-extra", "", "controller scale sizes run after --scale-sizes with --scale-extra-args, e.g. 5000 (default none)")
	scaleExtraArgs := fs.String("scale-extra-args", strings.Join(scale.FastArgs, " "), "controllers' flags for --scale-extra sizes")
	scaleAuditBodies := fs.Bool("scale-audit-bodies", false, "keep each request's body in the API server's audit log (what every write changed; use with --keep)")
	scaleSettle := fs.Duration("scale-settle", 0, "pause after the last Machine is Ready before the scale idle window (default 30s; e.g. 11m lets every agent's first periodic report, 10 minutes after its boot, pass first)")
	scaleProfile := fs.Bool("scale-profile", false, "save CPU profiles of both anvil processes over each size's idle window into the scratch dir's scale/ (profile-idle-<hosts>-<process>.pprof; use with --keep)")
	kubectlBin := fs.String("kubectl", "", "kubectl binary for the console benchmark's peer (default: bench/kubectl built into bin/kubectl, kept while current)")
	consoleHosts := fs.Int("console-hosts", 0, "Hosts of the console benchmark (default 5000; --smoke: 200)")
	scalePrepend := fs.String("scale-prepend", "", "results file whose controller scale sizes come first in this run's (a series measured in several invocations)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		want[strings.TrimSpace(s)] = true
	}
	if *smoke && !flagSet(fs, "runs") {
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
		o.Anvil = *anvilBin
		if root, err := need.RepoRoot(); err == nil {
			o.RepoRoot = root
		}
		m := measuring(res.Command)
		res.DHCP = dhcpbench.Run(ctx, env, o)
		res.DHCP.Measured = finished(m)
	}
	if want["tftp"] && ctx.Err() == nil {
		o := tftpbench.DefaultOptions()
		if *smoke {
			o = tftpbench.SmokeOptions()
		}
		m := measuring(res.Command)
		res.TFTP = tftpbench.Run(ctx, env, o)
		res.TFTP.Measured = finished(m)
	}
	if want["http"] && ctx.Err() == nil {
		o := httpbench.DefaultOptions()
		if *smoke {
			o = httpbench.SmokeOptions()
		}
		m := measuring(res.Command)
		res.HTTP = httpbench.Run(ctx, env, o)
		res.HTTP.Measured = finished(m)
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
		m := measuring(res.Command)
		res.Render = renderbench.Run(ctx, o, env.Logf)
		res.Render.Measured = finished(m)
	}
	if want["storm"] && ctx.Err() == nil {
		o := storm.DefaultOptions()
		if *smoke {
			o = storm.SmokeOptions()
		}
		o.Runs, o.Anvil, o.Dir = *runs, *anvilBin, dir
		if *stormSizes != "" {
			o.Sizes = nil
			for _, f := range strings.Split(*stormSizes, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 1 {
					return fmt.Errorf("--storm-sizes: %q is not a positive number", f)
				}
				o.Sizes = append(o.Sizes, n)
			}
		}
		o.ServeArgs = strings.Fields(*stormArgs)
		o.StaticAddresses = *stormStatic
		o.Spread = *stormSpread
		o.LoadCommand = []string{self, "load", "storm"}
		if root, err := need.RepoRoot(); err == nil {
			o.RepoRoot = root
		}
		o.Logf = env.Logf
		load := machine.LoadAvg()
		res.Storm = storm.Run(ctx, o)
		res.Storm.LoadStart, res.Storm.LoadEnd = load, machine.LoadAvg()
		res.Storm.Command = res.Command
	}
	if want["scale"] && ctx.Err() == nil {
		o := scale.DefaultOptions()
		if *smoke {
			o = scale.SmokeOptions()
		}
		sizes := func(flag, v string) ([]int, error) {
			var out []int
			for _, f := range strings.Split(v, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 1 {
					return nil, fmt.Errorf("%s: %q is not a positive number", flag, f)
				}
				out = append(out, n)
			}
			return out, nil
		}
		if *scaleSizes != "" {
			var err error
			if o.Sizes, err = sizes("--scale-sizes", *scaleSizes); err != nil {
				return err
			}
			o.Extra = nil
		}
		if *scaleExtra != "" {
			ns, err := sizes("--scale-extra", *scaleExtra)
			if err != nil {
				return err
			}
			o.Extra = nil
			for _, n := range ns {
				o.Extra = append(o.Extra, scale.Variant{Hosts: n, ServeArgs: strings.Fields(*scaleExtraArgs)})
			}
		}
		o.ServeArgs, o.Anvil, o.Dir, o.Logf = strings.Fields(*scaleArgs), *anvilBin, filepath.Join(dir, "scale"), env.Logf
		if root, err := need.RepoRoot(); err == nil {
			o.RepoRoot = root
		}
		o.Profile, o.AuditBodies = *scaleProfile, *scaleAuditBodies
		if *scaleSettle > 0 {
			o.Settle = *scaleSettle
		}
		o.Runs = *runs
		if o.Profile && !*keep {
			env.Logf("--scale-profile without --keep: the profiles go with the scratch dir")
		}
		res.Scale = scale.Run(ctx, o)
		res.Scale.Command = res.Command
		if *scalePrepend != "" {
			prev, err := results.Read(*scalePrepend)
			if err != nil {
				return fmt.Errorf("--scale-prepend: %w", err)
			}
			if p := prev.Scale; p != nil {
				res.Scale.Sizes = append(append([]results.ScaleSize(nil), p.Sizes...), res.Scale.Sizes...)
				res.Scale.Started, res.Scale.Load[0] = p.Started, p.Load[0]
				res.Scale.Command = p.Command + "; then " + res.Command
			}
		}
	}
	if want["rollout"] && ctx.Err() == nil {
		o := scale.DefaultRolloutOptions()
		if *smoke {
			o = scale.SmokeRolloutOptions()
		}
		if *rolloutSize > 0 {
			o.Machines, o.MaxUnavailable = *rolloutSize, max(1, *rolloutSize/10)
		}
		o.ServeArgs, o.Anvil, o.Dir, o.Logf = strings.Fields(*scaleArgs), *anvilBin, filepath.Join(dir, "scale"), env.Logf
		if root, err := need.RepoRoot(); err == nil {
			o.RepoRoot = root
		}
		res.Rollout = scale.RunRollout(ctx, o)
		res.Rollout.Command = res.Command
	}
	if want["console"] && ctx.Err() == nil {
		o := consolebench.DefaultOptions()
		if *smoke {
			o = consolebench.SmokeOptions()
		}
		if flagSet(fs, "runs") || !*smoke {
			o.Runs = *runs
		}
		if *consoleHosts > 0 {
			o.Hosts = *consoleHosts
		}
		o.Anvil, o.Kubectl, o.Dir, o.Logf = *anvilBin, *kubectlBin, filepath.Join(dir, "console"), env.Logf
		if root, err := need.RepoRoot(); err == nil {
			o.RepoRoot = root
		}
		m := measuring(res.Command)
		res.Console = consolebench.Run(ctx, o)
		res.Console.Measured = finished(m)
	}
	stopLoad()
	res.LoadEnd = machine.LoadAvg()
	res.Finished = time.Now().UTC()
	if *merge != "" {
		if err := results.Merge(*merge, res); err != nil {
			return err
		}
		env.Logf("merged the parts run into %s", *merge)
	} else {
		if err := results.Write(*out, res); err != nil {
			return err
		}
		env.Logf("wrote %s", *out)
	}
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
				errs = append(errs, fmt.Errorf("dhcp %s (%s): %s", s.Name, s.Mode, s.Error))
			} else if len(s.Runs) == 0 || len(s.Runs[0].Steps) == 0 || s.Runs[0].Steps[0].Acks == 0 {
				errs = append(errs, fmt.Errorf("dhcp %s (%s): no DHCPACK received", s.Name, s.Mode))
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
	if s := r.Storm; s != nil {
		if s.Error != "" {
			errs = append(errs, fmt.Errorf("storm: %s", s.Error))
		}
		for _, z := range s.Sizes {
			for _, run := range z.Runs {
				switch {
				case run.Error != "":
					errs = append(errs, fmt.Errorf("storm %d hosts: %s", z.Hosts, run.Error))
				case r.Smoke && run.Succeeded < run.Hosts:
					// The smoke storm is tiny: every host must boot.
					errs = append(errs, fmt.Errorf("storm %d hosts: only %d booted; failures %v", z.Hosts, run.Succeeded, run.Failures))
				}
			}
		}
	}
	if s := r.Scale; s != nil {
		if s.Error != "" {
			errs = append(errs, fmt.Errorf("scale: %s", s.Error))
		}
		for _, z := range s.Sizes {
			if !z.Completed || z.Error != "" {
				errs = append(errs, fmt.Errorf("scale %d: %d of %d Machines Ready: %s", z.Hosts, z.Ready, z.Machines, z.Error))
			}
		}
	}
	if c := r.Console; c != nil {
		if c.Error != "" {
			errs = append(errs, fmt.Errorf("console: %s", c.Error))
		}
		for i, run := range c.Runs {
			if run.Error != "" {
				errs = append(errs, fmt.Errorf("console run %d: %s", i+1, run.Error))
			}
		}
	}
	if ro := r.Rollout; ro != nil && (!ro.Completed || ro.Error != "") {
		errs = append(errs, fmt.Errorf("rollout: %d of %d Machines upgraded: %s", ro.Upgraded, ro.Machines, ro.Error))
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
		for _, p := range []string{"dhcp-rate.png", "tftp.png", "http.png", "storm.png"} {
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

// flagSet reports whether the command line gave flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// measuring starts the Measured header of one part.
func measuring(command string) *results.Measured {
	return &results.Measured{Started: time.Now().UTC(), Command: command, LoadStart: machine.LoadAvg()}
}

// finished ends it.
func finished(m *results.Measured) *results.Measured {
	m.Finished, m.LoadEnd = time.Now().UTC(), machine.LoadAvg()
	return m
}
