// Package client is the agent's side of the agent API: three calls, each
// idempotent and retried with exponential backoff and jitter, a bounded
// number of times. The agent only makes outbound requests. The action
// poll may be a long poll (NextActionWait) that the server holds.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/agent"
	ibackoff "anvil.dev/anvil/internal/backoff"
	"anvil.dev/anvil/internal/retryafter"
)

// Errors callers act on.
var (
	// ErrUnauthorized: the server refused the credential (401). Retrying
	// does not help until the config carries a new credential.
	ErrUnauthorized = errors.New("agent API refused the credential")
	// ErrConflict: the action is no longer current (409).
	ErrConflict = errors.New("action no longer current")
	// ErrNotFound: the server does not know the action (404).
	ErrNotFound = errors.New("action unknown to the server")
)

// StatusError is any other non-success answer.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("agent API answered %d", e.Code)
	}
	return fmt.Sprintf("agent API answered %d: %s", e.Code, e.Message)
}

// Options configure a Client.
type Options struct {
	// Endpoint is the base URL of the Anvil HTTP service, e.g.
	// http://10.0.0.1 or https://anvil.example:8443. Paths are appended.
	Endpoint string
	// Credential is "<hostUID>.<secret>" (secret; never logged).
	Credential string
	// HTTPClient defaults to one with a 30s timeout and no proxy. A long
	// poll (NextActionWait) uses a copy without Timeout (its own deadline
	// is the wait plus a margin) and, if the Transport is an
	// *http.Transport whose ResponseHeaderTimeout would cut a held request,
	// a clone of it without that timeout (so a second connection).
	HTTPClient *http.Client
	// UserAgent, default "anvil-agent".
	UserAgent string
	// Attempts per call (default 6), the first backoff delay (default 1s)
	// and the cap (default 1m). Delays double with full jitter.
	Attempts  int
	BaseDelay time.Duration
	MaxDelay  time.Duration
	Logger    logr.Logger
}

// holdMargin is what a long poll waits for the answer beyond the wait it
// asked for: the server answers when the wait passes, plus network time.
var holdMargin = 15 * time.Second

// Client calls the agent API.
type Client struct {
	opts Options
	base *url.URL
	// long makes the held requests of NextActionWait (see HTTPClient).
	long *http.Client
}

// New validates opts.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("agent client: endpoint must be an http(s) URL")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("agent client: endpoint must not carry user info, a query or a fragment")
	}
	if _, err := agent.HostUID(opts.Credential); err != nil {
		return nil, fmt.Errorf("agent client: %w", err)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, ResponseHeaderTimeout: 20 * time.Second}}
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "anvil-agent"
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 6
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = time.Second
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = time.Minute
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return &Client{opts: opts, base: u, long: longPollClient(opts.HTTPClient, agent.MaxWaitSeconds*time.Second+holdMargin)}, nil
}

// longPollClient is hc for requests the server may hold for up to hold:
// the per-request deadline bounds them instead of hc's timeouts.
func longPollClient(hc *http.Client, hold time.Duration) *http.Client {
	lc := *hc // shares the Transport, so its connections
	lc.Timeout = 0
	if tr, ok := hc.Transport.(*http.Transport); ok && tr.ResponseHeaderTimeout > 0 && tr.ResponseHeaderTimeout < hold {
		tr = tr.Clone()
		tr.ResponseHeaderTimeout = 0
		lc.Transport = tr
	}
	return &lc
}

// CloseIdleConnections closes the idle connections of both HTTP clients
// (the long poll's may have its own Transport).
func (c *Client) CloseIdleConnections() {
	c.opts.HTTPClient.CloseIdleConnections()
	c.long.CloseIdleConnections()
}

// Report posts the host's facts.
func (c *Client) Report(ctx context.Context, r agent.Report) error {
	return c.do(ctx, http.MethodPost, agent.PathReport, r, nil, c.opts.Attempts, 0)
}

// NextAction asks what to do now. The action is validated.
func (c *Client) NextAction(ctx context.Context) (agent.Action, error) {
	return c.NextActionWait(ctx, 0)
}

// NextActionWait asks what to do, letting the server hold the request for
// up to wait (rounded up to whole seconds, at most agent.MaxWaitSeconds)
// while there is nothing to do; wait <= 0 is NextAction. The answer has
// Waited set if the server held it (an old server answers at once without
// it). A held request that gets no answer within wait plus a margin (15s)
// (something between cut it short or kept it) is answered "none" without
// Waited, not an error: the caller asks again after its usual pause.
func (c *Client) NextActionWait(ctx context.Context, wait time.Duration) (agent.Action, error) {
	p, hold := agent.PathActions, time.Duration(0)
	if wait > 0 {
		secs := min(int((wait+time.Second-1)/time.Second), agent.MaxWaitSeconds)
		p += "?" + agent.QueryWaitSeconds + "=" + strconv.Itoa(secs)
		hold = time.Duration(secs)*time.Second + holdMargin
	}
	var a agent.Action
	err := c.do(ctx, http.MethodGet, p, nil, &a, c.opts.Attempts, hold)
	if errors.Is(err, errHoldExpired) {
		c.opts.Logger.V(1).Info("long poll got no answer in time; treating it as none", "wait", wait.String())
		return agent.Action{Type: agent.ActionNone}, nil
	}
	if err != nil {
		return agent.Action{}, err
	}
	if err := a.Validate(); err != nil {
		return agent.Action{}, fmt.Errorf("server sent an invalid action: %w", err)
	}
	return a, nil
}

// errHoldExpired: a held request's own deadline passed (not the caller's).
var errHoldExpired = errors.New("held request got no answer in time")

// SendResult posts progress or an outcome. Progress (InProgress) is tried
// once: it is informational, and the next update supersedes it.
func (c *Client) SendResult(ctx context.Context, id string, r agent.Result) error {
	attempts := c.opts.Attempts
	if r.Result == agent.InProgress {
		attempts = 1
	}
	return c.do(ctx, http.MethodPost, agent.ResultPath(id), r, nil, attempts, 0)
}

// ResolveURL resolves a plan URL against the endpoint, so a server can
// hand out "/artifacts/..." references. Only http(s) results are allowed.
func (c *Client) ResolveURL(ref string) (string, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", errors.New("plan URL does not parse")
	}
	u := c.base.ResolveReference(r)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("plan URL is not http(s)")
	}
	return u.String(), nil
}

// do makes the call with retries. hold > 0 marks a long poll: each attempt
// gets that deadline and the long-poll HTTP client.
func (c *Client) do(ctx context.Context, method, p string, in, out any, attempts int, hold time.Duration) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	// p is already escaped (agent.ResultPath); appending keeps it intact.
	u := c.base.String() + p
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			d := backoff(c.opts.BaseDelay, c.opts.MaxDelay, i, last)
			c.opts.Logger.V(1).Info("retrying agent API call", "path", p, "attempt", i+1, "delay", d.String(), "error", last.Error())
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("%s %s: %w (last error: %v)", method, p, ctx.Err(), last)
			case <-t.C:
			}
		}
		retryable, err := c.once(ctx, method, u, body, out, hold)
		if err == nil || errors.Is(err, errHoldExpired) {
			return err
		}
		last = err
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w (last error: %v)", method, p, ctx.Err(), last)
		}
		if !retryable {
			break
		}
	}
	return fmt.Errorf("%s %s: %w", method, p, last)
}

// retryAfter carries a server's Retry-After hint through the retry loop.
type retryAfter struct {
	error
	after time.Duration
}

func (r retryAfter) Unwrap() error { return r.error }

func (c *Client) once(ctx context.Context, method, u string, body []byte, out any, hold time.Duration) (retryable bool, err error) {
	hc := c.opts.HTTPClient
	if hold > 0 {
		parent := ctx
		hctx, cancel := context.WithTimeout(ctx, hold)
		defer cancel()
		defer func() {
			if err != nil && parent.Err() == nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
				retryable, err = false, errHoldExpired
			}
		}()
		ctx, hc = hctx, c.long
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.opts.Credential)
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return true, err // network errors are worth another try
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return true, fmt.Errorf("decoding answer: %w", err)
			}
		}
		return false, nil
	case resp.StatusCode == http.StatusUnauthorized:
		return false, ErrUnauthorized
	case resp.StatusCode == http.StatusConflict:
		return false, ErrConflict
	case resp.StatusCode == http.StatusNotFound:
		return false, ErrNotFound
	}
	var er agent.ErrorResponse
	_ = json.Unmarshal(data, &er)
	se := &StatusError{Code: resp.StatusCode, Message: er.Error}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		// backoff caps the hint at MaxDelay; the limit here only keeps a
		// huge value from overflowing.
		if d, ok := retryafter.Parse(resp.Header.Get("Retry-After"), time.Now(), 24*time.Hour); ok && d > 0 {
			return true, retryAfter{error: se, after: d}
		}
		return true, se
	}
	return false, se
}

// backoff is base*2^(attempt-1) capped at max, with full jitter in its
// upper half (so it never collapses to zero), or the server's Retry-After
// if that is longer (still capped).
func backoff(base, max time.Duration, attempt int, last error) time.Duration {
	d := ibackoff.Backoff{Base: base, Cap: max, Low: 0.5, High: 1}.Delay(attempt)
	var ra retryAfter
	if errors.As(last, &ra) && ra.after > d {
		d = min(ra.after, max)
	}
	return d
}
