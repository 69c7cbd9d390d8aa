package machine_test

import (
	"anvil.dev/anvil/test/logs"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/drivers"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

// machineEnv is one test's namespace with its own manager running the
// Host, MachineClass and Machine controllers against the shared API
// server, and a Redfish BMC emulator with one system per Host.
type machineEnv struct {
	ns     string
	c      client.Client
	cs     kubernetes.Interface
	sim    *redfishsim.Server
	logs   *logs.Buffer
	secret string // the BMC password, checked for in logs
	opts   machine.Options
	stop   func() // stops the manager (tests of restarts call it early)
	// notifier, when set before (re)starting the manager, files the
	// Machine controller's hardware events.
	notifier machine.Notifier
}

var (
	sharedEnv  *envtest.Env
	sharedErr  error
	sharedOnce sync.Once
)

func apiServer(t *testing.T) *envtest.Env {
	t.Helper()
	sharedOnce.Do(func() { sharedEnv, sharedErr = envtest.Start() })
	if sharedErr != nil {
		need.OrSkip(t, "API server not available: %v", sharedErr)
	}
	return sharedEnv
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEnv != nil {
		_ = sharedEnv.Stop()
	}
	os.Exit(code)
}

// fastOptions keep the production code paths with test-sized timeouts.
func fastOptions() machine.Options {
	return machine.Options{BootTimeout: 2 * time.Minute, JoinTimeout: 2 * time.Minute, DrainTimeout: 30 * time.Second, WipeTimeout: 2 * time.Minute}
}

// newMachineEnv starts the BMC emulator with systems for hosts, a
// namespace, and a manager.
func newMachineEnv(t *testing.T, systems int, opts machine.Options) *machineEnv {
	t.Helper()
	env := apiServer(t)
	sys := make([]redfishsim.SystemOptions, systems)
	for i := range sys {
		sys[i] = redfishsim.SystemOptions{ID: fmt.Sprintf("node-%d", i), PowerState: "Off"}
	}
	const password = "rf-secret-4711"
	sim, err := redfishsim.New(redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: password,
		Systems: sys, PowerDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	e := &machineEnv{ns: env.Namespace(t), c: c, sim: sim, logs: &logs.Buffer{}, secret: password, opts: opts}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.cs = cs
	mustCreate(t, e.c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bmc", Namespace: e.ns},
		StringData: map[string]string{metalv1.CredentialsUsernameKey: "admin", metalv1.CredentialsPasswordKey: password}})
	e.stop = e.startManager(t)
	t.Cleanup(func() {
		e.stop()
		if t.Failed() {
			lines := strings.Split(e.logs.String(), "\n")
			t.Logf("last manager log lines:\n%s", strings.Join(lines[max(0, len(lines)-80):], "\n"))
		}
		if bytes.Contains([]byte(e.logs.String()), []byte(password)) {
			t.Errorf("the BMC password appears in the manager's logs")
		}
	})
	return e
}

// startManager runs one manager (one "anvil serve") for the namespace and
// returns its stop function (idempotent).
func (e *machineEnv) startManager(t *testing.T) func() {
	t.Helper()
	env := apiServer(t)
	skip := true
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000 // client-side throttling is not what these tests are about
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		Controller: config.Controller{SkipNameValidation: &skip},
		Logger:     logr.FromSlogHandler(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.Level(-2)})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pool := bmc.NewPool(bmc.PoolOptions{Guard: netguard.Guard{AllowLoopback: true}}) // the emulated BMC is on loopback
	hosts := &inventory.HostReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("anvil-host"),
		Power: inventory.PowerOptions{Pool: pool, CallTimeout: 10 * time.Second, PollInterval: time.Second, BackoffBase: 200 * time.Millisecond, BackoffMax: 2 * time.Second}}
	if err := hosts.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	classes := &machine.ClassReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("anvil-machineclass")}
	if err := classes.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	machines := &machine.MachineReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clientset: e.cs,
		Recorder: mgr.GetEventRecorder("anvil-machine"), Options: e.opts, Notifier: e.notifier}
	if err := machines.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	sets := &machine.MachineSetReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("anvil-machineset")}
	if err := sets.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	done := startManager(ctx, t, mgr, "manager")
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			pool.Close(context.Background())
		})
	}
}

func mustCreate(t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), o); err != nil {
		t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

// eventually polls cond (bounded) and fails with the last explanation.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	var last string
	// Bounds, not expectations: generous so a loaded machine passes too.
	timeout *= 3
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		// Each try gets its own time, so the last one before the deadline
		// reports the state, not the client's refusal to start a request.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ok, why := cond(ctx)
		last = why
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not after %s; last: %s", what, timeout, last)
	}
}

// startManager runs mgr until ctx ends; the channel closes once it returned.
func startManager(ctx context.Context, t *testing.T, mgr ctrl.Manager, name string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Logf("%s: %v", name, err)
		}
	}()
	return done
}
