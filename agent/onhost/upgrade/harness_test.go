package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent/onhost/kubelet"
	"anvil.dev/anvil/agent/onhost/nodecheck"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/testkubelet"
)

// The upgrade tests run real processes end to end: a fake kubelet (built
// from testdata) supervised by the agent's Supervisor, downloaded from an
// httptest server, health-checked through its /healthz and through its
// Node in a real API server, which the fake kubelet updates like a real one.

var (
	env        *envtest.Env
	kubeconfig string
	certDir    string
	// Builds of the fake kubelet.
	oldK    *testkubelet.Binary // v1.36.0, healthy: what the host runs first
	newK    *testkubelet.Binary // v1.37.0, healthy
	brokenK *testkubelet.Binary // v1.37.1, fails health checks
	newerK  *testkubelet.Binary // v1.38.0, healthy
	nodeSeq atomic.Int32
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "anvil-upgrade-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, b := range []struct {
		dst     **testkubelet.Binary
		version string
		healthy bool
	}{{&oldK, "v1.36.0", true}, {&newK, "v1.37.0", true}, {&brokenK, "v1.37.1", false}, {&newerK, "v1.38.0", true}} {
		if *b.dst, err = testkubelet.Build(dir, b.version, b.healthy); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() { _ = e.Stop() }()
	env = e
	if kubeconfig, err = e.WriteKubeconfig(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	certDir = dir
	for name, data := range map[string][]byte{"client.crt": e.Config.CertData, "client.key": e.Config.KeyData, "ca.crt": e.Config.CAData} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// artifacts serves kubelet binaries by path and counts requests.
type artifacts struct {
	srv      *httptest.Server
	mu       sync.Mutex
	files    map[string][]byte
	requests map[string]int
	// fail answers the next n requests with this status.
	failCode int
	failN    int
}

func newArtifacts(t *testing.T) *artifacts {
	a := &artifacts{files: map[string][]byte{}, requests: map[string]int{}}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.requests[r.URL.Path]++
		b, ok := a.files[r.URL.Path]
		fail := a.failN > 0
		code := a.failCode
		if fail {
			a.failN--
		}
		a.mu.Unlock()
		switch {
		case fail:
			http.Error(w, "injected failure", code)
		case !ok:
			http.NotFound(w, r)
		default:
			_, _ = w.Write(b)
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *artifacts) add(b *testkubelet.Binary) string {
	p := "/kubelet/" + b.Version + "/kubelet"
	a.mu.Lock()
	a.files[p] = b.Bytes
	a.mu.Unlock()
	return a.srv.URL + p
}

func (a *artifacts) count(url string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests[strings.TrimPrefix(url, a.srv.URL)]
}

// host is one simulated machine: a root directory, a Node, a healthz port
// and the kubelet supervisor.
type host struct {
	t        *testing.T
	root     string
	node     string
	port     int
	kdir     string
	sup      *kubelet.Supervisor
	cancel   context.CancelFunc // stops the supervisor's monitor ("kills the agent")
	health   kubelet.Health
	logs     *bytes.Buffer
	logMu    *sync.Mutex
	supCount int
}

// newHost installs initial as the host's kubelet (as provisioning does:
// <version>/kubelet plus the current link), creates its Node, and starts
// the supervisor.
func newHost(t *testing.T, initial *testkubelet.Binary) *host {
	t.Helper()
	h := &host{t: t, root: t.TempDir(), logs: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	h.kdir = filepath.Join(h.root, DefaultKubeletDir)
	h.node = fmt.Sprintf("node-%d", nodeSeq.Add(1))
	h.port = freePort(t)
	if err := os.MkdirAll(filepath.Join(h.kdir, initial.Version), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.kdir, initial.Version, "kubelet"), initial.Bytes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(initial.Version, filepath.Join(h.kdir, "current")); err != nil {
		t.Fatal(err)
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: h.node}}
	if err := env.Client.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	nc, err := nodecheck.New(nodecheck.Options{Kubeconfig: kubeconfig, NodeName: h.node})
	if err != nil {
		t.Fatal(err)
	}
	h.health = kubelet.Health{Healthz: kubelet.Healthz{URL: fmt.Sprintf("http://127.0.0.1:%d/healthz", h.port)}, Node: nc}
	h.startSupervisor()
	t.Cleanup(func() {
		// Stop whatever kubelet runs, by the PID file (a "rebooted" host
		// may have a kubelet started by a later supervisor).
		h.cancel()
		_ = h.sup.Stop(context.Background())
	})
	h.waitHealthy(initial.Version)
	return h
}

func (h *host) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		h.logMu.Lock()
		defer h.logMu.Unlock()
		fmt.Fprintln(h.logs, prefix, args)
	}, funcr.Options{Verbosity: 4})
}

func (h *host) logText() string {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	return h.logs.String()
}

// startSupervisor starts a new Supervisor, as a (re)started agent does:
// it adopts the kubelet named by the PID file, or starts current/kubelet.
func (h *host) startSupervisor() {
	h.t.Helper()
	sup, err := kubelet.NewSupervisor(kubelet.SupervisorOptions{
		Binary: filepath.Join(h.kdir, "current", "kubelet"),
		Args: []string{
			fmt.Sprintf("--healthz-port=%d", h.port), "--node-name=" + h.node,
			"--apiserver=" + strings.TrimSuffix(env.Config.Host, "/"),
			"--client-cert=" + filepath.Join(certDir, "client.crt"),
			"--client-key=" + filepath.Join(certDir, "client.key"),
			"--ca-file=" + filepath.Join(certDir, "ca.crt"),
			"--max-lifetime=5m",
		},
		PIDFile:      filepath.Join(h.root, "run/anvil-agent/kubelet.pid"),
		LogFile:      filepath.Join(h.root, "var/log/kubelet.log"),
		StopTimeout:  5 * time.Second,
		RestartDelay: 200 * time.Millisecond,
		Logger:       h.logger(),
	})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := sup.Start(ctx); err != nil {
		cancel()
		h.t.Fatal(err)
	}
	h.sup, h.cancel = sup, cancel
	h.supCount++
}

// crash simulates the agent dying (its monitor goroutine stops; the
// kubelet keeps running) and, with reboot, the whole host going down (the
// kubelet dies too; the next supervisor starts current/kubelet at boot).
func (h *host) crash(reboot bool) {
	h.t.Helper()
	h.cancel()
	if reboot {
		if err := h.sup.Stop(context.Background()); err != nil {
			h.t.Fatal(err)
		}
	}
	h.startSupervisor()
}

func (h *host) upgrader(mod func(*Options)) *Upgrader {
	h.t.Helper()
	opts := Options{
		Root: h.root, Kubelet: h.sup, Health: h.health,
		HealthTimeout: 20 * time.Second, HealthInterval: 200 * time.Millisecond,
		DownloadRetryDelay: 50 * time.Millisecond,
		Logger:             h.logger(),
	}
	if mod != nil {
		mod(&opts)
	}
	u, err := New(opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return u
}

// runningVersion asks the kubelet that answers on the healthz port.
func (h *host) runningVersion() string {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/version", h.port))
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func (h *host) waitHealthy(version string) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		return h.health.Check(ctx, version) == nil, nil
	})
	if err != nil {
		klog, _ := os.ReadFile(filepath.Join(h.root, "var/log/kubelet.log"))
		h.t.Fatalf("kubelet %s never healthy: last %v; running %q\nkubelet log:\n%s", version, h.health.Check(context.Background(), version), h.runningVersion(), klog)
	}
}

func (h *host) nodeVersion() string {
	n := &corev1.Node{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: h.node}, n); err != nil {
		h.t.Fatal(err)
	}
	return n.Status.NodeInfo.KubeletVersion
}

// listing is the kubelet directory's entries with link targets.
func (h *host) listing() []string {
	h.t.Helper()
	ents, err := os.ReadDir(h.kdir)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		s := e.Name()
		if t, err := os.Readlink(filepath.Join(h.kdir, e.Name())); err == nil {
			s += " -> " + t
		}
		out = append(out, s)
	}
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func planFor(id string, b *testkubelet.Binary, url string) Plan {
	return Plan{ID: id, Version: b.Version, URL: url, SHA256: b.SHA256}
}
