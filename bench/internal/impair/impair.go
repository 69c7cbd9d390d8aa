// Package impair adds delay and loss to the server's side of the veth, like
// `tc qdisc add dev X root netem delay 1ms loss 0.5%`. Kernels without
// sch_netem get the stand-in from LAB.md: an iptables NFQUEUE rule and a
// small C program on libnetfilter-queue (csrc/impair.c, compiled on first use)
// that drops packets with the given probability and releases the rest
// after the delay.
package impair

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"anvil.dev/anvil/bench/internal/harness"
	"anvil.dev/anvil/bench/internal/machine"
)

//go:embed csrc/impair.c
var source []byte

// queueNum is the NFQUEUE number the rule and the program share.
const queueNum = "7"

// Link is an active impairment.
type Link struct {
	env   *harness.Env
	netem bool
	proc  *harness.Proc
}

// Describe says how an impairment of delay and loss is applied here.
func Describe(delay time.Duration, lossPercent float64) string {
	how := "iptables NFQUEUE on the server's veth egress + bench/internal/impair/csrc/impair.c (no netem in this kernel)"
	if machine.HasNetem() {
		how = "tc netem on the server's veth"
	}
	return fmt.Sprintf("delay %v, loss %g%% on server-to-client packets (%s)", delay, lossPercent, how)
}

// Start impairs packets the server sends on its veth end. The NFQUEUE
// program runs pinned to the load CPU so it does not take the server's.
func Start(env *harness.Env, delay time.Duration, lossPercent float64) (*Link, error) {
	p := env.Pair
	l := &Link{env: env}
	if machine.HasNetem() {
		l.netem = true
		return l, run("ip", "netns", "exec", p.Srv, "tc", "qdisc", "add", "dev", p.SrvIf, "root", "netem",
			"delay", fmt.Sprintf("%dus", delay.Microseconds()), "loss", fmt.Sprintf("%g%%", lossPercent))
	}
	bin, err := build(env.Dir)
	if err != nil {
		return nil, err
	}
	// Started through harness so it is stopped by PID; it runs in the
	// server namespace (the queue belongs to the namespace's netfilter).
	saved := env.SrvCPU
	env.SrvCPU = env.LoadCPU
	l.proc, err = env.Start("impair", bin, queueNum, strconv.FormatInt(delay.Microseconds(), 10), strconv.FormatFloat(lossPercent, 'f', -1, 64))
	env.SrvCPU = saved
	if err != nil {
		return nil, err
	}
	if err := l.proc.WaitReady(10*time.Second, func() error {
		b, _ := os.ReadFile(l.proc.Log)
		if !strings.Contains(string(b), "ready") {
			return fmt.Errorf("impair not ready")
		}
		return nil
	}); err != nil {
		l.proc.Stop()
		return nil, err
	}
	if err := run("ip", "netns", "exec", p.Srv, "iptables", "-w", "-A", "OUTPUT", "-o", p.SrvIf, "-p", "udp",
		"-j", "NFQUEUE", "--queue-num", queueNum, "--queue-bypass"); err != nil {
		l.proc.Stop()
		return nil, err
	}
	return l, nil
}

// Stop removes the impairment and returns the stand-in's counters ("" with
// netem).
func (l *Link) Stop() string {
	p := l.env.Pair
	if l.netem {
		_ = run("ip", "netns", "exec", p.Srv, "tc", "qdisc", "del", "dev", p.SrvIf, "root")
		return ""
	}
	_ = run("ip", "netns", "exec", p.Srv, "iptables", "-w", "-D", "OUTPUT", "-o", p.SrvIf, "-p", "udp",
		"-j", "NFQUEUE", "--queue-num", queueNum, "--queue-bypass")
	l.proc.Stop()
	return l.proc.Tail(200)
}

func build(dir string) (string, error) {
	bin := filepath.Join(dir, "impair")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	src := filepath.Join(dir, "impair.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	if err := run("cc", "-O2", "-o", bin, src, "-lnetfilter_queue", "-lnfnetlink"); err != nil {
		return "", fmt.Errorf("build the NFQUEUE stand-in for netem (needs gcc and libnetfilter-queue-dev): %w", err)
	}
	return bin, nil
}

func run(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
