package httpboot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const secretContent = "TOP-SECRET-CONTENT"

// logSink collects funcr output lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func (l *logSink) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func newTestServer(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Registerer == nil {
		opts.Registerer = prometheus.NewRegistry()
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func randBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

type artifactEnv struct {
	dir, secret string
	kernel      []byte
	srv         *Server
	ts          *httptest.Server
	logs        *logSink
	mu          sync.Mutex
	mismatches  []ArtifactMismatch
	hashes      atomic.Int32
}

func newArtifactEnv(t *testing.T, extra ArtifactMap, mutate ...func(*Options)) *artifactEnv {
	t.Helper()
	base := t.TempDir()
	e := &artifactEnv{dir: filepath.Join(base, "artifacts"), secret: filepath.Join(base, "secret"), kernel: randBytes(t, 300_000), logs: &logSink{}}
	must(t, os.MkdirAll(filepath.Join(e.dir, "os"), 0o755))
	must(t, os.WriteFile(filepath.Join(e.dir, "os", "vmlinuz"), e.kernel, 0o644))
	must(t, os.WriteFile(filepath.Join(e.dir, "wrong"), []byte("tampered"), 0o644))
	must(t, os.WriteFile(e.secret, []byte(secretContent), 0o644))
	must(t, os.Symlink(e.secret, filepath.Join(e.dir, "escape")))
	arts := ArtifactMap{
		"os/vmlinuz": {SHA256: sum(e.kernel)},
		"wrong":      {SHA256: sum([]byte("original"))},
		"escape":     {SHA256: sum([]byte(secretContent))}, // right digest, but outside the root
		"missing":    {SHA256: sum([]byte("x"))},
		"nodigest":   {SHA256: "not-a-digest"},
	}
	for k, v := range extra {
		arts[k] = v
	}
	opts := Options{ArtifactDir: e.dir, Artifacts: arts, Logger: e.logs.logger(),
		OnArtifactMismatch: func(m ArtifactMismatch) { e.mu.Lock(); e.mismatches = append(e.mismatches, m); e.mu.Unlock() }}
	for _, m := range mutate {
		m(&opts)
	}
	e.srv = newTestServer(t, opts)
	e.srv.verify.hashed = func() { e.hashes.Add(1) }
	e.ts = httptest.NewServer(e.srv.Handler())
	t.Cleanup(e.ts.Close)
	return e
}

func (e *artifactEnv) mismatchCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.mismatches)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	must(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp, body
}

func TestArtifactServing(t *testing.T) {
	e := newArtifactEnv(t, nil)
	url := e.ts.URL + "/artifacts/os/vmlinuz"
	etag := `"` + sum(e.kernel) + `"`

	resp, body := get(t, "GET", url, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, e.kernel) {
		t.Fatalf("GET: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if resp.ContentLength != int64(len(e.kernel)) || resp.Header.Get("ETag") != etag || resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("GET headers: len=%d etag=%q ranges=%q", resp.ContentLength, resp.Header.Get("ETag"), resp.Header.Get("Accept-Ranges"))
	}

	tests := []struct {
		name   string
		method string
		hdr    map[string]string
		code   int
		body   []byte
		length int64
		crange string
	}{
		{"range", "GET", map[string]string{"Range": "bytes=1000-1999"}, 206, e.kernel[1000:2000], 1000, "bytes 1000-1999/300000"},
		{"suffix range", "GET", map[string]string{"Range": "bytes=-10"}, 206, e.kernel[len(e.kernel)-10:], 10, "bytes 299990-299999/300000"},
		{"open range", "GET", map[string]string{"Range": "bytes=299990-"}, 206, e.kernel[299990:], 10, "bytes 299990-299999/300000"},
		{"unsatisfiable", "GET", map[string]string{"Range": "bytes=400000-"}, 416, nil, -2, ""},
		{"if-none-match", "GET", map[string]string{"If-None-Match": etag}, 304, nil, -2, ""},
		{"if-range match", "GET", map[string]string{"Range": "bytes=0-9", "If-Range": etag}, 206, e.kernel[:10], 10, "bytes 0-9/300000"},
		{"if-range stale", "GET", map[string]string{"Range": "bytes=0-9", "If-Range": `"stale"`}, 200, e.kernel, int64(len(e.kernel)), ""},
		{"head", "HEAD", nil, 200, []byte{}, int64(len(e.kernel)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, tt.method, url, tt.hdr)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.code)
			}
			if tt.body != nil && !bytes.Equal(body, tt.body) {
				t.Fatalf("body %d bytes, want %d", len(body), len(tt.body))
			}
			if tt.length != -2 && resp.ContentLength != tt.length {
				t.Fatalf("Content-Length %d, want %d", resp.ContentLength, tt.length)
			}
			if cr := resp.Header.Get("Content-Range"); tt.crange != "" && cr != tt.crange {
				t.Fatalf("Content-Range %q, want %q", cr, tt.crange)
			}
		})
	}
	// The file was hashed once for all these requests.
	if n := e.hashes.Load(); n != 1 {
		t.Errorf("hashed %d times, want 1 (verification cache)", n)
	}
	// Metrics per endpoint.
	if got := testutil.ToFloat64(e.srv.metrics.requests.WithLabelValues("GET /artifacts/{path...}", "206")); got != 4 {
		t.Errorf("206 count = %v, want 4", got)
	}
	if e.logs.count(`"msg"="request"`) != len(tests)+1 {
		t.Errorf("want one access log line per request, got:\n%s", e.logs.String())
	}
	if !strings.Contains(e.logs.String(), `"method"="GET" "path"="/artifacts/os/vmlinuz" "status"=206 "bytes"=1000`) {
		t.Errorf("access log lacks method/path/status/bytes:\n%s", e.logs.String())
	}
}

func TestArtifactMismatchNeverServed(t *testing.T) {
	e := newArtifactEnv(t, nil)
	for range 2 {
		resp, body := get(t, "GET", e.ts.URL+"/artifacts/wrong", nil)
		if resp.StatusCode != 500 || bytes.Contains(body, []byte("tampered")) {
			t.Fatalf("mismatching artifact: status %d body %q", resp.StatusCode, body)
		}
	}
	resp, body := get(t, "GET", e.ts.URL+"/artifacts/wrong", map[string]string{"Range": "bytes=0-3"})
	if resp.StatusCode != 500 || bytes.Contains(body, []byte("tamp")) {
		t.Fatalf("range of mismatching artifact: status %d body %q", resp.StatusCode, body)
	}
	// Reported once per file version, not per request (a report may be
	// a status write), and never with the digest the file has.
	if e.mismatchCount() != 1 {
		t.Fatalf("mismatch callback called %d times, want 1", e.mismatchCount())
	}
	m := e.mismatches[0]
	if m.Path != "wrong" || m.Expected != sum([]byte("original")) || m.Size != 8 {
		t.Fatalf("mismatch report %+v", m)
	}
	if !strings.Contains(e.logs.String(), "artifact NOT served") || strings.Contains(e.logs.String(), sum([]byte("tampered"))) {
		t.Fatalf("no clear log line, or one with the file's digest:\n%s", e.logs.String())
	}

	// Fixing the file on disk makes it servable: the cache is keyed by
	// size and mtime, so the new content is verified again.
	path := filepath.Join(e.dir, "wrong")
	must(t, os.WriteFile(path, []byte("original"), 0o644))
	must(t, os.Chtimes(path, time.Now(), time.Now().Add(time.Minute)))
	if resp, body := get(t, "GET", e.ts.URL+"/artifacts/wrong", nil); resp.StatusCode != 200 || string(body) != "original" {
		t.Fatalf("after fix: %d %q", resp.StatusCode, body)
	}
	// And tampering with a verified file (same size) is caught.
	must(t, os.WriteFile(path, []byte("ORIGINAL"), 0o644))
	must(t, os.Chtimes(path, time.Now(), time.Now().Add(2*time.Minute)))
	if resp, body := get(t, "GET", e.ts.URL+"/artifacts/wrong", nil); resp.StatusCode != 500 || string(body) == "ORIGINAL" {
		t.Fatalf("after tampering: %d %q", resp.StatusCode, body)
	}
	if e.mismatchCount() != 2 {
		t.Fatalf("the tampered version was reported %d times in all, want 2", e.mismatchCount())
	}
}

// rawGet sends a request line exactly as given, so no client cleans the
// path first.
func rawGet(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	must(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	must(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestArtifactPathTraversal(t *testing.T) {
	e := newArtifactEnv(t, ArtifactMap{"../secret": {SHA256: sum([]byte(secretContent))}})
	addr := strings.TrimPrefix(e.ts.URL, "http://")
	for _, target := range []string{
		"/artifacts/../secret",
		"/artifacts/..%2fsecret",
		"/artifacts/%2e%2e/secret",
		"/artifacts/%2e%2e%2fsecret",
		"/artifacts/os/..%2f..%2fsecret",
		"/artifacts/%2fetc%2fpasswd",
		"/artifacts//etc/passwd",
		"/artifacts/escape",
		"/artifacts/os%00/vmlinuz",
		"/artifacts/os\\..\\..\\secret",
	} {
		code, body := rawGet(t, addr, target)
		t.Logf("%s -> %d", target, code)
		if code/100 == 2 || strings.Contains(body, secretContent) {
			t.Errorf("%s: status %d body %q", target, code, body)
		}
	}
	for path, code := range map[string]int{"/artifacts/missing": 404, "/artifacts/unknown": 404, "/artifacts/nodigest": 500, "/artifacts/escape": 403} {
		if resp, _ := get(t, "GET", e.ts.URL+path, nil); resp.StatusCode != code {
			t.Errorf("%s: status %d, want %d", path, resp.StatusCode, code)
		}
	}
}

func TestHandleMountsMoreEndpoints(t *testing.T) {
	logs := &logSink{}
	s := newTestServer(t, Options{Logger: logs.logger()})
	must(t, s.Handle("GET /config/{token}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "config %s", r.PathValue("token"))
	})))
	if err := s.Handle("GET /config/{token}", http.NotFoundHandler()); err == nil {
		t.Fatal("conflicting pattern accepted")
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if err := s.Handle("GET /agent/v1/", http.NotFoundHandler()); err == nil {
		t.Fatal("Handle after start accepted")
	}
	resp, body := get(t, "GET", ts.URL+"/config/abc", nil)
	if resp.StatusCode != 200 || string(body) != "config abc" {
		t.Fatalf("mounted handler: %d %q", resp.StatusCode, body)
	}
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("GET /config/{token}", "200")); got != 1 {
		t.Fatalf("metric for mounted endpoint = %v", got)
	}
	if resp, _ := get(t, "GET", ts.URL+"/nothing", nil); resp.StatusCode != 404 {
		t.Fatalf("unmatched: %d", resp.StatusCode)
	}
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("unmatched", "404")); got != 1 {
		t.Fatalf("unmatched metric = %v", got)
	}
}

func TestIPXEDir(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "snponly.efi"), []byte("efi"), 0o644))
	must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "escape.efi")))
	s := newTestServer(t, Options{IPXEDir: dir})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if resp, body := get(t, "GET", ts.URL+"/ipxe/snponly.efi", nil); resp.StatusCode != 200 || string(body) != "efi" ||
		resp.Header.Get("Content-Type") != "application/efi" {
		t.Fatalf("ipxe file: %d %q, Content-Type %q (want application/efi)", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	// EDK2's HTTP boot asks for the size first with HEAD.
	if resp, _ := get(t, "HEAD", ts.URL+"/ipxe/snponly.efi", nil); resp.StatusCode != 200 || resp.ContentLength != 3 {
		t.Fatalf("HEAD ipxe file: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	if resp, _ := get(t, "GET", ts.URL+"/ipxe/escape.efi", nil); resp.StatusCode != 404 {
		t.Fatalf("escaping symlink: %d", resp.StatusCode)
	}
}

func TestServeShutsDown(t *testing.T) {
	s := newTestServer(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	resp, _ := get(t, "GET", "http://"+ln.Addr().String()+"/boot/x", nil)
	if resp.StatusCode != 404 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return")
	}
}
