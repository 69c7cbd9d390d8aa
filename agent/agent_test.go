package agent

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

	"github.com/go-logr/logr/funcr"
)

func TestCredential(t *testing.T) {
	const uid = "6f1c2a9e-3b7d-4c58-9a0e-2d4f6b8c0e1a"
	cred, hash, err := NewCredential(nil, uid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cred, uid+".") || len(cred) != len(uid)+1+43 || hash != CredentialHash(cred) || len(hash) != 64 {
		t.Fatalf("credential %q hash %q", cred, hash)
	}
	if cred2, _, _ := NewCredential(nil, uid); cred2 == cred {
		t.Error("two credentials are equal")
	}
	if got, err := HostUID(cred); err != nil || got != uid {
		t.Errorf("HostUID = %q, %v", got, err)
	}
	tests := []struct {
		name  string
		cred  string
		match bool
	}{
		{"same", cred, true},
		{"other secret", uid + ".AAAA", false},
		{"other host", "00000000-0000-0000-0000-000000000000." + strings.SplitN(cred, ".", 2)[1], false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if CredentialMatches(tt.cred, hash) != tt.match {
				t.Errorf("match = %v", !tt.match)
			}
		})
	}
	if !CredentialMatches(cred, strings.ToUpper(hash)) {
		t.Error("an upper-case stored hash does not match")
	}
	if CredentialMatches(cred, "") || CredentialMatches(cred, hash[:10]) {
		t.Error("an empty or short stored hash matched")
	}
	for _, bad := range []string{"", "nouid", ".secret", "uid.", "a/b.secret", "x." + strings.Repeat("s", 200)} {
		if _, err := HostUID(bad); !errors.Is(err, ErrMalformedCredential) {
			t.Errorf("HostUID(%q) = %v", bad, err)
		}
	}
	if _, _, err := NewCredential(nil, "a.b"); err == nil {
		t.Error("a UID with a dot was accepted")
	}
	if _, _, err := NewCredential(strings.NewReader("short"), uid); err == nil {
		t.Error("a failing random source was ignored")
	}
}

func TestValidation(t *testing.T) {
	plan := UpgradePlan{PlanID: "p1", Version: "v1.37.2", URL: "/artifacts/k", SHA256: strings.Repeat("a", 64)}
	tests := []struct {
		name string
		a    Action
		ok   bool
	}{
		{"none", Action{Type: ActionNone}, true},
		{"wipe", Action{Type: ActionWipe, ID: "wipe-3"}, true},
		{"wipe without id", Action{Type: ActionWipe}, false},
		{"upgrade", Action{Type: ActionUpgrade, ID: "p1", Upgrade: &plan}, true},
		{"upgrade id mismatch", Action{Type: ActionUpgrade, ID: "p2", Upgrade: &plan}, false},
		{"upgrade without plan", Action{Type: ActionUpgrade, ID: "p1"}, false},
		{"traversal in version", Action{Type: ActionUpgrade, ID: "p1", Upgrade: &UpgradePlan{PlanID: "p1", Version: "../v1", URL: "u", SHA256: plan.SHA256}}, false},
		{"upper-case digest", Action{Type: ActionUpgrade, ID: "p1", Upgrade: &UpgradePlan{PlanID: "p1", Version: "v1.2.3", URL: "u", SHA256: strings.Repeat("A", 64)}}, false},
		{"unknown type", Action{Type: "reboot"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.a.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate = %v", err)
			}
		})
	}
	r := Report{BootID: "95ec1d05-f628-49bd-965c-d2d0a18047e1", NICs: []NIC{
		{Name: "a", MAC: "AA:BB:CC:00:11:22"}, {Name: "b", MAC: "aa:bb:cc:00:11:22"}, {Name: "c", MAC: "00:00:00:00:00:00"},
		{Name: "ib0", MAC: "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0f:5a:2b"},
	}}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.MACs(), ","); got != "aa:bb:cc:00:11:22" {
		t.Errorf("MACs %q: want one normalized 6-byte MAC", got)
	}
}

// memBackend records calls and returns scripted errors.
type memBackend struct {
	mu      sync.Mutex
	hosts   map[string]HostInfo
	err     error
	results []Result
}

func (b *memBackend) Host(_ context.Context, uid string) (HostInfo, error) {
	h, ok := b.hosts[uid]
	if !ok {
		return HostInfo{}, ErrUnknownHost
	}
	return h, nil
}
func (b *memBackend) Report(context.Context, HostInfo, Report) error { return b.err }
func (b *memBackend) NextAction(context.Context, HostInfo) (Action, error) {
	return Action{Type: ActionNone}, b.err
}
func (b *memBackend) ActionResult(_ context.Context, _ HostInfo, _ string, r Result) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.results = append(b.results, r)
	return b.err
}

func TestServerRequests(t *testing.T) {
	const uid = "6f1c2a9e-3b7d-4c58-9a0e-2d4f6b8c0e1a"
	cred, hash, _ := NewCredential(nil, uid)
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
		{"actions", "GET", PathActions, "", nil, 200, `"type":"none"`},
		{"poll hint", "GET", PathActions, "", nil, 200, `"pollAfterSeconds":30`},
		{"report", "POST", PathReport, `{"bootID":"95ec1d05-f628-49bd-965c-d2d0a18047e1","cpu":{}}`, nil, 204, ""},
		{"report with unknown field ignored", "POST", PathReport, `{"bootID":"95ec1d05","future":1}`, nil, 204, ""},
		{"report not JSON", "POST", PathReport, `bootID=1`, nil, 400, "not valid JSON"},
		{"trailing data", "POST", PathReport, `{"bootID":"95ec1d05"} {}`, nil, 400, "trailing"},
		{"body too large", "POST", PathReport, `{"bootID":"95ec1d05","kernel":"` + strings.Repeat("x", 5000) + `"}`, nil, 413, "too large"},
		{"result", "POST", ResultPath("p1"), result, nil, 204, ""},
		{"result for another plan id", "POST", ResultPath("p2"), result, nil, 400, "planID differs"},
		{"result with bad outcome", "POST", ResultPath("p1"), `{"type":"upgrade","result":"maybe"}`, nil, 400, "result must be"},
		{"escaped id", "POST", ResultPath("plan:1?x#y%z"), `{"type":"wipe","result":"failed"}`, nil, 204, ""},
		{"id with a space", "POST", "/agent/v1/actions/a%20b/result", `{"type":"wipe","result":"failed"}`, nil, 400, "invalid action id"},
		{"stale", "POST", ResultPath("p1"), result, ErrStaleAction, 409, "no longer current"},
		{"unknown action", "POST", ResultPath("p1"), result, ErrUnknownAction, 404, "unknown action"},
		{"backend down", "GET", PathActions, "", errors.New("etcd is on fire at 10.1.2.3"), 503, "temporarily unavailable"},
		{"wrong method", "DELETE", PathActions, "", nil, 405, ""},
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
