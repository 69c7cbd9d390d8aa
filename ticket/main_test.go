package ticket_test

import (
	"anvil.dev/anvil/test/logs"
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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/tickettest"
	"anvil.dev/anvil/ticket"
)

var (
	env         *envtest.Env
	managerLogs logs.Buffer // every log line of every manager, scanned for secrets

	secretsMu  sync.Mutex
	allSecrets []string // every signing secret a test made
)

func TestMain(m *testing.M) {
	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	if err := tickettest.InstallCRDs(e.Config); err != nil {
		fmt.Fprintln(os.Stderr, "installing ticket CRDs:", err)
		_ = e.Stop()
		os.Exit(1)
	}
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(&managerLogs, &slog.HandlerOptions{Level: slog.Level(-4)})))
	code := m.Run()
	_ = e.Stop()
	os.Exit(code)
}

// testDelivery is fast backoff for tests; the same code paths as production.
func testDelivery() ticket.Options {
	return ticket.Options{
		Guard:          ticket.Guard{Guard: netguard.Guard{AllowLoopback: true}},
		Backoff:        ticket.Backoff{Base: 20 * time.Millisecond, Max: 300 * time.Millisecond, GiveUpAfter: time.Hour},
		DefaultTimeout: 2 * time.Second,
	}
}

// manager is one running controller manager, scoped to one namespace so
// tests do not act on each other's objects.
type manager struct {
	mgr    ctrl.Manager
	outbox *ticket.Outbox
	stop   func()
}

func startManager(t *testing.T, ns string, o ticket.SetupOptions, extra func(ctrl.Manager) error) *manager {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:     env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:     ctrl.Log.WithName(ns),
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := ticket.Setup(mgr, o)
	if err != nil {
		t.Fatal(err)
	}
	if extra != nil {
		if err := extra(mgr); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	var once sync.Once
	m := &manager{mgr: mgr, outbox: out, stop: func() { once.Do(func() { cancel(); <-done }) }}
	t.Cleanup(m.stop)
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache never synced")
	}
	return m
}

// newSigningSecret makes a whsec_ secret, remembers it for the leak scan
// and stores it in a Secret.
func newSigningSecret(t *testing.T, ns, name string) string {
	t.Helper()
	s := newSecretValue()
	storeSecret(t, ns, name, s)
	return s
}

func newSecretValue() string {
	s := ticket.NewSecret()
	secretsMu.Lock()
	allSecrets = append(allSecrets, s)
	secretsMu.Unlock()
	return s
}

func storeSecret(t *testing.T, ns, name, value string) {
	t.Helper()
	must(t, env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       map[string][]byte{"secret": []byte(value)},
	}))
}

// endpointWithReceiver starts a receiver and points a TicketEndpoint at it.
func endpointWithReceiver(t *testing.T, ns, name string, mutate func(*metalv1.TicketEndpoint)) *tickettest.Receiver {
	t.Helper()
	sec := newSigningSecret(t, ns, name+"-key")
	rcv, err := tickettest.Start(tickettest.Options{Secret: sec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcv.Close)
	ep := &metalv1.TicketEndpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       metalv1.TicketEndpointSpec{URL: rcv.URL, SecretRef: metalv1.SecretKeyReference{Name: name + "-key"}},
	}
	if mutate != nil {
		mutate(ep)
	}
	must(t, env.Client.Create(context.Background(), ep))
	return rcv
}

// newMachine creates a Machine waiting for hardware.
func newMachine(t *testing.T, ns, name string, labels map[string]string) *metalv1.Machine {
	t.Helper()
	ctx := context.Background()
	m := &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "fcos"}, Version: "v1.37.2", FailureDomain: "fd-a"},
	}
	must(t, env.Client.Create(ctx, m))
	m.Status.Phase = metalv1.MachineWaitingForHardware
	must(t, env.Client.Status().Update(ctx, m))
	return m
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

func deliveries(t *testing.T, ns string) []metalv1.TicketDelivery {
	t.Helper()
	var list metalv1.TicketDeliveryList
	must(t, env.Client.List(context.Background(), &list, client.InNamespace(ns)))
	return list.Items
}

// allFinished reports whether every delivery in ns is Delivered, Failed or
// Superseded, and there are want of them.
func allFinished(t *testing.T, ns string, want int) bool {
	ds := deliveries(t, ns)
	if len(ds) != want {
		return false
	}
	for _, d := range ds {
		switch d.Status.State {
		case metalv1.TicketDelivered, metalv1.TicketFailed, metalv1.TicketSuperseded:
		default:
			return false
		}
	}
	return true
}

func describe(ds []metalv1.TicketDelivery) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\n  %s %s %s state=%s attempts=%d code=%d err=%q", d.Name, d.Spec.EventType, d.Spec.Object.Name, d.Status.State, d.Status.Attempts, d.Status.ResponseCode, d.Status.LastError)
	}
	return b.String()
}

func getMachine(t *testing.T, ns, name string) *metalv1.Machine {
	t.Helper()
	m := &metalv1.Machine{}
	must(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, m))
	return m
}
