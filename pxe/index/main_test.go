package index_test

import (
	testlogs "anvil.dev/anvil/test/logs"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/test/envtest"
)

// One real API server for the package, and one manager (cache only, no
// controllers: the tests play the Host controller by writing status) whose
// requests are counted.
var (
	env       *envtest.Env
	ix        *index.Index
	mgrClient client.Client // the manager's client: cached reads, counted writes
	mgrReader client.Reader // the manager's uncached reader (counted)
	apiCalls  atomic.Int64  // non-watch requests sent through the manager's config
	subnetSeq atomic.Uint32
	// Every log line of the index, the stores and the managers, at every
	// level: checked for secrets.
	logs       testlogs.Buffer
	testLogger = logr.FromSlogHandler(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.Level(-8)}))
)

// countingRT counts every request except long-running watches, which the
// informers open once and keep.
type countingRT struct {
	next  http.RoundTripper
	count *atomic.Int64
}

func (c countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Query().Get("watch") != "true" {
		c.count.Add(1)
	}
	return c.next.RoundTrip(r)
}

// startManager runs a manager with a counting transport and an Index on its
// cache until ctx is done.
func startManager(ctx context.Context, e *envtest.Env, count *atomic.Int64) (ctrl.Manager, *index.Index, error) {
	cfg := rest.CopyConfig(e.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingRT{next: rt, count: count} })
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: testLogger})
	if err != nil {
		return nil, nil, err
	}
	x, err := index.New(ctx, index.Options{Informers: mgr.GetCache(), Logger: testLogger})
	if err != nil {
		return nil, nil, err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := x.WaitForSync(sctx); err != nil {
		return nil, nil, err
	}
	return mgr, x, nil
}

func TestMain(m *testing.M) {
	ctrl.SetLogger(testLogger)
	e, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	ctx, cancel := context.WithCancel(context.Background())
	mgr, x, err := startManager(ctx, e, &apiCalls)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		cancel()
		_ = e.Stop()
		os.Exit(1)
	}
	ix, mgrClient, mgrReader = x, mgr.GetClient(), mgr.GetAPIReader()
	code := m.Run()
	cancel()
	_ = e.Stop()
	os.Exit(code)
}

// randMAC returns a locally administered unicast MAC in canonical form.
func randMAC(t testing.TB) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[0] = b[0]&0xfc | 0x02
	return net.HardwareAddr(b).String()
}

func hw(t testing.TB, s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// testSubnet returns a /24 no other test uses, so leases and static
// addresses of Hosts left over from other tests never interfere (envtest
// has no namespace controller: deleted namespaces keep their objects).
func testSubnet() netip.Prefix {
	n := subnetSeq.Add(1)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 200 + byte(n/250), byte(n % 250), 0}), 24)
}

func addr(p netip.Prefix, last byte) netip.Addr {
	b := p.Addr().As4()
	b[3] = last
	return netip.AddrFrom4(b)
}

// newHost creates a Host with a manual:// BMC (accepted) and the given boot
// MACs; mutate may change it before creation.
func newHost(t testing.TB, ns, name string, macs []string, mutate ...func(*metalv1.Host)) *metalv1.Host {
	t.Helper()
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://rack-1"}, BootMACs: macs},
	}
	for _, m := range mutate {
		m(h)
	}
	if err := env.Client.Create(context.Background(), h); err != nil {
		t.Fatalf("creating Host %s: %v", name, err)
	}
	return h
}

// updateHost re-reads a Host and applies mutate to its spec (status=false)
// or status (status=true), retrying on conflict.
func updateHost(t testing.TB, key client.ObjectKey, status bool, mutate func(*metalv1.Host)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := &metalv1.Host{}
		if err := env.Client.Get(context.Background(), key, h); err != nil {
			return err
		}
		mutate(h)
		if status {
			return env.Client.Status().Update(context.Background(), h)
		}
		return env.Client.Update(context.Background(), h)
	})
	if err != nil {
		t.Fatalf("updating Host %s: %v", key, err)
	}
}

// eventually polls cond (every 20ms, at most 30s); the index follows the
// API through a watch, so every check of it waits for the event.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
