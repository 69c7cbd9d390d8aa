package simhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// AnvilOptions describe the two `anvil serve` processes a fleet boots
// against, as production runs them (test/lab/stack does the same for the
// QEMU lab): the controllers, and the network services with the HTTP boot
// server, config delivery and agent API (--controllers none).
type AnvilOptions struct {
	// Binary is the anvil executable (BuildAnvil). Required.
	Binary string
	// Kubeconfig of the API server. Required. NetbootKubeconfig, if set,
	// is the network services' (another user, so the API server's audit
	// log tells the two processes apart).
	Kubeconfig, NetbootKubeconfig string
	// Dir receives the processes' logs. Required.
	Dir string
	// ArtifactDir is the HTTP boot server's --artifact-dir (ClassOptions).
	// Required.
	ArtifactDir string
	// ControllerArgs and NetbootArgs are extra flags of each process.
	ControllerArgs, NetbootArgs []string
	// Controllers (default "host,csr,machineclass,machine,machineset").
	Controllers string
	// Pprof serves net/http/pprof from each process on a free loopback
	// port (Process.PprofURL), for profiles of a benchmark's phases.
	Pprof bool
}

// Anvil is the running pair.
type Anvil struct {
	Controllers, Netboot *Process
	// BootURL is the HTTP boot server, e.g. http://127.0.0.1:41234.
	BootURL string
}

// Process is one running `anvil serve`.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	// MetricsURL is its Prometheus endpoint (http://127.0.0.1:PORT/metrics).
	MetricsURL string
	// PprofURL is its net/http/pprof root (http://127.0.0.1:PORT/debug/pprof)
	// when AnvilOptions.Pprof is set.
	PprofURL string
	Log      string
	done     chan struct{}
}

// PID of the process.
func (p *Process) PID() int { return p.Cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM, then SIGKILL after 10 s, and waits.
func (p *Process) Stop() {
	if p == nil || p.Cmd.Process == nil {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// LogTail returns the last n bytes of the process's log.
func (p *Process) LogTail(n int64) string {
	f, err := os.Open(p.Log)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// BuildAnvil builds ./cmd/anvil of the repository at root into out.
func BuildAnvil(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/anvil")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/anvil: %v\n%s", err, b)
	}
	return nil
}

// StartAnvil starts both processes and waits until they serve.
func StartAnvil(ctx context.Context, o AnvilOptions) (*Anvil, error) {
	if o.Binary == "" || o.Kubeconfig == "" || o.Dir == "" || o.ArtifactDir == "" {
		return nil, errors.New("simhost: AnvilOptions need Binary, Kubeconfig, Dir and ArtifactDir")
	}
	if o.Controllers == "" {
		o.Controllers = "host,csr,machineclass,machine,machineset"
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	pprof := func(port int) []string {
		if !o.Pprof {
			return nil
		}
		return []string{"--pprof-bind-address", "127.0.0.1:" + strconv.Itoa(port)}
	}
	if o.NetbootKubeconfig == "" {
		o.NetbootKubeconfig = o.Kubeconfig
	}
	common := func(kubeconfig string, metrics int) []string {
		return []string{"serve", "--kubeconfig", kubeconfig, "--leader-elect=false", "--log-format", "text",
			"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metrics), "--health-probe-bind-address", "0"}
	}
	a := &Anvil{BootURL: "http://127.0.0.1:" + strconv.Itoa(ports[2])}
	ok := false
	defer func() {
		if !ok {
			a.Stop()
		}
	}()
	a.Controllers, err = start(o, "controllers", ports[0], append(append(append(common(o.Kubeconfig, ports[0]), "--controllers", o.Controllers, "--bmc-allow-cidrs", "127.0.0.1/32"), pprof(ports[3])...), o.ControllerArgs...))
	if err != nil {
		return nil, err
	}
	a.Netboot, err = start(o, "netboot", ports[1], append(append(common(o.NetbootKubeconfig, ports[1]), "--controllers", "none",
		"--http-boot", "--http-addr", "127.0.0.1:"+strconv.Itoa(ports[2]), "--artifact-dir", o.ArtifactDir,
		// No DHCP here, so no lease binds a boot credential: the first
		// script request of a boot gets it, as in proxy DHCP mode.
		"--boot-credential-binding", "first-request"), append(pprof(ports[4]), o.NetbootArgs...)...))
	if err != nil {
		return nil, err
	}
	if o.Pprof {
		a.Controllers.PprofURL = "http://127.0.0.1:" + strconv.Itoa(ports[3]) + "/debug/pprof"
		a.Netboot.PprofURL = "http://127.0.0.1:" + strconv.Itoa(ports[4]) + "/debug/pprof"
	}
	for _, check := range []struct {
		p   *Process
		url string
	}{{a.Controllers, a.Controllers.MetricsURL}, {a.Netboot, a.Netboot.MetricsURL}, {a.Netboot, a.BootURL + "/boot/00:00:00:00:00:00.ipxe"}} {
		if err := waitServing(ctx, check.p, check.url, 90*time.Second); err != nil {
			return nil, err
		}
	}
	ok = true
	return a, nil
}

// Stop stops both processes.
func (a *Anvil) Stop() {
	if a == nil {
		return
	}
	a.Netboot.Stop()
	a.Controllers.Stop()
}

func start(o AnvilOptions, name string, metricsPort int, args []string) (*Process, error) {
	logPath := filepath.Join(o.Dir, "anvil-"+name+".log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Binary, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("simhost: starting anvil serve (%s): %w", name, err)
	}
	p := &Process{Name: name, Cmd: cmd, Log: logPath, done: make(chan struct{}),
		MetricsURL: "http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics"}
	go func() { _ = cmd.Wait(); lf.Close(); close(p.done) }()
	return p, nil
}

func waitServing(ctx context.Context, p *Process, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		if p.Exited() {
			return fmt.Errorf("simhost: anvil serve (%s) exited; log:\n%s", p.Name, p.LogTail(4000))
		}
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("simhost: anvil serve (%s) does not serve %s after %s; log:\n%s", p.Name, url, timeout, p.LogTail(4000))
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return ctx.Err()
		}
	}
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// String names the processes and the boot URL, for logs.
func (a *Anvil) String() string {
	return strings.Join([]string{"controllers pid " + strconv.Itoa(a.Controllers.PID()), "netboot pid " + strconv.Itoa(a.Netboot.PID()), "boot " + a.BootURL}, ", ")
}
