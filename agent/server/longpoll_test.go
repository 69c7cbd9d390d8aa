package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"anvil.dev/anvil/agent"
)

// waitBackend is memBackend whose action the test sets; setting it closes
// the channel WatchActions handed out, as an informer event would.
type waitBackend struct {
	memBackend
	amu     sync.Mutex
	action  agent.Action
	changed chan struct{}
	watches atomic.Int32 // WatchActions calls
	cannot  bool         // WatchActions answers ok=false
}

func (b *waitBackend) NextAction(context.Context, HostInfo) (agent.Action, error) {
	b.amu.Lock()
	defer b.amu.Unlock()
	return b.action, nil
}

func (b *waitBackend) WatchActions(HostInfo) (<-chan struct{}, bool) {
	b.amu.Lock()
	defer b.amu.Unlock()
	b.watches.Add(1)
	if b.cannot {
		return nil, false
	}
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed, true
}

// set changes the action and wakes the waiters.
func (b *waitBackend) set(a agent.Action) {
	b.amu.Lock()
	defer b.amu.Unlock()
	b.action = a
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

const lpUID = "6f1c2a9e-3b7d-4c58-9a0e-2d4f6b8c0e1a"

// longPollServer serves a Server on b; done receives once per finished
// request (after the handler returned).
func longPollServer(t *testing.T, b Backend) (url string, done chan struct{}) {
	t.Helper()
	s, err := NewServer(ServerOptions{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	done = make(chan struct{}, 16)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r)
		done <- struct{}{}
	}))
	t.Cleanup(hs.Close)
	return hs.URL, done
}

func newWaitBackend(t *testing.T) (*waitBackend, string) {
	t.Helper()
	cred, hash, err := agent.NewCredential(nil, lpUID)
	if err != nil {
		t.Fatal(err)
	}
	b := &waitBackend{action: agent.Action{Type: agent.ActionNone}}
	b.hosts = map[string]HostInfo{lpUID: {Namespace: "ns", Name: "h", UID: lpUID, CredentialHash: hash}}
	return b, cred
}

type answer struct {
	code int
	body string
	a    agent.Action
	err  error
}

// getActions does GET PathActions?query; the test's deadline bounds it.
func getActions(ctx context.Context, url, cred, query string) answer {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+agent.PathActions+query, nil)
	req.Header.Set("Authorization", "Bearer "+cred)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := answer{code: resp.StatusCode, body: string(body)}
	if resp.StatusCode == http.StatusOK {
		out.err = json.Unmarshal(body, &out.a)
	}
	return out
}

// heldPoll starts a 300 s long poll and returns once the server holds it.
func heldPoll(t *testing.T, ctx context.Context, b *waitBackend, url, cred string) <-chan answer {
	got := make(chan answer, 1)
	go func() { got <- getActions(ctx, url, cred, "?waitSeconds=300") }()
	waitWatches(t, b, 1)
	return got
}

// waitWatches waits until the backend was subscribed to n times.
func waitWatches(t *testing.T, b *waitBackend, n int32) {
	t.Helper()
	for i := 0; b.watches.Load() < n; i++ {
		if i > 1000 {
			t.Fatalf("%d WatchActions calls, want %d", b.watches.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLongPollAnswersOnChange(t *testing.T) {
	b, cred := newWaitBackend(t)
	url, _ := longPollServer(t, b)
	// Far below the 300 s wait: an answer in time came from the change.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := heldPoll(t, ctx, b, url, cred)
	// A change that leaves nothing to do keeps the request held, subscribed again.
	b.set(agent.Action{Type: agent.ActionNone})
	waitWatches(t, b, 2)
	select {
	case ans := <-got:
		t.Fatalf("answered after a change without an action: %+v", ans)
	default:
	}
	b.set(agent.Action{Type: agent.ActionWipe, ID: "wipe-2"})
	ans := <-got
	if ans.err != nil || ans.code != http.StatusOK {
		t.Fatalf("answer %d %q: %v", ans.code, ans.body, ans.err)
	}
	if ans.a.Type != agent.ActionWipe || ans.a.ID != "wipe-2" || !ans.a.Waited || ans.a.PollAfterSeconds != 30 {
		t.Errorf("action %+v, want the wipe with waited and the poll hint", ans.a)
	}
	// An action there already is answered at once, still with Waited.
	ans = getActions(ctx, url, cred, "?waitSeconds=300")
	if ans.err != nil || ans.a.Type != agent.ActionWipe || !ans.a.Waited {
		t.Errorf("immediate action: %+v %v", ans.a, ans.err)
	}
}

func TestLongPollWaitPasses(t *testing.T) {
	b, cred := newWaitBackend(t)
	url, _ := longPollServer(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ans := getActions(ctx, url, cred, "?waitSeconds=1")
	if ans.err != nil || ans.code != http.StatusOK {
		t.Fatalf("answer %d %q: %v", ans.code, ans.body, ans.err)
	}
	if ans.a.Type != agent.ActionNone || !ans.a.Waited || ans.a.PollAfterSeconds != 30 {
		t.Errorf("action %+v, want none, waited, with the poll hint", ans.a)
	}
	if b.watches.Load() == 0 {
		t.Error("the server never subscribed")
	}
}

func TestLongPollClientGone(t *testing.T) {
	b, cred := newWaitBackend(t)
	url, done := longPollServer(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	got := heldPoll(t, ctx, b, url, cred)
	cancel()
	if ans := <-got; !errors.Is(ans.err, context.Canceled) {
		t.Fatalf("request ended with %+v, want the cancellation", ans)
	}
	// The handler returns long before the 300 s wait.
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the held request outlived its client")
	}
}

func TestLongPollNotSupported(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A Backend without ActionWaiter (memBackend) answers at once.
	cred, hash, _ := agent.NewCredential(nil, lpUID)
	plain := &memBackend{hosts: map[string]HostInfo{lpUID: {Namespace: "ns", Name: "h", UID: lpUID, CredentialHash: hash}}}
	url, _ := longPollServer(t, plain)
	ans := getActions(ctx, url, cred, "?waitSeconds=300")
	if ans.err != nil || ans.a.Type != agent.ActionNone || ans.a.Waited || strings.Contains(ans.body, "waited") {
		t.Errorf("backend without ActionWaiter: %q %v", ans.body, ans.err)
	}
	// One that cannot watch now, likewise.
	b, cred := newWaitBackend(t)
	b.cannot = true
	url, _ = longPollServer(t, b)
	if ans := getActions(ctx, url, cred, "?waitSeconds=300"); ans.err != nil || ans.a.Type != agent.ActionNone || ans.a.Waited {
		t.Errorf("backend that cannot watch: %q %v", ans.body, ans.err)
	}
	// waitSeconds=0 (and none) is the short poll: no subscription.
	b.cannot = false
	before := b.watches.Load()
	for _, q := range []string{"?waitSeconds=0", ""} {
		if ans := getActions(ctx, url, cred, q); ans.err != nil || ans.a.Waited || ans.code != http.StatusOK {
			t.Errorf("%q: %d %q %v", q, ans.code, ans.body, ans.err)
		}
	}
	if b.watches.Load() != before {
		t.Error("a short poll subscribed")
	}
}

func TestLongPollMalformedWait(t *testing.T) {
	b, cred := newWaitBackend(t)
	url, _ := longPollServer(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, q := range []string{"-1", "301", "1000", "abc", "1.5", "", "+5", "1e2", "5&waitSeconds=6"} {
		ans := getActions(ctx, url, cred, "?waitSeconds="+q)
		var er agent.ErrorResponse
		if ans.err != nil || ans.code != http.StatusBadRequest || json.Unmarshal([]byte(ans.body), &er) != nil || !strings.Contains(er.Error, agent.QueryWaitSeconds) {
			t.Errorf("waitSeconds=%q: %d %q %v, want a 400 naming the parameter", q, ans.code, ans.body, ans.err)
		}
	}
	if b.watches.Load() != 0 {
		t.Error("a malformed request was held")
	}
}

// TestLongPollCredentialRevoked: a credential revoked while its request is
// held gets no action.
func TestLongPollCredentialRevoked(t *testing.T) {
	b, cred := newWaitBackend(t)
	url, _ := longPollServer(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := heldPoll(t, ctx, b, url, cred)
	b.hosts[lpUID] = HostInfo{Namespace: "ns", Name: "h", UID: lpUID} // no hash: revoked
	b.set(agent.Action{Type: agent.ActionWipe, ID: "wipe-2"})
	if ans := <-got; ans.err != nil || ans.code != http.StatusUnauthorized || ans.body != "" {
		t.Errorf("got %d %q %v, want a bare 401", ans.code, ans.body, ans.err)
	}
}
