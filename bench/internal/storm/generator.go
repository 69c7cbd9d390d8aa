package storm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"anvil.dev/anvil/bench/internal/netns"
)

// generator is the load generator process, started before the rack is set
// up so that its start-up is not part of the storm.
type generator struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	out    string
	log    string
	exited chan struct{}
}

func startGenerator(ctx context.Context, o Options, s runSpec) (*generator, error) {
	cfg := LoadConfig{
		Interface: s.pair.LoadIf, Server: s.pair.SrvIP, Arch: archUEFI,
		BootFileBytes: s.bootFileBytes, KernelBytes: o.KernelBytes, InitrdBytes: []int64{o.InitrdBytes},
		OSBoot: Duration(o.OSBoot), Spread: Duration(o.Spread),
		HostTimeout: Duration(o.HostTimeout), HTTPTimeout: Duration(10 * time.Minute),
	}
	for i := range s.hosts {
		cfg.Hosts = append(cfg.Hosts, LoadHost{Name: hostName(i), MAC: hostMAC(i).String()})
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(s.dir, "load.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		return nil, err
	}
	g := &generator{out: filepath.Join(s.dir, "load-result.json"), log: filepath.Join(s.dir, "load.log"), lines: make(chan string, 4), exited: make(chan struct{})}
	argv := append(append([]string{}, o.LoadCommand...), "--config", cfgPath, "--out", g.out)
	g.cmd = netns.Command(context.Background(), s.pair.Load, "", argv[0], argv[1:]...)
	g.cmd.Env = append(os.Environ(), o.LoadEnv...)
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	lf, err := os.Create(g.log)
	if err != nil {
		return nil, err
	}
	g.cmd.Stderr = lf
	stdout, err := g.cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	if g.stdin, err = g.cmd.StdinPipe(); err != nil {
		lf.Close()
		return nil, err
	}
	if err := g.cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start the load generator: %w", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			g.lines <- sc.Text()
		}
		close(g.lines)
	}()
	go func() { _ = g.cmd.Wait(); lf.Close(); close(g.exited) }()
	if err := g.expect(ctx, "ready", time.Minute); err != nil {
		g.kill()
		return nil, err
	}
	return g, nil
}

func (g *generator) expect(ctx context.Context, want string, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case l, ok := <-g.lines:
			if !ok {
				<-g.exited
				return fmt.Errorf("load generator exited before %q: %s", want, tailFile(g.log, 2000))
			}
			if l == want {
				return nil
			}
		case <-t.C:
			return fmt.Errorf("load generator: no %q after %v", want, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// power says "go" and waits for every host to finish.
func (g *generator) power(ctx context.Context, timeout time.Duration) (LoadResult, error) {
	var lr LoadResult
	if _, err := io.WriteString(g.stdin, "go\n"); err != nil {
		return lr, fmt.Errorf("load generator: %w", err)
	}
	if err := g.expect(ctx, "done", timeout); err != nil {
		return lr, err
	}
	b, err := os.ReadFile(g.out)
	if err != nil {
		return lr, err
	}
	return lr, json.Unmarshal(b, &lr)
}

// kill ends the generator by its PID.
func (g *generator) kill() {
	if g == nil {
		return
	}
	_ = g.stdin.Close()
	select {
	case <-g.exited:
	case <-time.After(5 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.exited
	}
}

func tailFile(p string, n int) string {
	b, _ := os.ReadFile(p)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
