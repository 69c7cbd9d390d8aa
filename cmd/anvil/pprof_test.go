package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
)

func TestServeFlagsValidation(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string // "" = valid
	}{
		{nil, ""},
		{[]string{"--pprof-bind-address", "127.0.0.1:6060"}, ""},
		{[]string{"--pprof-bind-address", "[::1]:6060"}, ""},
		{[]string{"--pprof-bind-address", "localhost:6060"}, ""},
		{[]string{"--pprof-bind-address", ":6060"}, ""},
		{[]string{"--pprof-bind-address", "6060"}, "want HOST:PORT"},
		{[]string{"--pprof-bind-address", "127.0.0.1:http"}, "not a number"},
		{[]string{"--pprof-bind-address", "127.0.0.1:0"}, "not a number"},
		{[]string{"--pprof-bind-address", "127.0.0.1:70000"}, "not a number"},
		{[]string{"--pprof-bind-address", "example.com:6060"}, "not an IP address"},
		{[]string{"--tftp-max-concurrent", "4096"}, ""},
		{[]string{"--tftp-max-concurrent", "0"}, "--tftp-max-concurrent (0) must be at least 1"},
	} {
		var c serveConfig
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		c.bind(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: parse: %v", tc.args, err)
		}
		err := c.validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.wantErr)
		}
	}
	var c serveConfig
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.bind(fs)
	if c.PprofAddr != "" || c.Netboot.TFTPMaxConcurrent != 1024 {
		t.Errorf("defaults: pprof %q (want off), tftp-max-concurrent %d (want 1024)", c.PprofAddr, c.Netboot.TFTPMaxConcurrent)
	}
}

// The pprof server answers profiles on its own listener, and nothing else.
func TestPprofServer(t *testing.T) {
	p, err := newPprofServer("127.0.0.1:0", logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	base := "http://" + p.ln.Addr().String()
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/debug/pprof/", http.StatusOK, "goroutine"},
		{"/debug/pprof/cmdline", http.StatusOK, ""},
		{"/debug/pprof/goroutine?debug=1", http.StatusOK, "goroutine profile"},
		{"/metrics", http.StatusNotFound, ""},
		{"/boot/x.ipxe", http.StatusNotFound, ""},
	} {
		resp, err := http.Get(base + tc.path)
		if err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.body) {
			t.Errorf("GET %s: %d, want %d with %q", tc.path, resp.StatusCode, tc.code, tc.body)
		}
	}
	if p.NeedLeaderElection() {
		t.Error("pprof must run on every replica")
	}
	// A busy address fails at once (at start), not in the background.
	if q, err := newPprofServer(p.ln.Addr().String(), logr.Discard()); err == nil {
		q.ln.Close()
		t.Error("a second pprof server on a busy address started")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Start: %v", err)
	}
}
