package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"anvil.dev/anvil/agent"

	"github.com/go-logr/logr/funcr"
)

// memBackend records calls and returns scripted errors.
type memBackend struct {
	mu      sync.Mutex
	hosts   map[string]HostInfo
	err     error
	results []agent.Result
}

func (b *memBackend) Host(_ context.Context, uid string) (HostInfo, error) {
	h, ok := b.hosts[uid]
	if !ok {
		return HostInfo{}, ErrUnknownHost
	}
	return h, nil
}
func (b *memBackend) Report(context.Context, HostInfo, agent.Report) error { return b.err }
func (b *memBackend) NextAction(context.Context, HostInfo) (agent.Action, error) {
	return agent.Action{Type: agent.ActionNone}, b.err
}
func (b *memBackend) ActionResult(_ context.Context, _ HostInfo, _ string, r agent.Result) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.results = append(b.results, r)
	return b.err
}

func TestServerRequests(t *testing.T) {
	const uid = "6f1c2a9e-3b7d-4c58-9a0e-2d4f6b8c0e1a"
	cred, hash, _ := agent.NewCredential(nil, uid)
	b := &memBackend{hosts: map[string]HostInfo{uid: {Namespace: "ns", Name: "h", UID: uid, CredentialHash: hash}}}
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := funcr.New(func(p, a string) { logMu.Lock(); defer logMu.Unlock(); fmt.Fprintln(&logs, p, a) }, funcr.Options{Verbosity: 4})
	s, err := NewServer(ServerOptions{Backend: b, Logger: log, MaxBodyBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	result := `{"type":"upgrade","planID":"p1","result":"succeeded"}`
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		backendErr error
		wantCode   int
		wantInBody string
	}{
		{"actions", "GET", agent.PathActions, "", nil, 200, `"type":"none"`},
		{"poll hint", "GET", agent.PathActions, "", nil, 200, `"pollAfterSeconds":30`},
		{"report", "POST", agent.PathReport, `{"bootID":"95ec1d05-f628-49bd-965c-d2d0a18047e1","cpu":{}}`, nil, 204, ""},
		{"report with unknown field ignored", "POST", agent.PathReport, `{"bootID":"95ec1d05","future":1}`, nil, 204, ""},
		{"report not JSON", "POST", agent.PathReport, `bootID=1`, nil, 400, "not valid JSON"},
		{"trailing data", "POST", agent.PathReport, `{"bootID":"95ec1d05"} {}`, nil, 400, "trailing"},
		{"body too large", "POST", agent.PathReport, `{"bootID":"95ec1d05","kernel":"` + strings.Repeat("x", 5000) + `"}`, nil, 413, "too large"},
		{"result", "POST", agent.ResultPath("p1"), result, nil, 204, ""},
		{"result for another plan id", "POST", agent.ResultPath("p2"), result, nil, 400, "planID differs"},
		{"result with bad outcome", "POST", agent.ResultPath("p1"), `{"type":"upgrade","result":"maybe"}`, nil, 400, "result must be"},
		{"escaped id", "POST", agent.ResultPath("plan:1?x#y%z"), `{"type":"wipe","result":"failed"}`, nil, 204, ""},
		{"id with a space", "POST", "/agent/v1/actions/a%20b/result", `{"type":"wipe","result":"failed"}`, nil, 400, "invalid action id"},
		{"stale", "POST", agent.ResultPath("p1"), result, ErrStaleAction, 409, "no longer current"},
		{"unknown action", "POST", agent.ResultPath("p1"), result, ErrUnknownAction, 404, "unknown action"},
		{"backend down", "GET", agent.PathActions, "", errors.New("etcd is on fire at 10.1.2.3"), 503, "temporarily unavailable"},
		{"wrong method", "DELETE", agent.PathActions, "", nil, 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.err = tt.backendErr
			req, _ := http.NewRequest(tt.method, hs.URL+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+cred)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode || !strings.Contains(string(body), tt.wantInBody) {
				t.Errorf("got %d %s, want %d containing %q", resp.StatusCode, body, tt.wantCode, tt.wantInBody)
			}
			if strings.Contains(string(body), "etcd") {
				t.Error("a backend error leaked to the client")
			}
			if resp.Header.Get("Cache-Control") != "no-store" {
				t.Error("no Cache-Control: no-store")
			}
		})
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), strings.SplitN(cred, ".", 2)[1]) {
		t.Error("the credential appears in the server's logs")
	}
}
