package storm

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"anvil.dev/anvil/bench/internal/netns"
	"anvil.dev/anvil/bench/internal/proc"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/tcprelay"
)

// Ports the netboot process serves its metrics and probes on, inside the
// server namespace (nothing else listens there).
const (
	netbootMetricsAddr = "127.0.0.1:9090"
	netbootProbeAddr   = "127.0.0.1:9091"
)

// stack is one run's Anvil: a fresh kube-apiserver and etcd (test/envtest),
// the controllers' `anvil serve` in this namespace, and `anvil serve
// --controllers none` with DHCP, TFTP and HTTP boot in the server namespace
// (the production split, as test/lab/stack runs it).
type stack struct {
	env                *envtest.Env
	kubeconfig         string
	fwd                *tcprelay.Relay
	controllers        *process
	netboot            *process
	apiserver          []*proc.Monitor // kube-apiserver and etcd
	controllersMetrics string
}

// stackOptions say where and how to start a stack.
type stackOptions struct {
	Dir         string // this run's directory (logs, kubeconfig)
	Anvil       string
	Pair        *netns.Pair
	DHCPRange   string // FIRST-LAST
	TFTPRoot    string
	ArtifactDir string
	// ServeArgs are extra flags for both anvil processes.
	ServeArgs []string
}

// process is an anvil process started by PID, watched by proc.Monitor.
type process struct {
	name string
	cmd  *exec.Cmd
	mon  *proc.Monitor
	log  string
	done chan struct{}
}

func startStack(ctx context.Context, o stackOptions) (s *stack, err error) {
	s = &stack{}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	if s.env, err = envtest.Start(); err != nil {
		return s, err
	}
	if s.kubeconfig, err = s.env.WriteKubeconfig(o.Dir); err != nil {
		return s, err
	}
	s.apiserver = watchChildren("kube-apiserver", "etcd")
	u, err := url.Parse(s.env.Config.Host)
	if err != nil {
		return s, fmt.Errorf("API server URL %q: %w", s.env.Config.Host, err)
	}
	// Same address inside the server namespace: one kubeconfig for both.
	if s.fwd, err = newForwarder(o.Pair.Srv, u.Host, u.Host); err != nil {
		return s, fmt.Errorf("forwarding the API server into %s: %w", o.Pair.Srv, err)
	}
	port, err := freePort()
	if err != nil {
		return s, err
	}
	s.controllersMetrics = "127.0.0.1:" + strconv.Itoa(port)
	common := []string{"serve", "--kubeconfig", s.kubeconfig, "--leader-elect=false", "--log-format", "text"}
	cargs := append(append([]string{}, common...), "--controllers", "host,csr,machineclass,machine,machineset",
		"--metrics-bind-address", s.controllersMetrics, "--health-probe-bind-address", "0")
	cargs = append(cargs, o.ServeArgs...)
	if s.controllers, err = startProcess("controllers", exec.Command(o.Anvil, cargs...), filepath.Join(o.Dir, "anvil-controllers.log")); err != nil {
		return s, err
	}
	nargs := append(append([]string{}, common...), "--controllers", "none",
		"--metrics-bind-address", netbootMetricsAddr, "--health-probe-bind-address", netbootProbeAddr,
		"--dhcp", "--dhcp-interface", o.Pair.SrvIf, "--dhcp-range", o.DHCPRange,
		"--tftp", "--tftp-root", o.TFTPRoot,
		"--http-boot", "--artifact-dir", o.ArtifactDir,
		"--join-api-server", s.env.Config.Host)
	nargs = append(nargs, o.ServeArgs...)
	if s.netboot, err = startProcess("netboot", netns.Command(context.Background(), o.Pair.Srv, "", o.Anvil, nargs...), filepath.Join(o.Dir, "anvil-netboot.log")); err != nil {
		return s, err
	}
	if err := s.netbootReady(ctx, o.Pair.Srv, 90*time.Second); err != nil {
		return s, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startProcess(name string, cmd *exec.Cmd, logPath string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start anvil %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	p.mon = proc.Watch(cmd.Process.Pid, 200*time.Millisecond)
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process by its PID: SIGTERM, SIGKILL after 10 s.
func (p *process) stop() {
	if p == nil {
		return
	}
	p.mon.Stop()
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail is the end of the process log, for error messages.
func (p *process) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// netbootReady polls the netboot process's /readyz (which includes the
// "netboot" check: DHCP, TFTP and HTTP listening) inside the namespace.
func (s *stack) netbootReady(ctx context.Context, ns string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if s.netboot.exited() {
			return fmt.Errorf("anvil netboot exited during startup (%v):\n%s", s.netboot.cmd.ProcessState, s.netboot.tail(3000))
		}
		if s.controllers.exited() {
			return fmt.Errorf("anvil controllers exited during startup (%v):\n%s", s.controllers.cmd.ProcessState, s.controllers.tail(3000))
		}
		if _, last = httpGetIn(ctx, ns, netbootProbeAddr, "/readyz"); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
	return fmt.Errorf("anvil netboot not ready after %v: %v\n%s", timeout, last, s.netboot.tail(3000))
}

// httpGetIn GETs http://addr/path from inside namespace ns ("" for this
// one) and returns the body of a 200.
func httpGetIn(ctx context.Context, ns, addr, path string) (string, error) {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, a string) (net.Conn, error) {
		if ns == "" {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", a)
		}
		return dialIn(ctx, ns, a)
	}, DisableKeepAlives: true}
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s%s: %s", addr, path, resp.Status)
	}
	return string(b), nil
}

// stop ends both anvil processes, the forwarder and the control plane.
func (s *stack) stop() {
	s.netboot.stop()
	s.controllers.stop()
	for _, m := range s.apiserver {
		m.Stop()
	}
	if s.fwd != nil {
		s.fwd.Close()
	}
	if s.env != nil {
		_ = s.env.Stop()
	}
}

// apiserverUsage sums kube-apiserver's and etcd's samples.
func (s *stack) apiserverUsage() (cpu float64, rss int64) {
	for _, m := range s.apiserver {
		u := m.Now()
		cpu += u.CPU
		rss += u.RSS
	}
	return cpu, rss
}

func (s *stack) apiserverPeak() (rss int64) {
	for _, m := range s.apiserver {
		rss += m.Peak()
	}
	return rss
}

// watchChildren watches this process's children with the given names
// (envtest starts kube-apiserver and etcd as its children).
func watchChildren(names ...string) []*proc.Monitor {
	var out []*proc.Monitor
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for _, pid := range childPIDs(os.Getpid()) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && want[strings.TrimSpace(string(b))] {
			out = append(out, proc.Watch(pid, time.Second))
		}
	}
	return out
}

func childPIDs(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		f, err := os.Open(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Split(bufio.ScanWords)
		for sc.Scan() {
			if n, err := strconv.Atoi(sc.Text()); err == nil {
				out = append(out, n)
			}
		}
		f.Close()
	}
	return out
}

// apiMetrics is the API server's own /metrics text.
func (s *stack) apiMetrics(ctx context.Context) (string, error) {
	hc, err := rest.HTTPClientFor(s.env.Config)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(s.env.Config.Host, "/")+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("API server /metrics: %s", resp.Status)
	}
	return string(b), nil
}
