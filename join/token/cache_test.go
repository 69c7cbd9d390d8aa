package token

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// testCache runs against the API server of TestBootstrapTokenAgainstAPIServer.
func testCache(ctx context.Context, t *testing.T, c kubernetes.Interface) {
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	cache := NewCache(c, CacheOptions{})
	done := make(chan struct{})
	go func() { defer close(done); _ = cache.Start(cctx) }()
	defer func() { stop(); <-done }()
	if !cache.WaitForSync(cctx) {
		t.Fatal("cache never synced")
	}

	owner := func(host, machine string) Owner {
		return Owner{Host: ObjectRef{Namespace: "ns", Name: host, UID: types.UID("h-" + host)},
			Machine: ObjectRef{Namespace: "ns", Name: machine, UID: types.UID("m-" + machine)}}
	}
	ids := func(l []Info) []string {
		var out []string
		for _, i := range l {
			out = append(out, i.ID)
		}
		slices.Sort(out)
		return out
	}

	// A freshly minted token is found by the very next lookup, whether or
	// not the informer has delivered it yet.
	a, err := cache.Mint(ctx, MintOptions{Owner: owner("a", "ma"), TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cache.List(ctx, ListOptions{MachineUID: "m-ma"})
	if err != nil || !slices.Equal(ids(got), []string{a.ID}) {
		t.Fatalf("List right after Mint: %v %v, want [%s]", err, ids(got), a.ID)
	}
	b, err := Mint(ctx, c, MintOptions{Owner: owner("b", "ma"), TTL: 10 * time.Minute}) // minted elsewhere
	if err != nil {
		t.Fatal(err)
	}
	d, err := Mint(ctx, c, MintOptions{Owner: owner("a", "md"), TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}

	// Once the informer caught up, the cache answers every filter as the
	// direct LIST does.
	filters := []ListOptions{
		{MachineUID: "m-ma"}, {HostUID: "h-a"}, {MachineUID: "m-ma", HostUID: "h-b"},
		{MachineUID: "m-md", HostUID: "h-b"}, {MachineUID: "no-such"}, {},
	}
	same := func() error {
		for _, f := range filters {
			want, err := Direct{Clientset: c}.List(ctx, f)
			if err != nil {
				return err
			}
			got, err := cache.List(ctx, f)
			if err != nil {
				return err
			}
			if !slices.Equal(ids(got), ids(want)) {
				return fmt.Errorf("filter %+v: cache %v, API %v", f, ids(got), ids(want))
			}
		}
		return nil
	}
	eventually(t, time.Minute, "cache agrees with the API", func() error {
		if err := same(); err != nil {
			return err
		}
		cache.mu.Lock()
		defer cache.mu.Unlock()
		if len(cache.minted) != 0 {
			return fmt.Errorf("informer has not delivered %d minted tokens", len(cache.minted))
		}
		return nil
	})
	got, _ = cache.List(ctx, ListOptions{MachineUID: "m-ma"})
	if !slices.Equal(ids(got), ids([]Info{{ID: a.ID}, {ID: b.ID}})) {
		t.Fatalf("tokens of machine ma: %v, want %s and %s", ids(got), a.ID, b.ID)
	}
	for _, i := range got {
		if i.Owner.Machine.Name != "ma" || i.Expiration.IsZero() || !slices.Contains(i.Groups, AnvilGroup) {
			t.Fatalf("cached Info incomplete: %+v", i)
		}
	}

	// Deleted tokens disappear, whoever deleted them.
	if err := Revoke(ctx, c, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := cache.Revoke(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "deleted tokens leave the cache", func() error {
		if err := same(); err != nil {
			return err
		}
		got, _ := cache.List(ctx, ListOptions{})
		if slices.Contains(ids(got), b.ID) || slices.Contains(ids(got), d.ID) {
			return fmt.Errorf("still listed: %v", ids(got))
		}
		return nil
	})

	// A remembered token that the informer never shows is listed until it
	// expires or is revoked.
	ghost := Token{ID: "zzzzzz", Owner: owner("g", "mg"), Expiration: time.Now().Add(time.Hour)}
	cache.Remember(ghost)
	if got, _ := cache.List(ctx, ListOptions{HostUID: "h-g"}); !slices.Equal(ids(got), []string{"zzzzzz"}) {
		t.Fatalf("remembered token: %v", ids(got))
	}
	_ = cache.Revoke(ctx, ghost.ID)
	if got, _ := cache.List(ctx, ListOptions{HostUID: "h-g"}); len(got) != 0 {
		t.Fatalf("revoked remembered token still listed: %v", ids(got))
	}
	expired := Token{ID: "yyyyyy", Owner: owner("g", "mg"), Expiration: time.Now().Add(-time.Second)}
	cache.Remember(expired)
	if got, _ := cache.List(ctx, ListOptions{HostUID: "h-g"}); len(got) != 0 {
		t.Fatalf("expired remembered token listed: %v", ids(got))
	}
}

// startFakeCache runs a Cache over a fake clientset until the test ends.
func startFakeCache(t *testing.T) (*fake.Clientset, *Cache, context.Context) {
	cs := fake.NewClientset()
	c := NewCache(cs, CacheOptions{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	return cs, c, ctx
}

// The informer waits for the first use: until then the cache asks the API
// server nothing (a process that never handles a token needs no grant on
// kube-system's Secrets); the first List starts it and it syncs.
func TestCacheStartsAtFirstUse(t *testing.T) {
	cs, c, ctx := startFakeCache(t)
	<-c.parked
	if a := cs.Actions(); len(a) != 0 {
		t.Fatalf("before any use the cache sent %d requests: %v", len(a), a)
	}
	if _, err := c.List(ctx, ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.HasSynced) {
		t.Fatal("the informer did not sync after the first use")
	}
	watched := false
	for _, a := range cs.Actions() {
		watched = watched || (a.GetVerb() == "watch" && a.GetNamespace() == Namespace)
	}
	if !watched {
		t.Fatalf("no watch of %s after the first use: %v", Namespace, cs.Actions())
	}
}

// A token the informer holds is revoked with one DELETE (its UID the
// precondition) and no GET; when that DELETE conflicts (a token of that ID
// minted since the informer's copy), the GET-then-DELETE path decides.
func TestCacheRevokeFromTheInformer(t *testing.T) {
	cs, c, ctx := startFakeCache(t)
	if !c.WaitForSync(ctx) {
		t.Fatal("cache never synced")
	}
	owner := Owner{Host: ObjectRef{Namespace: "ns", Name: "h", UID: "h-h"}, Machine: ObjectRef{Namespace: "ns", Name: "m", UID: "m-m"}}
	held := func(t *testing.T) Token {
		t.Helper()
		tok, err := Mint(ctx, cs, MintOptions{Owner: owner, TTL: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the informer holds the token", func() error {
			if _, ok, _ := c.informer.GetStore().GetByKey(Namespace + "/" + tok.SecretName()); !ok {
				return fmt.Errorf("token %s not in the informer yet", tok.ID)
			}
			return nil
		})
		cs.ClearActions()
		return tok
	}
	verbs := func() []string {
		var out []string
		for _, a := range cs.Actions() {
			if a.GetResource().Resource == "secrets" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
				out = append(out, a.GetVerb())
			}
		}
		return out
	}
	gone := func(t *testing.T, tok Token) {
		t.Helper()
		if _, err := cs.CoreV1().Secrets(Namespace).Get(ctx, tok.SecretName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("token %s still there after Revoke (%v)", tok.ID, err)
		}
	}

	a := held(t)
	if err := c.Revoke(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if v := verbs(); !slices.Equal(v, []string{"delete"}) {
		t.Fatalf("revoking a token the informer holds sent %v, want one delete", v)
	}
	gone(t, a)

	b := held(t)
	conflicted := false
	cs.PrependReactor("delete", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicted {
			return false, nil, nil
		}
		conflicted = true
		return true, nil, apierrors.NewConflict(corev1.Resource("secrets"), b.SecretName(), errors.New("precondition failed: UID"))
	})
	if err := c.Revoke(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if v := verbs(); !slices.Equal(v, []string{"delete", "get", "delete"}) {
		t.Fatalf("revoking after a conflicting delete sent %v, want delete, get, delete", v)
	}
	gone(t, b)
	if err := c.Revoke(ctx, "not a token id"); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("Revoke of a malformed ID: %v, want ErrInvalidID", err)
	}
}
