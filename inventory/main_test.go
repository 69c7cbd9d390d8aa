package inventory_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/envtest"
)

var (
	env         *envtest.Env
	managerLogs syncBuffer // every log line of the manager, checked for secrets
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMain runs one real API server and one manager with the Host
// controller for every test in the package.
func TestMain(m *testing.M) {
	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	log := logr.FromSlogHandler(slog.NewTextHandler(&managerLogs, &slog.HandlerOptions{Level: slog.Level(-4)}))
	ctrl.SetLogger(log)
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r := &inventory.HostReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("anvil-host")}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	code := m.Run()
	cancel()
	<-done
	_ = e.Stop()
	os.Exit(code)
}

// waitHost polls until cond holds for the Host or the timeout passes.
func waitHost(t *testing.T, key client.ObjectKey, what string, cond func(*metalv1.Host) bool) *metalv1.Host {
	t.Helper()
	h := &metalv1.Host{}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, h); err != nil {
			return false, nil
		}
		return cond(h), nil
	})
	if err != nil {
		t.Fatalf("Host %s never %s; last status: %+v", key, what, h.Status)
	}
	return h
}
