package hoststore_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"anvil.dev/anvil/inventory/reread"
	"anvil.dev/anvil/test/need"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/hoststore"
	"anvil.dev/anvil/test/envtest"
)

var (
	env      *envtest.Env
	setupErr error
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	e, err := envtest.Start()
	if err != nil {
		setupErr = err
		os.Exit(m.Run())
	}
	env = e
	code := m.Run()
	_ = e.Stop()
	os.Exit(code)
}

// needAPIServer skips (or under CI=true fails) without the real API server.
func needAPIServer(t *testing.T) {
	t.Helper()
	if setupErr == nil {
		return
	}
	need.OrSkip(t, "API server not available: %v", setupErr)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newStore starts a manager of its own, as one Anvil process (or replica)
// would have, and returns a Store on its cache. Stopping it is a restart.
func newStore(t *testing.T) (*hoststore.Store, func()) {
	t.Helper()
	return newStoreWith(t, nil)
}

// newStoreWith is newStore with the manager's client wrapped by wrap.
func newStoreWith(t *testing.T, wrap func(client.Client) client.Client) (*hoststore.Store, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	must(t, err)
	must(t, hoststore.AddIndex(ctx, mgr.GetFieldIndexer()))
	c := mgr.GetClient()
	if wrap != nil {
		c = wrap(c)
	}
	s, err := hoststore.New(hoststore.Options{Client: c, APIReader: mgr.GetAPIReader()})
	must(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	if !mgr.GetCache().WaitForCacheSync(sctx) {
		t.Fatal("cache did not sync")
	}
	return s, stop
}

var (
	t0    = time.Now().UTC().Truncate(time.Second)
	macA  = "52:54:00:00:20:01"
	addrA = netip.MustParseAddr("192.0.2.10")
	addrB = netip.MustParseAddr("192.0.2.66")
)

func newHost(t *testing.T, name string, macs ...string) bootcred.HostKey {
	t.Helper()
	ns := env.Namespace(t)
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: macs},
	}
	must(t, env.Client.Create(context.Background(), h))
	return bootcred.HostKey{Namespace: ns, Name: name, UID: string(h.UID)}
}

func manager(s bootcred.Store) *bootcred.Manager {
	return bootcred.New(bootcred.Options{Store: s, Now: func() time.Time { return t0 }})
}

// waitVisible waits until the store's cache sees the record with hash.
func waitVisible(t *testing.T, s *hoststore.Store, hash string) bootcred.Record {
	t.Helper()
	var rec bootcred.Record
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err := s.Get(ctx, hash)
		if err != nil {
			return false, nil
		}
		rec = r
		return true, nil
	})
	if err != nil {
		t.Fatalf("record %s never visible in the cache", hash[:12])
	}
	return rec
}

// waitGone waits until the store's cache no longer finds hash.
func waitGone(t *testing.T, s *hoststore.Store, hash string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := s.Get(ctx, hash)
		return errors.Is(err, bootcred.ErrNotFound), nil
	})
	if err != nil {
		t.Fatalf("record %s still visible", hash[:12])
	}
}

func apiStatus(t *testing.T, host bootcred.HostKey) *metalv1.BootCredentialStatus {
	t.Helper()
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: host.Namespace, Name: host.Name}, h))
	return h.Status.BootCredential
}

func verify(m *bootcred.Manager, cred, mac string, from netip.Addr, at time.Time) error {
	_, err := m.Verify(context.Background(), bootcred.Request{Credential: cred, MAC: mac, RemoteAddr: from, Now: at})
	return err
}

func TestIssueVerifyAcrossRestarts(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	host := newHost(t, "h1", macA, "52:54:00:00:20:02")

	s1, stop1 := newStore(t)
	cred, rec, err := manager(s1).Issue(ctx, host, []string{"52-54-00-00-20-01"}, bootcred.IssueOptions{})
	must(t, err)
	st := apiStatus(t, host)
	if st == nil || st.Hash != rec.Hash || st.ConsumedAt != nil || st.GraceSeconds != int64(bootcred.DefaultGrace/time.Second) ||
		!st.ExpiresAt.Time.Equal(t0.Add(bootcred.DefaultTTL)) {
		t.Fatalf("status after issue = %+v", st)
	}
	if strings.Contains(fmt.Sprintf("%+v", st), cred) {
		t.Fatal("the plaintext credential is stored in the Host status")
	}
	got := waitVisible(t, s1, rec.Hash)
	if got.Host != host || len(got.MACs) != 2 || got.MACs[0] != macA {
		t.Fatalf("record from the cache = %+v", got)
	}
	stop1() // Anvil restarts before the host asks for its config.

	s2, stop2 := newStore(t)
	m2 := manager(s2)
	waitVisible(t, s2, rec.Hash)
	at := t0.Add(time.Minute)
	must(t, verify(m2, cred, macA, addrA, at))
	st = apiStatus(t, host)
	if st.ConsumedAt == nil || st.ConsumedFrom != addrA.String() {
		t.Fatalf("status after first use = %+v", st)
	}
	stop2() // and again, after the first use

	s3, _ := newStore(t)
	m3 := manager(s3)
	waitVisible(t, s3, rec.Hash)
	tests := []struct {
		name string
		mac  string
		from netip.Addr
		at   time.Time
		want error
	}{
		{"retry from the same address within grace", macA, addrA, at.Add(30 * time.Second), nil},
		{"other boot MAC of the host", "52:54:00:00:20:02", addrA, at.Add(31 * time.Second), nil},
		{"replay from another address", macA, addrB, at.Add(time.Second), bootcred.ErrReplayed},
		{"replay after grace", macA, addrA, at.Add(bootcred.DefaultGrace + time.Second), bootcred.ErrReplayed},
		{"MAC of no boot NIC", "52:54:00:99:99:99", addrA, at, bootcred.ErrWrongHost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verify(m3, cred, tc.mac, tc.from, tc.at)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), cred) {
				t.Fatal("error text carries the credential")
			}
		})
	}
	if st2 := apiStatus(t, host); !st2.ConsumedAt.Equal(st.ConsumedAt) || st2.ConsumedFrom != addrA.String() {
		t.Fatalf("later uses changed the first use: %+v", st2)
	}
}

// TestConcurrentFirstUse races first uses through two Anvil replicas (two
// caches) from different addresses: exactly one wins.
func TestConcurrentFirstUse(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	for round := range 3 {
		host := newHost(t, fmt.Sprintf("race-%d", round), macA)
		s1, _ := newStore(t)
		s2, _ := newStore(t)
		cred, rec, err := manager(s1).Issue(ctx, host, []string{macA}, bootcred.IssueOptions{})
		must(t, err)
		waitVisible(t, s1, rec.Hash)
		waitVisible(t, s2, rec.Hash)
		ms := []*bootcred.Manager{manager(s1), manager(s2)}

		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				from := netip.AddrFrom4([4]byte{192, 0, 2, byte(100 + i)})
				errs[i] = verify(ms[i%2], cred, macA, from, t0.Add(time.Minute))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: both %d and %d used the credential", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, bootcred.ErrReplayed):
				t.Fatalf("round %d: attempt %d: %v, want ErrReplayed", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won: %v", round, errs)
		}
		if got := apiStatus(t, host).ConsumedFrom; got != fmt.Sprintf("192.0.2.%d", 100+winner) {
			t.Fatalf("round %d: consumedFrom %s, winner was attempt %d", round, got, winner)
		}
	}
}

// TestConsumeWhileOthersWriteStatus: other controllers patch Host status
// all the time; Consume must still succeed (it retries on conflicts) and
// must not undo their changes.
func TestConsumeWhileOthersWriteStatus(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	host := newHost(t, "busy", macA)
	s, _ := newStore(t)
	cred, rec, err := manager(s).Issue(ctx, host, []string{macA}, bootcred.IssueOptions{})
	must(t, err)
	waitVisible(t, s, rec.Hash)

	// Another writer bumps the resourceVersion behind the cache's back.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: host.Namespace, Name: host.Name}}
			p := []byte(fmt.Sprintf(`{"status":{"errorCount":%d}}`, i%100+1))
			_ = env.Client.Status().Patch(ctx, h, client.RawPatch("application/merge-patch+json", p))
		}
	}()
	err = verify(manager(s), cred, macA, addrA, t0.Add(time.Minute))
	close(stop)
	<-done
	must(t, err)
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: host.Name}, h))
	if h.Status.BootCredential.ConsumedFrom != addrA.String() || h.Status.ErrorCount == 0 {
		t.Fatalf("status = %+v", h.Status)
	}
}

// The credential writes test the fields they change instead of the
// Host's resourceVersion: a concurrent write of another status field costs
// no second patch, while a concurrent write of the credential itself
// still decides who consumed it (the test fails, the store re-reads and
// sees it used).
func TestCredentialWritesUnderConcurrentStatusWrites(t *testing.T) {
	needAPIServer(t)
	for _, tc := range []struct {
		name       string
		concurrent string // merge patch of the Host's status between the store's read and write
		patches    int32  // status patches of the store's Verify
		wantErr    bool
		wantFrom   string
	}{
		{"another field", `{"status":{"errorCount":7}}`, 1, false, addrA.String()},
		{"the credential", `{"status":{"bootCredential":{"consumedAt":"` + t0.Format(time.RFC3339) + `","consumedFrom":"` + addrB.String() + `"}}}`, 1, true, addrB.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			host := newHost(t, "busy", macA)
			key := client.ObjectKey{Namespace: host.Namespace, Name: host.Name}
			var pc *envtest.PatchCounter
			s, _ := newStoreWith(t, func(c client.Client) client.Client {
				pc = &envtest.PatchCounter{Client: c}
				return pc
			})
			// A Host without any status gets its first one in one patch.
			cred, rec, err := manager(s).Issue(ctx, host, []string{macA}, bootcred.IssueOptions{})
			must(t, err)
			if n := pc.Written.Load(); n != 1 {
				t.Fatalf("issuing on a Host without status: %d patches written, want 1", n)
			}
			waitVisible(t, s, rec.Hash)
			// Once unset BeforeFirst has not fired: it fires before the next patch.
			pc.Patches.Store(0)
			pc.BeforeFirst = func() {
				h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: host.Namespace, Name: host.Name}}
				must(t, env.Client.Status().Patch(ctx, h, client.RawPatch(types.MergePatchType, []byte(tc.concurrent))))
			}
			err = verify(manager(s), cred, macA, addrA, t0.Add(time.Minute))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Verify: %v, want an error: %v", err, tc.wantErr)
			}
			if n := pc.Patches.Load(); n != tc.patches {
				t.Errorf("%d status patches, want %d", n, tc.patches)
			}
			h := &metalv1.Host{}
			must(t, env.Client.Get(ctx, key, h))
			if bc := h.Status.BootCredential; bc == nil || bc.ConsumedFrom != tc.wantFrom {
				t.Fatalf("boot credential %+v, want consumed from %s", bc, tc.wantFrom)
			}
			if tc.name == "another field" && h.Status.ErrorCount != 7 {
				t.Fatalf("the concurrent write was lost: %+v", h.Status)
			}
		})
	}
}

func TestPutReplaceDeleteAndScript(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	host := newHost(t, "h2", macA)
	s, _ := newStore(t)
	m := manager(s)

	first, rec1, err := m.Issue(ctx, host, []string{macA}, bootcred.IssueOptions{})
	must(t, err)
	waitVisible(t, s, rec1.Hash)

	// The iPXE script is handed out once per credential.
	won, err := s.MarkScriptServed(ctx, rec1.Hash, t0)
	must(t, err)
	won2, err := s.MarkScriptServed(ctx, rec1.Hash, t0.Add(time.Second))
	must(t, err)
	if !won || won2 {
		t.Fatalf("MarkScriptServed = %v then %v, want true then false", won, won2)
	}
	if st, err := s.Status(ctx, host); err != nil || st == nil {
		t.Fatalf("Status = %v, %v", st, err)
	}

	// A new boot replaces the credential: the old one is void.
	second, rec2, err := m.Issue(ctx, host, []string{macA}, bootcred.IssueOptions{})
	must(t, err)
	if st := apiStatus(t, host); st.Hash != rec2.Hash || st.ScriptServedAt != nil || st.ConsumedAt != nil {
		t.Fatalf("status after re-issue = %+v", st)
	}
	waitGone(t, s, rec1.Hash)
	waitVisible(t, s, rec2.Hash)
	if err := verify(m, first, macA, addrA, t0.Add(time.Minute)); !errors.Is(err, bootcred.ErrInvalid) {
		t.Fatalf("old credential: %v, want ErrInvalid", err)
	}
	must(t, verify(m, second, macA, addrA, t0.Add(time.Minute)))

	must(t, m.Revoke(ctx, host))
	if st := apiStatus(t, host); st != nil {
		t.Fatalf("status after revoke = %+v", st)
	}
	waitGone(t, s, rec2.Hash)
	must(t, m.Revoke(ctx, host)) // idempotent
	must(t, s.Delete(ctx, bootcred.HostKey{Namespace: host.Namespace, Name: "no-such-host"}))
}

func TestPutRefusesWrongHost(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	host := newHost(t, "h3", macA)
	s, _ := newStore(t)
	m := manager(s)
	tests := []struct {
		name string
		host bootcred.HostKey
		macs []string
		want string
	}{
		{"replaced host (other UID)", bootcred.HostKey{Namespace: host.Namespace, Name: host.Name, UID: "d2b7a4f0-0000-0000-0000-000000000000"}, []string{macA}, "replaced"},
		{"MAC that is not a boot MAC", host, []string{"52:54:00:00:99:99"}, "not a boot MAC"},
		{"no such host", bootcred.HostKey{Namespace: host.Namespace, Name: "ghost"}, []string{macA}, "not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := m.Issue(ctx, tc.host, tc.macs, bootcred.IssueOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Issue = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if st := apiStatus(t, host); st != nil {
		t.Fatalf("refused issues wrote status: %+v", st)
	}
}

// laggingCache serves reads of one Host from a frozen older copy, as an
// informer that is behind does, and passes writes to the API server. After
// the first lookup by boot MAC it moves on to a newer copy that still
// lacks the credential: another writer's version reached it first.
type laggingCache struct {
	client.Client
	mu        sync.Mutex
	cur, next *metalv1.Host
}

func (c *laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := obj.(*metalv1.Host); ok && key == client.ObjectKeyFromObject(c.cur) {
		c.cur.DeepCopyInto(h)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *laggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	hl, ok := list.(*metalv1.HostList)
	if !ok {
		return c.Client.List(ctx, list, opts...)
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	c.mu.Lock()
	defer c.mu.Unlock()
	hl.Items = nil
	if lo.FieldSelector == nil {
		return nil
	}
	for _, r := range lo.FieldSelector.Requirements() {
		if r.Field == hoststore.IndexBootMAC {
			hl.Items = []metalv1.Host{*c.cur.DeepCopy()}
			c.cur = c.next
		}
	}
	return nil // by credential hash: the cache does not have it
}

// TestCredentialFoundWhileTheCacheLagsThroughAnotherWrite: the cache is
// behind the credential's write, and between the re-read that found the
// credential and its consumption it moves to another writer's newer
// version that still lacks it (a boot storm on a busy API server). The
// credential is read again, not refused (that was a 403 Ignition does not
// retry).
func TestCredentialFoundWhileTheCacheLagsThroughAnotherWrite(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	host := newHost(t, "lagging", macA)
	key := client.ObjectKey{Namespace: host.Namespace, Name: host.Name}
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, key, h))
	h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1", Purpose: metalv1.BootPurposeProvision}
	must(t, env.Client.Update(ctx, h)) // Refresh looks only at a Host in a network boot
	older := h.DeepCopy()
	must(t, env.Client.Status().Patch(ctx, h, client.RawPatch(types.MergePatchType, []byte(`{"status":{"errorCount":1}}`))))
	newer := h.DeepCopy()

	s1, _ := newStore(t)
	cred, _, err := manager(s1).Issue(ctx, host, []string{macA}, bootcred.IssueOptions{})
	must(t, err)

	rr, err := reread.New(reread.Options{APIReader: env.Client})
	must(t, err)
	s2, err := hoststore.New(hoststore.Options{Client: &laggingCache{Client: env.Client, cur: older, next: newer}, APIReader: env.Client, Reread: rr})
	must(t, err)
	if err := verify(manager(s2), cred, macA, addrA, t0.Add(time.Minute)); err != nil {
		t.Fatalf("verify with a lagging cache: %v", err)
	}
	if st := apiStatus(t, host); st == nil || st.ConsumedFrom != addrA.String() {
		t.Fatalf("credential not consumed: %+v", st)
	}
}
