package kube_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"anvil.dev/anvil/inventory/reread"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/ratelimit"
)

// frozenCache is the manager's client whose cache is behind for the frozen
// Hosts: every read returns the frozen version.
type frozenCache struct {
	client.Client
	mu     sync.Mutex
	frozen map[types.NamespacedName]*metalv1.Host
}

func (c *frozenCache) freeze(h *metalv1.Host) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen[client.ObjectKeyFromObject(h)] = h.DeepCopy()
}

func (c *frozenCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	f := c.frozen[key]
	c.mu.Unlock()
	if h, ok := obj.(*metalv1.Host); ok && f != nil {
		f.DeepCopyInto(h)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *frozenCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if hl, ok := list.(*metalv1.HostList); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i := range hl.Items {
			if f := c.frozen[client.ObjectKeyFromObject(&hl.Items[i])]; f != nil {
				hl.Items[i] = *f.DeepCopy()
			}
		}
	}
	return nil
}

// countingReader counts Host and Machine reads past the cache.
type countingReader struct {
	client.Reader
	hostGets, machineGets atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	switch obj.(type) {
	case *metalv1.Host:
		r.hostGets.Add(1)
	case *metalv1.Machine:
		r.machineGets.Add(1)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestCredentialBeforeTheCacheHasIt: an agent whose credential was issued a
// moment ago, when the cache still has the previous one, is let in after
// one re-read of its Host; wrong credentials cost no further API read.
func TestCredentialBeforeTheCacheHasIt(t *testing.T) {
	ns := env.Namespace(t)
	h, oldCred := newClientHost(t, ns, "h-lag")
	fc := &frozenCache{Client: cached, frozen: map[types.NamespacedName]*metalv1.Host{}}
	api := &countingReader{Reader: env.Client}
	rr, err := reread.New(reread.Options{APIReader: api, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	be, err := kube.New(kube.Options{Client: fc, APIReader: api, Reread: rr, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.NewServer(server.ServerOptions{Backend: be, Limiter: ratelimit.New(ratelimit.Options{Burst: 1000})})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	fresh := &metalv1.Host{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(h), fresh); err != nil {
		t.Fatal(err)
	}
	fc.freeze(fresh) // the cache stops here, with oldCred's hash
	newCred, err := kube.IssueCredential(context.Background(), env.Client, fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(cred string) int {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+agent.PathActions, nil)
		req.Header.Set("Authorization", "Bearer "+cred)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	uid := string(h.UID)
	tests := []struct {
		name string
		cred string
		want int
	}{
		{"the new credential, cache behind", newCred, http.StatusOK},
		{"again, from the recent re-read", newCred, http.StatusOK},
		{"the old credential the cache still has", oldCred, http.StatusOK}, // the cache is the truth it has
		{"a wrong secret", uid + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", http.StatusUnauthorized},
		{"an unknown host", "00000000-0000-0000-0000-000000000000." + secretOf(newCred), http.StatusUnauthorized},
	}
	for _, tt := range tests {
		if got := get(tt.cred); got != tt.want {
			t.Errorf("%s: HTTP %d, want %d", tt.name, got, tt.want)
		}
	}
	if n := api.hostGets.Load(); n != 1 {
		t.Errorf("API reads of the Host: %d, want 1", n)
	}
	counts := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "anvil_credential_cache_misses_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var cred, outcome string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "credential":
					cred = l.GetValue()
				case "outcome":
					outcome = l.GetValue()
				}
			}
			if cred == "agent" {
				counts[outcome] = m.GetCounter().GetValue()
			}
		}
	}
	if counts[reread.MissFoundAPI] != 1 || counts[reread.MissFoundRecent] != 1 || counts[reread.MissNotFound] != 1 {
		t.Errorf("agent misses counted %v, want found_api 1, found_recent 1, not_found 1", counts)
	}
	if strings.Contains(logs.String(), secretOf(newCred)) {
		t.Error("a credential appears in the logs")
	}
}
