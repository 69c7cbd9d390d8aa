package kube_test

import (
	testlogs "anvil.dev/anvil/test/logs"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/ratelimit"
	"anvil.dev/anvil/test/envtest"
)

// One real API server, one manager cache with the UID index, the real
// kube.Backend behind the real server.Server on a loopback httptest server.
var (
	env     *envtest.Env
	backend *kube.Backend
	apiURL  string        // base URL of the agent API
	cached  client.Client // the manager's (cache-backed) client
	logs    testlogs.Buffer
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = e.Stop() }()
	env = e
	log := logr.FromSlogHandler(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.Level(-4)}))
	ctrl.SetLogger(log)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := kube.AddIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cached = mgr.GetClient()
	backend, err = kube.New(kube.Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// As `anvil serve`: informer events wake held action polls.
	if err := backend.WatchEvents(ctx, mgr.GetCache()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	defer func() { cancel(); <-done }()
	srv, err := server.NewServer(server.ServerOptions{
		Backend: backend, Logger: log,
		// Generous, so only the rate-limit test runs out of tokens.
		Limiter: ratelimit.New(ratelimit.Options{Burst: 1000}),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle(agent.PathPrefix, srv) // as `anvil serve` mounts it
	hs := httptest.NewServer(mux)
	defer hs.Close()
	apiURL = hs.URL
	return m.Run()
}

// newHost creates a Host in ns, sets its status state and issues an agent
// credential; it waits until the cache serves the credential's hash.
func newHost(t *testing.T, ns, name string, state metalv1.HostState) (*metalv1.Host, string) {
	t.Helper()
	ctx := context.Background()
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: metalv1.HostSpec{
			BMC:      metalv1.BMC{Address: "manual://rack1"},
			BootMACs: []string{fmt.Sprintf("52:54:00:00:%02x:01", len(name))},
		},
	}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	if state != "" {
		h.Status.State = state
		if err := env.Client.Status().Update(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	cred, err := kube.IssueCredential(ctx, env.Client, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitCache(t, h, agent.CredentialHash(cred))
	return h, cred
}

// waitCache waits until the backend's cache has the Host with hash.
func waitCache(t *testing.T, h *metalv1.Host, hash string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		info, err := backend.Host(ctx, string(h.UID))
		return err == nil && info.CredentialHash == hash, nil
	})
	if err != nil {
		t.Fatalf("cache never saw the credential of %s", h.Name)
	}
}

// waitFor polls obj until cond holds.
func waitFor[T client.Object](t *testing.T, obj T, what string, cond func(T) bool) T {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, nil
		}
		return cond(obj), nil
	})
	if err != nil {
		t.Fatalf("%s never %s: %+v", obj.GetName(), what, obj)
	}
	return obj
}

// machineFor creates a MachineClass with kubelets, a Machine of it with
// the given upgrade status, and points the Host's consumerRef at it.
func machineFor(t *testing.T, h *metalv1.Host, kubelets []metalv1.KubeletArtifact, up *metalv1.UpgradeStatus) *metalv1.Machine {
	t.Helper()
	ctx := context.Background()
	zero := "0000000000000000000000000000000000000000000000000000000000000000"
	mc := &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.Namespace, Name: h.Name + "-class"},
		Spec: metalv1.MachineClassSpec{
			Kernel:   metalv1.Artifact{URL: "kernel", SHA256: zero},
			Initrds:  []metalv1.Artifact{{URL: "initrd", SHA256: zero}},
			Config:   metalv1.ConfigTemplate{Format: "cloud-init", Template: "#cloud-config\n"},
			Kubelets: kubelets,
			Upgrade:  metalv1.UpgradePolicy{HealthCheckTimeout: &metav1.Duration{Duration: 90 * time.Second}},
		},
	}
	if err := env.Client.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	m := &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.Namespace, Name: h.Name + "-machine"},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: mc.Name}, Version: "v1.37.0"},
	}
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	if up != nil {
		m.Status.Upgrade = up
		if err := env.Client.Status().Update(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", APIVersion: metalv1.GroupVersion.String(), Namespace: m.Namespace, Name: m.Name, UID: m.UID}
	if err := env.Client.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	// Wait until the backend's cache has all three, so that a "none" is
	// the backend's verdict and not a cache lagging behind.
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		ch, cm, cmc := &metalv1.Host{}, &metalv1.Machine{}, &metalv1.MachineClass{}
		if cached.Get(ctx, client.ObjectKeyFromObject(h), ch) != nil || cached.Get(ctx, client.ObjectKeyFromObject(m), cm) != nil ||
			cached.Get(ctx, client.ObjectKeyFromObject(mc), cmc) != nil {
			return false, nil
		}
		return ch.Spec.ConsumerRef != nil && (up == nil || cm.Status.Upgrade != nil), nil
	})
	if err != nil {
		t.Fatal("the cache never caught up with the Machine")
	}
	return m
}
