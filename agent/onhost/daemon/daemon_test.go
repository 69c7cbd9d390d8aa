package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/client"
	"anvil.dev/anvil/agent/onhost/daemon"
	"anvil.dev/anvil/agent/onhost/facts"
	"anvil.dev/anvil/agent/onhost/kubelet"
	"anvil.dev/anvil/agent/onhost/upgrade"
	"anvil.dev/anvil/agent/onhost/wipe"
	"anvil.dev/anvil/agent/server"
	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/agentenv"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/testkubelet"
)

// End to end: the real agent daemon talks through the real client to the
// real server and Kubernetes backend; the upgrade runs a fake kubelet.

var (
	env            *envtest.Env
	cached         ctrlclient.Client
	apiURL         string
	oldK, newK     *testkubelet.Binary
	artifactServer *httptest.Server
	downloads      sync.Map // path -> *int
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "anvil-daemon-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if oldK, err = testkubelet.Build(dir, "v1.36.0", true); err == nil {
		newK, err = testkubelet.Build(dir, "v1.37.0", true)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	artifactServer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := downloads.LoadOrStore(r.URL.Path, new(int))
		*n.(*int)++
		if r.URL.Path == "/kubelet/v1.37.0" {
			_, _ = w.Write(newK.Bytes)
			return
		}
		http.NotFound(w, r)
	}))
	defer artifactServer.Close()

	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = e.Stop() }()
	env = e
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logr.Discard()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := kube.AddIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cached = mgr.GetClient()
	be, err := kube.New(kube.Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	defer func() { cancel(); <-done }()
	srv, err := server.NewServer(server.ServerOptions{Backend: be, PollInterval: time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The boot HTTP server that serves the agent API also serves a class's
	// kubelets under /artifacts/<ns>/<class>/kubelet/<version>/ (an http(s)
	// one from its cache): here they come from the artifact server.
	mux := http.NewServeMux()
	mux.Handle("/", srv)
	mux.HandleFunc("/artifacts/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/kubelet/v1.37.0/v1.37.0") {
			r = r.Clone(r.Context())
			r.URL.Path = "/kubelet/v1.37.0"
			artifactServer.Config.Handler.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	apiURL = hs.URL
	return m.Run()
}

func downloadCount(path string) int {
	if n, ok := downloads.Load(path); ok {
		return *n.(*int)
	}
	return 0
}

// machineHost is a Host (in state) with an agent credential, optionally
// held by a Machine whose upgrade status is up.
func machineHost(t *testing.T, name string, state metalv1.HostState, sha string, up *metalv1.UpgradeStatus) (*metalv1.Host, *metalv1.Machine, string) {
	t.Helper()
	ctx := context.Background()
	ns := env.Namespace(t)
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://"}, BootMACs: []string{"52:54:00:aa:bb:01"}},
	}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	h.Status.State = state
	if err := env.Client.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	var m *metalv1.Machine
	if up != nil {
		zero := strings.Repeat("0", 64)
		mc := &metalv1.MachineClass{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "class"},
			Spec: metalv1.MachineClassSpec{
				Kernel: metalv1.Artifact{URL: "k", SHA256: zero}, Initrds: []metalv1.Artifact{{URL: "i", SHA256: zero}},
				Config:   metalv1.ConfigTemplate{Format: "cloud-init", Template: "#cloud-config\n"},
				Kubelets: []metalv1.KubeletArtifact{{Version: "v1.37.0", Artifact: metalv1.Artifact{URL: artifactServer.URL + "/kubelet/v1.37.0", SHA256: sha}}},
			},
		}
		m = &metalv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"},
			Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "class"}, Version: "v1.37.0"},
		}
		for _, o := range []ctrlclient.Object{mc, m} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		m.Status.Upgrade = up
		if err := env.Client.Status().Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Namespace: ns, Name: m.Name, UID: m.UID}
		if err := env.Client.Update(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	cred, err := kube.IssueCredential(ctx, env.Client, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the cache to hold what the server needs.
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		ch := &metalv1.Host{}
		if cached.Get(ctx, ctrlclient.ObjectKeyFromObject(h), ch) != nil || ch.Status.Agent == nil || ch.Status.Agent.CredentialHash != agent.CredentialHash(cred) {
			return false, nil
		}
		if m != nil {
			cm := &metalv1.Machine{}
			if cached.Get(ctx, ctrlclient.ObjectKeyFromObject(m), cm) != nil || cm.Status.Upgrade == nil || ch.Spec.ConsumerRef == nil {
				return false, nil
			}
			if cached.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: "class"}, &metalv1.MachineClass{}) != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal("cache never caught up")
	}
	return h, m, cred
}

// agentHost is the on-host side: a root with v1.36.0 installed and
// running under the supervisor, and a daemon.
type agentHost struct {
	root string
	port int
	sup  *kubelet.Supervisor
	up   *upgrade.Upgrader
	d    *daemon.Daemon
	api  *client.Client
}

func newAgentHost(t *testing.T, cred string, wipeFn func(context.Context) (string, error)) *agentHost {
	t.Helper()
	a := &agentHost{root: t.TempDir(), port: freePort(t)}
	kdir := filepath.Join(a.root, upgrade.DefaultKubeletDir)
	if err := os.MkdirAll(filepath.Join(kdir, oldK.Version), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, oldK.Version, "kubelet"), oldK.Bytes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(oldK.Version, filepath.Join(kdir, "current")); err != nil {
		t.Fatal(err)
	}
	var err error
	a.sup, err = kubelet.NewSupervisor(kubelet.SupervisorOptions{
		Binary:  filepath.Join(kdir, "current", "kubelet"),
		Args:    []string{fmt.Sprintf("--healthz-port=%d", a.port), "--max-lifetime=5m"},
		PIDFile: filepath.Join(a.root, "run/kubelet.pid"), StopTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); _ = a.sup.Stop(context.Background()) })
	if err := a.sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return a.running() == oldK.Version, nil
	}); err != nil {
		t.Fatal("the initial kubelet never answered")
	}
	api, err := client.New(client.Options{Endpoint: apiURL, Credential: cred, Attempts: 3, BaseDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a.api = api
	a.up, err = upgrade.New(upgrade.Options{
		Root: a.root, Kubelet: a.sup,
		Health:        kubelet.Health{Healthz: kubelet.Healthz{URL: fmt.Sprintf("http://127.0.0.1:%d/healthz", a.port)}},
		HealthTimeout: 20 * time.Second, HealthInterval: 100 * time.Millisecond,
		OnPhase: daemon.ReportProgress(api, logr.Discard()),
	})
	if err != nil {
		t.Fatal(err)
	}
	a.d, err = daemon.New(daemon.Options{
		API: api, Upgrader: a.up, Wipe: wipeFn, StateDir: filepath.Join(a.root, upgrade.DefaultStateDir),
		Facts: func(context.Context) (agent.Report, error) {
			return facts.Collect(facts.Options{AgentVersion: "test"}) // this machine's real facts
		},
		PollInterval: 100 * time.Millisecond, ReportInterval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (a *agentHost) running() string {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/version", a.port))
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func getMachine(t *testing.T, m *metalv1.Machine) *metalv1.Machine {
	t.Helper()
	out := &metalv1.Machine{}
	if err := env.Client.Get(context.Background(), ctrlclient.ObjectKeyFromObject(m), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func getHost(t *testing.T, h *metalv1.Host) *metalv1.Host {
	t.Helper()
	out := &metalv1.Host{}
	if err := env.Client.Get(context.Background(), ctrlclient.ObjectKeyFromObject(h), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func applying(planID string) *metalv1.UpgradeStatus {
	return &metalv1.UpgradeStatus{PlanID: planID, Version: "v1.37.0", FromVersion: "v1.36.0", State: metalv1.UpgradeApplying}
}

func TestDaemonUpgrades(t *testing.T) {
	h, m, cred := machineHost(t, "h-up", metalv1.HostProvisioned, newK.SHA256, applying("plan-1"))
	a := newAgentHost(t, cred, nil)
	before := downloadCount("/kubelet/v1.37.0")
	if err := a.d.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	up := getMachine(t, m).Status.Upgrade
	if outcome(up) != metalv1.AgentUpgradeSucceeded || up.AgentResult.ReportedAt.IsZero() {
		t.Fatalf("machine upgrade status %+v (agent result %+v)", up, up.AgentResult)
	}
	if a.running() != newK.Version {
		t.Errorf("running %q", a.running())
	}
	hs := getHost(t, h).Status
	if hs.Agent.KubeletVersion != newK.Version || hs.Agent.BootID == "" || hs.Hardware == nil || hs.Hardware.CPUCount == 0 {
		t.Errorf("host status after the upgrade: agent %+v hardware %+v", hs.Agent, hs.Hardware)
	}
	// The controller has not moved on yet and offers the plan again (or a
	// retry reaches the agent): it is reported, not applied again.
	mm := getMachine(t, m)
	mm.Status.Upgrade.State = metalv1.UpgradeApplying
	if err := env.Client.Status().Update(context.Background(), mm); err != nil {
		t.Fatal(err)
	}
	_ = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		cm := &metalv1.Machine{}
		return cached.Get(ctx, ctrlclient.ObjectKeyFromObject(m), cm) == nil && cm.Status.Upgrade.State == metalv1.UpgradeApplying, nil
	})
	pid := a.sup.PID()
	if err := a.d.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := downloadCount("/kubelet/v1.37.0") - before; got != 1 {
		t.Errorf("%d downloads, want 1", got)
	}
	if a.sup.PID() != pid {
		t.Error("the kubelet was restarted for a plan already applied")
	}
	if up := getMachine(t, m).Status.Upgrade; outcome(up) != metalv1.AgentUpgradeSucceeded {
		t.Errorf("re-reported outcome: %+v (agent result %+v)", up, up.AgentResult)
	}
}

func TestDaemonReportsFailedUpgrade(t *testing.T) {
	_, m, cred := machineHost(t, "h-bad", metalv1.HostProvisioned, strings.Repeat("e", 64), applying("plan-bad"))
	a := newAgentHost(t, cred, nil)
	pid := a.sup.PID()
	if err := a.d.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	up := getMachine(t, m).Status.Upgrade
	if outcome(up) != metalv1.AgentUpgradeFailed || !strings.Contains(up.AgentResult.Message, "sha256 mismatch") {
		t.Fatalf("machine upgrade status %+v (agent result %+v)", up, up.AgentResult)
	}
	if a.sup.PID() != pid || a.running() != oldK.Version {
		t.Error("the kubelet was touched by a plan with a bad digest")
	}
}

// TestDaemonResumesAfterRestart: an agent died mid-upgrade; the next one
// finishes the plan and reports it before doing anything else.
func TestDaemonResumesAfterRestart(t *testing.T) {
	_, m, cred := machineHost(t, "h-resume", metalv1.HostProvisioned, newK.SHA256, applying("plan-r"))
	a := newAgentHost(t, cred, nil)
	ctx := context.Background()
	if _, err := a.up.Begin(ctx, upgrade.Plan{ID: "plan-r", Version: newK.Version, URL: artifactServer.URL + "/kubelet/v1.37.0", SHA256: newK.SHA256}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // downloaded, installed, switched: then the agent died
		if _, err := a.up.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.d.Once(ctx); err != nil {
		t.Fatal(err)
	}
	if up := getMachine(t, m).Status.Upgrade; outcome(up) != metalv1.AgentUpgradeSucceeded {
		t.Fatalf("machine upgrade status %+v", up)
	}
	if a.running() != newK.Version {
		t.Errorf("running %q", a.running())
	}
}

// TestDaemonWipes wipes a GPT disk image for a deprovisioning Host, once.
func TestDaemonWipes(t *testing.T) {
	testenv.RequireCommands(t, map[string]string{"sgdisk": "gdisk", "wipefs": "util-linux"})
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 16<<20); err != nil {
		t.Fatal(err)
	}
	partition := func() {
		if out, err := exec.Command("sgdisk", "-n1:2048:0", img).CombinedOutput(); err != nil {
			t.Fatalf("sgdisk: %v %s", err, out)
		}
	}
	signatures := func() string {
		out, err := exec.Command("wipefs", "--noheadings", img).CombinedOutput()
		if err != nil {
			t.Fatalf("wipefs: %v %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	partition()
	calls := 0
	wipeFn := func(ctx context.Context) (string, error) {
		calls++
		if r := wipe.Device(ctx, img, nil); r.Err != nil {
			return "", r.Err
		}
		return "wiped disk.img", nil
	}
	h, _, cred := machineHost(t, "h-wipe", metalv1.HostDeprovisioning, "", nil)
	a := newAgentHost(t, cred, wipeFn)
	if err := a.d.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := signatures(); s != "" {
		t.Errorf("signatures left: %s", s)
	}
	c := meta.FindStatusCondition(getHost(t, h).Status.Conditions, kube.ConditionWiped)
	if c == nil || c.Status != metav1.ConditionTrue || c.Message != "wiped disk.img" {
		t.Fatalf("Wiped condition %+v", c)
	}
	// The same wipe offered again (the controller cleared the condition
	// without a new deprovisioning) is reported from the journal, not redone.
	partition()
	hh := getHost(t, h)
	meta.RemoveStatusCondition(&hh.Status.Conditions, kube.ConditionWiped)
	if err := env.Client.Status().Update(context.Background(), hh); err != nil {
		t.Fatal(err)
	}
	_ = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		ch := &metalv1.Host{}
		return cached.Get(ctx, ctrlclient.ObjectKeyFromObject(h), ch) == nil && meta.FindStatusCondition(ch.Status.Conditions, kube.ConditionWiped) == nil, nil
	})
	if err := a.d.Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || signatures() == "" {
		t.Errorf("wiped %d times; signatures now %q", calls, signatures())
	}
	if c := meta.FindStatusCondition(getHost(t, h).Status.Conditions, kube.ConditionWiped); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("recorded outcome not re-reported: %+v", c)
	}
}

// TestDaemonRun runs the loop: it reports on start, picks up a plan
// published while it runs, applies it, reports the outcome and the new
// kubelet version, and stops with its context.
func TestDaemonRun(t *testing.T) {
	draining := applying("plan-run")
	draining.State = "Draining"
	h, m, cred := machineHost(t, "h-run", metalv1.HostProvisioned, newK.SHA256, draining)
	a := newAgentHost(t, cred, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	}()
	poll := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return cond(), nil
		}); err != nil {
			t.Fatalf("never %s", what)
		}
	}
	poll("reported on start", func() bool {
		s := getHost(t, h).Status
		return s.Agent != nil && s.Agent.BootID != "" && s.Agent.KubeletVersion == oldK.Version
	})
	mm := getMachine(t, m)
	mm.Status.Upgrade.State = metalv1.UpgradeApplying
	if err := env.Client.Status().Update(context.Background(), mm); err != nil {
		t.Fatal(err)
	}
	poll("recorded the upgrade", func() bool { return outcome(getMachine(t, m).Status.Upgrade) == metalv1.AgentUpgradeSucceeded })
	poll("reported the new kubelet", func() bool { return getHost(t, h).Status.Agent.KubeletVersion == newK.Version })
	if a.running() != newK.Version {
		t.Errorf("running %q", a.running())
	}
}

// outcome is what the agent API recorded for the Machine's current plan
// (status.upgrade.agentResult; the Machine controller, not running here,
// turns it into status.upgrade.state).
func outcome(up *metalv1.UpgradeStatus) metalv1.AgentUpgradeOutcome {
	if up == nil || up.AgentResult == nil || up.AgentResult.PlanID != up.PlanID {
		return ""
	}
	return up.AgentResult.Outcome
}
