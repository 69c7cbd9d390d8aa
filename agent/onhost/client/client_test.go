package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"anvil.dev/anvil/agent"
)

const cred = "6f1c2a9e-3b7d-4c58-9a0e-2d4f6b8c0e1a.c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA"

// scripted answers requests with the given status codes in order (the
// last repeats) and counts them.
func scripted(t *testing.T, codes ...int) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if r.Header.Get("Authorization") != "Bearer "+cred {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		code := codes[min(i, len(codes)-1)]
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "0")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code == 200 {
			_, _ = w.Write([]byte(`{"type":"none","pollAfterSeconds":30}`))
		} else if code >= 400 {
			_, _ = w.Write([]byte(`{"error":"scripted"}`))
		}
	}))
	t.Cleanup(hs.Close)
	c, err := New(Options{Endpoint: hs.URL + "/", Credential: cred, Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c, &n
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		codes    []int
		wantErr  error
		wantCode int
		calls    int32
	}{
		{"ok", []int{200}, nil, 0, 1},
		{"503 then ok", []int{503, 502, 200}, nil, 0, 3},
		{"429 then ok", []int{429, 200}, nil, 0, 2},
		{"always 503", []int{503}, nil, 503, 4},
		{"400 is final", []int{400, 200}, nil, 400, 1},
		{"401 is final", []int{401, 200}, ErrUnauthorized, 0, 1},
		{"409 is final", []int{409, 200}, ErrConflict, 0, 1},
		{"404 is final", []int{404, 200}, ErrNotFound, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, n := scripted(t, tt.codes...)
			_, err := c.NextAction(context.Background())
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err %v, want %v", err, tt.wantErr)
				}
			case tt.wantCode != 0:
				var se *StatusError
				if !errors.As(err, &se) || se.Code != tt.wantCode || se.Message != "scripted" {
					t.Errorf("err %v, want status %d", err, tt.wantCode)
				}
			case err != nil:
				t.Errorf("err %v", err)
			}
			if n.Load() != tt.calls {
				t.Errorf("%d calls, want %d", n.Load(), tt.calls)
			}
			if err != nil && strings.Contains(err.Error(), "c2VjcmV0") {
				t.Error("the credential is in the error")
			}
		})
	}
}

func TestProgressIsTriedOnce(t *testing.T) {
	c, n := scripted(t, 503)
	err := c.SendResult(context.Background(), "p1", agent.Result{Type: agent.ActionUpgrade, Result: agent.InProgress, Phase: agent.PhaseDownloading})
	if err == nil || n.Load() != 1 {
		t.Errorf("err %v after %d calls, want one failed call", err, n.Load())
	}
	c, n = scripted(t, 503, 204)
	if err := c.SendResult(context.Background(), "p1", agent.Result{Type: agent.ActionUpgrade, Result: agent.Succeeded}); err != nil || n.Load() != 2 {
		t.Errorf("final result: err %v after %d calls", err, n.Load())
	}
}

func TestCancelStopsRetries(t *testing.T) {
	c, n := scripted(t, 503)
	c.opts.BaseDelay, c.opts.MaxDelay = time.Hour, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for n.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := c.NextAction(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v", err)
	}
}

func TestBackoffBounds(t *testing.T) {
	for attempt := 1; attempt < 12; attempt++ {
		for i := 0; i < 50; i++ {
			d := backoff(time.Second, time.Minute, attempt, errors.New("x"))
			full := min(time.Second<<(attempt-1), time.Minute)
			if d < full/2 || d > full {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, full/2, full)
			}
		}
	}
	ra := retryAfter{error: errors.New("busy"), after: 30 * time.Second}
	if d := backoff(time.Second, time.Minute, 1, ra); d != 30*time.Second {
		t.Errorf("Retry-After not honoured: %v", d)
	}
	if d := backoff(time.Second, time.Minute, 1, retryAfter{error: ra, after: time.Hour}); d != time.Minute {
		t.Errorf("Retry-After not capped: %v", d)
	}
}

func TestNewAndResolve(t *testing.T) {
	for _, tt := range []struct{ endpoint, cred string }{
		{"ftp://x", cred}, {"http://", cred}, {"http://u:p@x", cred}, {"http://x?a=1", cred}, {"http://x", "nodot"},
	} {
		if _, err := New(Options{Endpoint: tt.endpoint, Credential: tt.cred}); err == nil {
			t.Errorf("New(%q) accepted", tt.endpoint)
		}
	}
	c, err := New(Options{Endpoint: "http://10.0.0.1:8080/anvil/", Credential: cred})
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"/artifacts/kubelet/v1.37.0":   "http://10.0.0.1:8080/artifacts/kubelet/v1.37.0",
		"https://dl.k8s.io/v1/kubelet": "https://dl.k8s.io/v1/kubelet",
		"file:///etc/passwd":           "",
	} {
		got, err := c.ResolveURL(ref)
		if (want == "") != (err != nil) || got != want {
			t.Errorf("ResolveURL(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
}

// holding answers GET actions after hold with waited, and records the
// query of each request.
func holding(t *testing.T, hold time.Duration) (string, *atomic.Int32, chan string) {
	t.Helper()
	var n atomic.Int32
	queries := make(chan string, 16)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		queries <- r.URL.RawQuery
		tm := time.NewTimer(hold)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"none","pollAfterSeconds":30,"waited":true}`))
	}))
	t.Cleanup(hs.Close)
	return hs.URL, &n, queries
}

// TestNextActionWait: a held request outlives the HTTP client's timeouts,
// which still bound every other call.
func TestNextActionWait(t *testing.T) {
	url, n, queries := holding(t, time.Second)
	short := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{ResponseHeaderTimeout: 200 * time.Millisecond}}
	c, err := New(Options{Endpoint: url, Credential: cred, HTTPClient: short, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.NextActionWait(context.Background(), 1500*time.Millisecond)
	if err != nil || a.Type != agent.ActionNone || !a.Waited {
		t.Fatalf("held poll: %+v, %v", a, err)
	}
	if q := <-queries; q != "waitSeconds=2" {
		t.Errorf("query %q, want the wait rounded up to whole seconds", q)
	}
	if _, err := c.NextAction(context.Background()); err == nil {
		t.Error("a short poll outlived the client's timeout")
	}
	if q := <-queries; q != "" {
		t.Errorf("short poll query %q", q)
	}
	c.CloseIdleConnections()
	if n.Load() != 2 {
		t.Errorf("%d requests, want 2", n.Load())
	}
}

// TestNextActionWaitNoAnswer: a held request that gets no answer within
// its wait and the margin is "none" without Waited, not an error, and not
// retried.
func TestNextActionWaitNoAnswer(t *testing.T) {
	defer func(m time.Duration) { holdMargin = m }(holdMargin)
	holdMargin = 100 * time.Millisecond
	url, n, _ := holding(t, time.Hour)
	c, err := New(Options{Endpoint: url, Credential: cred, Attempts: 3, BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.NextActionWait(context.Background(), time.Second)
	if err != nil || a.Type != agent.ActionNone || a.Waited {
		t.Errorf("got %+v, %v; want none without waited", a, err)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
	// The caller's own cancellation stays an error.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.NextActionWait(ctx, time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled long poll: %v", err)
	}
}
