package delivery_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"anvil.dev/anvil/inventory/reread"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/boot/hoststore"
)

// laggingClient is the manager's client with a cache that is behind for
// the frozen Hosts: reads return the frozen version (and the credential
// hash index knows only its hash), as a lagging watch would. Host status
// patches are counted per Host.
type laggingClient struct {
	client.Client
	mu      sync.Mutex
	frozen  map[types.NamespacedName]*metalv1.Host
	patches map[types.NamespacedName]int
	// beforeHostPatch, if set, runs before a Host status patch is sent:
	// another writer's change landing while a request is being answered.
	beforeHostPatch func(key types.NamespacedName)
}

func (c *laggingClient) freeze(h *metalv1.Host) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen[client.ObjectKeyFromObject(h)] = h.DeepCopy()
}

func (c *laggingClient) patchCount(h *metalv1.Host) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.patches[client.ObjectKeyFromObject(h)]
}

func (c *laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if h, ok := obj.(*metalv1.Host); ok {
		c.mu.Lock()
		f := c.frozen[key]
		c.mu.Unlock()
		if f != nil {
			f.DeepCopyInto(h)
			return nil
		}
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *laggingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	hl, ok := list.(*metalv1.HostList)
	if !ok {
		return nil
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	hash, byHash := "", false
	if lo.FieldSelector != nil {
		hash, byHash = lo.FieldSelector.RequiresExactMatch(hoststore.IndexBootCredentialHash)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := hl.Items[:0]
	for _, h := range hl.Items {
		if f := c.frozen[client.ObjectKeyFromObject(&h)]; f != nil {
			h = *f.DeepCopy()
		}
		if byHash && (h.Status.BootCredential == nil || h.Status.BootCredential.Hash != hash) {
			continue
		}
		out = append(out, h)
	}
	if byHash { // a frozen Host the real cache no longer indexes under its old hash
		for k, f := range c.frozen {
			seen := false
			for _, h := range out {
				seen = seen || client.ObjectKeyFromObject(&h) == k
			}
			if !seen && f.Status.BootCredential != nil && f.Status.BootCredential.Hash == hash {
				out = append(out, *f.DeepCopy())
			}
		}
	}
	hl.Items = out
	return nil
}

func (c *laggingClient) Status() client.SubResourceWriter {
	return countingStatus{c.Client.Status(), c}
}

type countingStatus struct {
	client.SubResourceWriter
	c *laggingClient
}

func (s countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if _, ok := obj.(*metalv1.Host); ok {
		s.c.mu.Lock()
		s.c.patches[client.ObjectKeyFromObject(obj)]++
		before := s.c.beforeHostPatch
		s.c.mu.Unlock()
		if before != nil {
			before(client.ObjectKeyFromObject(obj))
		}
	}
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// Apply counts a server-side apply of a Host's status as a status patch.
func (s countingStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if u, ok := obj.(interface {
		GetKind() string
		GetName() string
		GetNamespace() string
	}); ok && u.GetKind() == "Host" {
		s.c.mu.Lock()
		s.c.patches[types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}]++
		s.c.mu.Unlock()
	}
	return s.SubResourceWriter.Apply(ctx, obj, opts...)
}

// countingReader counts Host reads that go past the cache.
type countingReader struct {
	client.Reader
	hostGets atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*metalv1.Host); ok {
		r.hostGets.Add(1)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

func agentCredentialOf(t *testing.T, body string) string {
	t.Helper()
	env := fileContents(t, parseIgnition(t, body), "/etc/anvil/agent.env")
	for _, line := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(line, "ANVIL_CREDENTIAL="); ok && v != "" {
			return v
		}
	}
	t.Fatalf("agent.env has no credential:\n%s", env)
	return ""
}

// The config fetch consumes the boot credential and stores the agent
// credential's hash in one Host status patch; a retry in the grace window
// writes nothing and gets the same agent credential.
func TestConfigFetchIsOneStatusPatch(t *testing.T) {
	needAPIServer(t)
	lc := &laggingClient{Client: mgr.GetClient(), frozen: map[types.NamespacedName]*metalv1.Host{}, patches: map[types.NamespacedName]int{}}
	f := newFixtureWith(t, func(o *delivery.WireOptions) { o.Client = lc })
	mac := newMAC()
	o := f.create(t, "fold-01", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
	m := credRe.FindStringSubmatch(f.script(t, hostAddr, mac))
	if m == nil {
		t.Fatal("script has no credential")
	}
	waitCredential(t, o, bootcred.HashCredential(m[1]))
	before := lc.patchCount(o.host)
	url := configserver.IgnitionURL(f.base()+"/config/", mac, m[1])
	code, body := f.get(t, hostAddr, url)
	if code != http.StatusOK {
		t.Fatalf("config fetch: HTTP %d %q", code, body)
	}
	if got := lc.patchCount(o.host) - before; got != 1 {
		t.Fatalf("the config fetch patched the Host's status %d times, want 1", got)
	}
	cred := agentCredentialOf(t, body)
	st := hostStatus(t, o)
	if st.BootCredential == nil || st.BootCredential.ConsumedAt == nil || st.Agent == nil || st.Agent.CredentialHash != agent.CredentialHash(cred) {
		t.Fatalf("status after the fetch: bootCredential %+v agent %+v", st.BootCredential, st.Agent)
	}
	// Ignition retrying within the grace window: same credential, no write.
	waitFor(t, "the cache to see the consumption", func() bool {
		h := &metalv1.Host{}
		return mgr.GetClient().Get(context.Background(), client.ObjectKeyFromObject(o.host), h) == nil &&
			h.Status.BootCredential != nil && h.Status.BootCredential.ConsumedAt != nil
	})
	before = lc.patchCount(o.host)
	code, body = f.get(t, hostAddr, url)
	if code != http.StatusOK || agentCredentialOf(t, body) != cred {
		t.Fatalf("retry in the grace window: HTTP %d, same agent credential %v", code, code == http.StatusOK && agentCredentialOf(t, body) == cred)
	}
	if got := lc.patchCount(o.host) - before; got != 0 {
		t.Fatalf("the retry patched the Host's status %d times, want 0", got)
	}
	if strings.Contains(f.logs.String(), cred) || strings.Contains(f.logs.String(), m[1]) {
		t.Fatal("a credential was logged")
	}
}

// A config fetch that reaches the endpoint before its cache holds the
// script's credential is served: the one Host of the MAC is re-read from
// the API server, at most once per interval however many requests miss.
func TestConfigFetchBeforeTheCacheHasTheCredential(t *testing.T) {
	needAPIServer(t)
	lc := &laggingClient{Client: mgr.GetClient(), frozen: map[types.NamespacedName]*metalv1.Host{}, patches: map[types.NamespacedName]int{}}
	api := &countingReader{Reader: mgr.GetAPIReader()}
	f := newFixtureWith(t, func(o *delivery.WireOptions) {
		o.Client, o.APIReader = lc, api
		o.RereadInterval = time.Hour // the test, not the clock, decides what is recent
	})
	mac, otherMAC := newMAC(), newMAC()
	o := f.create(t, "lag-01", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
	// Not booting: a miss for its MAC must cost no API read.
	idle := f.create(t, "lag-02", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{otherMAC}, leaseIP: otherAddr}, "b-1")
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(idle.host), h))
	h.Spec.BootRequest = nil
	must(t, env.Client.Update(context.Background(), h))
	waitFor(t, "the cache to see lag-02 idle", func() bool {
		h := &metalv1.Host{}
		return mgr.GetClient().Get(context.Background(), client.ObjectKeyFromObject(idle.host), h) == nil && h.Spec.BootRequest == nil
	})

	// The cache stops at the version before the script.
	h = &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(o.host), h))
	lc.freeze(h)
	m := credRe.FindStringSubmatch(f.script(t, hostAddr, mac))
	if m == nil {
		t.Fatal("script has no credential")
	}
	if st := hostStatus(t, o).BootCredential; st == nil || st.Hash != bootcred.HashCredential(m[1]) {
		t.Fatal("the script's credential is not in the API")
	}
	gets := func() int64 { return api.hostGets.Load() }
	miss := func(outcome string) float64 {
		return f.counter(t, "anvil_credential_cache_misses_total", "outcome", outcome)
	}
	base := gets()

	// Random credentials for the booting Host's MAC: 403, one re-read in all.
	for i := 0; i < 3; i++ {
		bogus := strings.Repeat(string(rune('A'+i)), 43)
		if code, _ := f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac, bogus)); code != http.StatusForbidden {
			t.Fatalf("random credential %d: HTTP %d, want 403", i, code)
		}
	}
	if got := gets() - base; got != 1 {
		t.Fatalf("three misses for one Host made %d API reads, want 1", got)
	}
	// For a Host that is not booting, and for an unknown MAC (refused
	// before any lookup: it has no lease): none.
	for _, mm := range []string{otherMAC, newMAC()} {
		if code, _ := f.get(t, otherAddr, configserver.IgnitionURL(f.base()+"/config/", mm, m[1])); code != http.StatusForbidden {
			t.Fatalf("credential with MAC %s: HTTP %d, want 403", mm, code)
		}
	}
	if got := gets() - base; got != 1 {
		t.Fatalf("misses for Hosts not booting made %d API reads in all, want 1", got)
	}
	if miss(reread.MissNotFound) != 3 || miss(reread.MissUnknownHost) != 1 {
		t.Fatalf("misses counted: not_found %v unknown_host %v, want 3 and 1", miss(reread.MissNotFound), miss(reread.MissUnknownHost))
	}
	if got := f.counter(t, "anvil_config_requests_denied_total", "reason", configserver.ReasonWrongAddress); got != 1 {
		t.Fatalf("wrong_address = %v, want 1 (the unknown MAC)", got)
	}

	// The real credential: served from the recent re-read, consumed and the
	// agent credential stored in one patch, against the API's version.
	before := lc.patchCount(o.host)
	code, body := f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac, m[1]))
	if code != http.StatusOK {
		t.Fatalf("config fetch while the cache lags: HTTP %d %q", code, body)
	}
	if got := lc.patchCount(o.host) - before; got != 1 {
		t.Fatalf("config fetch patched the Host's status %d times, want 1", got)
	}
	st := hostStatus(t, o)
	if st.BootCredential.ConsumedAt == nil || st.Agent == nil || st.Agent.CredentialHash != agent.CredentialHash(agentCredentialOf(t, body)) {
		t.Fatalf("status after the fetch: %+v %+v", st.BootCredential, st.Agent)
	}
	if miss(reread.MissFoundRecent) != 1 {
		t.Fatalf("found_recent = %v, want 1", miss(reread.MissFoundRecent))
	}
	// A retry in the grace window, cache still behind: served, no write.
	before = lc.patchCount(o.host)
	if code, _ := f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac, m[1])); code != http.StatusOK {
		t.Fatalf("retry while the cache lags: HTTP %d", code)
	}
	if got := lc.patchCount(o.host) - before; got != 0 {
		t.Fatalf("the retry patched %d times, want 0", got)
	}
	// From another address it is still a replay.
	if code, _ := f.get(t, otherAddr, configserver.IgnitionURL(f.base()+"/config/", mac, m[1])); code != http.StatusForbidden {
		t.Fatalf("replay from another address while the cache lags: HTTP %d, want 403", code)
	}
	if got := gets() - base; got != 1 {
		t.Fatalf("API reads of Hosts in all: %d, want 1", got)
	}
}

// A new boot request lands between the script's decision (on the informer's
// copy, boot b-1) and its credential write: the write gets a real 409, and
// the API server shows boot b-2. The host is told to ask again (it had a 500,
// which ended its boot), and asking again gets b-2's credential.
func TestScriptBootChangedWhileAnswering(t *testing.T) {
	needAPIServer(t)
	lc := &laggingClient{Client: mgr.GetClient(), frozen: map[types.NamespacedName]*metalv1.Host{}, patches: map[types.NamespacedName]int{}}
	f := newFixtureWith(t, func(o *delivery.WireOptions) { o.Client = lc })
	mac := newMAC()
	o := f.create(t, "changed-01", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
	changed := make(chan error, 1)
	var once sync.Once
	lc.mu.Lock()
	lc.beforeHostPatch = func(key types.NamespacedName) {
		if key != client.ObjectKeyFromObject(o.host) {
			return
		}
		once.Do(func() { changed <- newBootRequest(key, "b-2") })
	}
	lc.mu.Unlock()

	body := f.script(t, hostAddr, mac)
	if err := <-changed; err != nil {
		t.Fatalf("the new boot request: %v", err)
	}
	if credRe.MatchString(body) || !strings.Contains(body, "changed its network boot") || !strings.Contains(body, "chain --replace --autofree /boot/"+mac+".ipxe") {
		t.Fatalf("script while the boot changed: want no credential and a retry of the same script, got:\n%s", body)
	}
	if got := f.counter(t, "anvil_boot_script_credentials_total", "result", delivery.ResultBootChanged); got != 1 {
		t.Errorf("anvil_boot_script_credentials_total{result=%q} = %v, want 1", delivery.ResultBootChanged, got)
	}
	// The host asks again once the informer has the new boot.
	f.waitBooting(t, mac, "b-2")
	m := credRe.FindStringSubmatch(f.script(t, hostAddr, mac))
	if m == nil {
		t.Fatal("the retried script has no credential")
	}
	if st := hostStatus(t, o); st.BootCredential == nil || st.BootCredential.BootRequestID != "b-2" || st.BootCredential.Hash != bootcred.HashCredential(m[1]) {
		t.Fatalf("boot credential after the retry: %+v, want one for b-2 with the script's hash", st.BootCredential)
	}
}

// newBootRequest writes a new boot request, acted on, straight to the API
// server (as the Machine and Host controllers would).
func newBootRequest(key types.NamespacedName, bootID string) error {
	ctx := context.Background()
	h := &metalv1.Host{}
	if err := env.Client.Get(ctx, key, h); err != nil {
		return err
	}
	h.Spec.BootRequest = &metalv1.BootRequest{ID: bootID, Purpose: "Provision"}
	if err := env.Client.Update(ctx, h); err != nil {
		return err
	}
	h.Status.BootRequestID = bootID
	return env.Client.Status().Update(ctx, h)
}
