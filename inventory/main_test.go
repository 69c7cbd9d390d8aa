package inventory_test

import (
	"anvil.dev/anvil/test/logs"
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/drivers"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/envtest"
)

var (
	env         *envtest.Env
	managerLogs logs.Buffer // every log line of the manager, checked for secrets
	// sharedBMC is a real ipmi_sim every validation test points its Hosts
	// at, so registration really talks to a BMC. Nil when ipmi_sim is
	// missing outside CI: then the controller runs without BMC calls.
	sharedBMC *bmctest.IPMISim
	// secretReads counts the Host controller's uncached Secret reads.
	secretReads = &countingReader{n: map[client.ObjectKey]int{}}
	// mgrCache is the manager's cache, to wait until it has seen a change.
	mgrCache client.Reader
)

// countingReader counts Gets of Secrets by key and passes everything on.
type countingReader struct {
	client.Reader
	mu sync.Mutex
	n  map[client.ObjectKey]int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		c.mu.Lock()
		c.n[key]++
		c.mu.Unlock()
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) reads(key client.ObjectKey) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// ipmiAddr is the BMC address validation tests use.
func ipmiAddr() string {
	if sharedBMC == nil {
		return "ipmi://192.0.2.1:9" // never dialled: no BMC pool in this mode (TEST-NET-1, not loopback: the guard refuses that)
	}
	return sharedBMC.Address()
}

// testGuard is the BMC pool's request-forgery guard in these tests.
var testGuard = netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

// testPower is the controller's BMC tuning in tests: short so tests are
// quick, the same code paths as production.
var testPower = inventory.PowerOptions{
	CallTimeout:  20 * time.Second, // BMCs in TestSlowBMCsAndADeadOne take 2 s a request
	PollInterval: time.Second,
	// BMC event streams on, as in production; a Host whose BMC's stream
	// is open is not polled again within a test (TestBMCEvents).
	Events:             true,
	EventsPollInterval: time.Hour,
	BackoffBase:        300 * time.Millisecond,
	BackoffMax:         5 * time.Second,
	AuthBackoff:        3 * time.Second,
	// A power action's read-back keeps the production backoff (1 s, 2 s,
	// ...); its deadline is short so TestPowerActionTimesOut is quick.
	ActionTimeout: 10 * time.Second,
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
	power := testPower
	if _, err := bmctest.FindIPMISim(""); err == nil {
		sharedBMC, err = bmctest.NewIPMISim(bmctest.IPMISimOptions{Username: "admin", Password: testPassword})
		if err != nil {
			fmt.Fprintln(os.Stderr, "ipmi_sim:", err)
			os.Exit(1)
		}
		defer sharedBMC.Close()
		// The emulated BMCs listen on 127.0.0.1; other loopback addresses
		// stay refused (TestBMCAddressGuard uses 127.0.0.2).
		pool := bmc.NewPool(bmc.PoolOptions{Guard: testGuard})
		defer pool.Close(context.Background())
		power.Pool = pool
	} else if os.Getenv("CI") == "true" {
		fmt.Fprintln(os.Stderr, "ipmi_sim is required in CI:", err)
		os.Exit(1)
	} else {
		fmt.Fprintln(os.Stderr, "ipmi_sim not found (apt-get install openipmi): BMC tests skip")
	}
	secretReads.Reader = mgr.GetAPIReader()
	mgrCache = mgr.GetCache()
	r := &inventory.HostReconciler{Client: mgr.GetClient(), APIReader: secretReads, Recorder: mgr.GetEventRecorder("anvil-host"), Power: power, MaxConcurrentReconciles: 64,
		Media: inventory.MediaOptions{BaseURL: testMediaBase}}
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
	if sharedBMC != nil {
		_ = sharedBMC.Close()
	}
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
