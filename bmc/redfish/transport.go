package redfish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"anvil.dev/anvil/bmc"
	ibackoff "anvil.dev/anvil/internal/backoff"
	"anvil.dev/anvil/internal/retryafter"
)

// authMode is how the transport authenticates requests.
type authMode int

const (
	// The zero value: before discovery; only the service root is requested.
	_ authMode = iota
	// modeSession: X-Auth-Token from SessionService/Sessions.
	modeSession
	// modeBasic: HTTP basic auth (services without a SessionService).
	modeBasic
)

const (
	// maxRetryAfter caps how long a Retry-After header may make us wait.
	maxRetryAfter = 30 * time.Second
	backoffBase   = 100 * time.Millisecond
	backoffMax    = 3 * time.Second
)

// transport sits under gofish. gofish parses Redfish; this layer owns what
// gofish does not do for us: one session reused across calls, a single
// re-login when the BMC expired it (401), basic auth for services without
// sessions, a hold-off after rejected credentials (no retry storm, no account
// lockout), and bounded retries of 503s (honouring Retry-After) and of
// idempotent requests that hit 5xx or network errors.
type transport struct {
	base        http.RoundTripper
	endpoint    string // scheme://host:port
	creds       bmc.Credentials
	retries     int
	authBackoff time.Duration
	opts        bmc.Options

	loginMu sync.Mutex // serializes logins

	mu          sync.Mutex
	mode        authMode
	sessionsURL string
	token       string
	sessionLoc  string
	authFailed  time.Time
	authErr     error
	logins      int
}

func newTransport(base http.RoundTripper, endpoint string, opts bmc.Options) *transport {
	return &transport{
		base:        base,
		endpoint:    endpoint,
		creds:       opts.Credentials,
		retries:     opts.Retries(),
		authBackoff: opts.AuthBackoff(),
		opts:        opts,
	}
}

// configure sets the authentication mode after discovery.
func (t *transport) configure(mode authMode, sessionsURL string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mode, t.sessionsURL = mode, sessionsURL
}

func isIdempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodPut, http.MethodOptions:
		return true
	}
	return false
}

// retryableStatus: 503 means the service did not process the request, so any
// method may be retried; other gateway/server errors only for idempotent
// methods.
func retryableStatus(code int, method string) bool {
	switch code {
	case http.StatusServiceUnavailable:
		return true
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return isIdempotent(method)
	}
	return false
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		// The replays read fresh copies from GetBody; the original body
		// must still be closed.
		defer req.Body.Close()
	}
	ctx := req.Context()
	relogged := false
	for attempt := 0; ; attempt++ {
		r, tok, err := t.prepare(req)
		if err != nil {
			return nil, err
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			if isIdempotent(req.Method) && attempt < t.retries && ctx.Err() == nil {
				t.opts.Log(ctx).V(1).Info("retrying after transport error", "method", req.Method, "path", req.URL.Path, "attempt", attempt+1, "error", err.Error())
				if sleepCtx(ctx, backoff(attempt)) == nil {
					continue
				}
			}
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized {
			if tok != "" && !relogged {
				// The session expired or the BMC forgot it (reboot): log in
				// again once and replay.
				drain(resp)
				t.dropToken(tok)
				relogged = true
				attempt--
				continue
			}
			if tok != "" || t.currentMode() == modeBasic {
				t.noteAuthFailure(fmt.Errorf("the BMC answered 401 to %s %s", req.Method, req.URL.Path))
			}
			return resp, nil
		}
		if retryableStatus(resp.StatusCode, req.Method) && attempt < t.retries {
			d := retryDelay(resp, attempt)
			if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > d {
				t.opts.Log(ctx).V(1).Info("retrying after server error", "method", req.Method, "path", req.URL.Path, "status", resp.StatusCode, "attempt", attempt+1, "delay", d)
				drain(resp)
				if err := sleepCtx(ctx, d); err != nil {
					return nil, err
				}
				continue
			}
		}
		return resp, nil
	}
}

func (t *transport) currentMode() authMode {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mode
}

// prepare clones req with a fresh body and authentication. It returns the
// session token it used ("" for none or basic auth).
func (t *transport) prepare(req *http.Request) (*http.Request, string, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil, "", errors.New("redfish: request body cannot be replayed")
		}
		b, err := req.GetBody()
		if err != nil {
			return nil, "", err
		}
		r.Body = b
	}
	r.Header.Del("Authorization")
	r.Header.Del("X-Auth-Token")
	switch t.currentMode() {
	case modeBasic:
		if err := t.heldOff(); err != nil {
			return nil, "", err
		}
		r.SetBasicAuth(t.creds.Username, t.creds.Password)
		return r, "", nil
	case modeSession:
		tok, err := t.sessionToken(req.Context())
		if err != nil {
			return nil, "", err
		}
		if tok == "" { // fell back to basic auth
			r.SetBasicAuth(t.creds.Username, t.creds.Password)
			return r, "", nil
		}
		r.Header.Set("X-Auth-Token", tok)
		return r, tok, nil
	}
	return r, "", nil
}

func (t *transport) dropToken(tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token == tok {
		t.token, t.sessionLoc = "", ""
	}
}

func (t *transport) noteAuthFailure(cause error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.authFailed = time.Now()
	t.authErr = cause
}

// heldOff refuses to authenticate again soon after the BMC rejected the
// credentials.
func (t *transport) heldOff() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.authErr == nil || t.authBackoff <= 0 {
		return nil
	}
	if since := time.Since(t.authFailed); since < t.authBackoff {
		return &bmc.Error{Kind: bmc.ErrAuthFailed, Op: "log in",
			Err: fmt.Errorf("not retrying for %s after the BMC rejected the credentials for user %q: %w",
				(t.authBackoff - since).Round(time.Second), t.creds.Username, t.authErr)}
	}
	return nil
}

// sessionToken returns the current session token, logging in if needed. It
// returns "" when the service turned out to have no usable session login and
// the transport switched to basic auth.
func (t *transport) sessionToken(ctx context.Context) (string, error) {
	t.mu.Lock()
	tok := t.token
	t.mu.Unlock()
	if tok != "" {
		return tok, nil
	}
	t.loginMu.Lock()
	defer t.loginMu.Unlock()
	t.mu.Lock()
	tok, mode := t.token, t.mode
	t.mu.Unlock()
	if tok != "" || mode != modeSession {
		return tok, nil // another request logged in (or fell back) meanwhile
	}
	if err := t.heldOff(); err != nil {
		return "", err
	}
	return t.login(ctx)
}

// login creates a session. Caller holds loginMu.
func (t *transport) login(ctx context.Context) (string, error) {
	body, err := json.Marshal(map[string]string{"UserName": t.creds.Username, "Password": t.creds.Password})
	if err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint+t.sessionsURL, bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", userAgent)
		t.mu.Lock()
		t.logins++
		t.mu.Unlock()
		resp, err := t.base.RoundTrip(req)
		if err != nil {
			return "", fmt.Errorf("session login: %w", err)
		}
		code := resp.StatusCode
		switch {
		case code == http.StatusOK || code == http.StatusCreated:
			tok, loc := resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
			drain(resp)
			if tok == "" {
				return "", errors.New("session login: the BMC returned no X-Auth-Token")
			}
			t.mu.Lock()
			t.token, t.sessionLoc, t.authErr = tok, loc, nil
			t.mu.Unlock()
			t.opts.Log(ctx).V(1).Info("created Redfish session", "endpoint", t.endpoint)
			return tok, nil
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			cause := fmt.Errorf("the BMC answered %d %s to the session login for user %q%s",
				code, http.StatusText(code), t.creds.Username, redfishCode(resp))
			t.noteAuthFailure(cause)
			return "", &bmc.Error{Kind: bmc.ErrAuthFailed, Op: "log in", Err: cause}
		case code == http.StatusNotFound || code == http.StatusMethodNotAllowed || code == http.StatusNotImplemented:
			drain(resp)
			t.opts.Log(ctx).V(1).Info("session login not supported, using basic auth", "endpoint", t.endpoint, "status", code)
			t.configure(modeBasic, "")
			return "", nil
		case code == http.StatusServiceUnavailable && attempt < t.retries:
			d := retryDelay(resp, attempt)
			drain(resp)
			if err := sleepCtx(ctx, d); err != nil {
				return "", err
			}
			continue
		case code >= 300 && code < 400:
			// Not followed: the body carries the password.
			to := resp.Header.Get("Location")
			if u, err := req.URL.Parse(to); err == nil {
				to = safeURL(u)
			}
			drain(resp)
			return "", fmt.Errorf("session login: the BMC answered %d %s to %s, redirecting to %q: not followed with the credentials; if the BMC moved, put the new URL in the Host's spec.bmc.address", code, http.StatusText(code), t.sessionsURL, to)
		default:
			return "", fmt.Errorf("session login: the BMC answered %d %s%s", code, http.StatusText(code), redfishCode(resp))
		}
	}
}

// logout deletes the session (best effort).
func (t *transport) logout(ctx context.Context) error {
	t.mu.Lock()
	tok, loc := t.token, t.sessionLoc
	t.token, t.sessionLoc = "", ""
	t.mu.Unlock()
	if tok == "" || loc == "" {
		return nil
	}
	u := loc
	if len(u) > 0 && u[0] == '/' {
		u = t.endpoint + u
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", tok)
	req.Header.Set("User-Agent", userAgent)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return err
	}
	drain(resp)
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("logout: the BMC answered %d", resp.StatusCode)
	}
	return nil
}

// loginCount reports how many session logins were attempted (for tests).
func (t *transport) loginCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.logins
}

// redfishCode extracts " (Base.1.x.Code: message)" from an error body and
// closes the body.
func redfishCode(resp *http.Response) string {
	defer drain(resp)
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
		return ""
	}
	return fmt.Sprintf(" (%s: %s)", e.Error.Code, e.Error.Message)
}

func drain(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}

// retryDelay honours Retry-After (seconds or HTTP date, capped) or backs off
// exponentially with jitter.
func retryDelay(resp *http.Response, attempt int) time.Duration {
	if d, ok := retryafter.Parse(resp.Header.Get("Retry-After"), time.Now(), maxRetryAfter); ok {
		return d
	}
	return backoff(attempt)
}

// backoff is backoffBase doubled per attempt (attempt 0 is the first
// retry), at most backoffMax, with ±20% jitter so many controllers do not
// retry in lockstep.
func backoff(attempt int) time.Duration {
	return ibackoff.Backoff{Base: backoffBase, Cap: backoffMax, Low: 0.8, High: 1.2}.Delay(attempt + 1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
