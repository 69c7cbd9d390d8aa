package ticket

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"anvil.dev/anvil/internal/backoff"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/internal/retryafter"
)

// Guard is the request-forgery guard of outgoing webhooks (netguard's
// rules, which also run on the address actually dialled).
type Guard struct{ netguard.Guard }

// CheckURL accepts http:// and https:// URLs with a host and without
// credentials; IP literals and localhost must pass the guard too.
func (g Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url does not parse: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url scheme %q is not http or https", u.Scheme)
	}
	if u.User != nil {
		return nil, errors.New("url must not carry credentials")
	}
	if u.Hostname() == "" {
		return nil, errors.New("url has no host")
	}
	if err := g.CheckHost(u.Hostname()); err != nil {
		return nil, err
	}
	return u, nil
}

// HTTPClient is the client deliveries use: guarded dialer, no proxy (a
// proxy would dial for us, past the guard), no redirects (a redirect could
// point anywhere).
func (g Guard) HTTPClient() *http.Client {
	tr := &http.Transport{
		DialContext:           g.Dialer(10 * time.Second).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: time.Minute,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Backoff spaces retries: Base doubling per attempt up to Max, with
// jitter, and gives up GiveUpAfter the event was filed.
type Backoff struct {
	Base, Max   time.Duration
	GiveUpAfter time.Duration
}

func (b *Backoff) defaults() {
	if b.Base <= 0 {
		b.Base = 5 * time.Second
	}
	if b.Max <= 0 {
		b.Max = 2 * time.Hour
	}
	if b.GiveUpAfter <= 0 {
		b.GiveUpAfter = 72 * time.Hour
	}
}

// after is the wait after the n-th failed attempt: half fixed, half random,
// so receivers coming back are not hit by every sender at once.
func (b Backoff) after(n int32) time.Duration {
	return backoff.Backoff{Base: b.Base, Cap: b.Max, Low: 0.5, High: 1}.Delay(int(n))
}

// maxRetryAfter caps a receiver's Retry-After: longer is likely a bug.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads delay-seconds or an HTTP date; 0 if absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	d, _ := retryafter.Parse(v, now, maxRetryAfter)
	return d
}

// verdict is what to do after an attempt.
type verdict int

const (
	delivered  verdict = iota
	retryLater         // network error, 5xx, 408, 429
	gone               // 410: disable the endpoint
	refused            // any other answer: give up, record it
)

// result is one attempt's outcome.
type result struct {
	verdict    verdict
	code       int
	retryAfter time.Duration
	msg        string // for lastError: what happened, with the body's first bytes
	ticketID   string
	ticketURL  string
}

// bodyExcerptLen is how much of an error answer is kept.
const bodyExcerptLen = 256

// post sends one signed attempt.
func post(ctx context.Context, hc *http.Client, u string, sec Secret, id string, now time.Time, body []byte, userAgent string) result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return result{verdict: refused, msg: "building request: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	sec.SignHeaders(req.Header, id, now, body)
	resp, err := hc.Do(req)
	if err != nil {
		return result{verdict: retryLater, msg: err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // reuse the connection
	r := result{code: resp.StatusCode}
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		r.verdict = delivered
		r.ticketID, r.ticketURL = parseTicket(b)
		return r
	case c == http.StatusGone:
		r.verdict = gone
	case c >= 500, c == http.StatusRequestTimeout, c == http.StatusTooManyRequests:
		r.verdict = retryLater
		r.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
	case c >= 300 && c < 400:
		r.verdict = refused
		r.msg = fmt.Sprintf("HTTP %d: redirects are not followed; set the endpoint URL to the final address", c)
		return r
	default:
		r.verdict = refused
	}
	r.msg = fmt.Sprintf("HTTP %d", resp.StatusCode)
	if ex := excerpt(b); ex != "" {
		r.msg += ": " + ex
	}
	return r
}

// parseTicket reads {"ticket": {"id": ..., "url": ...}}; anything else is
// no ticket.
func parseTicket(b []byte) (id, u string) {
	var reply struct {
		Ticket *struct {
			ID  json.RawMessage `json:"id"`
			URL string          `json:"url"`
		} `json:"ticket"`
	}
	if json.Unmarshal(b, &reply) != nil || reply.Ticket == nil {
		return "", ""
	}
	// Ticket systems use numbers and strings for IDs alike.
	var s string
	if json.Unmarshal(reply.Ticket.ID, &s) != nil {
		s = strings.TrimSpace(string(reply.Ticket.ID))
		if s == "null" {
			s = ""
		}
	}
	u = reply.Ticket.URL
	if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
		u = "" // only links a person can open, never javascript: and friends
	}
	return clip(s, 128), clip(u, 1024)
}

// excerpt is the printable start of a body.
func excerpt(b []byte) string {
	if len(b) > bodyExcerptLen {
		b = b[:bodyExcerptLen]
	}
	s := strings.Map(func(r rune) rune {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != ' ') {
			return ' '
		}
		return r
	}, string(b))
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
