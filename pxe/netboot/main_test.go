package netboot_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"anvil.dev/anvil/test/envtest"
)

// testEnv is one real API server and one manager (its cache feeds the
// services; no controllers run: the tests write Host status themselves).
type testEnv struct {
	*envtest.Env
	Manager ctrl.Manager
}

var (
	env        testEnv
	testLogger = logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(testLogger)
	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: testLogger})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = e.Stop()
		os.Exit(1)
	}
	env = testEnv{Env: e, Manager: mgr}
	ctx, cancel := context.WithCancel(context.Background())
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
