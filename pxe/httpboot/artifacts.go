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
	"strconv"
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
	// URL, if set, is served from Options.CacheDir once it was fetched
	// and verified there (see Server.WantUpstream: requests never fetch).
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

// ArtifactMismatch reports a file under the artifact directory whose
// content does not match its expected digest. It was not served. The
// digest it has is reported nowhere (status, logs): whoever may write a
// class must not learn digests of files through the server. Upstream
// artifacts report through UpstreamOptions.OnResult instead.
type ArtifactMismatch struct {
	Path     string // request path under /artifacts/
	File     string // file on disk
	Expected string
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

	reported map[reportKey]bool // local mismatches already reported
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

	if !s.files.take(w, s.metrics) {
		return
	}
	defer s.files.release()
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
	cached := false
	if errors.Is(err, fs.ErrNotExist) && art.URL != "" && s.fetcher != nil {
		// Only what was fetched and verified when its class changed is
		// served; a request never fetches (nor retries a failed fetch).
		if ok, retry := s.fetcher.ready(ctx, art.URL, want); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(retry.Round(time.Second)/time.Second)))
			http.Error(w, "artifact not verified yet", http.StatusServiceUnavailable)
			return
		}
		f, fi, _, err = safepath.Open(s.cacheRoot, want)
		file = filepath.Join(s.opts.CacheDir, want)
		cached = true
		if errors.Is(err, fs.ErrNotExist) {
			s.fetcher.invalidate(art.URL, want)
			w.Header().Set("Retry-After", "10")
			http.Error(w, "artifact not verified yet", http.StatusServiceUnavailable)
			return
		}
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
		if cached {
			// The verified copy rotted on disk: fetch it again (once).
			log.Error(ErrDigestMismatch, "cached upstream artifact changed on disk; NOT served, fetching it again", "file", file)
			os.Remove(file)
			s.fetcher.invalidate(art.URL, want)
			w.Header().Set("Retry-After", "10")
			http.Error(w, "artifact not verified yet", http.StatusServiceUnavailable)
			return
		}
		s.mismatch(ArtifactMismatch{Path: name, File: file, Expected: want, Size: fi.Size()}, keyOf(file, fi))
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

// mismatch reports a local file that does not match: once per path,
// expected digest and file version, not once per request (each report may
// be a status write).
func (s *Server) mismatch(m ArtifactMismatch, version verifyKey) {
	s.metrics.mismatches.Inc()
	k := reportKey{path: m.Path, expected: m.Expected, version: version}
	v := s.verify
	v.mu.Lock()
	if v.reported == nil || len(v.reported) >= 4096 {
		v.reported = map[reportKey]bool{} // bounded; forgetting costs one more report
	}
	first := !v.reported[k]
	v.reported[k] = true
	v.mu.Unlock()
	if !first {
		return
	}
	s.log.Error(ErrDigestMismatch, "artifact NOT served: content does not match its expected sha256",
		"path", m.Path, "file", m.File, "expected", m.Expected, "size", m.Size)
	if cb := s.opts.OnArtifactMismatch; cb != nil {
		cb(m)
	}
}

type reportKey struct {
	path, expected string
	version        verifyKey
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
