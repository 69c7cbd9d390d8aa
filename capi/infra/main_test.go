package infra_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"anvil.dev/anvil/capi/infra"
	"anvil.dev/anvil/test/envtest"
)

// One real API server per test binary with Anvil's CRDs and Cluster API's
// Cluster and Machine (testdata/capi-crds), one manager running the
// AnvilMachine and AnvilCluster controllers. Anvil's own Machine
// controller does not run: tests write the Anvil Machine's status as it
// would.
var (
	env *envtest.Env
	c   client.Client // knows Cluster API's types too
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	env = e
	code := func() int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := setup(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "setup:", err)
			return 1
		}
		return m.Run()
	}()
	_ = e.Stop()
	os.Exit(code)
}

func scheme() *runtime.Scheme {
	s := envtest.Scheme()
	if err := clusterv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

func setup(ctx context.Context) error {
	s := scheme()
	var err error
	if c, err = client.New(env.Config, client.Options{Scheme: s}); err != nil {
		return err
	}
	if err := installCAPICRDs(ctx); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logr.Discard()})
	if err != nil {
		return err
	}
	if err := (&infra.AnvilMachineReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&infra.AnvilClusterReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(sctx) {
		return fmt.Errorf("manager cache did not sync")
	}
	return nil
}

// installCAPICRDs creates the copied CRDs and waits until they are served.
func installCAPICRDs(ctx context.Context) error {
	return envtest.InstallCRDFiles(ctx, c, filepath.Join("testdata", "capi-crds", "*.yaml"))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond (reading the API server) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}
