package dhcpbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"anvil.dev/anvil/bench/internal/harness"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

// Modes of offering the load.
const (
	// ModeRelay is perfdhcp: it sets giaddr to its own address, so every
	// server answers it as a relay, by unicast to port 67.
	ModeRelay = "relay"
	// ModeBroadcast is `anvil-bench load dhcp`: giaddr 0, broadcast flag,
	// to 255.255.255.255 from 0.0.0.0:68, as PXE firmware sends.
	ModeBroadcast = "broadcast"
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
	// Modes to run (ModeRelay, ModeBroadcast).
	Modes []string
	// Product adds the product path: `anvil serve --dhcp` answering from
	// Reservations Host objects in a real kube-apiserver. Anvil is its
	// binary (empty: built from RepoRoot into the scratch dir).
	Product  bool
	Anvil    string
	RepoRoot string
}

// DefaultOptions are the full benchmark's; SmokeOptions a few seconds.
func DefaultOptions() Options {
	return Options{Reservations: 10000, StepSeconds: 5, Rates: []int{500, 1000, 2000, 4000, 6000, 8000, 11000, 14000, 18000, 24000, 30000},
		Bisect: 2, MaxDrop: 0.025, Modes: []string{ModeRelay, ModeBroadcast}, Product: true}
}

// SmokeOptions exercise every subject and mode briefly: 200 Hosts, two
// one-second steps.
func SmokeOptions() Options {
	return Options{Reservations: 200, StepSeconds: 1, Rates: []int{200, 1000}, Bisect: 0, MaxDrop: 0.025,
		Modes: []string{ModeRelay, ModeBroadcast}, Product: true}
}

type subject struct {
	name, mode, config string
	start              func(env *harness.Env, dir string) (*harness.Proc, error)
	// peerBuffer: the bench sets the server's receive buffer to Anvil's
	// (setPeerReadBuffers) once it answers.
	peerBuffer bool
}

// generatorLine says how a mode's load is sent, for the report.
func generatorLine(mode string, o Options) string {
	if mode == ModeRelay {
		return fmt.Sprintf("perfdhcp -M over the %d MACs, rate steps without -x t, -W 0.5 s; it puts its own address in giaddr "+
			"(also with -l IFACE), so servers answer it as a relay, unicast to port 67", o.Reservations)
	}
	return fmt.Sprintf("anvil-bench load dhcp over the same %d MACs: giaddr 0, broadcast flag, 0.0.0.0:68 to 255.255.255.255:67 "+
		"on the load interface, replies taken as broadcasts; packets from templates, one socket, latencies on every step", o.Reservations)
}

// Run measures every subject env.Runs times, subjects interleaved so slow
// drifts of a shared machine spread over all of them.
func Run(ctx context.Context, env *harness.Env, o Options) *results.DHCP {
	out := &results.DHCP{Reservations: o.Reservations, StepSeconds: o.StepSeconds, MaxDrop: o.MaxDrop}
	for _, m := range o.Modes {
		out.Modes = append(out.Modes, results.DHCPMode{Name: m, Generator: generatorLine(m, o)})
	}
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
	var prod *product
	var prodErr error
	if o.Product {
		prod, prodErr = startProduct(ctx, env, o, rs)
		if prod != nil {
			defer prod.stop()
			out.ProductSetup = prod.setup
		}
	}
	var subjects []subject
	for _, mode := range o.Modes {
		if o.Product {
			subjects = append(subjects, subject{name: "anvil serve", mode: mode,
				config: productConfig(o.Reservations),
				start: func(env *harness.Env, dir string) (*harness.Proc, error) {
					if prodErr != nil {
						return nil, prodErr
					}
					return prod.start(env, dir)
				}})
		}
		subjects = append(subjects,
			subject{name: "anvil", mode: mode,
				config: fmt.Sprintf("pxe/dhcp full mode, %d static reservations in a StaticBackend, slog JSON info log to a file", o.Reservations),
				start: func(env *harness.Env, dir string) (*harness.Proc, error) {
					return env.Start("anvil-dhcp", env.Self, "subject", "dhcp", "--iface", p.SrvIf,
						"--prefix", p.Prefix.String(), "--reservations", strconv.Itoa(o.Reservations), "--log", filepath.Join(dir, "anvil-dhcp.jsonl"))
				}},
			subject{name: "kea-dhcp4", mode: mode, peerBuffer: true, config: keaTuning(mode, o.Reservations),
				start: func(env *harness.Env, dir string) (*harness.Proc, error) {
					cfg, err := keaConfig(dir, p.SrvIf, mode, p.Prefix, rs)
					if err != nil {
						return nil, err
					}
					return env.Start("kea-dhcp4", "env", "KEA_PIDFILE_DIR="+dir, "KEA_LOCKFILE_DIR=none", "kea-dhcp4", "-c", cfg)
				}},
			subject{name: "dnsmasq", mode: mode, peerBuffer: true,
				config: fmt.Sprintf("%d dhcp-host lines, dhcp-range static, lease file, dhcp-authoritative, no-ping, DNS off, receive buffer 4 MiB set by the bench", o.Reservations),
				start: func(env *harness.Env, dir string) (*harness.Proc, error) {
					cfg, err := dnsmasqConfig(dir, p.SrvIf, p.Prefix, rs)
					if err != nil {
						return nil, err
					}
					return env.Start("dnsmasq-dhcp", "dnsmasq", "-k", "--conf-file="+cfg, "--log-facility="+filepath.Join(dir, "dnsmasq.log"))
				}})
	}
	for _, s := range subjects {
		out.Subjects = append(out.Subjects, results.DHCPSubject{Name: s.name, Mode: s.mode, Config: s.config})
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
			dir := filepath.Join(env.Dir, fmt.Sprintf("dhcp-%s-%s-%d", strings.ReplaceAll(s.name, " ", "-"), s.mode, run))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				sub.Error = err.Error()
				continue
			}
			env.Logf("dhcp: %s (%s) run %d/%d", s.name, s.mode, run+1, env.Runs)
			r, err := ramp(ctx, env, o, s, dir, macs)
			if err != nil {
				sub.Error = err.Error()
				env.Logf("dhcp: %s (%s): %v", s.name, s.mode, err)
				continue
			}
			sub.Runs = append(sub.Runs, r)
			env.Logf("dhcp: %s (%s) run %d: %.0f DORA/s at <= %.1f%% drop", s.name, s.mode, run+1, r.MaxRate, o.MaxDrop*100)
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
	err = proc.WaitReady(120*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// A second of 20/s; ready once any DORA completes.
		st, err := generate(c, env, s.mode, 20, 1, macs, false)
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
		if st.Acks == 0 {
			return fmt.Errorf("probe: no DHCPACK yet (%d DISCOVERs)", st.Sent)
		}
		return nil
	})
	if err != nil {
		return run, err
	}
	if s.peerBuffer {
		n, got, err := setPeerReadBuffers(proc.Cmd.Process.Pid, serverReadBuffer)
		if err != nil {
			return run, fmt.Errorf("receive buffer of %s: %w", s.name, err)
		}
		env.Logf("dhcp: %s: receive buffer of %d sockets set to %d bytes (kernel's figure)", s.name, n, got)
	}
	time.Sleep(500 * time.Millisecond)
	run.IdleRSS = proc.Mon.Now().RSS
	proc.Mon.ResetPeak()

	step := func(rate int) (results.DHCPStep, bool, error) {
		st, err := measure(ctx, env, o, proc, s.mode, rate, macs, false)
		if err != nil {
			return st, false, err
		}
		run.Steps = append(run.Steps, st)
		ok := st.Drop <= o.MaxDrop
		if ok && st.Achieved > run.MaxRate {
			run.MaxRate = st.Achieved
		}
		env.Logf("dhcp: %s (%s) offered %d/s: %.0f DORA/s (%d DISCOVERs sent), drop %.2f%%, cpu %.2f cores, generator %.2f",
			s.name, s.mode, rate, st.Achieved, st.Sent, st.Drop*100, st.CPU, st.GenCPU)
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
	if s.mode == ModeRelay { // the broadcast generator times every step
		if err := latency(ctx, env, o, s, proc, macs, &run); err != nil {
			return run, err
		}
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
		st, err := measure(ctx, env, o, proc, s.mode, rate, macs, true)
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

// measure runs the mode's generator once at rate, with per-packet
// timestamps (perfdhcp's -x t, for P50 and P99) when asked, and adds the
// server's CPU over the step.
func measure(ctx context.Context, env *harness.Env, o Options, p *harness.Proc, mode string, rate int, macs string, timestamps bool) (results.DHCPStep, error) {
	c, cancel := context.WithTimeout(ctx, time.Duration(o.StepSeconds*float64(time.Second))+60*time.Second)
	defer cancel()
	before, t0 := p.Mon.Now(), time.Now()
	st, err := generate(c, env, mode, rate, o.StepSeconds, macs, timestamps)
	after, wall := p.Mon.Now(), time.Since(t0)
	if p.Exited() {
		return st, fmt.Errorf("server exited during the step at %d/s:\n%s", rate, p.Tail(2000))
	}
	if err != nil {
		return st, err
	}
	st.CPU = (after.CPU - before.CPU) / wall.Seconds()
	st.RSS = after.RSS
	return st, nil
}

// generate offers rate DORA/s for seconds from the load namespace: perfdhcp
// for the relay mode, `anvil-bench load dhcp` for the broadcast mode.
func generate(ctx context.Context, env *harness.Env, mode string, rate int, seconds float64, macs string, timestamps bool) (results.DHCPStep, error) {
	st := results.DHCPStep{Offered: rate}
	if mode == ModeBroadcast {
		out, err := env.LoadCommand(ctx, env.Self, "load", "dhcp", "--iface", env.Pair.LoadIf, "--macs", macs,
			"--rate", strconv.Itoa(rate), "--seconds", strconv.FormatFloat(seconds, 'f', -1, 64), "--wait", "500ms",
			"--seed", strconv.FormatInt(time.Now().UnixNano(), 10)).Output()
		if err != nil {
			return st, fmt.Errorf("load dhcp at %d/s: %v: %s", rate, err, tail(out, 1000))
		}
		var lr LoadResult
		if err := json.Unmarshal(out, &lr); err != nil {
			return st, fmt.Errorf("load dhcp at %d/s: %v: %s", rate, err, tail(out, 1000))
		}
		st.Sent, st.Acks, st.P50, st.P99, st.GenCPU = lr.Discovers, lr.Acks, lr.P50, lr.P99, lr.CPU
	} else {
		args := []string{"-4", "-l", env.Pair.LoadIf, "-M", macs, "-r", strconv.Itoa(rate), "-p", strconv.FormatFloat(seconds, 'f', -1, 64), "-W", "500000"}
		if timestamps {
			args = append(args, "-x", "t")
		}
		cmd := env.LoadCommand(ctx, "perfdhcp", append(args, env.Pair.SrvIP.String())...)
		out, err := cmd.Output()
		// Exit status 3 means "some exchanges not completed": a result, not an error.
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3) {
			return st, fmt.Errorf("perfdhcp at %d/s: %v: %s", rate, err, tail(out, 1000))
		}
		pr, err := stats.ParsePerfdhcp(string(out))
		if err != nil {
			return st, err
		}
		st.Sent, st.Acks = pr.DO.Sent, pr.RA.Received
		delays := append(pr.DO.Delays, pr.RA.Delays...)
		st.P50 = stats.Finite(stats.Percentile(delays, 50))
		st.P99 = stats.Finite(stats.Percentile(delays, 99))
		// perfdhcp's user+system time (rusage covers every thread), over
		// its sending period: -W's wait after it only receives.
		if ps := cmd.ProcessState; ps != nil {
			st.GenCPU = (ps.UserTime() + ps.SystemTime()).Seconds() / seconds
		}
	}
	st.Achieved = float64(st.Acks) / seconds
	if st.Sent > 0 {
		st.Drop = 1 - float64(st.Acks)/float64(st.Sent)
	} else {
		st.Drop = 1
	}
	return st, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
