package media

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/ipxebin"
)

// boots is a Source over a map; a boot is over once deleted.
type boots struct {
	mu      sync.Mutex
	m       map[string]Boot
	scripts atomic.Int32
}

func (b *boots) Boot(_ context.Context, hash string) (Boot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bt, ok := b.m[hash]; ok {
		return bt, nil
	}
	return Boot{}, ErrNoBoot
}

func TestHandler(t *testing.T) {
	efi, err := ipxebin.Autoexec(ipxebin.EFI.Data)
	if err != nil {
		t.Fatal(err)
	}
	src := &boots{m: map[string]Boot{}}
	token, hash, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if len(token) != 43 || HashToken(token) != hash || len(hash) != 64 {
		t.Fatalf("token %d characters, hash %q", len(token), hash)
	}
	src.m[hash] = Boot{Key: "ns/host", Net: Net{MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, Address: netip.MustParsePrefix("10.9.0.5/24")},
		Script: func(context.Context, netip.AddrPort) ([]byte, error) {
			src.scripts.Add(1)
			return httpboot.BootScript(httpboot.BootSpec{KernelURL: "/artifacts/k", Args: []string{"cred=secret"}})
		}}
	h, err := NewHandler(HandlerOptions{Source: src, BaseURL: "http://10.9.0.1", IPXE: efi})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(Pattern, h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(method, path, rng string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}

	resp, iso := get("GET", Path(token), "")
	if resp.StatusCode != 200 || string(iso[16*2048+1:16*2048+6]) != "CD001" {
		t.Fatalf("GET: %s, %d bytes", resp.Status, len(iso))
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Error("no Cache-Control: no-store")
	}
	resp, _ = get("HEAD", Path(token), "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Length") != strconv.Itoa(len(iso)) || resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("HEAD: %s, length %q, ranges %q", resp.Status, resp.Header.Get("Content-Length"), resp.Header.Get("Accept-Ranges"))
	}
	resp, part := get("GET", Path(token), "bytes=32768-34815")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, iso[32768:34816]) {
		t.Errorf("range: %s, %d bytes", resp.Status, len(part))
	}
	if n := src.scripts.Load(); n != 0 {
		t.Errorf("boot script rendered %d times for the ISO, want none (the ISO chains it)", n)
	}
	if !bytes.Contains(iso, []byte("chain --replace --autofree http://10.9.0.1/media/"+token+".ipxe")) {
		t.Error("the ISO's script does not chain the boot's script")
	}
	resp, script := get("GET", "/media/"+token+".ipxe", "")
	if resp.StatusCode != 200 || !bytes.Contains(script, []byte("kernel http://10.9.0.1/artifacts/k cred=secret ip=10.9.0.5:::255.255.255.0:::off")) {
		t.Errorf("boot script: %s\n%s", resp.Status, script)
	}
	if n := src.scripts.Load(); n != 1 {
		t.Errorf("boot script rendered %d times, want 1", n)
	}

	for name, path := range map[string]string{
		"unknown token":   Path("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
		"malformed token": "/media/abc.iso",
		"no .iso":         "/media/" + token,
		"other extension": "/media/" + token + ".img",
	} {
		if resp, _ := get("GET", path, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %s, want 403", name, resp.Status)
		}
	}

	// The boot is over: 403, and the ISO is dropped.
	src.mu.Lock()
	delete(src.m, hash)
	src.mu.Unlock()
	if h.Held() != 1 {
		t.Fatalf("%d ISOs held before the boot ended, want 1", h.Held())
	}
	h.Sweep(context.Background())
	if h.Held() != 0 {
		t.Errorf("%d ISOs held after Sweep, want 0", h.Held())
	}
	for _, p := range []string{Path(token), "/media/" + token + ".ipxe"} {
		if resp, _ := get("GET", p, ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s after the boot: %s, want 403", p, resp.Status)
		}
	}
}
