package httpboot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/internal/safepath"
)

// Artifact is what the caller expects at one /artifacts/ path.
type Artifact struct {
	// SHA256 is the expected digest, hex. Required: nothing is served
	// without one.
	SHA256 string
	// URL, if set, is fetched into Options.CacheDir when the file is not
	// in Options.ArtifactDir (and verified before it is ever served).
	URL string
	// File, if set, is the file under Options.ArtifactDir served for this
	// path (relative, slash-separated, confined to the directory like a
	// request path). Empty: the request path itself. It lets a caller
	// give artifacts their own URL space (e.g. per MachineClass, so two
	// classes may expect different digests of the same file name).
	File string
}

// ArtifactSource gives the expected digest per artifact path (e.g. from
// the MachineClasses). Paths are cleaned, relative, slash-separated.
// Unknown paths return an error wrapping pxe.ErrNotFound (HTTP 404).
// It is called per request and should answer from memory.
type ArtifactSource interface {
	Artifact(ctx context.Context, path string) (Artifact, error)
}

// ArtifactMap is a static ArtifactSource.
type ArtifactMap map[string]Artifact

// Artifact implements ArtifactSource.
func (m ArtifactMap) Artifact(_ context.Context, path string) (Artifact, error) {
	a, ok := m[path]
	if !ok {
		return Artifact{}, fmt.Errorf("artifact %q: %w", path, pxe.ErrNotFound)
	}
	return a, nil
}

// ArtifactMismatch reports a file whose content does not match its
// expected digest. It was not served.
type ArtifactMismatch struct {
	Path     string // request path under /artifacts/
	File     string // file on disk, or the upstream URL
	Expected string
	Actual   string
	Size     int64
}

// ErrDigestMismatch is returned internally when verification fails.
var ErrDigestMismatch = errors.New("sha256 mismatch")

// verifyKey identifies one version of one file: the cache is keyed by
// path, device/inode, size and mtime, so a replaced or modified file is
// hashed again.
type verifyKey struct {
	file     string
	dev, ino uint64
	size     int64
	mtime    int64
}

type verifyEntry struct {
	key    verifyKey
	done   chan struct{}
	digest string
	err    error
}

// verifier hashes files once per version and shares the work between
// concurrent requests for the same file.
type verifier struct {
	mu      sync.Mutex
	entries map[string]*verifyEntry // by file
	hashed  func()                  // test hook: counts hash computations
}

func newVerifier() *verifier { return &verifier{entries: map[string]*verifyEntry{}} }

func keyOf(file string, fi fs.FileInfo) verifyKey {
	k := verifyKey{file: file, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.dev, k.ino = uint64(st.Dev), st.Ino
	}
	return k
}

// digest returns the sha256 of the open file f (read with ReadAt, so the
// offset is untouched for serving).
func (v *verifier) digest(ctx context.Context, file string, f *os.File, fi fs.FileInfo) (string, error) {
	key := keyOf(file, fi)
	v.mu.Lock()
	e, ok := v.entries[file]
	if !ok || e.key != key {
		e = &verifyEntry{key: key, done: make(chan struct{})}
		v.entries[file] = e
		v.mu.Unlock()
		if v.hashed != nil {
			v.hashed()
		}
		h := sha256.New()
		_, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size()))
		e.digest, e.err = hex.EncodeToString(h.Sum(nil)), err
		close(e.done)
		if err != nil {
			v.mu.Lock()
			if v.entries[file] == e {
				delete(v.entries, file) // do not cache I/O errors
			}
			v.mu.Unlock()
		}
	} else {
		v.mu.Unlock()
	}
	select {
	case <-e.done:
		return e.digest, e.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// prime records a digest computed elsewhere (while downloading).
func (v *verifier) prime(file string, fi fs.FileInfo, digest string) {
	e := &verifyEntry{key: keyOf(file, fi), done: make(chan struct{}), digest: digest}
	close(e.done)
	v.mu.Lock()
	v.entries[file] = e
	v.mu.Unlock()
}

func normalizeDigest(s string) (string, error) {
	s = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "sha256:"))
	if len(s) != 64 {
		return "", fmt.Errorf("expected sha256 %q is not 64 hex digits", s)
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", fmt.Errorf("expected sha256 %q is not hex", s)
	}
	return s, nil
}

// fetcher downloads upstream artifacts into the cache directory, named by
// their digest, one download per digest at a time.
type fetcher struct {
	dir     string
	client  *http.Client
	timeout time.Duration
	maxSize int64

	mu       sync.Mutex
	inflight map[string]*fetchCall
}

type fetchCall struct {
	done chan struct{}
	err  error
}

// errUpstream wraps download failures (as opposed to digest mismatches).
var errUpstream = errors.New("upstream fetch failed")

// fetch makes sure <dir>/<digest> exists with the right content. On a
// digest mismatch it returns the actual digest and ErrDigestMismatch.
func (f *fetcher) fetch(ctx context.Context, url, digest string) (actual string, err error) {
	final := filepath.Join(f.dir, digest)
	if _, err := os.Stat(final); err == nil {
		return digest, nil
	}
	f.mu.Lock()
	if c, ok := f.inflight[digest]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			return digest, c.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	c := &fetchCall{done: make(chan struct{})}
	f.inflight[digest] = c
	f.mu.Unlock()

	// Detached from the request: other requests may be waiting for it.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.timeout)
	defer cancel()
	actual, err = f.download(dctx, url, digest, final)
	c.err = err
	close(c.done)
	f.mu.Lock()
	delete(f.inflight, digest)
	f.mu.Unlock()
	return actual, err
}

func (f *fetcher) download(ctx context.Context, url, digest, final string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errUpstream, err)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errUpstream, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: %s: HTTP %d", errUpstream, url, resp.StatusCode)
	}
	tmp, err := os.CreateTemp(f.dir, ".fetch-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, f.maxSize+1))
	if err == nil && n > f.maxSize {
		err = fmt.Errorf("larger than %d bytes", f.maxSize)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", errUpstream, url, err)
	}
	actual := hex.EncodeToString(h.Sum(nil))
	if actual != digest {
		return actual, ErrDigestMismatch
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	return actual, nil
}

// serveArtifact handles GET/HEAD /artifacts/{path...}.
func (s *Server) serveArtifact(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	log := s.log.WithValues("path", r.URL.Path)
	name, err := safepath.Clean(r.PathValue("path"))
	if err != nil {
		http.Error(w, "invalid path", http.StatusBadRequest)
		return
	}
	if s.opts.Artifacts == nil {
		http.NotFound(w, r)
		return
	}
	art, err := s.opts.Artifacts.Artifact(ctx, name)
	if errors.Is(err, pxe.ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		log.Error(err, "artifact lookup")
		http.Error(w, "artifact lookup failed", http.StatusInternalServerError)
		return
	}
	want, err := normalizeDigest(art.SHA256)
	if err != nil {
		log.Error(err, "artifact has no usable expected digest; refusing to serve it")
		http.Error(w, "artifact has no valid expected sha256", http.StatusInternalServerError)
		return
	}

	var (
		f    *os.File
		fi   fs.FileInfo
		file string
	)
	local := name
	if art.File != "" {
		if local, err = safepath.Clean(art.File); err != nil {
			log.Error(err, "artifact has an unusable file name; refusing to serve it")
			http.Error(w, "artifact has an invalid file name", http.StatusInternalServerError)
			return
		}
	}
	if s.artifactRoot != nil {
		f, fi, _, err = safepath.Open(s.artifactRoot, local)
		file = filepath.Join(s.opts.ArtifactDir, local)
	} else {
		err = fs.ErrNotExist
	}
	if errors.Is(err, fs.ErrNotExist) && art.URL != "" && s.fetcher != nil {
		actual, ferr := s.fetcher.fetch(ctx, art.URL, want)
		switch {
		case errors.Is(ferr, ErrDigestMismatch):
			s.mismatch(ArtifactMismatch{Path: name, File: art.URL, Expected: want, Actual: actual})
			http.Error(w, "artifact failed sha256 verification", http.StatusInternalServerError)
			return
		case ferr != nil:
			// Artifact URLs may carry tokens (query, userinfo): log neither.
			safe := redactURL(art.URL)
			log.Info("fetch artifact failed", "path", name, "url", safe, "error", strings.ReplaceAll(ferr.Error(), art.URL, safe))
			http.Error(w, "artifact not available", http.StatusBadGateway)
			return
		}
		f, fi, _, err = safepath.Open(s.cacheRoot, want)
		file = filepath.Join(s.opts.CacheDir, want)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			log.Info("artifact expected but missing", "error", err.Error())
			http.NotFound(w, r)
			return
		}
		log.Info("artifact refused", "error", err.Error())
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	defer f.Close()

	got, err := s.verify.digest(ctx, file, f, fi)
	if err != nil {
		log.Error(err, "hash artifact")
		http.Error(w, "artifact verification failed", http.StatusInternalServerError)
		return
	}
	if got != want {
		s.mismatch(ArtifactMismatch{Path: name, File: file, Expected: want, Actual: got, Size: fi.Size()})
		http.Error(w, "artifact failed sha256 verification", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("ETag", `"`+want+`"`)
	h.Set("Content-Type", "application/octet-stream") // no sniffing
	h.Set("X-Content-SHA256", want)
	// ServeContent handles Range, If-Range, If-None-Match (against the ETag
	// above), HEAD and Content-Length, and uses sendfile for *os.File.
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

func (s *Server) mismatch(m ArtifactMismatch) {
	s.metrics.mismatches.Inc()
	s.log.Error(ErrDigestMismatch, "artifact NOT served: content does not match its expected sha256",
		"path", m.Path, "file", m.File, "expected", m.Expected, "actual", m.Actual, "size", m.Size)
	if cb := s.opts.OnArtifactMismatch; cb != nil {
		cb(m)
	}
}

// redactURL drops the userinfo and query of a URL, where tokens live.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return u.String()
}
