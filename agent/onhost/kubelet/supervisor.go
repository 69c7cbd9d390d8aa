package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"

	"anvil.dev/anvil/internal/atomicfile"
)

// SupervisorOptions configure a Supervisor.
type SupervisorOptions struct {
	// Binary to run, normally <root>/opt/anvil/kubelet/current/kubelet: the
	// symlink is resolved at every start, so a restart runs what it points
	// to then. Required.
	Binary string
	// Args for the kubelet.
	Args []string
	// Env of the kubelet (default: a standard PATH only).
	Env []string
	// PIDFile records the running kubelet so a restarted agent can adopt
	// it. Required.
	PIDFile string
	// LogFile receives the kubelet's stdout and stderr (appended); empty
	// discards them.
	LogFile string
	// AdoptDir: a process named by the PID file is adopted only if its
	// executable lies below this directory, which guards against a reused
	// PID (default: the directory above Binary's directory).
	AdoptDir string
	// StopTimeout is the wait after SIGTERM before SIGKILL (default 30s).
	StopTimeout time.Duration
	// RestartDelay is the first delay before restarting a kubelet that
	// exited on its own; it doubles up to MaxRestartDelay (defaults 1s, 30s).
	RestartDelay    time.Duration
	MaxRestartDelay time.Duration
	// ProcDir is /proc (tests never need to change it; kept for clarity).
	ProcDir string
	Logger  logr.Logger
}

// Supervisor runs the kubelet when there is no systemd: it starts it in
// its own session (so it outlives the agent), records its PID, restarts
// it when it exits, and adopts it again after an agent restart.
type Supervisor struct {
	opts SupervisorOptions

	mu      sync.Mutex
	pid     int
	exited  chan struct{} // closed when our child exits; nil for an adopted process
	stopped bool          // Stop was called: do not restart
	// generation counts starts, so the monitor can tell a kubelet it is
	// waiting on from a newer one.
	generation int
	// cancelMonitor stops the monitor of the previous Start.
	cancelMonitor context.CancelFunc
	// stoppedSeen, if set, is called (under mu) each time the monitor
	// looks at a kubelet stopped since its last look and leaves it
	// stopped: tests wait for it instead of sleeping.
	stoppedSeen func()
}

// NewSupervisor validates opts.
func NewSupervisor(opts SupervisorOptions) (*Supervisor, error) {
	if opts.Binary == "" || opts.PIDFile == "" {
		return nil, errors.New("kubelet supervisor: Binary and PIDFile are required")
	}
	if opts.Env == nil {
		opts.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	if opts.AdoptDir == "" {
		opts.AdoptDir = filepath.Dir(filepath.Dir(opts.Binary))
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 30 * time.Second
	}
	if opts.RestartDelay <= 0 {
		opts.RestartDelay = time.Second
	}
	if opts.MaxRestartDelay <= 0 {
		opts.MaxRestartDelay = 30 * time.Second
	}
	if opts.ProcDir == "" {
		opts.ProcDir = "/proc"
	}
	return &Supervisor{opts: opts}, nil
}

// Start adopts the kubelet named by the PID file if it still runs, or
// starts one, then keeps it running until ctx is done. When ctx is done
// the kubelet is left running (the agent may be restarting).
func (s *Supervisor) Start(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = false
	if s.pid == 0 || !s.aliveLocked() {
		if pid, ok := s.adoptable(); ok {
			s.pid, s.exited = pid, nil
			s.generation++
			s.opts.Logger.Info("adopted running kubelet", "pid", pid)
		} else if err := s.startLocked(); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	if s.cancelMonitor != nil {
		s.cancelMonitor()
	}
	mctx, cancel := context.WithCancel(ctx)
	s.cancelMonitor = cancel
	s.mu.Unlock()
	go s.monitor(mctx)
	return nil
}

// Restart stops the running kubelet (SIGTERM, then SIGKILL after
// StopTimeout) and starts Binary again.
func (s *Supervisor) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = false
	if err := s.stopLocked(ctx); err != nil {
		return err
	}
	return s.startLocked()
}

// Stop stops the kubelet and keeps it stopped.
func (s *Supervisor) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	return s.stopLocked(ctx)
}

// PID of the supervised kubelet, 0 if none runs.
func (s *Supervisor) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid == 0 || !s.aliveLocked() {
		return 0
	}
	return s.pid
}

func (s *Supervisor) monitor(ctx context.Context) {
	delay := s.opts.RestartDelay
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		exited, gen := s.exited, s.generation
		s.mu.Unlock()
		var exitedC <-chan struct{} = exited // nil (adopted): only the ticker wakes us
		select {
		case <-ctx.Done():
			return
		case <-exitedC:
		case <-tick.C:
		}
		s.mu.Lock()
		if s.stopped || s.generation != gen || s.aliveLocked() {
			if s.stopped && s.generation == gen && s.stoppedSeen != nil {
				s.stoppedSeen()
			}
			if s.generation != gen {
				delay = s.opts.RestartDelay
			}
			s.mu.Unlock()
			continue
		}
		s.mu.Unlock()
		s.opts.Logger.Info("kubelet exited; restarting", "delay", delay.String())
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(delay*2, s.opts.MaxRestartDelay)
		s.mu.Lock()
		if !s.stopped && s.generation == gen && !s.aliveLocked() {
			if err := s.startLocked(); err != nil {
				s.opts.Logger.Error(err, "restarting kubelet")
			}
		}
		s.mu.Unlock()
	}
}

func (s *Supervisor) startLocked() error {
	var out *os.File
	if s.opts.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(s.opts.LogFile), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(s.opts.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
		if err != nil {
			return fmt.Errorf("opening kubelet log: %w", err)
		}
		defer f.Close() // the child has its own copy
		out = f
	}
	var cmd *exec.Cmd
	// A binary installed moments ago can still be open for writing in a
	// child another goroutine forked meanwhile (it inherited the fd until
	// its exec): exec then fails with ETXTBSY. That clears within
	// milliseconds, so retry a few times, as the Go toolchain does.
	for attempt := 0; ; attempt++ {
		cmd = exec.Command(s.opts.Binary, s.opts.Args...)
		cmd.Env = s.opts.Env
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if out != nil {
			cmd.Stdout, cmd.Stderr = out, out
		}
		err := cmd.Start()
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ETXTBSY) || attempt >= 20 {
			return fmt.Errorf("starting kubelet: %w", err)
		}
		time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // always reap our child
	s.pid, s.exited = cmd.Process.Pid, exited
	s.generation++
	if err := writePIDFile(s.opts.PIDFile, s.pid); err != nil {
		s.opts.Logger.Error(err, "writing kubelet PID file")
	}
	s.opts.Logger.Info("started kubelet", "pid", s.pid, "binary", s.opts.Binary)
	return nil
}

func (s *Supervisor) stopLocked(ctx context.Context) error {
	if s.pid == 0 {
		if pid, ok := s.adoptable(); ok {
			s.pid, s.exited = pid, nil
		} else {
			return nil
		}
	}
	pid := s.pid
	s.generation++ // the monitor must not restart what we stop
	if s.aliveLocked() {
		_ = unix.Kill(pid, unix.SIGTERM)
		if !s.waitGone(ctx, s.opts.StopTimeout) {
			s.opts.Logger.Info("kubelet did not stop in time; killing it", "pid", pid)
			_ = unix.Kill(pid, unix.SIGKILL)
			if !s.waitGone(ctx, 10*time.Second) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("kubelet pid %d survived SIGKILL", pid)
			}
		}
	}
	s.pid, s.exited = 0, nil
	_ = os.Remove(s.opts.PIDFile)
	return nil
}

func (s *Supervisor) waitGone(ctx context.Context, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !s.aliveLocked() {
			return true
		}
		if s.exited != nil {
			select {
			case <-s.exited:
				return true
			case <-ctx.Done():
				return false
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return !s.aliveLocked()
}

// aliveLocked: the process exists and is not a zombie.
func (s *Supervisor) aliveLocked() bool {
	if s.pid <= 0 {
		return false
	}
	if s.exited != nil {
		select {
		case <-s.exited:
			return false
		default:
		}
	}
	return processAlive(s.opts.ProcDir, s.pid)
}

// adoptable returns the PID from the PID file if that process runs an
// executable below AdoptDir.
func (s *Supervisor) adoptable() (int, bool) {
	b, err := os.ReadFile(s.opts.PIDFile)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 || !processAlive(s.opts.ProcDir, pid) {
		return 0, false
	}
	exe, err := os.Readlink(filepath.Join(s.opts.ProcDir, strconv.Itoa(pid), "exe"))
	if err != nil {
		return 0, false
	}
	dir := s.opts.AdoptDir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return pid, strings.HasPrefix(exe, dir+string(filepath.Separator))
}

func processAlive(procDir string, pid int) bool {
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return false
	}
	b, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

func writePIDFile(p string, pid int) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, []byte(strconv.Itoa(pid)+"\n"), 0o644)
}
