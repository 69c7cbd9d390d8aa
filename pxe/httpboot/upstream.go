package httpboot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/internal/backoff"
	"anvil.dev/anvil/internal/netguard"
)

// UpstreamOptions tunes the fetching of artifacts that have a URL. They are
// fetched when WantUpstream names them (a MachineClass was added or
// changed), never because a request asked: an unauthenticated GET must not
// be able to make the server download anything.
type UpstreamOptions struct {
	// Guard decides which addresses a fetch may connect to. It runs on
	// every address dialled and on every redirect target. The zero value
	// refuses loopback, link-local and cloud metadata addresses.
	Guard netguard.Guard
	// GuardFlag names the flag that opens the guard, for messages
	// (default "--artifact-allow-cidrs").
	GuardFlag string
	// RetryBase and RetryMax space the attempts after a failed fetch or a
	// digest mismatch: RetryBase doubling per failure up to RetryMax
	// (defaults 30s and 30m), with jitter.
	RetryBase, RetryMax time.Duration
	// Wait bounds how long a request for an artifact whose fetch is
	// running waits for it before it is answered 503 (default 15s).
	Wait time.Duration
	// Concurrency bounds the downloads running at once (default 4).
	Concurrency int
	// OnResult is called when the outcome of an (URL, sha256) changes:
	// verified, or failed and why. It is called from the fetching
	// goroutine, one call at a time per artifact.
	OnResult func(UpstreamResult)
}

// UpstreamResult is the outcome of fetching one upstream artifact.
type UpstreamResult struct {
	URL    string // as the class has it: may carry a token, see RedactURL
	SHA256 string
	// Verified: the content is cached and matches SHA256.
	Verified bool
	// Mismatch: the upstream served content with another digest (which
	// digest is reported nowhere: it would make the server an oracle).
	Mismatch bool
	// Refused: the guard refused the address (Error names the flag).
	Refused bool
	// Error says why it is not verified, in words safe for a status
	// message: no URL, no digest, no network detail (that is logged).
	Error string
}

type upstreamKey struct{ url, digest string }

type upstreamEntry struct {
	key    upstreamKey
	owners map[string]bool
	ctx    context.Context
	cancel context.CancelFunc

	verified bool
	done     chan struct{} // non-nil while an attempt is queued or running
	last     *UpstreamResult
	failures int
	retryAt  time.Time
	timer    *time.Timer
}

// upstream keeps the fetched artifacts: one entry per (URL, sha256) some
// owner wants, each fetched once, its failure cached until a backoff
// retry, its content stored as <dir>/<sha256>.
type upstream struct {
	opts    UpstreamOptions
	dir     string
	client  *http.Client
	timeout time.Duration
	maxSize int64
	verify  *verifier
	log     logr.Logger
	sem     chan struct{}
	onMiss  func() // metrics: a digest mismatch

	mu      sync.Mutex
	entries map[upstreamKey]*upstreamEntry
	owners  map[string][]upstreamKey
	closed  bool
	fetches func() // test hook: counts downloads started
}

func newUpstream(o Options, verify *verifier, log logr.Logger, onMiss func()) *upstream {
	u := o.Upstream
	if u.GuardFlag == "" {
		u.GuardFlag = "--artifact-allow-cidrs"
	}
	if u.RetryBase <= 0 {
		u.RetryBase = 30 * time.Second
	}
	if u.RetryMax < u.RetryBase {
		u.RetryMax = max(u.RetryBase, 30*time.Minute)
	}
	if u.Wait <= 0 {
		u.Wait = 15 * time.Second
	}
	if u.Concurrency <= 0 {
		u.Concurrency = 4
	}
	client := o.UpstreamClient
	if client == nil {
		client = guardedClient(u.Guard)
	}
	return &upstream{opts: u, dir: o.CacheDir, client: client, timeout: o.FetchTimeout, maxSize: o.MaxArtifactSize,
		verify: verify, log: log, sem: make(chan struct{}, u.Concurrency), onMiss: onMiss,
		entries: map[upstreamKey]*upstreamEntry{}, owners: map[string][]upstreamKey{}}
}

// guardedClient dials only what g allows and follows a redirect only to an
// http(s) URL whose host passes g too (names are checked again at dial
// time). No proxy: a proxy would dial for us, past the guard.
func guardedClient(g netguard.Guard) *http.Client {
	tr := &http.Transport{
		DialContext:           g.Dialer(30 * time.Second).DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		IdleConnTimeout:       time.Minute,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to a %q URL", req.URL.Scheme)
		}
		return g.CheckHost(req.URL.Hostname())
	}}
}

// WantUpstream sets the upstream artifacts owner (e.g. a MachineClass,
// "namespace/name") needs: each (URL, SHA256) not fetched yet is fetched
// now, in the background; those no owner wants any more are forgotten (a
// running fetch of one is cancelled). Artifacts without a URL are ignored.
// Nil or empty arts removes the owner. Without Options.CacheDir it does
// nothing.
func (s *Server) WantUpstream(owner string, arts []Artifact) {
	if s.fetcher != nil {
		s.fetcher.want(owner, arts)
	}
}

func (u *upstream) want(owner string, arts []Artifact) {
	var keys []upstreamKey
	seen := map[upstreamKey]bool{}
	for _, a := range arts {
		d, err := normalizeDigest(a.SHA256)
		if a.URL == "" || err != nil {
			continue
		}
		k := upstreamKey{a.URL, d}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	for _, k := range u.owners[owner] {
		if e := u.entries[k]; e != nil && !seen[k] {
			delete(e.owners, owner)
			if len(e.owners) == 0 {
				u.dropLocked(e)
			}
		}
	}
	if len(keys) == 0 {
		delete(u.owners, owner)
		return
	}
	u.owners[owner] = keys
	for _, k := range keys {
		e := u.entries[k]
		if e == nil {
			e = &upstreamEntry{key: k, owners: map[string]bool{}}
			e.ctx, e.cancel = context.WithCancel(context.Background())
			u.entries[k] = e
			u.startLocked(e)
		}
		e.owners[owner] = true
	}
}

func (u *upstream) dropLocked(e *upstreamEntry) {
	delete(u.entries, e.key)
	e.cancel()
	if e.timer != nil {
		e.timer.Stop()
	}
}

// close cancels every fetch and forgets every entry.
func (u *upstream) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	for _, e := range u.entries {
		u.dropLocked(e)
	}
}

// startLocked queues one attempt for e unless one is queued or running.
func (u *upstream) startLocked(e *upstreamEntry) {
	if e.done != nil {
		return
	}
	e.done = make(chan struct{})
	go u.attempt(e, e.done)
}

func (u *upstream) attempt(e *upstreamEntry, done chan struct{}) {
	defer close(done)
	select {
	case u.sem <- struct{}{}:
	case <-e.ctx.Done():
		return
	}
	res := u.fetch(e.ctx, e.key)
	<-u.sem
	if e.ctx.Err() != nil {
		return // forgotten meanwhile: nobody is told
	}

	u.mu.Lock()
	e.done = nil
	e.verified = res.Verified
	changed := e.last == nil || *e.last != res
	e.last = &res
	if res.Verified {
		e.failures = 0
		e.retryAt = time.Time{}
	} else {
		e.failures++
		// Up to 10% more, so replicas do not retry in step.
		d := backoff.Backoff{Base: u.opts.RetryBase, Cap: u.opts.RetryMax, Low: 1, High: 1.1}.Delay(e.failures)
		e.retryAt = time.Now().Add(d)
		e.timer = time.AfterFunc(d, func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			if u.entries[e.key] == e {
				u.startLocked(e)
			}
		})
	}
	retryIn := time.Until(e.retryAt).Round(time.Second)
	u.mu.Unlock()

	safe := RedactURL(e.key.url)
	if res.Verified {
		u.log.Info("upstream artifact fetched and verified", "url", safe, "sha256", e.key.digest)
	} else {
		u.log.Info("upstream artifact NOT verified; it is not served", "url", safe, "sha256", e.key.digest, "reason", res.Error, "retryIn", retryIn.String())
	}
	if changed && u.opts.OnResult != nil {
		u.opts.OnResult(res)
	}
}

// fetch makes sure <dir>/<digest> holds the content: a copy already there
// (an earlier run, another URL with the same digest) is verified, else
// the URL is downloaded.
func (u *upstream) fetch(ctx context.Context, k upstreamKey) UpstreamResult {
	res := UpstreamResult{URL: k.url, SHA256: k.digest}
	final := filepath.Join(u.dir, k.digest)
	if f, err := os.Open(final); err == nil {
		fi, serr := f.Stat()
		var got string
		if serr == nil {
			got, serr = u.verify.digest(ctx, final, f, fi)
		}
		f.Close()
		if serr == nil && got == k.digest {
			res.Verified = true
			return res
		}
		os.Remove(final) // rotten: fetch it again
	}
	if u.fetches != nil {
		u.fetches()
	}
	dctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	err := u.download(dctx, k.url, k.digest, final)
	switch {
	case err == nil:
		res.Verified = true
	case errors.Is(err, ErrDigestMismatch):
		res.Mismatch, res.Error = true, "sha256 mismatch: the upstream content does not have the digest the class names"
		if u.onMiss != nil {
			u.onMiss()
		}
	case errors.Is(err, netguard.ErrDenied):
		res.Refused = true
		res.Error = fmt.Sprintf("address refused: %s (an admin can allow it with %s)", deniedReason(err), u.opts.GuardFlag)
	default:
		res.Error = err.Error()
	}
	return res
}

// deniedReason is the guard's own sentence, without the URL or the port
// the client error wraps it in.
func deniedReason(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if s := e.Error(); strings.HasPrefix(s, netguard.ErrDenied.Error()) {
			return s
		}
	}
	return netguard.ErrDenied.Error()
}

// errFetch is a download failure with a message safe for status: the
// detail (which may name internal hosts or carry the URL) is logged.
type errFetch struct {
	msg    string
	detail error
}

func (e *errFetch) Error() string { return e.msg }
func (e *errFetch) Unwrap() error { return e.detail }

func (u *upstream) download(ctx context.Context, rawURL, digest, final string) error {
	safe := RedactURL(rawURL)
	fail := func(msg string, detail error) error {
		if detail != nil && !errors.Is(detail, netguard.ErrDenied) {
			d := detail.Error()
			var ue *url.Error
			if errors.As(detail, &ue) {
				d = ue.Err.Error() // without the URL
			}
			u.log.Info("upstream artifact fetch failed", "url", safe, "error", d)
		}
		return &errFetch{msg: msg, detail: detail}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fail("not a valid URL", nil)
	}
	if err := u.opts.Guard.CheckHost(req.URL.Hostname()); err != nil {
		return fail("address refused", err)
	}
	resp, err := u.client.Do(req)
	if err != nil {
		if errors.Is(err, netguard.ErrDenied) {
			return fail("address refused", err)
		}
		return fail("upstream fetch failed: could not connect or no response (see the boot server log)", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Sprintf("upstream fetch failed: HTTP %d", resp.StatusCode), nil)
	}
	tmp, err := os.CreateTemp(u.dir, ".fetch-*")
	if err != nil {
		return fail("cannot write the artifact cache (see the boot server log)", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, u.maxSize+1))
	if err == nil && n > u.maxSize {
		tmp.Close()
		return fail(fmt.Sprintf("upstream fetch failed: larger than %d bytes", u.maxSize), nil)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return fail("cannot write the artifact cache: no space left", err)
		}
		return fail("upstream fetch failed while reading (see the boot server log)", err)
	}
	if hex.EncodeToString(h.Sum(nil)) != digest {
		return ErrDigestMismatch // the digest it had is not kept: not logged, not reported
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return fail("cannot write the artifact cache (see the boot server log)", err)
	}
	if fi, err := os.Stat(final); err == nil {
		u.verify.prime(final, fi, digest)
	}
	return nil
}

// ready says whether the request for (rawURL, digest) may be served from
// the cache now. If the artifact's attempt is running it waits for it (at
// most UpstreamOptions.Wait). It never starts a fetch: an entry the owners
// do not want (not in any class yet) is served only if its verified copy
// is already on disk. retry is a hint for Retry-After.
func (u *upstream) ready(ctx context.Context, rawURL, digest string) (ok bool, retry time.Duration) {
	k := upstreamKey{rawURL, digest}
	u.mu.Lock()
	e := u.entries[k]
	if e == nil {
		u.mu.Unlock()
		return true, 0 // served if <dir>/<digest> exists and verifies
	}
	if e.verified {
		u.mu.Unlock()
		return true, 0
	}
	done := e.done
	u.mu.Unlock()
	if done != nil {
		t := time.NewTimer(u.opts.Wait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if e.verified {
		return true, 0
	}
	if e.done != nil {
		return false, 10 * time.Second
	}
	return false, max(time.Until(e.retryAt), time.Second)
}

// invalidate is called when the cached copy of a verified entry is gone or
// does not verify any more: one new attempt starts (a request can cause
// it only once per verified copy).
func (u *upstream) invalidate(rawURL, digest string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if e := u.entries[upstreamKey{rawURL, digest}]; e != nil && e.verified {
		e.verified = false
		u.startLocked(e)
	}
}

// RedactURL drops the userinfo and query of a URL, where tokens live.
func RedactURL(raw string) string { return redactURL(raw) }
