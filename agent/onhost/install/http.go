package install

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/internal/retryafter"
)

// RefusedError is a final answer of the server other than success: 422
// for a plan means no disk matched the Host's rootDeviceHints.
type RefusedError struct {
	Code int
	// Message is the ErrorResponse's text.
	Message string
}

func (e *RefusedError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("server answered %d", e.Code)
	}
	return fmt.Sprintf("server answered %d: %s", e.Code, e.Message)
}

// retryableError is a transient failure, with the server's Retry-After.
type retryableError struct {
	error
	after time.Duration
}

func (e retryableError) Unwrap() error { return e.error }

// post sends in as JSON to u (which carries the boot credential in its
// query: never in logs or errors), decoding a 2xx answer into out, with
// bounded retries of transient failures.
func (i *installer) post(ctx context.Context, what, u string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err := i.postOnce(ctx, u, body, out)
		var re retryableError
		if err == nil || !errors.As(err, &re) {
			return err
		}
		if attempt >= i.o.Attempts {
			return fmt.Errorf("%s: %d attempts failed, the last: %w", what, attempt, err)
		}
		d := i.o.Retry.Delay(attempt)
		if re.after > d {
			d = min(re.after, i.o.Retry.Cap)
		}
		i.log.Info("retrying", "request", what, "attempt", attempt+1, "delay", d.String(), "error", err.Error())
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
	}
}

func (i *installer) postOnce(ctx context.Context, u string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return errors.New("building the request: the URL does not parse")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "anvil-agent/"+i.o.AgentVersion)
	resp, err := i.o.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return retryableError{error: redactErr(err, u)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, agent.MaxBodyBytes))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if err != nil {
			return retryableError{error: fmt.Errorf("reading the answer: %w", err)}
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return retryableError{error: fmt.Errorf("decoding the answer: %w", err)}
			}
		}
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		d, _ := retryafter.Parse(resp.Header.Get("Retry-After"), time.Now(), 24*time.Hour)
		return retryableError{error: &RefusedError{Code: resp.StatusCode, Message: errorMessage(data)}, after: d}
	}
	return &RefusedError{Code: resp.StatusCode, Message: errorMessage(data)}
}

// errorMessage is an ErrorResponse's text, bounded.
func errorMessage(data []byte) string {
	var er agent.ErrorResponse
	if json.Unmarshal(data, &er) != nil {
		return ""
	}
	return truncate(er.Error, agent.MaxStringLen*2)
}

// redactErr replaces the URL in a client error with its scheme, host and
// path: the query carries the boot credential.
func redactErr(err error, u string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, redactURL(u), ue.Err)
	}
	return err
}

// redactURL drops user info, query and fragment.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// urlHost is the host (and port) of raw, all that is logged of URLs that
// carry a credential in their path.
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	return u.Host
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
