// Package harness is what every benchmark shares: the namespaces, the CPU
// split between subject and load, starting and stopping subjects by PID,
// and progress output.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"anvil.dev/anvil/bench/internal/netns"
	"anvil.dev/anvil/bench/internal/proc"
)

// Env is one benchmark run's environment.
type Env struct {
	// Self is this program's executable: Anvil's subjects and the Go load
	// generators are this binary's hidden subcommands, run inside the
	// namespaces.
	Self string
	// Dir is a scratch directory for configs, data and logs.
	Dir  string
	Pair *netns.Pair
	// SrvCPU and LoadCPU pin subjects and load generators (taskset lists).
	SrvCPU, LoadCPU string
	// Smoke: a few seconds per benchmark, one run.
	Smoke bool
	// Runs per figure (the report shows the median).
	Runs int
	Out  io.Writer // progress
}

// Logf prints one progress line.
func (e *Env) Logf(format string, args ...any) {
	fmt.Fprintf(e.Out, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// Proc is a subject process running in the server namespace.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	Mon  *proc.Monitor
	Log  string
	done chan struct{}
	err  error
}

// Start runs name with args in the server namespace, pinned to SrvCPU, with
// stdout and stderr in <Dir>/<label>.log, and starts sampling it.
func (e *Env) Start(label, name string, args ...string) (*Proc, error) {
	logPath := filepath.Join(e.Dir, label+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := netns.Command(context.Background(), e.Pair.Srv, e.SrvCPU, name, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", label, err)
	}
	p := &Proc{Name: label, Cmd: cmd, Log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		lf.Close()
		close(p.done)
	}()
	p.Mon = proc.Watch(cmd.Process.Pid, 200*time.Millisecond)
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the process by PID: SIGTERM, then SIGKILL after 5s.
func (p *Proc) Stop() {
	p.Mon.Stop()
	if p.Exited() {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(5 * time.Second):
	}
	_ = p.Cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// Tail returns the last n bytes of the process log, for error messages.
func (p *Proc) Tail(n int) string {
	b, _ := os.ReadFile(p.Log)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// WaitReady polls ready every 200ms until it returns nil, the process
// exits, or timeout passes.
func (p *Proc) WaitReady(timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if p.Exited() {
			return fmt.Errorf("%s exited during startup: %v\n%s", p.Name, p.err, p.Tail(2000))
		}
		if last = ready(); last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.Join(fmt.Errorf("%s not ready after %v", p.Name, timeout), last, errors.New(p.Tail(2000)))
}

// LoadCommand returns a command for the load namespace, pinned to LoadCPU.
func (e *Env) LoadCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := netns.Command(ctx, e.Pair.Load, e.LoadCPU, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}
