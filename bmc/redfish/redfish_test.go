package redfish_test

import (
	"anvil.dev/anvil/test/need"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/bmc/redfish"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/redfishsim"
)

// A password that would be easy to spot in any error string.
const secret = "Sup3r-S3cret-Pa55w0rd"

const sysID = "437XR1138R2"

func startSim(t *testing.T, opts redfishsim.Options) *redfishsim.Server {
	t.Helper()
	opts.MockupDir = need.RedfishMockup(t)
	if opts.Password == "" {
		opts.Password = secret
	}
	if opts.Systems == nil {
		opts.Systems = []redfishsim.SystemOptions{{PowerState: "Off"}}
	}
	return redfishsim.Start(t, opts)
}

// lab lets drivers dial the simulators on loopback.
var lab = netguard.Guard{AllowLoopback: true}

func options(s *redfishsim.Server) bmc.Options {
	return bmc.Options{
		Address:     s.BMCAddress(),
		Credentials: bmc.Credentials{Username: s.Username(), Password: s.Password()},
		RootCAs:     s.CertPool(),
		Timeout:     30 * time.Second,
		Guard:       lab,
		// Most simulators here serve plain HTTP on loopback.
		AllowPlainHTTP: true,
	}
}

func open(t *testing.T, opts bmc.Options) bmc.Driver {
	t.Helper()
	d, err := bmc.Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Fatalf("error string contains the password: %v", err)
	}
	if err != nil && strings.Contains(fmt.Sprintf("%+v %#v", err, err), secret) {
		t.Fatalf("formatted error contains the password")
	}
}

func TestPowerActions(t *testing.T) {
	tests := []struct {
		name      string
		from      string
		action    bmc.PowerAction
		want      string
		wantReset string // ResetType the simulator received; "" for none
		restart   bool
	}{
		{"on from off", "Off", bmc.PowerOn, "On", "On", false},
		{"on when on is a no-op", "On", bmc.PowerOn, "On", "", false},
		{"off", "On", bmc.PowerOff, "Off", "ForceOff", false},
		{"off when off is a no-op", "Off", bmc.PowerOff, "Off", "", false},
		{"graceful off", "On", bmc.PowerGracefulOff, "Off", "GracefulShutdown", false},
		{"reset cycles a running server", "On", bmc.PowerReset, "On", "ForceRestart", true},
		{"reset powers on a server that is off", "Off", bmc.PowerReset, "On", "On", false},
	}
	for _, tls := range []bool{false, true} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("tls=%t/%s", tls, tc.name), func(t *testing.T) {
				s := startSim(t, redfishsim.Options{TLS: tls, Systems: []redfishsim.SystemOptions{{PowerState: tc.from}}})
				d := open(t, options(s))
				ctx := context.Background()
				if st, err := d.PowerState(ctx); err != nil || string(st) != tc.from {
					t.Fatalf("PowerState = %s, %v; want %s", st, err, tc.from)
				}
				if err := d.SetPower(ctx, tc.action); err != nil {
					t.Fatalf("SetPower(%s): %v", tc.action, err)
				}
				if got := s.PowerState(sysID); got != tc.want {
					t.Fatalf("simulator power %s, want %s", got, tc.want)
				}
				if st, err := d.PowerState(ctx); err != nil || string(st) != tc.want {
					t.Fatalf("PowerState after = %s, %v; want %s", st, err, tc.want)
				}
				ev := s.Events()
				if tc.wantReset == "" {
					if len(ev) != 0 || s.Stats().Resets != 0 {
						t.Fatalf("expected no reset, simulator saw %+v", ev)
					}
					return
				}
				if len(ev) != 1 || ev[0].ResetType != tc.wantReset || ev[0].Restart != tc.restart {
					t.Fatalf("simulator events %+v, want one %s (restart %t)", ev, tc.wantReset, tc.restart)
				}
			})
		}
	}
}

func TestBootOnce(t *testing.T) {
	tests := []struct {
		dev        bmc.BootDevice
		uefi       bool
		wantTarget string
		wantMode   string
	}{
		{bmc.BootPXE, true, "Pxe", "UEFI"},
		{bmc.BootPXE, false, "Pxe", "Legacy"},
		{bmc.BootDisk, true, "Hdd", "UEFI"},
		{bmc.BootCD, true, "Cd", "UEFI"},
		{bmc.BootHTTP, true, "UefiHttp", "UEFI"},
		// UEFI HTTP boot is UEFI's: never asked for in Legacy mode.
		{bmc.BootHTTP, false, "UefiHttp", "UEFI"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s uefi=%t", tc.dev, tc.uefi), func(t *testing.T) {
			s := startSim(t, redfishsim.Options{})
			opts := options(s)
			opts.UEFI = tc.uefi
			d := open(t, opts)
			ctx := context.Background()
			if err := d.SetBootOnce(ctx, tc.dev); err != nil {
				t.Fatalf("SetBootOnce: %v", err)
			}
			want := redfishsim.BootOverride{Target: tc.wantTarget, Enabled: "Once", Mode: tc.wantMode}
			if got := s.Boot(sysID); got != want {
				t.Fatalf("simulator boot %+v, want %+v", got, want)
			}
			// The override is used by the next power-on only.
			if err := d.SetPower(ctx, bmc.PowerOn); err != nil {
				t.Fatal(err)
			}
			if err := d.SetPower(ctx, bmc.PowerReset); err != nil {
				t.Fatal(err)
			}
			ev := s.Events()
			if len(ev) != 2 || ev[0].BootTarget != tc.wantTarget || ev[0].BootMode != tc.wantMode || ev[1].BootTarget != "" {
				t.Fatalf("boots %+v: want the first from %s/%s and the second by boot order", ev, tc.wantTarget, tc.wantMode)
			}
		})
	}
}

// A BMC whose AllowableValues lack UefiHttp: ErrUnsupported naming the
// target and the BMC's address, and the override is left alone.
func TestBootOnceHTTPUnsupported(t *testing.T) {
	s := startSim(t, redfishsim.Options{Systems: []redfishsim.SystemOptions{{BootTargets: []string{"None", "Pxe", "Hdd"}}}})
	before := s.Boot(sysID)
	err := open(t, options(s)).SetBootOnce(context.Background(), bmc.BootHTTP)
	if !errors.Is(err, bmc.ErrUnsupported) || !strings.Contains(err.Error(), "UefiHttp") || !strings.Contains(err.Error(), s.URL()) {
		t.Fatalf("error %v: want ErrUnsupported naming UefiHttp and the BMC", err)
	}
	if after := s.Boot(sysID); after != before {
		t.Fatalf("boot override changed %+v -> %+v", before, after)
	}
}

func TestBootOnceRetriesStaleETag(t *testing.T) {
	// Someone else changes the system between the driver's GET and its PATCH
	// (a proxy does it deterministically), so the If-Match ETag is stale and
	// the simulator answers 412: the driver must re-read and retry once.
	s := startSim(t, redfishsim.Options{})
	target, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var patches atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && patches.Add(1) == 1 {
			req, _ := http.NewRequest(http.MethodPatch, s.URL()+s.SystemPath(sysID), strings.NewReader(`{"AssetTag":"changed"}`))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth(s.Username(), s.Password())
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusNoContent {
				t.Errorf("concurrent PATCH: %v %v", err, resp)
			}
			if resp != nil {
				resp.Body.Close()
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	opts := options(s)
	opts.Address = "redfish+" + proxy.URL
	if err := open(t, opts).SetBootOnce(context.Background(), bmc.BootPXE); err != nil {
		t.Fatal(err)
	}
	if n := patches.Load(); n != 2 {
		t.Fatalf("%d PATCHes, want 2 (412, then the retry)", n)
	}
	if got := s.Boot(sysID); got.Target != "Pxe" || got.Enabled != "Once" {
		t.Fatalf("boot %+v", got)
	}
}

func TestSessionReuse(t *testing.T) {
	s := startSim(t, redfishsim.Options{})
	d := open(t, options(s))
	ctx := context.Background()
	for i := range 100 {
		if _, err := d.PowerState(ctx); err != nil {
			t.Fatalf("PowerState #%d: %v", i, err)
		}
	}
	st := s.Stats()
	if st.SessionsCreated != 1 || st.LoginAttempts != 1 {
		t.Fatalf("100 PowerState calls: %d sessions, %d login attempts; want 1 and 1", st.SessionsCreated, st.LoginAttempts)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := s.Sessions(); n != 0 || s.Stats().SessionsDeleted != 1 {
		t.Fatalf("after Close: %d live sessions, %d deleted; want 0 and 1", n, s.Stats().SessionsDeleted)
	}
}

func TestReloginAfterSessionExpiry(t *testing.T) {
	s := startSim(t, redfishsim.Options{})
	d := open(t, options(s))
	ctx := context.Background()
	if _, err := d.PowerState(ctx); err != nil {
		t.Fatal(err)
	}
	s.ExpireSessions()
	if err := d.SetPower(ctx, bmc.PowerOn); err != nil {
		t.Fatalf("SetPower after session expiry: %v", err)
	}
	if s.PowerState(sysID) != "On" {
		t.Fatal("power-on lost after re-login")
	}
	if st := s.Stats(); st.SessionsCreated != 2 || st.LoginAttempts != 2 {
		t.Fatalf("stats %+v: want exactly one re-login", st)
	}
}

func TestBasicAuthWithoutSessionService(t *testing.T) {
	s := startSim(t, redfishsim.Options{NoSessionService: true})
	d := open(t, options(s))
	ctx := context.Background()
	if err := d.SetPower(ctx, bmc.PowerOn); err != nil {
		t.Fatal(err)
	}
	if st, err := d.PowerState(ctx); err != nil || st != bmc.PowerStateOn {
		t.Fatalf("PowerState %s, %v", st, err)
	}
	if st := s.Stats(); st.SessionsCreated != 0 || st.LoginAttempts != 0 {
		t.Fatalf("sessions used against a service without SessionService: %+v", st)
	}
}

func TestRecoversFromInjected503s(t *testing.T) {
	// A slow, flaky BMC: every answer takes 2-10 ms and half are 503s.
	s := startSim(t, redfishsim.Options{ErrorRate: 0.5, Seed: 42, Latency: 2 * time.Millisecond, Jitter: 8 * time.Millisecond})
	opts := options(s)
	opts.MaxRetries = 10 // 0.5^11: with this seed every call gets through
	d := open(t, opts)
	ctx := context.Background()
	for i := range 10 {
		if _, err := d.PowerState(ctx); err != nil {
			t.Fatalf("PowerState #%d: %v", i, err)
		}
	}
	if err := d.SetBootOnce(ctx, bmc.BootPXE); err != nil {
		t.Fatalf("SetBootOnce: %v", err)
	}
	if err := d.SetPower(ctx, bmc.PowerOn); err != nil {
		t.Fatalf("SetPower: %v", err)
	}
	if _, err := d.Facts(ctx); err != nil {
		t.Fatalf("Facts: %v", err)
	}
	st := s.Stats()
	if st.InjectedErrors < 5 {
		t.Fatalf("only %d injected errors: the test did not test retries", st.InjectedErrors)
	}
	if s.PowerState(sysID) != "On" || st.Resets != 1 || st.SessionsCreated != 1 {
		t.Fatalf("after retries: power %s, stats %+v", s.PowerState(sysID), st)
	}
}

func TestPersistent503IsUnreachable(t *testing.T) {
	s := startSim(t, redfishsim.Options{ErrorRate: 1})
	opts := options(s)
	opts.MaxRetries = 2
	d := open(t, opts)
	_, err := d.PowerState(context.Background())
	if !errors.Is(err, bmc.ErrUnreachable) {
		t.Fatalf("error %v, want ErrUnreachable", err)
	}
	if n := s.Stats().Requests; n != 3 {
		t.Fatalf("%d requests, want 3 (1 + 2 bounded retries)", n)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Run("honoured", func(t *testing.T) {
		s := startSim(t, redfishsim.Options{RetryAfter: time.Second})
		d := open(t, options(s))
		s.FailNext(1)
		start := time.Now()
		if _, err := d.PowerState(context.Background()); err != nil {
			t.Fatal(err)
		}
		// A lower bound only: the retry must not come before Retry-After.
		if el := time.Since(start); el < time.Second {
			t.Fatalf("retried after %s, before Retry-After: 1", el)
		}
	})
	t.Run("beyond the deadline gives up at once", func(t *testing.T) {
		s := startSim(t, redfishsim.Options{RetryAfter: 25 * time.Second})
		opts := options(s)
		opts.Timeout = 5 * time.Second
		d := open(t, opts)
		s.FailNext(1)
		_, err := d.PowerState(context.Background())
		if !errors.Is(err, bmc.ErrUnreachable) {
			t.Fatalf("error %v, want ErrUnreachable", err)
		}
		if n := s.Stats().Requests; n != 1 {
			t.Fatalf("%d requests: retried although Retry-After exceeds the deadline", n)
		}
	})
}

func TestBadPassword(t *testing.T) {
	for _, noSessions := range []bool{false, true} {
		t.Run(fmt.Sprintf("sessionService=%t", !noSessions), func(t *testing.T) {
			s := startSim(t, redfishsim.Options{NoSessionService: noSessions, Password: "the-right-one"})
			opts := options(s)
			opts.Credentials.Password = secret
			d := open(t, opts)
			ctx := context.Background()
			calls := []func() error{
				func() error { _, err := d.PowerState(ctx); return err },
				func() error { return d.SetPower(ctx, bmc.PowerOn) },
				func() error { return d.SetBootOnce(ctx, bmc.BootPXE) },
				func() error { _, err := d.Facts(ctx); return err },
				func() error { _, err := d.PowerState(ctx); return err },
			}
			for i, call := range calls {
				err := call()
				if !errors.Is(err, bmc.ErrAuthFailed) {
					t.Fatalf("call %d: %v, want ErrAuthFailed", i, err)
				}
				noSecret(t, err)
			}
			st := s.Stats()
			if st.LoginAttempts > 2 || st.Unauthorized > 2 {
				t.Fatalf("5 calls with a wrong password: %d login attempts, %d 401s; want at most 2", st.LoginAttempts, st.Unauthorized)
			}
			if st.Resets != 0 || st.Patches != 0 {
				t.Fatalf("actions performed with a wrong password: %+v", st)
			}
		})
	}
}

func TestSeveralSystems(t *testing.T) {
	s := startSim(t, redfishsim.Options{Systems: []redfishsim.SystemOptions{{PowerState: "Off"}, {ID: "blade2", PowerState: "Off"}}})
	opts := options(s)
	_, err := open(t, opts).PowerState(context.Background())
	if !errors.Is(err, bmc.ErrUnsupported) || !strings.Contains(err.Error(), sysID) || !strings.Contains(err.Error(), "blade2") {
		t.Fatalf("error %v: want ErrUnsupported naming both systems", err)
	}
	opts.Address = s.BMCAddress() + s.SystemPath("blade2")
	if err := open(t, opts).SetPower(context.Background(), bmc.PowerOn); err != nil {
		t.Fatal(err)
	}
	if s.PowerState("blade2") != "On" || s.PowerState(sysID) != "Off" {
		t.Fatalf("power: blade2 %s, %s %s", s.PowerState("blade2"), sysID, s.PowerState(sysID))
	}
	opts.Address = s.BMCAddress() + s.SystemPath("nope")
	if _, err := open(t, opts).PowerState(context.Background()); !errors.Is(err, bmc.ErrInvalidAddress) {
		t.Fatalf("missing system: %v, want ErrInvalidAddress", err)
	}
}

func TestFacts(t *testing.T) {
	s := startSim(t, redfishsim.Options{})
	f, err := open(t, options(s)).Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// From the public-rackmount1 mockup; VLAN1 is a virtual interface.
	want := bmc.Facts{
		Manufacturer: "Contoso", Model: "3500", SerialNumber: "437XR1138R2",
		UUID: "38947555-7742-3448-3784-823347823834", CPUCount: 2,
		CPUModel:  "Multi-Core Intel(R) Xeon(R) processor 7xxx Series",
		MemoryMiB: 96 * 1024,
		MACs:      []string{"12:44:6a:3b:04:11", "aa:bb:cc:dd:ee:00", "aa:bb:cc:dd:ee:fe"},
	}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Fatalf("facts\n got %+v\nwant %+v", f, want)
	}

	s2 := startSim(t, redfishsim.Options{Systems: []redfishsim.SystemOptions{{MACs: []string{"52:54:00:AA:BB:01", "52:54:00:AA:BB:02"}}}})
	f2, err := open(t, options(s2)).Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f2.MACs, "52:54:00:aa:bb:01") || !slices.Contains(f2.MACs, "52:54:00:aa:bb:02") {
		t.Fatalf("MACs %v", f2.MACs)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	d := open(t, bmc.Options{Address: "redfish+http://" + addr, Credentials: bmc.Credentials{Username: "admin", Password: secret}, Timeout: 10 * time.Second, MaxRetries: 1,
		Guard: lab, AllowPlainHTTP: true})
	_, err = d.PowerState(context.Background())
	if !errors.Is(err, bmc.ErrUnreachable) {
		t.Fatalf("error %v, want ErrUnreachable", err)
	}
	noSecret(t, err)
}

func TestTLSVerification(t *testing.T) {
	s := startSim(t, redfishsim.Options{TLS: true})
	ctx := context.Background()

	untrusted := options(s)
	untrusted.RootCAs = nil
	_, err := open(t, untrusted).PowerState(ctx)
	if !errors.Is(err, bmc.ErrUnreachable) || !strings.Contains(err.Error(), "disableCertificateVerification") {
		t.Fatalf("self-signed certificate: %v, want ErrUnreachable with a hint", err)
	}
	noSecret(t, err)

	insecure := untrusted
	insecure.DisableCertificateVerification = true
	if _, err := open(t, insecure).PowerState(ctx); err != nil {
		t.Fatalf("with DisableCertificateVerification: %v", err)
	}
	if _, err := open(t, options(s)).PowerState(ctx); err != nil {
		t.Fatalf("with RootCAs: %v", err)
	}
}

func TestAddressValidation(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"redfish+https://10.0.0.1", true},
		{"redfish+http://10.0.0.1:8000", true},
		{"redfish+https://10.0.0.1/redfish/v1/Systems/1", true},
		{"redfish+https://10.0.0.1/redfish/v1/Systems/1/", true},
		{"redfish+https://[fd00::1]:8443/redfish/v1/", true},
		{"redfish+https://10.0.0.1/redfish/v1/Systems/1/Bios", false},
		{"redfish+https://10.0.0.1/other", false},
		{"redfish+https://admin:" + secret + "@10.0.0.1", false},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			d, err := bmc.Open(bmc.Options{Address: tc.addr, Credentials: bmc.Credentials{Username: "u", Password: secret}, AllowPlainHTTP: true})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := d.(*redfish.Driver); !ok {
					t.Fatalf("driver %T", d)
				}
				return
			}
			if !errors.Is(err, bmc.ErrInvalidAddress) {
				t.Fatalf("error %v, want ErrInvalidAddress", err)
			}
			noSecret(t, err)
		})
	}
}

// The BMC closes idle connections (as real ones do within about a minute),
// so polls minutes apart reconnect; the reconnect resumes the TLS session.
// The power read also still reports what the ComputerSystem says.
func TestReconnectResumesTLSSession(t *testing.T) {
	s := startSim(t, redfishsim.Options{TLS: true, IdleTimeout: 50 * time.Millisecond})
	ctx := context.Background()
	d := open(t, options(s))
	for i := range 3 {
		ps, err := d.PowerState(ctx)
		if err != nil {
			t.Fatalf("poll %d: %v", i, err)
		}
		if ps != bmc.PowerStateOff {
			t.Fatalf("poll %d: power %s, want off", i, ps)
		}
		before := s.Stats().TLSHandshakes
		// Bounded: the server closes the idle connection after 50ms.
		deadline := time.Now().Add(5 * time.Second)
		for s.Stats().TLSHandshakes == before && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			if _, err := d.PowerState(ctx); err != nil {
				t.Fatalf("poll %d after idle: %v", i, err)
			}
		}
	}
	st := s.Stats()
	if st.TLSHandshakes < 3 {
		t.Fatalf("%d TLS handshakes: the server never closed the idle connection", st.TLSHandshakes)
	}
	if st.TLSResumed < st.TLSHandshakes-1 {
		t.Fatalf("%d of %d handshakes resumed a session, want all but the first", st.TLSResumed, st.TLSHandshakes)
	}
}
