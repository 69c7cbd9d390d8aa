package tftp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/test/netnstest"
)

// testRoot builds a root with a real file, a symlink inside the root, and
// symlinks that escape it, next to a "secret" outside the root.
func testRoot(t testing.TB) (root, secret string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	secret = filepath.Join(base, "secret")
	must(t, os.Mkdir(root, 0o755))
	must(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	must(t, os.WriteFile(secret, []byte("top secret\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "boot.bin"), []byte(strings.Repeat("anvil", 1000)), 0o644))
	must(t, os.Symlink("boot.bin", filepath.Join(root, "alias.bin")))
	must(t, os.Symlink(secret, filepath.Join(root, "escape-abs")))
	must(t, os.Symlink("../secret", filepath.Join(root, "escape-rel")))
	must(t, os.Symlink("..", filepath.Join(root, "sub", "up")))      // stays inside: root itself
	must(t, os.Symlink("../..", filepath.Join(root, "sub", "upup"))) // escapes
	return root, secret
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newTestServer(t testing.TB, root string) *Server {
	t.Helper()
	s, err := NewServer(Options{Root: root, ListenAddr: netip.MustParseAddrPort("127.0.0.1:0"), Registerer: prometheus.NewRegistry()})
	must(t, err)
	t.Cleanup(func() { s.conn.Close(); s.root.Close() })
	return s
}

func TestOpenConfinedToRoot(t *testing.T) {
	root, _ := testRoot(t)
	s := newTestServer(t, root)
	tests := []struct {
		name string
		ok   bool
	}{
		{"boot.bin", true},
		{"alias.bin", true},
		{"sub/../boot.bin", false},
		{"../secret", false},
		{"/etc/passwd", false},
		{filepath.Join(root, "boot.bin"), false},
		{"escape-abs", false},
		{"escape-rel", false},
		{"sub/up/secret", false},
		{"sub/up/boot.bin", true},
		{"sub/upup/secret", false},
		{"sub", false},
		{"boot.bin\x00.txt", false},
		{"missing", false},
	}
	for _, tt := range tests {
		f, _, err := s.open(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("open(%q): err=%v, want ok=%v", tt.name, err, tt.ok)
		}
		if f != nil {
			f.Close()
		}
	}
}

// FuzzResolve: whatever name a client sends, the server either refuses it
// or opens a regular file that really lies inside the root (checked through
// /proc/self/fd, i.e. after all symlinks).
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"boot.bin", "alias.bin", "../secret", "/etc/passwd", "escape-abs", "escape-rel",
		"sub/up/secret", "sub/./../boot.bin", "boot.bin\x00", "./boot.bin", "sub//up", "\\..\\secret"} {
		f.Add(s)
	}
	root, _ := testRoot(f)
	realRoot, err := filepath.EvalSymlinks(root)
	must(f, err)
	s := newTestServer(f, root)
	f.Fuzz(func(t *testing.T, name string) {
		file, fi, err := s.open(name)
		if err != nil {
			return
		}
		defer file.Close()
		where, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", file.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(where, realRoot+"/") || !fi.Mode().IsRegular() {
			t.Fatalf("open(%q) resolved to %s (mode %v), outside %s", name, where, fi.Mode(), realRoot)
		}
	})
}

func sha256File(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return "missing: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	_, _ = io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil))
}

// tftpEnv runs a Server in a server namespace; clients run in the client
// namespace.
type tftpEnv struct {
	pair *netnstest.Pair
	srv  *Server
	dir  string
}

func startInNetns(t *testing.T, root string) *tftpEnv {
	t.Helper()
	return startInNetnsWith(t, root, nil)
}

// startInNetnsWith lets the test change the options first.
func startInNetnsWith(t *testing.T, root string, edit func(*Options)) *tftpEnv {
	t.Helper()
	netnstest.RequireRoot(t)
	p := netnstest.NewPair(t, netnstest.PairOptions{CliAddress: true})
	e := &tftpEnv{pair: p, dir: t.TempDir()}
	opts := Options{Root: root, Interface: p.SrvIf, Registerer: prometheus.NewRegistry(),
		Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 1})}
	if edit != nil {
		edit(&opts)
	}
	must(t, p.Srv.Do(func() (err error) { e.srv, err = NewServer(opts); return err }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// Serve opens one socket per transfer on its goroutine, so it must
	// run on a thread inside the namespace.
	must(t, p.Srv.Go(func() { done <- e.srv.Serve(ctx) }))
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return")
		}
	})
	return e
}

type tftpClient struct {
	name string
	get  func(e *tftpEnv, remote, local string) (string, error)
}

// oackRE matches atftp's trace of an OACK carrying blksize 1468 and a
// non-zero tsize (in either order).
var oackRE = regexp.MustCompile(`received OACK <(tsize: [1-9][0-9]*, blksize: 1468|blksize: 1468, tsize: [1-9][0-9]*)`)

var tftpClients = []tftpClient{
	{"atftp", func(e *tftpEnv, remote, local string) (string, error) {
		return e.pair.Cli.Output(60*time.Second, "atftp", "-g", "-r", remote, "-l", local, e.pair.SrvIP.String())
	}},
	{"atftp blksize+tsize", func(e *tftpEnv, remote, local string) (string, error) {
		out, err := e.pair.Cli.Output(60*time.Second, "atftp", "--trace", "--option", "blksize 1468", "--option", "tsize 0",
			"-g", "-r", remote, "-l", local, e.pair.SrvIP.String())
		// The server must have acknowledged both options (OACK), tsize with
		// the real size.
		if err == nil && !oackRE.MatchString(out) {
			err = fmt.Errorf("blksize/tsize not acknowledged")
		}
		return out, err
	}},
	{"tftp-hpa", func(e *tftpEnv, remote, local string) (string, error) {
		out, err := e.pair.Cli.Output(60*time.Second, "tftp", "-m", "binary", e.pair.SrvIP.String(), "-c", "get", remote, local)
		// tftp-hpa reports TFTP errors on stderr but may exit 0.
		if err == nil && strings.Contains(out, "Error") {
			err = fmt.Errorf("tftp-hpa: %s", strings.TrimSpace(out))
		}
		return out, err
	}},
}

func TestRealClientsFetchIPXE(t *testing.T) {
	netnstest.RequireCommands(t, "atftp", "tftp", "ip")
	src := filepath.Join(DefaultRoot, "undionly.kpxe")
	_, err := os.Stat(src)
	netnstest.Require(t, err == nil, "%s missing (install Debian package ipxe)", src)
	want := sha256File(t, src)

	e := startInNetns(t, "") // default root: Debian's /usr/lib/ipxe
	for _, c := range tftpClients {
		t.Run(c.name, func(t *testing.T) {
			local := filepath.Join(e.dir, strings.ReplaceAll(c.name, " ", "_")+".kpxe")
			out, err := c.get(e, "undionly.kpxe", local)
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, out)
			}
			if got := sha256File(t, local); got != want {
				t.Fatalf("sha256 %s, want %s", got, want)
			}
		})
	}
	// Debian's ipxe.efi is a symlink to /boot/ipxe.efi: outside the root,
	// so it must be refused.
	if _, err := os.Lstat(filepath.Join(DefaultRoot, "ipxe.efi")); err == nil {
		local := filepath.Join(e.dir, "ipxe.efi")
		if out, err := tftpClients[0].get(e, "ipxe.efi", local); err == nil {
			t.Errorf("symlink out of the default root was served:\n%s", out)
		}
	}
	if got := testutil.ToFloat64(e.srv.metrics.transfers.WithLabelValues("ok")); got != float64(len(tftpClients)) {
		t.Errorf("ok transfers = %v, want %d", got, len(tftpClients))
	}
}

func TestRealClientsRefusedOutsideRoot(t *testing.T) {
	netnstest.RequireCommands(t, "atftp", "tftp", "ip")
	root, secret := testRoot(t)
	e := startInNetns(t, root)
	attempts := []string{"../secret", "../../../../../../etc/passwd", "/etc/passwd", secret, "escape-abs", "escape-rel", "sub/upup/secret", "sub/../boot.bin"}
	for _, c := range tftpClients {
		for _, name := range attempts {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				local := filepath.Join(e.dir, "out-"+strings.NewReplacer("/", "_", " ", "_").Replace(c.name+name))
				out, err := c.get(e, name, local)
				if err == nil {
					t.Fatalf("fetch of %q succeeded:\n%s", name, out)
				}
				if data, _ := os.ReadFile(local); len(data) > 0 {
					t.Fatalf("client wrote %d bytes for %q", len(data), name)
				}
			})
		}
	}
	t.Run("inside symlink works", func(t *testing.T) {
		local := filepath.Join(e.dir, "alias")
		if out, err := tftpClients[1].get(e, "alias.bin", local); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if sha256File(t, local) != sha256File(t, filepath.Join(root, "boot.bin")) {
			t.Fatal("alias.bin content differs")
		}
	})
	t.Run("write refused", func(t *testing.T) {
		local := filepath.Join(e.dir, "upload")
		must(t, os.WriteFile(local, []byte("evil"), 0o644))
		out, err := e.pair.Cli.Output(30*time.Second, "atftp", "-p", "-l", local, "-r", "uploaded", e.pair.SrvIP.String())
		if err == nil {
			t.Fatalf("upload succeeded:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join(root, "uploaded")); err == nil {
			t.Fatal("file created in root")
		}
		if got := testutil.ToFloat64(e.srv.metrics.transfers.WithLabelValues("write_refused")); got != 1 {
			t.Errorf("write_refused = %v", got)
		}
	})
}

func TestBusyWhenAllSlotsTaken(t *testing.T) {
	netnstest.RequireCommands(t, "atftp", "ip")
	root, _ := testRoot(t)
	e := startInNetns(t, root)
	// Occupy every slot; the next request must be refused, not queued.
	for range cap(e.srv.slots) {
		e.srv.slots <- struct{}{}
	}
	out, err := tftpClients[0].get(e, "boot.bin", filepath.Join(e.dir, "busy"))
	if err == nil {
		t.Fatalf("request served although all slots were taken:\n%s", out)
	}
	if got := testutil.ToFloat64(e.srv.metrics.transfers.WithLabelValues("busy")); got != 1 {
		t.Fatalf("busy = %v, want 1", got)
	}
	for range cap(e.srv.slots) {
		<-e.srv.slots
	}
	if out, err := tftpClients[0].get(e, "boot.bin", filepath.Join(e.dir, "notbusy")); err != nil {
		t.Fatalf("after slots freed: %v\n%s", err, out)
	}
}
