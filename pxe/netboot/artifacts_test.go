package netboot_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/netboot"
	"anvil.dev/anvil/test/envtest"
)

// runHTTPBoot runs the HTTP boot service on loopback with an artifact
// cache until the test ends and returns its base URL.
func runHTTPBoot(t *testing.T, c client.Client, allow ...netip.Prefix) string {
	t.Helper()
	addr := freeLoopbackAddr(t)
	o := netboot.DefaultOptions()
	o.HTTPBoot, o.HTTPAddr, o.ArtifactDir, o.CacheDir = true, addr, t.TempDir(), t.TempDir()
	o.ArtifactAllow = allow
	o.ArtifactRetryBase = time.Hour // no retry while the test runs
	o.Cache, o.Client = env.Manager.GetCache(), c
	o.Registerer, o.Logger = prometheus.NewRegistry(), testLogger
	ready := make(chan struct{})
	o.OnReady = func(netboot.Components) { close(ready) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- netboot.Run(ctx, o) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("not ready")
	}
	return "http://" + addr
}

type hitCounter struct {
	mu   sync.Mutex
	hits map[string]int
}

func (h *hitCounter) add(p string) { h.mu.Lock(); h.hits[p]++; h.mu.Unlock() }
func (h *hitCounter) get(p string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[p]
}

func classCondition(t *testing.T, key client.ObjectKey, typ string) (*metalv1.MachineClass, *metav1.Condition) {
	var mc metalv1.MachineClass
	if err := env.Client.Get(context.Background(), key, &mc); err != nil {
		return nil, nil
	}
	return &mc, meta.FindStatusCondition(mc.Status.Conditions, typ)
}

// The security issue: unauthenticated GETs of a class artifact whose
// upstream serves the wrong content made one 4 GiB download and one status
// write each, and the status told the digest the upstream had. Now the
// artifacts are fetched once when the class appears, the failure is
// remembered, the class gets one status write that does not carry the
// digest, and only the verified artifact is served.
func TestUpstreamArtifactsFetchedOncePerClass(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	kernel, wrong := randBytes(t, 20000), randBytes(t, 5000)
	hits := &hitCounter{hits: map[string]int{}}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.add(r.URL.Path)
		switch r.URL.Path {
		case "/kernel":
			w.Write(kernel)
		case "/initrd":
			w.Write(wrong)
		default:
			http.NotFound(w, r)
		}
	}))
	defer up.Close()

	patches := &envtest.PatchCounter{Client: env.Client}
	base := runHTTPBoot(t, patches, netip.MustParsePrefix("127.0.0.1/32"))
	must(t, env.Client.Create(ctx, &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"},
		Spec: metalv1.MachineClassSpec{
			Kernel:  metalv1.Artifact{URL: up.URL + "/kernel", SHA256: sum(kernel)},
			Initrds: []metalv1.Artifact{{URL: up.URL + "/initrd?token=s3cret", SHA256: sum([]byte("what the class pinned"))}},
			Config:  metalv1.ConfigTemplate{Format: "cloud-init", Template: "x"},
		},
	}))
	key := client.ObjectKey{Namespace: ns, Name: "c"}
	initrdURL := base + "/artifacts/" + ns + "/c/initrd/0/initrd"
	get10 := func() {
		for range 10 {
			if code, body := httpGet(t, initrdURL); code == 200 || body == string(wrong) {
				t.Fatalf("mismatching initrd served: %d", code)
			}
		}
	}
	get10() // while (or before) the class's artifacts are fetched
	var cond *metav1.Condition
	waitFor(t, "ArtifactsValid=False on the class", func() bool {
		_, cond = classCondition(t, key, metalv1.ConditionArtifactsValid)
		return cond != nil && cond.Status == metav1.ConditionFalse
	})
	get10() // and after
	if cond.Reason != netboot.ReasonDigestMismatch || !strings.Contains(cond.Message, "spec.initrds[0].url: sha256 mismatch") {
		t.Errorf("condition %+v", cond)
	}
	if code, body := httpGet(t, base+"/artifacts/"+ns+"/c/kernel/kernel"); code != 200 || body != string(kernel) {
		t.Fatalf("verified kernel: %d, %d bytes", code, len(body))
	}
	if n := hits.get("/initrd"); n != 1 {
		t.Errorf("20 GETs of the mismatching initrd made %d upstream fetches, want 1", n)
	}
	if n := hits.get("/kernel"); n != 1 {
		t.Errorf("kernel fetched %d times, want 1", n)
	}
	if n := patches.Patches.Load(); n != 1 {
		t.Errorf("%d MachineClass status patches, want 1", n)
	}
	mc, _ := classCondition(t, key, metalv1.ConditionArtifactsValid)
	for _, c := range mc.Status.Conditions {
		if strings.Contains(c.Message, sum(wrong)) || strings.Contains(c.Message, "s3cret") || strings.Contains(c.Message, up.URL) {
			t.Errorf("condition %s reveals the upstream's digest or URL: %q", c.Type, c.Message)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Fixing the class (the digest the upstream really has) is a new
	// artifact: fetched once more, verified, one more status write.
	mc.Spec.Initrds[0].SHA256 = sum(wrong)
	must(t, env.Client.Update(ctx, mc))
	waitFor(t, "ArtifactsValid=True", func() bool {
		got, c := classCondition(t, key, metalv1.ConditionArtifactsValid)
		return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == got.Generation
	})
	if code, body := httpGet(t, initrdURL); code != 200 || body != string(wrong) {
		t.Fatalf("initrd after the fix: %d", code)
	}
	if n, p := hits.get("/initrd"), patches.Patches.Load(); n != 2 || p != 2 {
		t.Errorf("after the fix: %d initrd fetches (want 2), %d status patches (want 2)", n, p)
	}
}

// Artifact URLs on loopback or metadata addresses are not fetched
// without --artifact-allow-cidrs: a real listener there gets no
// connection, and the class says which field and which flag.
func TestUpstreamArtifactsGuarded(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	runHTTPBoot(t, env.Client) // no allow flag
	must(t, env.Client.Create(ctx, &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"},
		Spec: metalv1.MachineClassSpec{
			Kernel:  metalv1.Artifact{URL: "http://" + ln.Addr().String() + "/kernel", SHA256: sum([]byte("k"))},
			Initrds: []metalv1.Artifact{{URL: "http://169.254.169.254/latest/meta-data/", SHA256: sum([]byte("i"))}},
			Config:  metalv1.ConfigTemplate{Format: "cloud-init", Template: "x"},
		},
	}))
	var cond *metav1.Condition
	// The first refusal may be written while the other artifact is still
	// pending; wait for the condition that has both outcomes.
	waitFor(t, "ArtifactsValid=False on the class naming both artifacts", func() bool {
		_, cond = classCondition(t, client.ObjectKey{Namespace: ns, Name: "g"}, metalv1.ConditionArtifactsValid)
		return cond != nil && cond.Status == metav1.ConditionFalse &&
			strings.Contains(cond.Message, "spec.kernel.url") && strings.Contains(cond.Message, "spec.initrds[0].url")
	})
	for _, want := range []string{"spec.kernel.url: address refused", "loopback", "spec.initrds[0].url: address refused", "metadata", "--artifact-allow-cidrs"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("message %q does not contain %q", cond.Message, want)
		}
	}
	if cond.Reason != netboot.ReasonAddressRefused {
		t.Errorf("reason %q", cond.Reason)
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("the refused loopback listener got %d connections", n)
	}
}
