package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"anvil.dev/anvil/agent"
)

func TestCmdlineArg(t *testing.T) {
	for _, tt := range []struct {
		cmdline, want string
		ok            bool
	}{
		{"console=ttyS0 anvil.install=http://10.0.0.1/config/m/install?cred=x quiet\n", "http://10.0.0.1/config/m/install?cred=x", true},
		{`anvil.install="http://h/p"`, "http://h/p", true},
		{"anvil.installer=http://h/p anvil.install.x=1", "", false},
		{"", "", false},
	} {
		got, ok := cmdlineArg(tt.cmdline, agent.InstallArg)
		if got != tt.want || ok != tt.ok {
			t.Errorf("cmdlineArg(%q) = %q, %v; want %q, %v", tt.cmdline, got, ok, tt.want, tt.ok)
		}
	}
}

// TestInstallCommand runs `anvil-agent install` in-process: the plan URL
// from the kernel command line, a failure reported to the server and
// returned (so the process exits non-zero), no reboot.
func TestInstallCommand(t *testing.T) {
	const cred = "Y3JlZGVudGlhbC1pbnN0YWxs"
	var mu sync.Mutex
	var results []agent.InstallResult
	mux := http.NewServeMux()
	mux.HandleFunc("POST /config/52-54-00-00-00-01/install", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(agent.ErrorResponse{Error: `rootDeviceHints: no disk with serial "S-1"`})
	})
	mux.HandleFunc("POST /config/52-54-00-00-00-01/install/result", func(w http.ResponseWriter, r *http.Request) {
		var res agent.InstallResult
		_ = json.NewDecoder(r.Body).Decode(&res)
		mu.Lock()
		results = append(results, res)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	planURL := hs.URL + "/config/52-54-00-00-00-01/install?cred=" + cred

	root := t.TempDir()
	for p, s := range map[string]string{
		"proc/sys/kernel/random/boot_id": "0d6c8a1e-0000-4000-8000-000000000002\n",
		"proc/cmdline":                   "console=ttyS0 " + agent.InstallArg + "=" + planURL + "\n",
		"sys/block/vda/size":             "131072\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rebooted := false
	orig := reboot
	reboot = func() error { rebooted = true; return nil }
	defer func() { reboot = orig }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"install", "--root", root, "--dev-dir", t.TempDir()}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `no disk with serial "S-1"`) || !strings.Contains(err.Error(), string(agent.InstallNoRootDevice)) {
		t.Fatalf("run: %v, want the NoRootDevice failure naming the hint\n%s", err, stderr.String())
	}
	if rebooted {
		t.Error("a failed install rebooted")
	}
	mu.Lock()
	if len(results) != 1 || results[0].Outcome != agent.InstallFailed || results[0].Reason != agent.InstallNoRootDevice {
		t.Errorf("results %+v", results)
	}
	mu.Unlock()
	if strings.Contains(stderr.String()+stdout.String()+err.Error(), cred) {
		t.Error("the output shows the plan URL's credential")
	}

	// Without a plan URL anywhere, and with a bad one.
	if err := os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte("console=ttyS0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"install", "--root", root}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "no --plan-url and no "+agent.InstallArg+"=") {
		t.Errorf("no plan URL: %v", err)
	}
	if err := run(ctx, []string{"install", "--plan-url", "/config/x?cred=" + cred}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), "not an absolute http(s) URL") || strings.Contains(err.Error(), cred) {
		t.Errorf("relative plan URL: %v", err)
	}
	if rebooted {
		t.Error("rebooted")
	}
}
