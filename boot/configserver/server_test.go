package configserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"gopkg.in/yaml.v3"

	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/internal/ratelimit"
	"anvil.dev/anvil/render"
)

const butaneTmpl = `variant: fcos
version: 1.6.0
storage:
  files:
    - path: /etc/hostname
      contents:
        inline: {{ .Hostname }}
    - path: /etc/kubernetes/bootstrap-token
      mode: 0600
      contents:
        inline: {{ .Join.Token }}
`

const userDataTmpl = `#cloud-config
hostname: {{ .Hostname }}
write_files:
  - path: /etc/kubernetes/bootstrap-token
    permissions: "0600"
    content: {{ quote .Join.Token }}
`

// renderSource is a ConfigSource backed by the real renderer, with one
// host per MAC, as the controller wiring will provide.
type renderSource struct {
	r     *render.Renderer
	hosts map[string]render.Vars // by MAC
	n     atomic.Int64           // configs asked for
}

func (s *renderSource) renders() int64 { return s.n.Load() }

func (s *renderSource) vars(host bootcred.HostKey, mac string) (render.Vars, error) {
	s.n.Add(1)
	v, ok := s.hosts[mac]
	if !ok || v.Hostname != host.Name {
		return render.Vars{}, ErrNoConfig
	}
	return v, nil
}

func (s *renderSource) Ignition(ctx context.Context, host bootcred.HostKey, mac string) ([]byte, error) {
	v, err := s.vars(host, mac)
	if err != nil {
		return nil, err
	}
	return s.r.Ignition(ctx, butaneTmpl, render.VariantFCOS, v)
}

func (s *renderSource) NoCloud(ctx context.Context, host bootcred.HostKey, mac string) (*render.NoCloud, error) {
	v, err := s.vars(host, mac)
	if err != nil {
		return nil, err
	}
	return s.r.NoCloud(ctx, render.NoCloudTemplates{UserData: userDataTmpl}, v)
}

type leases map[string]netip.Addr

func (l leases) LeasedAddress(mac string, _ bool) (netip.Addr, bool) { a, ok := l[mac]; return a, ok }

const (
	macA = "52:54:00:aa:00:01"
	macB = "52:54:00:bb:00:01"
)

var (
	hostA = bootcred.HostKey{Namespace: "metal", Name: "node-a", UID: "uid-a"}
	hostB = bootcred.HostKey{Namespace: "metal", Name: "node-b", UID: "uid-b"}
)

// fixture is a running config server on loopback.
type fixture struct {
	srv     *httptest.Server
	h       *Handler
	creds   *bootcred.Manager
	src     *renderSource
	reg     *prometheus.Registry
	logs    *syncBuffer
	clock   *clock
	tokenA  string
	tokenB  string
	leases  leases
	limiter *ratelimit.Limiter
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) write(prefix, args string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(prefix + " " + args + "\n")
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newFixture(t *testing.T, withLeases bool) *fixture {
	t.Helper()
	f := &fixture{
		reg:    prometheus.NewRegistry(),
		logs:   &syncBuffer{},
		clock:  &clock{t: time.Now()},
		tokenA: "aaaaaa.aaaaaaaaaaaaaaaa",
		tokenB: "bbbbbb.bbbbbbbbbbbbbbbb",
	}
	f.creds = bootcred.New(bootcred.Options{Now: f.clock.now})
	va := render.SampleVars()
	va.Hostname, va.Join.Token = hostA.Name, f.tokenA
	vb := render.SampleVars()
	vb.Hostname, vb.Join.Token = hostB.Name, f.tokenB
	f.src = &renderSource{r: render.NewRenderer(render.Options{}), hosts: map[string]render.Vars{macA: va, macB: vb}}
	f.limiter = ratelimit.New(ratelimit.Options{Burst: 5, Refill: time.Hour, Now: f.clock.now})
	opts := Options{
		Verifier:   f.creds,
		Source:     f.src,
		Limiter:    f.limiter,
		Registerer: f.reg,
		Logger:     funcr.New(f.logs.write, funcr.Options{Verbosity: 1}),
	}
	if withLeases {
		f.leases = leases{}
		opts.Binding = f.leases
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	mux := http.NewServeMux()
	mux.Handle(DefaultPathPrefix, h)
	f.srv = httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) issue(t *testing.T, host bootcred.HostKey, mac string) string {
	t.Helper()
	cred, _, err := f.creds.Issue(context.Background(), host, []string{mac}, bootcred.IssueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// get fetches url from the given loopback source address.
func (f *fixture) get(t *testing.T, from string, url string, hdr http.Header) (int, []byte, http.Header) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

func (f *fixture) base() string { return f.srv.URL + DefaultPathPrefix }

func (f *fixture) denied(reason string) float64 {
	return testutil.ToFloat64(f.h.denied.WithLabelValues(reason))
}

func expectDenied(t *testing.T, code int, body []byte, hdr http.Header) {
	t.Helper()
	if code != http.StatusForbidden || len(body) != 0 {
		t.Fatalf("got %d %q, want 403 with an empty body", code, body)
	}
	if hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("403 without Cache-Control: no-store")
	}
}

func TestIgnitionEndToEnd(t *testing.T) {
	f := newFixture(t, false)
	cred := f.issue(t, hostA, macA)
	url := IgnitionURL(f.base(), macA, cred)

	code, body, hdr := f.get(t, "127.0.0.1", url, nil)
	if code != http.StatusOK {
		t.Fatalf("first fetch: %d %s", code, body)
	}
	if hdr.Get("Cache-Control") != "no-store" || !strings.Contains(hdr.Get("Content-Type"), "ignition+json") {
		t.Errorf("headers %v", hdr)
	}
	var cfg struct {
		Ignition struct{ Version string }
		Storage  struct{ Files []struct{ Path string } }
	}
	if err := json.Unmarshal(body, &cfg); err != nil || cfg.Ignition.Version != "3.5.0" || len(cfg.Storage.Files) != 2 {
		t.Fatalf("body is not the host's Ignition config: %v %s", err, body)
	}
	if !bytes.Contains(body, []byte(f.tokenA)) || bytes.Contains(body, []byte(f.tokenB)) {
		t.Fatalf("body is not host A's config: %s", body)
	}

	t.Run("Ignition retry from the same address within grace", func(t *testing.T) {
		f.clock.add(30 * time.Second)
		code, body2, _ := f.get(t, "127.0.0.1", url, nil)
		if code != http.StatusOK || !bytes.Equal(body, body2) {
			t.Fatalf("retry: %d", code)
		}
		if s := f.src.r.Stats(); s.Renders != 1 {
			t.Fatalf("retry rendered again: %+v", s)
		}
	})
	t.Run("replay from another address", func(t *testing.T) {
		code, body, hdr := f.get(t, "127.0.0.2", url, nil)
		expectDenied(t, code, body, hdr)
		if f.denied(ReasonReplayed) != 1 {
			t.Fatalf("replayed counter %v", f.denied(ReasonReplayed))
		}
	})
	t.Run("replay after grace from the same address", func(t *testing.T) {
		f.clock.add(3 * time.Minute)
		code, body, hdr := f.get(t, "127.0.0.1", url, nil)
		expectDenied(t, code, body, hdr)
		if f.denied(ReasonReplayed) != 2 {
			t.Fatalf("replayed counter %v", f.denied(ReasonReplayed))
		}
	})
	t.Run("credential of host A with host B's MAC", func(t *testing.T) {
		credA := f.issue(t, hostA, macA)
		code, body, hdr := f.get(t, "127.0.0.3", IgnitionURL(f.base(), macB, credA), nil)
		expectDenied(t, code, body, hdr)
		if f.denied(ReasonWrongHost) != 1 {
			t.Fatal("wrong_host not counted")
		}
		// Not consumed by the failed attempt.
		if code, _, _ := f.get(t, "127.0.0.3", IgnitionURL(f.base(), macA, credA), nil); code != http.StatusOK {
			t.Fatalf("credential burnt by a wrong-host attempt: %d", code)
		}
	})
	t.Run("credential in a header, MAC in another notation", func(t *testing.T) {
		credB := f.issue(t, hostB, macB)
		for _, h := range []http.Header{
			{"Authorization": {"Bearer " + credB}},
			{CredentialHeader: {credB}},
		} {
			code, body, _ := f.get(t, "127.0.0.4", f.base()+"52-54-00-BB-00-01/ignition", h)
			if code != http.StatusOK || !json.Valid(body) {
				t.Fatalf("header credential: %d %s", code, body)
			}
		}
	})
	t.Run("invalid, missing, expired", func(t *testing.T) {
		code, body, hdr := f.get(t, "127.0.0.5", IgnitionURL(f.base(), macA, strings.Repeat("x", 43)), nil)
		expectDenied(t, code, body, hdr)
		code, body, hdr = f.get(t, "127.0.0.5", f.base()+macA+"/ignition", nil)
		expectDenied(t, code, body, hdr)
		credB := f.issue(t, hostB, macB)
		f.clock.add(31 * time.Minute)
		code, body, hdr = f.get(t, "127.0.0.5", IgnitionURL(f.base(), macB, credB), nil)
		expectDenied(t, code, body, hdr)
		for _, r := range []string{ReasonInvalid, ReasonMissing, ReasonExpired} {
			if f.denied(r) != 1 {
				t.Errorf("%s counted %v times, want 1", r, f.denied(r))
			}
		}
	})
	t.Run("metrics are registered", func(t *testing.T) {
		n, err := testutil.GatherAndCount(f.reg, "anvil_config_requests_denied_total", "anvil_config_requests_served_total")
		if err != nil || n == 0 {
			t.Fatalf("gathered %d series: %v", n, err)
		}
		if v := testutil.ToFloat64(f.h.served.WithLabelValues("ignition")); v < 4 {
			t.Fatalf("served counter %v", v)
		}
	})
}

func TestNoCloudEndToEnd(t *testing.T) {
	f := newFixture(t, false)
	cred := f.issue(t, hostA, macA)
	seed := NoCloudSeedURL(f.base(), macA, cred)
	if !strings.HasSuffix(seed, "/") {
		t.Fatalf("seed URL %q lacks the trailing slash", seed)
	}
	files := map[string][]byte{}
	for _, name := range []string{"meta-data", "user-data", "vendor-data", "network-config"} {
		code, body, hdr := f.get(t, "127.0.0.1", seed+name, nil)
		switch name {
		case "vendor-data", "network-config":
			if code != http.StatusOK || len(body) != 0 {
				t.Fatalf("%s (no template): %d %q, want 200 and empty", name, code, body)
			}
			continue
		}
		if code != http.StatusOK || hdr.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %v", name, code, hdr)
		}
		files[name] = body
	}
	var md map[string]string
	if err := yaml.Unmarshal(files["meta-data"], &md); err != nil || md["local-hostname"] != "node-a" || !strings.HasPrefix(md["instance-id"], "anvil-") {
		t.Fatalf("meta-data %s (%v)", files["meta-data"], err)
	}
	if !strings.HasPrefix(string(files["user-data"]), "#cloud-config") || !strings.Contains(string(files["user-data"]), f.tokenA) {
		t.Fatalf("user-data %s", files["user-data"])
	}
	if s := f.src.r.Stats(); s.Renders != 1 {
		t.Fatalf("four NoCloud fetches rendered %d times", s.Renders)
	}
	// Another address with the same seed URL is a replay.
	code, body, hdr := f.get(t, "127.0.0.2", seed+"user-data", nil)
	expectDenied(t, code, body, hdr)
	// Unknown file names and paths are 404.
	for _, p := range []string{seed + "passwd", seed + "..%2F..%2Fignition", f.base() + "nope/ignition", f.base() + macA + "/other"} {
		if code, _, _ := f.get(t, "127.0.0.1", p, nil); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, code)
		}
	}
}

func TestLeasedAddressBinding(t *testing.T) {
	f := newFixture(t, true)
	cred := f.issue(t, hostA, macA)
	url := IgnitionURL(f.base(), macA, cred)
	f.leases[macA] = netip.MustParseAddr("127.0.0.2")

	code, body, hdr := f.get(t, "127.0.0.1", url, nil)
	expectDenied(t, code, body, hdr)
	if f.denied(ReasonWrongAddress) != 1 {
		t.Fatal("wrong_address not counted")
	}
	// The refused request did not consume the credential: the leased
	// address still gets the config.
	if code, _, _ := f.get(t, "127.0.0.2", url, nil); code != http.StatusOK {
		t.Fatalf("leased address: %d", code)
	}
	// Host B has no lease (proxy DHCP): the first address to fetch wins.
	credB := f.issue(t, hostB, macB)
	urlB := IgnitionURL(f.base(), macB, credB)
	if code, _, _ := f.get(t, "127.0.0.3", urlB, nil); code != http.StatusOK {
		t.Fatalf("first fetch without lease: %d", code)
	}
	code, body, hdr = f.get(t, "127.0.0.4", urlB, nil)
	expectDenied(t, code, body, hdr)
}

func TestRateLimiting(t *testing.T) {
	f := newFixture(t, false)
	cred := f.issue(t, hostA, macA)
	// Burst is 5 failures.
	for i := 0; i < 5; i++ {
		code, body, hdr := f.get(t, "127.0.0.7", IgnitionURL(f.base(), macA, fmt.Sprintf("guess%038d", i)), nil)
		expectDenied(t, code, body, hdr)
	}
	// Now guesses from that address are refused before they are checked...
	code, body, _ := f.get(t, "127.0.0.7", IgnitionURL(f.base(), macA, "guess-after-the-burst"), nil)
	if code != http.StatusTooManyRequests || len(body) != 0 {
		t.Fatalf("after the burst: %d %q, want 429", code, body)
	}
	if code, _, _ := f.get(t, "127.0.0.7", f.base()+"no/such/path", nil); code != http.StatusTooManyRequests {
		t.Fatalf("unknown path after the burst: %d, want 429", code)
	}
	if testutil.ToFloat64(f.h.denied.WithLabelValues(ReasonRateLimited)) != 2 {
		t.Fatal("rate_limited not counted")
	}
	// ...and other addresses are unaffected.
	credB := f.issue(t, hostB, macB)
	if code, _, _ := f.get(t, "127.0.0.8", IgnitionURL(f.base(), macB, credB), nil); code != http.StatusOK {
		t.Fatalf("other address: %d", code)
	}
	// The host's own credential still works from the limited address:
	// whoever guessed there (sharing it, or spoofing it) cannot lock the
	// host out.
	if code, _, _ := f.get(t, "127.0.0.7", IgnitionURL(f.base(), macA, cred), nil); code != http.StatusOK {
		t.Fatalf("valid credential from the limited address: %d, want 200", code)
	}
	// A known credential with another MAC is a guess too.
	credA2 := f.issue(t, hostA, macA)
	if code, _, _ := f.get(t, "127.0.0.7", IgnitionURL(f.base(), macB, credA2), nil); code != http.StatusTooManyRequests {
		t.Fatalf("known credential with the wrong MAC from the limited address: %d, want 429", code)
	}
}

// TestHeadConsumesNothing: HEAD is refused before the credential is looked
// at (Go's mux routes HEAD to GET handlers): it must not consume the
// credential nor render a config, which mints a bootstrap token.
func TestHeadConsumesNothing(t *testing.T) {
	f := newFixture(t, false)
	cred := f.issue(t, hostA, macA)
	url := IgnitionURL(f.base(), macA, cred)
	req, err := http.NewRequest(http.MethodHead, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodGet {
		t.Fatalf("HEAD: %d Allow %q, want 405 Allow GET", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if n := f.src.renders(); n != 0 {
		t.Fatalf("HEAD rendered %d configs", n)
	}
	// Not consumed: the host fetches it from another address than the
	// HEAD's (127.0.0.1), which a consumed credential would refuse.
	if code, _, _ := f.get(t, "127.0.0.9", url, nil); code != http.StatusOK {
		t.Fatalf("GET after HEAD: %d, want 200", code)
	}
}

type requiredLeases struct{ leases }

func (requiredLeases) AddressRequired(string, bool) bool { return true }

// TestRequiredBinding: with a RequiredBinding (full DHCP mode), a MAC with
// no known address gets nothing, and its credential is not spent.
func TestRequiredBinding(t *testing.T) {
	f := newFixture(t, false)
	l := requiredLeases{leases{}}
	f.h.opts.Binding = l
	cred := f.issue(t, hostA, macA)
	url := IgnitionURL(f.base(), macA, cred)
	code, body, hdr := f.get(t, "127.0.0.5", url, nil)
	expectDenied(t, code, body, hdr)
	if f.denied(ReasonWrongAddress) != 1 {
		t.Fatal("wrong_address not counted")
	}
	l.leases[macA] = netip.MustParseAddr("127.0.0.6")
	if code, _, _ := f.get(t, "127.0.0.6", url, nil); code != http.StatusOK {
		t.Fatalf("from the lease once there is one: %d", code)
	}
}

func TestMethodAndPrefix(t *testing.T) {
	f := newFixture(t, false)
	cred := f.issue(t, hostA, macA)
	resp, err := http.Post(IgnitionURL(f.base(), macA, cred), "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without Verifier/Source succeeded")
	}
	if _, err := New(Options{Verifier: f.creds, Source: f.src, PathPrefix: "/x"}); err == nil {
		t.Fatal("prefix without trailing slash accepted")
	}
}

// TestCredentialsNeverLogged drives successes and every kind of failure and
// checks that no credential reaches the log, while the hash prefix does.
func TestCredentialsNeverLogged(t *testing.T) {
	f := newFixture(t, false)
	var creds []string
	credA := f.issue(t, hostA, macA)
	creds = append(creds, credA)
	f.get(t, "127.0.0.1", IgnitionURL(f.base(), macA, credA), nil)
	f.get(t, "127.0.0.2", IgnitionURL(f.base(), macA, credA), nil)
	f.get(t, "127.0.0.2", IgnitionURL(f.base(), macB, credA), nil)
	bad := "not-a-credential-but-still-secret-XYZ"
	creds = append(creds, bad)
	f.get(t, "127.0.0.3", IgnitionURL(f.base(), macA, bad), nil)
	credB := f.issue(t, hostB, macB)
	creds = append(creds, credB)
	f.get(t, "127.0.0.4", NoCloudSeedURL(f.base(), macB, credB)+"user-data", nil)

	logs := f.logs.String()
	if !strings.Contains(logs, bootcred.HashCredential(credA)[:12]) {
		t.Fatalf("log does not identify the credential by hash prefix:\n%s", logs)
	}
	for _, c := range creds {
		if strings.Contains(logs, c) || strings.Contains(logs, c[:16]) {
			t.Fatalf("credential %q in logs:\n%s", c, logs)
		}
	}
	for _, tok := range []string{f.tokenA, f.tokenB} {
		if strings.Contains(logs, tok) {
			t.Fatalf("bootstrap token in logs:\n%s", logs)
		}
	}
}
