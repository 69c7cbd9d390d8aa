package httpbench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	body := strings.Repeat("x", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/f" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name         string
		url          string
		size         int64
		wantFailures int
	}{
		{"ok", srv.URL + "/f", 1000, 0},
		{"short file", srv.URL + "/f", 1001, 4},
		{"404", srv.URL + "/missing", 1000, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Load(context.Background(), LoadOptions{URL: tc.url, Size: tc.size, Clients: 2, Rounds: 2}, &out); err != nil {
				t.Fatal(err)
			}
			var r LoadResult
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.Fetches != 4 || r.Failures != tc.wantFailures {
				t.Errorf("fetches %d failures %d, want 4 and %d (%s)", r.Fetches, r.Failures, tc.wantFailures, r.FirstErr)
			}
			if tc.wantFailures == 0 && (r.Bytes != 4000 || r.P99 <= 0) {
				t.Errorf("bytes %d p99 %v", r.Bytes, r.P99)
			}
		})
	}
}
