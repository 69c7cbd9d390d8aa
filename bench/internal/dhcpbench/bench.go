package dhcpbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"anvil.dev/anvil/bench/internal/harness"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

// Options configures the ramp.
type Options struct {
	Reservations int
	StepSeconds  float64
	// Rates are the offered DORA/s, ascending; the ramp stops at the first
	// step whose drop exceeds MaxDrop and then bisects Bisect times
	// between the last good and the first bad rate.
	Rates   []int
	Bisect  int
	MaxDrop float64
}

// DefaultOptions are the full benchmark's; SmokeOptions a few seconds.
func DefaultOptions() Options {
	return Options{Reservations: 10000, StepSeconds: 5, Rates: []int{500, 1000, 2000, 4000, 6000, 8000, 11000, 14000, 18000, 24000, 30000}, Bisect: 2, MaxDrop: 0.025}
}

func SmokeOptions() Options {
	return Options{Reservations: 10000, StepSeconds: 2, Rates: []int{200, 1000}, Bisect: 0, MaxDrop: 0.025}
}

type subject struct {
	name, config string
	start        func(env *harness.Env, dir string) (*harness.Proc, error)
}

// Run measures every subject env.Runs times, subjects interleaved so slow
// drifts of a shared machine spread over all of them.
func Run(ctx context.Context, env *harness.Env, o Options) *results.DHCP {
	out := &results.DHCP{Reservations: o.Reservations, StepSeconds: o.StepSeconds, MaxDrop: o.MaxDrop}
	p := env.Pair
	rs, err := Reservations(p.Prefix, o.Reservations)
	if err != nil {
		out.Subjects = append(out.Subjects, results.DHCPSubject{Name: "all", Error: err.Error()})
		return out
	}
	macs := filepath.Join(env.Dir, "dhcp-macs.txt")
	if err := WriteMACList(macs, rs); err != nil {
		out.Subjects = append(out.Subjects, results.DHCPSubject{Name: "all", Error: err.Error()})
		return out
	}
	subjects := []subject{
		{name: "anvil", config: fmt.Sprintf("pxe/dhcp full mode, %d static reservations in a StaticBackend, slog JSON info log to a file", o.Reservations),
			start: func(env *harness.Env, dir string) (*harness.Proc, error) {
				return env.Start("anvil-dhcp", env.Self, "subject", "dhcp", "--iface", p.SrvIf,
					"--prefix", p.Prefix.String(), "--reservations", strconv.Itoa(o.Reservations), "--log", filepath.Join(dir, "anvil-dhcp.jsonl"))
			}},
		{name: "kea-dhcp4", config: fmt.Sprintf("memfile leases (persisted, LFC off), %d reservations in the subnet, identifiers hw-address, log WARN", o.Reservations),
			start: func(env *harness.Env, dir string) (*harness.Proc, error) {
				cfg, err := keaConfig(dir, p.SrvIf, p.Prefix, rs)
				if err != nil {
					return nil, err
				}
				return env.Start("kea-dhcp4", "env", "KEA_PIDFILE_DIR="+dir, "KEA_LOCKFILE_DIR=none", "kea-dhcp4", "-c", cfg)
			}},
		{name: "dnsmasq", config: fmt.Sprintf("%d dhcp-host lines, dhcp-range static, lease file, DNS off", o.Reservations),
			start: func(env *harness.Env, dir string) (*harness.Proc, error) {
				cfg, err := dnsmasqConfig(dir, p.SrvIf, p.Prefix, rs)
				if err != nil {
					return nil, err
				}
				return env.Start("dnsmasq-dhcp", "dnsmasq", "-k", "--conf-file="+cfg, "--log-facility="+filepath.Join(dir, "dnsmasq.log"))
			}},
	}
	for _, s := range subjects {
		out.Subjects = append(out.Subjects, results.DHCPSubject{Name: s.name, Config: s.config})
	}
	for run := range env.Runs {
		for i, s := range subjects {
			if ctx.Err() != nil {
				return out
			}
			sub := &out.Subjects[i]
			if sub.Error != "" {
				continue
			}
			dir := filepath.Join(env.Dir, fmt.Sprintf("dhcp-%s-%d", s.name, run))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				sub.Error = err.Error()
				continue
			}
			env.Logf("dhcp: %s run %d/%d", s.name, run+1, env.Runs)
			r, err := ramp(ctx, env, o, s, dir, macs)
			if err != nil {
				sub.Error = err.Error()
				env.Logf("dhcp: %s: %v", s.name, err)
				continue
			}
			sub.Runs = append(sub.Runs, r)
			env.Logf("dhcp: %s run %d: %.0f DORA/s at <= %.1f%% drop", s.name, run+1, r.MaxRate, o.MaxDrop*100)
		}
	}
	return out
}

func ramp(ctx context.Context, env *harness.Env, o Options, s subject, dir, macs string) (results.DHCPRun, error) {
	var run results.DHCPRun
	proc, err := s.start(env, dir)
	if err != nil {
		return run, err
	}
	defer proc.Stop()
	err = proc.WaitReady(60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// A second of 20/s; ready once any DORA completes.
		out, _ := env.LoadCommand(c, "perfdhcp", "-4", "-l", env.Pair.LoadIf, "-M", macs, "-r", "20", "-p", "1",
			"-W", "1000000", env.Pair.SrvIP.String()).CombinedOutput()
		pr, err := stats.ParsePerfdhcp(string(out))
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
		if pr.RA.Received == 0 {
			return fmt.Errorf("probe: no DHCPACK yet (%d DISCOVERs, %d OFFERs)", pr.DO.Sent, pr.DO.Received)
		}
		return nil
	})
	if err != nil {
		return run, err
	}
	time.Sleep(500 * time.Millisecond)
	run.IdleRSS = proc.Mon.Now().RSS
	proc.Mon.ResetPeak()

	step := func(rate int) (results.DHCPStep, bool, error) {
		st, err := measure(ctx, env, o, proc, rate, macs, false)
		if err != nil {
			return st, false, err
		}
		run.Steps = append(run.Steps, st)
		ok := st.Drop <= o.MaxDrop
		if ok && st.Achieved > run.MaxRate {
			run.MaxRate = st.Achieved
		}
		env.Logf("dhcp: %s offered %d/s: %.0f DORA/s (%d DISCOVERs sent), drop %.2f%%, cpu %.2f cores",
			s.name, rate, st.Achieved, st.Sent, st.Drop*100, st.CPU)
		return st, ok, nil
	}
	lastGood, firstBad := 0, 0
	for _, rate := range o.Rates {
		_, ok, err := step(rate)
		if err != nil {
			return run, err
		}
		if !ok {
			firstBad = rate
			break
		}
		lastGood = rate
	}
	for range o.Bisect {
		if firstBad == 0 || firstBad-lastGood < 200 {
			break
		}
		mid := (lastGood + firstBad) / 2
		_, ok, err := step(mid)
		if err != nil {
			return run, err
		}
		if ok {
			lastGood = mid
		} else {
			firstBad = mid
		}
	}
	slices.SortFunc(run.Steps, func(a, b results.DHCPStep) int { return a.Offered - b.Offered })
	if err := latency(ctx, env, o, s, proc, macs, &run); err != nil {
		return run, err
	}
	run.PeakRSS = proc.Mon.Peak()
	return run, nil
}

// latency measures the round trips at the lowest rate and at the highest
// passing one. perfdhcp's per-packet timestamps (-x t) slow it down enough
// to lower the rate it can offer, so the rate steps run without them and
// these steps run again at the same offered rates with them.
func latency(ctx context.Context, env *harness.Env, o Options, s subject, proc *harness.Proc, macs string, run *results.DHCPRun) error {
	best := -1
	for i, st := range run.Steps {
		if st.Drop <= o.MaxDrop && (best < 0 || st.Achieved > run.Steps[best].Achieved) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	want := []int{run.Steps[0].Offered}
	if hi := run.Steps[best].Offered; hi != want[0] {
		want = append(want, hi)
	}
	for _, rate := range want {
		st, err := measure(ctx, env, o, proc, rate, macs, true)
		if err != nil {
			return err
		}
		run.Latency = append(run.Latency, st)
		for i := range run.Steps {
			if run.Steps[i].Offered == rate {
				run.Steps[i].P50, run.Steps[i].P99 = st.P50, st.P99
			}
		}
		env.Logf("dhcp: %s offered %d/s with timestamps: %.0f DORA/s (%d DISCOVERs sent), p50 %.2f ms, p99 %.2f ms",
			s.name, rate, st.Achieved, st.Sent, st.P50, st.P99)
	}
	return nil
}

// measure runs perfdhcp once at rate, with per-packet timestamps (for
// P50 and P99) when asked.
func measure(ctx context.Context, env *harness.Env, o Options, p *harness.Proc, rate int, macs string, timestamps bool) (results.DHCPStep, error) {
	st := results.DHCPStep{Offered: rate}
	c, cancel := context.WithTimeout(ctx, time.Duration(o.StepSeconds*float64(time.Second))+60*time.Second)
	defer cancel()
	before, t0 := p.Mon.Now(), time.Now()
	args := []string{"-4", "-l", env.Pair.LoadIf, "-M", macs, "-r", strconv.Itoa(rate), "-p", strconv.FormatFloat(o.StepSeconds, 'f', -1, 64), "-W", "500000"}
	if timestamps {
		args = append(args, "-x", "t")
	}
	cmd := env.LoadCommand(c, "perfdhcp", append(args, env.Pair.SrvIP.String())...)
	out, err := cmd.Output()
	after, wall := p.Mon.Now(), time.Since(t0)
	if p.Exited() {
		return st, fmt.Errorf("server exited during the step at %d/s:\n%s", rate, p.Tail(2000))
	}
	// Exit status 3 means "some exchanges not completed": a result, not an error.
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3) {
		return st, fmt.Errorf("perfdhcp at %d/s: %v: %s", rate, err, tail(out, 1000))
	}
	pr, err := stats.ParsePerfdhcp(string(out))
	if err != nil {
		return st, err
	}
	st.Sent, st.Acks = pr.DO.Sent, pr.RA.Received
	st.Achieved = float64(pr.RA.Received) / o.StepSeconds
	if pr.DO.Sent > 0 {
		st.Drop = 1 - float64(pr.RA.Received)/float64(pr.DO.Sent)
	} else {
		st.Drop = 1
	}
	delays := append(pr.DO.Delays, pr.RA.Delays...)
	st.P50 = stats.Finite(stats.Percentile(delays, 50))
	st.P99 = stats.Finite(stats.Percentile(delays, 99))
	st.CPU = (after.CPU - before.CPU) / wall.Seconds()
	st.RSS = after.RSS
	return st, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
