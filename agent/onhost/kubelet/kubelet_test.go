package kubelet

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"

	"anvil.dev/anvil/test/testkubelet"
)

var oldK, newK *testkubelet.Binary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "anvil-kubelet-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if oldK, err = testkubelet.Build(dir, "v1.36.0", true); err == nil {
		newK, err = testkubelet.Build(dir, "v1.37.0", true)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// install puts b at <kdir>/<version>/kubelet and points current at it.
func install(t *testing.T, kdir string, b *testkubelet.Binary) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(kdir, b.Version), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, b.Version, "kubelet"), b.Bytes, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(kdir, "current"))
	if err := os.Symlink(b.Version, filepath.Join(kdir, "current")); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func newSupervisor(t *testing.T, root, port string) (*Supervisor, context.CancelFunc) {
	t.Helper()
	kdir := filepath.Join(root, "opt/anvil/kubelet")
	sup, err := NewSupervisor(SupervisorOptions{
		Binary: filepath.Join(kdir, "current", "kubelet"), Args: []string{"--healthz-port=" + port, "--max-lifetime=5m"},
		PIDFile: filepath.Join(root, "run/kubelet.pid"), LogFile: filepath.Join(root, "kubelet.log"),
		StopTimeout: 5 * time.Second, RestartDelay: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := sup.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	return sup, cancel
}

func running(port string) string {
	resp, err := http.Get("http://127.0.0.1:" + port + "/version")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func waitRunning(t *testing.T, port, version string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return running(port) == version, nil
	})
	if err != nil {
		t.Fatalf("kubelet %s never answered (running %q)", version, running(port))
	}
}

func TestSupervisor(t *testing.T) {
	root := t.TempDir()
	kdir := filepath.Join(root, "opt/anvil/kubelet")
	install(t, kdir, oldK)
	port := freePort(t)
	sup, cancel := newSupervisor(t, root, port)
	t.Cleanup(func() { cancel(); _ = sup.Stop(context.Background()) })
	waitRunning(t, port, oldK.Version)
	pid := sup.PID()
	if b, _ := os.ReadFile(filepath.Join(root, "run/kubelet.pid")); strings.TrimSpace(string(b)) != fmt.Sprint(pid) {
		t.Errorf("PID file %q, pid %d", b, pid)
	}

	// Restart runs what current points to now.
	install(t, kdir, newK)
	if err := sup.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, port, newK.Version)
	if processAlive("/proc", pid) {
		t.Error("the old kubelet still runs")
	}

	// A kubelet that dies is started again.
	pid = sup.PID()
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		p := sup.PID()
		return p != 0 && p != pid, nil
	})
	if err != nil {
		t.Fatal("the crashed kubelet was not restarted")
	}
	waitRunning(t, port, newK.Version)

	// A new supervisor (a restarted agent) adopts the running kubelet.
	cancel()
	pid = sup.PID()
	sup2, cancel2 := newSupervisor(t, root, port)
	t.Cleanup(func() { cancel2(); _ = sup2.Stop(context.Background()) })
	if sup2.PID() != pid {
		t.Errorf("adopted pid %d, want %d", sup2.PID(), pid)
	}
	if err := sup2.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, port, newK.Version)
	if sup2.PID() == pid || processAlive("/proc", pid) {
		t.Error("restarting an adopted kubelet did not replace it")
	}

	// Stop keeps it stopped: checked once the monitor has looked at the
	// stopped kubelet and left it (a restart it had decided on before
	// Stop is re-checked, under the same lock, before that).
	pid = sup2.PID()
	looked := make(chan struct{}, 1)
	sup2.mu.Lock()
	sup2.stoppedSeen = func() {
		select {
		case looked <- struct{}{}:
		default:
		}
	}
	sup2.mu.Unlock()
	if err := sup2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-looked:
	case <-time.After(30 * time.Second):
		t.Fatal("the monitor never looked at the stopped kubelet")
	}
	if sup2.PID() != 0 || processAlive("/proc", pid) || running(port) != "" {
		t.Error("the kubelet runs after Stop")
	}
}

// TestSupervisorRefusesStrangers: a PID file naming a process that is not
// a kubelet from the kubelet directory (a reused PID) is not adopted or
// signalled.
func TestSupervisorRefusesStrangers(t *testing.T) {
	root := t.TempDir()
	install(t, filepath.Join(root, "opt/anvil/kubelet"), oldK)
	if err := os.MkdirAll(filepath.Join(root, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	// This test process is the stranger.
	if err := os.WriteFile(filepath.Join(root, "run/kubelet.pid"), []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	sup, cancel := newSupervisor(t, root, port)
	t.Cleanup(func() { cancel(); _ = sup.Stop(context.Background()) })
	if sup.PID() == os.Getpid() {
		t.Fatal("adopted the test process")
	}
	waitRunning(t, port, oldK.Version)
}

func TestSystemd(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "args")
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := script("systemctl-ok", `echo "$@" > `+record+"\n")
	bad := script("systemctl-bad", "echo 'Job for kubelet.service failed because the control process exited with error code.' >&2\nexit 1\n")
	if err := (Systemd{Systemctl: ok}).Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(record); strings.TrimSpace(string(b)) != "restart kubelet" {
		t.Errorf("systemctl called with %q", b)
	}
	if err := (Systemd{Systemctl: ok, Unit: "kubelet-v2.service"}).Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(record); strings.TrimSpace(string(b)) != "restart kubelet-v2.service" {
		t.Errorf("systemctl called with %q", b)
	}
	err := (Systemd{Systemctl: bad}).Restart(context.Background())
	if err == nil || !strings.Contains(err.Error(), "control process exited") {
		t.Errorf("failure not reported with systemctl's message: %v", err)
	}
	if SystemdRunning(dir) {
		t.Error("systemd detected in an empty root")
	}
	if err := os.MkdirAll(filepath.Join(dir, "run/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !SystemdRunning(dir) {
		t.Error("systemd not detected")
	}
}

func TestHealthz(t *testing.T) {
	for _, tt := range []struct {
		name string
		code int
		body string
		ok   bool
	}{
		{"ok", 200, "ok", true},
		{"500", 500, "[-]syncloop failed", false},
		{"200 but not ok", 200, "starting", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.code)
				fmt.Fprint(w, tt.body)
			}))
			defer hs.Close()
			err := Health{Healthz: Healthz{URL: hs.URL}}.Check(context.Background(), "v1")
			if (err == nil) != tt.ok {
				t.Errorf("Check = %v", err)
			}
		})
	}
	if err := (Healthz{URL: "http://127.0.0.1:1/healthz"}).Check(context.Background()); err == nil {
		t.Error("a closed port is healthy")
	}
}
