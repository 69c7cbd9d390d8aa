package httpboot

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"anvil.dev/anvil/internal/netguard"
)

// countingUpstream is a real HTTP server that counts requests per path.
type countingUpstream struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newCountingUpstream(t *testing.T, files map[string][]byte) *countingUpstream {
	u := &countingUpstream{hits: map[string]int{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.hits[r.URL.Path]++
		u.mu.Unlock()
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *countingUpstream) count(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hits[path]
}

// results collects OnResult calls.
type results struct {
	mu  sync.Mutex
	got map[string]UpstreamResult // by URL
	ch  chan UpstreamResult
}

func newResults() *results {
	return &results{got: map[string]UpstreamResult{}, ch: make(chan UpstreamResult, 100)}
}

func (r *results) on(res UpstreamResult) {
	r.mu.Lock()
	r.got[res.URL] = res
	r.mu.Unlock()
	r.ch <- res
}

// wait waits for n results.
func (r *results) wait(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-r.ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("got %d of %d fetch results", i, n)
		}
	}
}

func (r *results) of(url string) UpstreamResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[url]
}

func loopbackOnly() netguard.Guard {
	return netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
}

// Artifacts with a URL are fetched when an owner wants them, once, and
// served only when verified; requests never fetch, a mismatch or an
// upstream error is remembered (not retried per request), and the
// digest the upstream served is reported nowhere.
func TestUpstreamFetch(t *testing.T) {
	content := randBytes(t, 50_000)
	wrong := randBytes(t, 1000)
	up := newCountingUpstream(t, map[string][]byte{"/good": content, "/bad": wrong})
	cache := t.TempDir()
	res := newResults()
	good := Artifact{SHA256: sum(content), URL: up.URL + "/good"}
	bad := Artifact{SHA256: sum([]byte("what the class pinned")), URL: up.URL + "/bad"}
	gone := Artifact{SHA256: sum([]byte("gone")), URL: up.URL + "/gone?token=s3cret-artifact-token"}
	e := newArtifactEnv(t, ArtifactMap{"remote/good": good, "remote/bad": bad, "remote/gone": gone}, func(o *Options) {
		o.CacheDir = cache
		o.Upstream = UpstreamOptions{Guard: loopbackOnly(), RetryBase: time.Hour, OnResult: res.on}
	})

	// Nobody wants them yet: a request is refused and fetches nothing.
	for range 3 {
		if resp, _ := get(t, "GET", e.ts.URL+"/artifacts/remote/bad", nil); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("not prefetched: status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if n := up.count("/bad"); n != 0 {
		t.Fatalf("requests fetched from upstream %d times before any class wanted it", n)
	}

	e.srv.WantUpstream("ns/c", []Artifact{good, bad, gone})
	res.wait(t, 3)

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			resp, body := get(t, "GET", e.ts.URL+"/artifacts/remote/good", nil)
			if resp.StatusCode != 200 || !bytes.Equal(body, content) {
				t.Errorf("upstream artifact: %d, %d bytes", resp.StatusCode, len(body))
			}
		})
	}
	wg.Wait()
	resp, body := get(t, "GET", e.ts.URL+"/artifacts/remote/good", map[string]string{"Range": "bytes=5-9"})
	if resp.StatusCode != 206 || !bytes.Equal(body, content[5:10]) {
		t.Fatalf("range from cache: %d %q", resp.StatusCode, body)
	}
	if r := res.of(good.URL); !r.Verified {
		t.Fatalf("good: %+v", r)
	}

	// Ten unauthenticated GETs of the mismatching artifact: one download
	// (the prefetch), no more.
	for range 10 {
		resp, body := get(t, "GET", e.ts.URL+"/artifacts/remote/bad", nil)
		if resp.StatusCode != http.StatusServiceUnavailable || bytes.Equal(body, wrong) {
			t.Fatalf("bad upstream: %d", resp.StatusCode)
		}
	}
	if n := up.count("/bad"); n != 1 {
		t.Fatalf("mismatching upstream fetched %d times, want 1", n)
	}
	if n := up.count("/good"); n != 1 {
		t.Fatalf("good upstream fetched %d times, want 1", n)
	}
	r := res.of(bad.URL)
	if r.Verified || !r.Mismatch || !strings.Contains(r.Error, "sha256 mismatch") {
		t.Fatalf("bad: %+v", r)
	}
	if strings.Contains(r.Error, sum(wrong)) || strings.Contains(e.logs.String(), sum(wrong)) {
		t.Fatalf("the digest the upstream served leaked: %q\n%s", r.Error, e.logs.String())
	}
	if _, err := os.Stat(filepath.Join(cache, sum([]byte("what the class pinned")))); err == nil {
		t.Fatal("mismatching download kept in cache")
	}

	if resp, _ := get(t, "GET", e.ts.URL+"/artifacts/remote/gone", nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("upstream 404: status %d", resp.StatusCode)
	}
	if r := res.of(gone.URL); r.Verified || !strings.Contains(r.Error, "HTTP 404") || strings.Contains(r.Error, "s3cret") {
		t.Fatalf("gone: %+v", r)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "NOT verified") || strings.Contains(logs, "s3cret-artifact-token") {
		t.Fatalf("fetch failure log missing or leaking the URL's token:\n%s", logs)
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Fatalf("cache holds %d entries, want 1 (no temp files left)", len(entries))
	}

	// A cached file that rots on disk is caught before use and fetched
	// again, once.
	must(t, os.WriteFile(filepath.Join(cache, sum(content)), []byte("rotten"), 0o644))
	if resp, body := get(t, "GET", e.ts.URL+"/artifacts/remote/good", nil); resp.StatusCode == 200 || string(body) == "rotten" {
		t.Fatalf("rotten cache entry: %d %q", resp.StatusCode, body)
	}
	for i := 0; ; i++ {
		resp, body := get(t, "GET", e.ts.URL+"/artifacts/remote/good", nil) // waits on the running fetch
		if resp.StatusCode == 200 && bytes.Equal(body, content) {
			break
		}
		if i == 20 {
			t.Fatalf("not fetched again after the cached copy rotted: %d", resp.StatusCode)
		}
	}
	if n := up.count("/good"); n != 2 {
		t.Fatalf("good upstream fetched %d times in all, want 2", n)
	}

	// Forgotten by its owner: nothing of it is served any more unless
	// the verified copy is on disk.
	e.srv.WantUpstream("ns/c", nil)
	if resp, _ := get(t, "GET", e.ts.URL+"/artifacts/remote/bad", nil); resp.StatusCode == 200 {
		t.Fatal("forgotten mismatching artifact served")
	}
	if n := up.count("/bad"); n != 1 {
		t.Fatalf("mismatching upstream fetched %d times after it was forgotten", n)
	}
}

// acceptCounter is a real listener that counts the connections it gets.
func acceptCounter(t *testing.T, addr string) (net.Listener, *atomic.Int32) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln, &n
}

// The guard: loopback, metadata and link-local URLs are not fetched
// without --artifact-allow-cidrs, nor redirects to them; the result names
// the flag, and a real listener on the refused address gets no connection.
func TestUpstreamGuard(t *testing.T) {
	ln, conns := acceptCounter(t, "127.0.0.1:0")
	ln2, conns2 := acceptCounter(t, "127.0.0.2:0")
	// An allowed upstream (127.0.0.1 is opened below) that redirects to a
	// refused one (127.0.0.2).
	redirector := httptest.NewServer(http.RedirectHandler("http://"+ln2.Addr().String()+"/k", http.StatusFound))
	t.Cleanup(redirector.Close)

	check := func(t *testing.T, guard netguard.Guard, arts ...Artifact) *results {
		res := newResults()
		e := newArtifactEnv(t, nil, func(o *Options) {
			o.CacheDir = t.TempDir()
			o.Upstream = UpstreamOptions{Guard: guard, RetryBase: time.Hour, OnResult: res.on}
		})
		e.srv.WantUpstream("ns/c", arts)
		res.wait(t, len(arts))
		return res
	}
	d := sum([]byte("k"))
	loop := Artifact{URL: "http://" + ln.Addr().String() + "/k", SHA256: d}
	local := Artifact{URL: "http://localhost:" + portOf(ln) + "/k", SHA256: d}
	meta := Artifact{URL: "http://169.254.169.254/latest/meta-data/", SHA256: d}
	res := check(t, netguard.Guard{}, loop, local, meta)
	for _, a := range []Artifact{loop, local, meta} {
		r := res.of(a.URL)
		if r.Verified || !r.Refused || !strings.Contains(r.Error, "--artifact-allow-cidrs") {
			t.Errorf("%s: %+v", a.URL, r)
		}
	}
	if !strings.Contains(res.of(meta.URL).Error, "metadata") {
		t.Errorf("metadata refusal does not say so: %q", res.of(meta.URL).Error)
	}

	redirected := Artifact{URL: redirector.URL + "/k", SHA256: d}
	res = check(t, loopbackOnly(), redirected)
	if r := res.of(redirected.URL); r.Verified || !r.Refused {
		t.Errorf("redirect to a refused address: %+v", r)
	}
	if n, n2 := conns.Load(), conns2.Load(); n != 0 || n2 != 0 {
		t.Fatalf("refused listeners got %d and %d connections", n, n2)
	}
}

func portOf(ln net.Listener) string {
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// A failed fetch is retried on the backoff, not by requests: here the
// upstream fails twice, and the third (timer-driven) attempt verifies.
func TestUpstreamRetryOnBackoff(t *testing.T) {
	content := randBytes(t, 1000)
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(content)
	}))
	t.Cleanup(up.Close)
	res := newResults()
	a := Artifact{SHA256: sum(content), URL: up.URL + "/k"}
	e := newArtifactEnv(t, ArtifactMap{"remote/k": a}, func(o *Options) {
		o.CacheDir = t.TempDir()
		o.Upstream = UpstreamOptions{Guard: loopbackOnly(), RetryBase: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, OnResult: res.on}
	})
	e.srv.WantUpstream("ns/c", []Artifact{a})
	res.wait(t, 1) // failed: HTTP 503 (the second failure is the same outcome: not reported again)
	if r := res.of(a.URL); r.Verified || !strings.Contains(r.Error, "HTTP 503") {
		t.Fatalf("first outcome %+v", r)
	}
	res.wait(t, 1)
	if r := res.of(a.URL); !r.Verified || calls.Load() != 3 {
		t.Fatalf("after the retries: %+v, %d upstream calls", r, calls.Load())
	}
	if resp, body := get(t, "GET", e.ts.URL+"/artifacts/remote/k", nil); resp.StatusCode != 200 || !bytes.Equal(body, content) {
		t.Fatalf("verified after retry: %d", resp.StatusCode)
	}
}
