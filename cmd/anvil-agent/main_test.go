package main

import (
	"bytes"
	"context"
	"debug/elf"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
)

const (
	testUID    = "6f1c2a9e-3b7d-4c58-9a0e-2d4f6b8c0e1a"
	testSecret = "Zm9vYmFyYmF6cXV4LXNlY3JldC12YWx1ZS0xMjM0NTY"
	testCred   = testUID + "." + testSecret
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    func(*Config) bool
		wantErr string
	}{
		{name: "json", file: `{"endpoint":"http://10.0.0.1","credential":"` + testCred + `","nodeName":"n1",
			"pollInterval":"5s","kubelet":{"manager":"systemd","binPath":"/usr/local/bin/kubelet","healthCheckTimeout":"2m"},
			"wipe":{"allowRootDisk":true}}`,
			want: func(c *Config) bool {
				return c.Endpoint == "http://10.0.0.1" && c.Credential == testCred && c.NodeName == "n1" && c.PollInterval.Duration == 5*time.Second &&
					c.Kubelet.Manager == "systemd" && c.Kubelet.HealthCheckTimeout.Duration == 2*time.Minute && c.Wipe.AllowRootDisk && c.Root == "/"
			}},
		{name: "env file as the example MachineClasses write it", file: "# written by cloud-init\nANVIL_ENDPOINT=http://10.0.0.1:8080\nANVIL_CREDENTIAL=" + testCred + "\nANVIL_NODE_NAME=worker-1\nOTHER_TOOL=x\n",
			want: func(c *Config) bool {
				return c.Endpoint == "http://10.0.0.1:8080" && c.Credential == testCred && c.NodeName == "worker-1"
			}},
		{name: "env file with quotes and export", file: "export ANVIL_ENDPOINT=\"http://a\"\nANVIL_CREDENTIAL='" + testCred + "'\nANVIL_WIPE_DISABLED=true\n",
			want: func(c *Config) bool { return c.Endpoint == "http://a" && c.Credential == testCred && c.Wipe.Disabled }},
		{name: "unknown ANVIL_ key", file: "ANVIL_ENDPOINT=http://a\nANVIL_CREDENTIALS=" + testCred + "\n", wantErr: "unknown key ANVIL_CREDENTIALS"},
		{name: "line without =", file: "ANVIL_ENDPOINT=http://a\n" + testCred + "\n", wantErr: "line 2 is not KEY=VALUE"},
		{name: "no credential", file: `{"endpoint":"http://a"}`, wantErr: "credential is required"},
		{name: "malformed credential", file: `{"endpoint":"http://a","credential":"` + testSecret + `"}`, wantErr: "credential is not of the form"},
		{name: "unknown JSON field", file: `{"endpoint":"http://a","credential":"` + testCred + `","credentials":"x"}`, wantErr: "unknown field"},
		{name: "bad duration", file: `{"endpoint":"http://a","credential":"` + testCred + `","pollInterval":"soon"}`, wantErr: "invalid duration"},
		{name: "bad manager", file: `{"endpoint":"http://a","credential":"` + testCred + `","kubelet":{"manager":"runit"}}`, wantErr: "kubelet.manager"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "agent.conf")
			if err := os.WriteFile(p, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := loadConfig(&options{configPath: p, set: map[string]bool{}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), testSecret) {
					t.Errorf("the error carries the credential: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(cfg) {
				t.Errorf("config %+v", cfg)
			}
		})
	}
}

func TestFlagsOverrideFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(p, []byte(`{"endpoint":"http://file","credential":"`+testCred+`","nodeName":"file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"--config", p, "--endpoint", "http://flag", "--root", "/mnt"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint != "http://flag" || cfg.NodeName != "file" || cfg.Root != "/mnt" {
		t.Errorf("config %+v", cfg)
	}
}

// memBackend is a minimal server.Backend for exercising the command's
// wiring; the Kubernetes backend is tested in agent/server/kube.
type memBackend struct {
	mu      sync.Mutex
	reports []agent.Report
	polls   int
}

func (b *memBackend) Host(_ context.Context, uid string) (server.HostInfo, error) {
	if uid != testUID {
		return server.HostInfo{}, server.ErrUnknownHost
	}
	return server.HostInfo{Namespace: "ns", Name: "h", UID: uid, CredentialHash: agent.CredentialHash(testCred)}, nil
}

func (b *memBackend) Report(_ context.Context, _ server.HostInfo, r agent.Report) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reports = append(b.reports, r)
	return nil
}

func (b *memBackend) NextAction(context.Context, server.HostInfo) (agent.Action, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.polls++
	return agent.Action{Type: agent.ActionNone}, nil
}

func (b *memBackend) ActionResult(context.Context, server.HostInfo, string, agent.Result) error {
	return nil
}

// TestRunOnce runs the command in-process against the real server handler.
func TestRunOnce(t *testing.T) {
	b := &memBackend{}
	srv, err := server.NewServer(server.ServerOptions{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for _, tt := range []struct {
		name    string
		cred    string
		wantErr bool
	}{
		{"good credential", testCred, false},
		{"wrong credential", testUID + ".d3JvbmctYnV0LXdlbGwtZm9ybWVkLXNlY3JldC12YWx1ZQ", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			// A root with just enough of /proc for the facts.
			for p, s := range map[string]string{"proc/sys/kernel/random/boot_id": "0d6c8a1e-0000-4000-8000-000000000001\n", "proc/cpuinfo": "processor\t: 0\nmodel name\t: Test CPU\n"} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfgPath := filepath.Join(root, "agent.env")
			env := "ANVIL_ENDPOINT=" + hs.URL + "\nANVIL_CREDENTIAL=" + tt.cred + "\nANVIL_KUBELET_MANAGER=supervisor\nANVIL_WIPE_DISABLED=true\n"
			if err := os.WriteFile(cfgPath, []byte(env), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			b.mu.Lock()
			before := len(b.reports)
			b.mu.Unlock()
			err := run(ctx, []string{"--config", cfgPath, "--root", root, "--once", "-v", "4"}, &stdout, &stderr)
			if (err != nil) != tt.wantErr {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			_, secret, _ := strings.Cut(tt.cred, ".")
			if strings.Contains(stderr.String(), secret) || (err != nil && strings.Contains(err.Error(), secret)) {
				t.Error("the credential appears in the logs or the error")
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if tt.wantErr {
				if len(b.reports) != before {
					t.Error("a report was accepted with a wrong credential")
				}
				return
			}
			if len(b.reports) != before+1 || b.polls == 0 {
				t.Fatalf("reports %d (before %d), polls %d", len(b.reports), before, b.polls)
			}
			r := b.reports[len(b.reports)-1]
			if r.BootID != "0d6c8a1e-0000-4000-8000-000000000001" || r.CPU.Model != "Test CPU" || r.AgentVersion != version {
				t.Errorf("report %+v", r)
			}
		})
	}
}

// TestStaticBinary builds the agent as released (CGO_ENABLED=0) and checks
// it has no dynamic loader, so it runs on any Linux host.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	out := filepath.Join(t.TempDir(), "anvil-agent")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary needs a dynamic loader")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary links %v", libs)
	}
}
