package storm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// profiler samples the netboot process's stacks with perf while the storm
// runs. perf, unlike pprof, also sees the kernel's share (syscalls, the
// paravirtualised VM); Go binaries keep frame pointers and symbols, so perf
// names Go functions as pprof would.
type profiler struct {
	cmd  *exec.Cmd
	data string
	done chan struct{}
	logf func(string, ...any)
}

func startProfile(pid int, dir string, logf func(string, ...any)) *profiler {
	if _, err := exec.LookPath("perf"); err != nil {
		logf("storm: perf not installed; no profile of the netboot process")
		return nil
	}
	p := &profiler{data: filepath.Join(dir, "netboot.perf.data"), done: make(chan struct{}), logf: logf}
	p.cmd = exec.Command("perf", "record", "-F", "199", "-g", "-e", "cpu-clock", "-p", fmt.Sprint(pid), "-o", p.data)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		logf("storm: perf record: %v", err)
		return nil
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	return p
}

// stop ends the recording (SIGINT, as perf expects) and returns the top
// functions by self time, then by inclusive time.
func (p *profiler) stop() []string {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	out := []string{"perf data: " + p.data}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, mode := range []struct{ title, flag string }{{"self", "--no-children"}, {"inclusive", "--children"}} {
		b, err := exec.CommandContext(ctx, "perf", "report", "-i", p.data, "--stdio", mode.flag, "--sort", "symbol",
			"-g", "none", "--percent-limit", "1.5").Output()
		if err != nil {
			p.logf("storm: perf report: %v", err)
			continue
		}
		out = append(out, "top by "+mode.title+" time:")
		out = append(out, topLines(b, 25)...)
	}
	return out
}

// topLines keeps perf report's data lines ("  12.34%  ...  [.] symbol").
func topLines(b []byte, n int) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() && len(out) < n {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") || !strings.Contains(l, "%") {
			continue
		}
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}
