package delivery_test

import (
	"anvil.dev/anvil/test/need"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/boot/hoststore"
	"anvil.dev/anvil/internal/ratelimit"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/pxe/netboot"
	"anvil.dev/anvil/test/envtest"
)

// One real API server and one manager per test binary, as one Anvil
// replica has: its cache feeds the boot index and the credential store.
// No controllers run; tests write Host status as the controllers would.
var (
	env       *envtest.Env
	setupErr  error
	mgr       ctrl.Manager
	ix        *index.Index
	leases    *index.LeaseStore
	clientset kubernetes.Interface
	// tokenCache is the bootstrap token informer every fixture lists from.
	tokenCache *token.Cache
	// agentURL is the real agent API (agent/server over kube.Backend on
	// the shared manager), for checking the agent credentials configs
	// carry.
	agentURL string
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	code := run(m)
	os.Exit(code)
}

func run(m *testing.M) int {
	e, err := envtest.Start()
	if err != nil {
		setupErr = err
		return m.Run() // every test skips (or fails under CI=true)
	}
	env = e
	defer func() { _ = e.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := setup(ctx); err != nil {
		setupErr = err
		return m.Run()
	}
	return m.Run()
}

func setup(ctx context.Context) error {
	var err error
	mgr, err = ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logr.Discard()})
	if err != nil {
		return err
	}
	// What Wire does with WireOptions.Indexer; done once here because a
	// manager takes each index only once and every test wires anew.
	if err := hoststore.AddIndex(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := delivery.AddMediaIndex(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := kube.AddIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	backend, err := kube.New(kube.Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Logger: logr.Discard()})
	if err != nil {
		return err
	}
	agentAPI, err := server.NewServer(server.ServerOptions{Backend: backend, Logger: logr.Discard(), Limiter: ratelimit.New(ratelimit.Options{Burst: 1000})})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(agent.PathPrefix, agentAPI) // as anvil serve mounts it
	agentSrv := httptest.NewServer(mux)
	go func() { <-ctx.Done(); agentSrv.Close() }()
	agentURL = agentSrv.URL
	if ix, err = index.New(ctx, index.Options{Informers: mgr.GetCache()}); err != nil {
		return err
	}
	if leases, err = index.NewLeaseStore(index.LeaseStoreOptions{Index: ix, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}); err != nil {
		return err
	}
	if clientset, err = kubernetes.NewForConfig(env.Config); err != nil {
		return err
	}
	// Every test finds tokens through the informer, as anvil serve does.
	tokenCache = token.NewCache(clientset, token.CacheOptions{})
	go func() { _ = tokenCache.Start(ctx) }()
	go func() { _ = mgr.Start(ctx) }()
	sctx, scancel := context.WithTimeout(ctx, 60*time.Second)
	defer scancel()
	if !mgr.GetCache().WaitForCacheSync(sctx) {
		return fmt.Errorf("manager cache did not sync")
	}
	if !tokenCache.WaitForSync(sctx) {
		return fmt.Errorf("bootstrap token cache did not sync")
	}
	return ix.WaitForSync(sctx)
}

// needAPIServer skips (or under CI=true fails) without the real API server.
func needAPIServer(t *testing.T) {
	t.Helper()
	if setupErr == nil {
		return
	}
	need.OrSkip(t, "API server not available: %v", setupErr)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// clock is a settable clock near real time: tokens minted with it are
// still judged by the real API server.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// logBuffer collects every log line of the services under test.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) write(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(prefix + " " + args + "\n")
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fixture is one wired delivery (Scripts + config endpoint on a boot HTTP
// server on loopback) over the shared manager, with its own metrics, logs
// and clock.
type fixture struct {
	ns     string
	reg    *prometheus.Registry
	logs   *logBuffer
	clock  *clock
	wiring *delivery.Wiring
	srv    *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, func(*delivery.WireOptions) {})
}

// newFixtureWith lets a test change the options, e.g. wrap the clients.
func newFixtureWith(t *testing.T, change func(*delivery.WireOptions)) *fixture {
	t.Helper()
	return newFixtureMode(t, false, change)
}

// newProxyFixture is a fixture as in proxy-DHCP mode: netboot has no lease
// store, so only static addresses are known.
func newProxyFixture(t *testing.T, change func(*delivery.WireOptions)) *fixture {
	t.Helper()
	return newFixtureMode(t, true, change)
}

func newFixtureMode(t *testing.T, proxy bool, change func(*delivery.WireOptions)) *fixture {
	t.Helper()
	f := &fixture{ns: env.Namespace(t), reg: prometheus.NewRegistry(), logs: &logBuffer{}, clock: &clock{}}
	log := funcr.New(f.logs.write, funcr.Options{Verbosity: 4})
	o := delivery.WireOptions{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clientset: clientset, Tokens: tokenCache,
		CACertPEM: env.Config.CAData, APIServerEndpoint: env.Config.Host,
		// Refusals are part of the tests; do not let them turn into 429s.
		Limiter:    ratelimit.New(ratelimit.Options{Burst: 1000}),
		ScriptRate: delivery.ScriptRate{Burst: 1000},
		Registerer: f.reg, Logger: log, Now: f.clock.Now,
	}
	change(&o)
	w, err := delivery.Wire(context.Background(), o)
	must(t, err)
	f.wiring = w
	comp := netboot.Components{Index: ix, Leases: leases}
	if proxy {
		comp.Leases = nil
	}
	scripts, err := w.Scripts(comp)
	must(t, err)
	hs, err := httpboot.New(httpboot.Options{Scripts: scripts, Registerer: f.reg, Logger: log})
	must(t, err)
	must(t, w.HTTPHook(comp, hs))
	f.srv = httptest.NewServer(hs.Handler())
	t.Cleanup(f.srv.Close)
	t.Cleanup(hs.Close)
	return f
}

func (f *fixture) base() string { return f.srv.URL }

// get fetches url from the source address from (a loopback address).
func (f *fixture) get(t *testing.T, from, url string) (int, string) {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second,
	}).DialContext}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, string(b)
}

// script fetches /boot/<mac>.ipxe from the address from.
func (f *fixture) script(t *testing.T, from, mac string) string {
	t.Helper()
	code, body := f.get(t, from, f.base()+"/boot/"+mac+".ipxe")
	if code != http.StatusOK {
		t.Fatalf("script for %s from %s: HTTP %d: %s", mac, from, code, body)
	}
	return body
}

// counter returns the value of a counter with one label, from the registry
// (summed over its other labels, if it has more).
func (f *fixture) counter(t *testing.T, name, label, value string) float64 {
	t.Helper()
	mfs, err := f.reg.Gather()
	must(t, err)
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabel(m, label, value) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// hostSpec describes a test Host held by a Machine of a class from
// deploy/examples.
type hostSpec struct {
	classFile string // deploy/examples/<file>
	version   string // Machine spec.version
	macs      []string
	leaseIP   string // status.leases for every MAC, if set
	static    string // spec.network.address, if set (CIDR)
	labels    map[string]string
	live      bool // drop the class's spec.image: a live (diskless) boot
}

type objects struct {
	host    *metalv1.Host
	machine *metalv1.Machine
	class   *metalv1.MachineClass
}

// loadClass reads a MachineClass from deploy/examples into namespace ns.
func loadClass(t *testing.T, file, ns string) *metalv1.MachineClass {
	t.Helper()
	root, err := envtest.RepoRoot()
	must(t, err)
	b, err := os.ReadFile(filepath.Join(root, "deploy", "examples", file))
	must(t, err)
	c := &metalv1.MachineClass{}
	must(t, yaml.UnmarshalStrict(b, c))
	c.Namespace = ns
	return c
}

// create makes a MachineClass, a Machine and a Host held by it, then sets
// the Host's status as the Host controller would after acting on boot
// request bootID: Provisioning, bootRequestID, and the DHCP lease.
func (f *fixture) create(t *testing.T, name string, s hostSpec, bootID string) objects {
	t.Helper()
	ctx := context.Background()
	var o objects
	o.class = loadClass(t, s.classFile, f.ns)
	if s.live {
		o.class.Name += "-live"
		o.class.Spec.Image = nil
	}
	if err := env.Client.Create(ctx, o.class); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.class), o.class))
	o.machine = &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m-" + name},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: o.class.Name}, Version: s.version},
	}
	must(t, env.Client.Create(ctx, o.machine))
	o.host = &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: s.labels},
		Spec: metalv1.HostSpec{
			BMC:      metalv1.BMC{Address: "manual://lab"},
			BootMACs: s.macs,
			Online:   true,
			ConsumerRef: &corev1.ObjectReference{
				Kind: "Machine", APIVersion: metalv1.GroupVersion.String(),
				Namespace: f.ns, Name: o.machine.Name, UID: o.machine.UID,
			},
			BootRequest: &metalv1.BootRequest{ID: bootID, Purpose: "Provision"},
		},
	}
	if s.static != "" {
		o.host.Spec.Network = &metalv1.HostNetwork{Address: s.static}
	}
	must(t, env.Client.Create(ctx, o.host))
	o.host.Status.State = metalv1.HostProvisioning
	o.host.Status.PowerState = metalv1.PowerOn
	o.host.Status.BootRequestID = bootID
	if s.leaseIP != "" {
		for _, mac := range s.macs {
			o.host.Status.Leases = append(o.host.Status.Leases, metalv1.DHCPLease{MAC: mac, IP: s.leaseIP, ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour))})
		}
	}
	must(t, env.Client.Status().Update(ctx, o.host))
	f.waitBooting(t, s.macs[0], bootID)
	if want := cmp.Or(strings.Split(s.static, "/")[0], s.leaseIP); want != "" {
		for _, mac := range s.macs {
			waitFor(t, "the address of "+mac, func() bool {
				a, ok := leases.AddressOf(mustMAC(t, mac))
				return ok && a.String() == want
			})
		}
	}
	return o
}

// newBoot makes the Host network boot again: a new boot request, acted on.
func (f *fixture) newBoot(t *testing.T, o objects, bootID string) {
	t.Helper()
	ctx := context.Background()
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.host), h))
	h.Spec.BootRequest = &metalv1.BootRequest{ID: bootID, Purpose: "Provision"}
	must(t, env.Client.Update(ctx, h))
	h.Status.BootRequestID = bootID
	must(t, env.Client.Status().Update(ctx, h))
	f.waitBooting(t, o.host.Spec.BootMACs[0], bootID)
}

// waitBooting waits until the index has the Host network booting for bootID.
func (f *fixture) waitBooting(t *testing.T, mac, bootID string) {
	t.Helper()
	waitFor(t, "the index to see "+mac+" booting "+bootID, func() bool {
		h, ok := ix.Host(mustMAC(t, mac))
		return ok && index.Decide(h).PXE && h.Status.BootRequestID == bootID
	})
}

// waitCredential waits until the manager's cache (where the config
// endpoint looks credentials up) holds the credential with hash.
func waitCredential(t *testing.T, o objects, hash string) {
	t.Helper()
	waitFor(t, "the credential in the cache", func() bool {
		var l metalv1.HostList
		if err := mgr.GetClient().List(context.Background(), &l, client.MatchingFields{hoststore.IndexBootCredentialHash: hash}); err != nil {
			return false
		}
		return len(l.Items) == 1 && l.Items[0].Name == o.host.Name
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func mustMAC(t *testing.T, s string) net.HardwareAddr {
	t.Helper()
	hw, err := net.ParseMAC(s)
	must(t, err)
	return hw
}

var macSeq = struct {
	sync.Mutex
	n int
}{}

// newMAC returns a locally administered MAC unique in this test binary and
// unlikely to collide with another test binary's Hosts (random high bytes).
func newMAC() string {
	macSeq.Lock()
	defer macSeq.Unlock()
	macSeq.n++
	return fmt.Sprintf("02:%02x:%02x:00:%02x:%02x", os.Getpid()&0xff, (os.Getpid()>>8)&0xff, macSeq.n>>8, macSeq.n&0xff)
}

var credRe = regexp.MustCompile(`cred=([A-Za-z0-9_-]{43})`)

// tokens lists the Machine's Anvil bootstrap tokens.
func tokens(t *testing.T, o objects) []token.Info {
	t.Helper()
	l, err := token.List(context.Background(), clientset, token.ListOptions{MachineUID: o.machine.UID})
	must(t, err)
	return l
}
