package redfishsim

import (
	"anvil.dev/anvil/test/need"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func startSim(t *testing.T, opts Options) *Server {
	t.Helper()
	return Start(t, opts) // the embedded public-rackmount1
}

// The embedded mockup is the vendored directory, file for file.
func TestEmbeddedMockupIsTheVendoredOne(t *testing.T) {
	emb, err := loadMockup(PublicRackmount1(), "embedded")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := loadMockup(os.DirFS(need.RedfishMockup(t)), "directory")
	if err != nil {
		t.Fatal(err)
	}
	if len(emb.docs) < 100 || len(emb.docs) != len(dir.docs) || len(emb.files) != len(dir.files) {
		t.Fatalf("embedded mockup has %d resources and %d files, the directory %d and %d",
			len(emb.docs), len(emb.files), len(dir.docs), len(dir.files))
	}
	for id := range dir.docs {
		if emb.docs[id] == nil {
			t.Errorf("embedded mockup lacks %s", id)
		}
	}
}

type client struct {
	t     *testing.T
	s     *Server
	hc    *http.Client
	token string
	basic bool
}

func newClient(t *testing.T, s *Server) *client {
	hc := &http.Client{Timeout: 10 * time.Second}
	if pool := s.CertPool(); pool != nil {
		hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	t.Cleanup(hc.CloseIdleConnections)
	return &client{t: t, s: s, hc: hc}
}

type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (c *client) do(method, path string, body any, hdr map[string]string) response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.s.URL()+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	}
	if c.basic {
		req.SetBasicAuth(c.s.Username(), c.s.Password())
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			c.t.Fatalf("%s %s: bad JSON %q: %v", method, path, raw, err)
		}
	}
	return r
}

func (c *client) login() {
	c.t.Helper()
	r := c.do("POST", "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": c.s.Username(), "Password": c.s.Password()}, nil)
	if r.status != http.StatusCreated {
		c.t.Fatalf("login: %d %s", r.status, r.raw)
	}
	c.token = r.header.Get("X-Auth-Token")
}

// redfishError checks a Redfish error body and returns its first
// ExtendedInfo message.
func redfishError(t *testing.T, r response, wantStatus int, wantID string) map[string]any {
	t.Helper()
	if r.status != wantStatus {
		t.Fatalf("status %d, want %d; body %s", r.status, wantStatus, r.raw)
	}
	e, ok := r.body["error"].(map[string]any)
	if !ok {
		t.Fatalf("no Redfish error object in %s", r.raw)
	}
	code, _ := e["code"].(string)
	if !strings.HasPrefix(code, "Base.1.") || !strings.HasSuffix(code, "."+wantID) {
		t.Fatalf("error code %q, want Base.1.x.%s", code, wantID)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Fatalf("empty error message in %s", r.raw)
	}
	infos, _ := e["@Message.ExtendedInfo"].([]any)
	if len(infos) == 0 {
		t.Fatalf("no @Message.ExtendedInfo in %s", r.raw)
	}
	first := infos[0].(map[string]any)
	if id, _ := first["MessageId"].(string); id != code {
		t.Fatalf("ExtendedInfo MessageId %q, want %q", id, code)
	}
	return first
}

const sysPath = "/redfish/v1/Systems/437XR1138R2"

func TestAuthentication(t *testing.T) {
	s := startSim(t, Options{})
	tests := []struct {
		name   string
		setup  func(c *client)
		path   string
		status int
	}{
		{"service root is public", func(*client) {}, "/redfish/v1/", 200},
		{"version document is public", func(*client) {}, "/redfish", 200},
		{"$metadata is public", func(*client) {}, "/redfish/v1/$metadata", 200},
		{"systems need credentials", func(*client) {}, "/redfish/v1/Systems", 401},
		{"basic auth", func(c *client) { c.basic = true }, "/redfish/v1/Systems", 200},
		{"session token", func(c *client) { c.login() }, sysPath, 200},
		{"unknown token", func(c *client) { c.token = "nope" }, sysPath, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, s)
			tc.setup(c)
			r := c.do("GET", tc.path, nil, nil)
			if r.status != tc.status {
				t.Fatalf("GET %s: %d, want %d (%s)", tc.path, r.status, tc.status, r.raw)
			}
			if tc.status == 401 {
				redfishError(t, r, 401, "NoValidSession")
				if r.header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			}
		})
	}
}

func TestSessionLifecycle(t *testing.T) {
	s := startSim(t, Options{MaxSessions: 2})
	c := newClient(t, s)

	bad := c.do("POST", "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "wrong"}, nil)
	redfishError(t, bad, 401, "ResourceAtUriUnauthorized")

	r := c.do("POST", "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "password"}, nil)
	if r.status != 201 || r.header.Get("X-Auth-Token") == "" {
		t.Fatalf("login: %d, token %q", r.status, r.header.Get("X-Auth-Token"))
	}
	loc := r.header.Get("Location")
	if !strings.HasPrefix(loc, "/redfish/v1/SessionService/Sessions/") {
		t.Fatalf("Location %q", loc)
	}
	c.token = r.header.Get("X-Auth-Token")
	coll := c.do("GET", "/redfish/v1/SessionService/Sessions", nil, nil)
	if n := coll.body["Members@odata.count"]; n != float64(1) {
		t.Fatalf("sessions in collection: %v", n)
	}
	if got := c.do("GET", loc, nil, nil); got.status != 200 || got.body["UserName"] != "admin" {
		t.Fatalf("GET session: %d %s", got.status, got.raw)
	}

	// The session limit, like real BMCs.
	c2 := newClient(t, s)
	c2.login()
	third := newClient(t, s).do("POST", "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "password"}, nil)
	redfishError(t, third, 503, "SessionLimitExceeded")

	if del := c.do("DELETE", loc, nil, nil); del.status != http.StatusNoContent {
		t.Fatalf("DELETE session: %d %s", del.status, del.raw)
	}
	if after := c.do("GET", sysPath, nil, nil); after.status != 401 {
		t.Fatalf("deleted session still works: %d", after.status)
	}
	st := s.Stats()
	if st.LoginAttempts != 4 || st.SessionsCreated != 2 || st.FailedLogins != 1 || st.SessionsDeleted != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSessionIdleExpiry(t *testing.T) {
	s := startSim(t, Options{SessionTimeout: 50 * time.Millisecond})
	c := newClient(t, s)
	c.login()
	deadline := time.Now().Add(10 * time.Second)
	for s.Sessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("session never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := c.do("GET", sysPath, nil, nil); r.status != 401 {
		t.Fatalf("expired session accepted: %d", r.status)
	}
}

func TestPatchBootValidation(t *testing.T) {
	s := startSim(t, Options{})
	c := newClient(t, s)
	c.login()
	tests := []struct {
		name    string
		body    any
		hdr     map[string]string
		status  int
		msgID   string
		args    []any
		related string
	}{
		{name: "target not in AllowableValues", body: map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Floppy"}},
			status: 400, msgID: "PropertyValueNotInList", args: []any{"Floppy", "BootSourceOverrideTarget"}, related: "#/Boot/BootSourceOverrideTarget"},
		{name: "bad enabled value", body: map[string]any{"Boot": map[string]any{"BootSourceOverrideEnabled": "Twice"}},
			status: 400, msgID: "PropertyValueNotInList", args: []any{"Twice", "BootSourceOverrideEnabled"}},
		{name: "wrong type", body: map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": 7}},
			status: 400, msgID: "PropertyValueTypeError"},
		{name: "unknown property", body: map[string]any{"Bogus": 1}, status: 400, msgID: "PropertyUnknown", args: []any{"Bogus"}},
		{name: "unknown boot property", body: map[string]any{"Boot": map[string]any{"Bogus": 1}}, status: 400, msgID: "PropertyUnknown"},
		{name: "read-only property", body: map[string]any{"PowerState": "On"}, status: 400, msgID: "PropertyNotWritable", args: []any{"PowerState"}},
		{name: "read-only allowable values", body: map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget@Redfish.AllowableValues": []string{}}}, status: 400, msgID: "PropertyNotWritable"},
		{name: "malformed JSON", body: `{"Boot": `, status: 400, msgID: "MalformedJSON"},
		{name: "trailing garbage", body: `{"AssetTag": "x"} x`, status: 400, msgID: "MalformedJSON"},
		{name: "no content type", body: map[string]any{"AssetTag": "x"}, hdr: map[string]string{"Content-Type": ""}, status: 415, msgID: "GeneralError"},
		{name: "text content type", body: map[string]any{"AssetTag": "x"}, hdr: map[string]string{"Content-Type": "text/plain"}, status: 415, msgID: "GeneralError"},
		{name: "stale ETag", body: map[string]any{"AssetTag": "x"}, hdr: map[string]string{"If-Match": `"0000"`}, status: 412, msgID: "PreconditionFailed"},
		{name: "valid", body: map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Hdd", "BootSourceOverrideEnabled": "Continuous", "BootSourceOverrideMode": "Legacy"}}, status: 204},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Boot("437XR1138R2")
			r := c.do("PATCH", sysPath, tc.body, tc.hdr)
			if tc.status == 204 {
				if r.status != 204 {
					t.Fatalf("PATCH: %d %s", r.status, r.raw)
				}
				return
			}
			info := redfishError(t, r, tc.status, tc.msgID)
			if tc.args != nil {
				got, _ := info["MessageArgs"].([]any)
				if len(got) != len(tc.args) {
					t.Fatalf("MessageArgs %v, want %v", got, tc.args)
				}
				for i := range got {
					if got[i] != tc.args[i] {
						t.Fatalf("MessageArgs %v, want %v", got, tc.args)
					}
				}
			}
			if tc.related != "" {
				rel, _ := info["RelatedProperties"].([]any)
				if len(rel) != 1 || rel[0] != tc.related {
					t.Fatalf("RelatedProperties %v, want [%s]", rel, tc.related)
				}
			}
			if after := s.Boot("437XR1138R2"); after != before {
				t.Fatalf("rejected PATCH changed boot settings: %+v -> %+v", before, after)
			}
		})
	}
	if got := s.Boot("437XR1138R2"); got != (BootOverride{Target: "Hdd", Enabled: "Continuous", Mode: "Legacy"}) {
		t.Fatalf("boot after valid PATCH: %+v", got)
	}
}

// UefiHttp is a target where the system's AllowableValues list it (the
// mockup's, as real BMCs') and a 400 PropertyValueNotInList where they do
// not (SystemOptions.BootTargets), which the system's document shows.
func TestPatchBootUefiHttp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		targets []string
		ok      bool
	}{
		{"mockup lists UefiHttp", nil, true},
		{"BMC without UefiHttp", []string{"None", "Pxe", "Hdd"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSim(t, Options{Systems: []SystemOptions{{BootTargets: tc.targets}}})
			c := newClient(t, s)
			c.basic = true
			get := c.do("GET", sysPath, nil, nil)
			boot, _ := get.body["Boot"].(map[string]any)
			allowed, _ := boot["BootSourceOverrideTarget@Redfish.AllowableValues"].([]any)
			if listed := slices.Contains(allowed, any("UefiHttp")); listed != tc.ok {
				t.Fatalf("AllowableValues %v: UefiHttp listed %t, want %t", allowed, listed, tc.ok)
			}
			r := c.do("PATCH", sysPath, map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "UefiHttp", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}}, nil)
			if !tc.ok {
				info := redfishError(t, r, 400, "PropertyValueNotInList")
				if args, _ := info["MessageArgs"].([]any); len(args) != 2 || args[0] != "UefiHttp" {
					t.Fatalf("MessageArgs %v, want [UefiHttp BootSourceOverrideTarget]", args)
				}
				return
			}
			if r.status != http.StatusNoContent {
				t.Fatalf("PATCH UefiHttp: %d %s", r.status, r.raw)
			}
			if got := s.Boot("437XR1138R2"); got != (BootOverride{Target: "UefiHttp", Enabled: "Once", Mode: "UEFI"}) {
				t.Fatalf("boot %+v, want UefiHttp once in UEFI", got)
			}
		})
	}
}

func TestPatchIsAllOrNothing(t *testing.T) {
	s := startSim(t, Options{})
	c := newClient(t, s)
	c.basic = true
	before := s.Boot("437XR1138R2")
	r := c.do("PATCH", sysPath, map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Hdd", "BootSourceOverrideMode": "Sideways"}}, nil)
	redfishError(t, r, 400, "PropertyValueNotInList")
	if after := s.Boot("437XR1138R2"); after != before {
		t.Fatalf("partially applied: %+v -> %+v", before, after)
	}
}

func TestETagIfMatch(t *testing.T) {
	s := startSim(t, Options{})
	c := newClient(t, s)
	c.basic = true
	get := c.do("GET", sysPath, nil, nil)
	tag := get.header.Get("ETag")
	if tag == "" {
		t.Fatal("no ETag")
	}
	if r := c.do("PATCH", sysPath, map[string]any{"AssetTag": "rack7"}, map[string]string{"If-Match": tag}); r.status != 204 {
		t.Fatalf("PATCH with current ETag: %d %s", r.status, r.raw)
	}
	// The representation changed, so the old ETag is stale now.
	r := c.do("PATCH", sysPath, map[string]any{"AssetTag": "rack8"}, map[string]string{"If-Match": tag})
	redfishError(t, r, 412, "PreconditionFailed")
	if got := c.do("GET", sysPath, nil, nil); got.body["AssetTag"] != "rack7" {
		t.Fatalf("AssetTag %v", got.body["AssetTag"])
	}
}

func TestMethodsAndPaths(t *testing.T) {
	s := startSim(t, Options{})
	c := newClient(t, s)
	c.basic = true
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"DELETE", sysPath, 405, "GET, HEAD, PATCH"},
		{"POST", sysPath, 405, "GET, HEAD, PATCH"},
		{"GET", sysPath + "/Actions/ComputerSystem.Reset", 405, "POST"},
		{"PATCH", "/redfish/v1/Chassis/1U", 405, "GET, HEAD"},
		{"PUT", "/redfish/v1/Managers/BMC", 405, "GET, HEAD"},
		{"GET", "/redfish/v1/Nope", 404, ""},
		{"GET", "/redfish/v1/Systems/other", 404, ""},
		{"GET", "/redfish/v1/Managers/BMC", 200, ""},
		{"GET", "/redfish/v1/Chassis/1U/Power", 200, ""},
		{"GET", sysPath + "/EthernetInterfaces/12446A3B0411", 200, ""},
		{"HEAD", sysPath, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var body any
			if tc.method == "POST" || tc.method == "PATCH" || tc.method == "PUT" {
				body = map[string]any{}
			}
			r := c.do(tc.method, tc.path, body, nil)
			switch tc.status {
			case 404:
				redfishError(t, r, 404, "ResourceMissingAtURI")
			case 405:
				redfishError(t, r, 405, "GeneralError")
				if got := r.header.Get("Allow"); got != tc.allow {
					t.Fatalf("Allow %q, want %q", got, tc.allow)
				}
			default:
				if r.status != tc.status {
					t.Fatalf("%d, want %d", r.status, tc.status)
				}
			}
		})
	}
}

func TestResetTypes(t *testing.T) {
	tests := []struct {
		reset       string
		from        string
		want        string
		wantEvent   bool
		wantRestart bool
	}{
		{"On", "Off", "On", true, false},
		{"On", "On", "On", false, false},
		{"ForceOn", "Off", "On", true, false},
		{"ForceOff", "On", "Off", true, false},
		{"ForceOff", "Off", "Off", false, false},
		{"GracefulShutdown", "On", "Off", true, false},
		{"GracefulRestart", "On", "On", true, true},
		{"ForceRestart", "On", "On", true, true},
		{"ForceRestart", "Off", "On", true, false},
		{"PushPowerButton", "On", "Off", true, false},
		{"PushPowerButton", "Off", "On", true, false},
		{"Nmi", "On", "On", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.reset+" from "+tc.from, func(t *testing.T) {
			var mu sync.Mutex
			var hooked []PowerEvent
			s := startSim(t, Options{Systems: []SystemOptions{{PowerState: tc.from}}, OnPower: func(e PowerEvent) {
				mu.Lock()
				hooked = append(hooked, e)
				mu.Unlock()
			}})
			c := newClient(t, s)
			c.login()
			r := c.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": tc.reset}, nil)
			if r.status != 204 {
				t.Fatalf("reset: %d %s", r.status, r.raw)
			}
			if got := s.PowerState("437XR1138R2"); got != tc.want {
				t.Fatalf("power %s, want %s", got, tc.want)
			}
			if got := c.do("GET", sysPath, nil, nil).body["PowerState"]; got != tc.want {
				t.Fatalf("PowerState in resource %v, want %s", got, tc.want)
			}
			ev := s.Events()
			mu.Lock()
			defer mu.Unlock()
			if (len(ev) == 1) != tc.wantEvent || len(hooked) != len(ev) {
				t.Fatalf("events %+v, hook saw %+v", ev, hooked)
			}
			if tc.wantEvent && (ev[0].Restart != tc.wantRestart || ev[0].ResetType != tc.reset) {
				t.Fatalf("event %+v", ev[0])
			}
		})
	}
}

func TestResetValidation(t *testing.T) {
	s := startSim(t, Options{})
	c := newClient(t, s)
	c.basic = true
	target := sysPath + "/Actions/ComputerSystem.Reset"
	redfishError(t, c.do("POST", target, map[string]string{"ResetType": "Explode"}, nil), 400, "PropertyValueNotInList")
	redfishError(t, c.do("POST", target, map[string]string{}, nil), 400, "ActionParameterMissing")
	redfishError(t, c.do("POST", target, map[string]string{"ResetType": "On", "When": "now"}, nil), 400, "ActionParameterUnknown")
	// PowerCycle is not in this mockup's AllowableValues.
	redfishError(t, c.do("POST", target, map[string]string{"ResetType": "PowerCycle"}, nil), 400, "PropertyValueNotInList")
	if st := s.Stats(); st.Resets != 0 {
		t.Fatalf("rejected resets counted: %+v", st)
	}
}

func TestBootOnceConsumedByPowerOn(t *testing.T) {
	s := startSim(t, Options{Systems: []SystemOptions{{PowerState: "Off"}}})
	c := newClient(t, s)
	c.login()
	if r := c.do("PATCH", sysPath, map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}}, nil); r.status != 204 {
		t.Fatalf("PATCH: %d %s", r.status, r.raw)
	}
	reset := func(rt string) {
		if r := c.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": rt}, nil); r.status != 204 {
			t.Fatalf("reset %s: %d %s", rt, r.status, r.raw)
		}
	}
	reset("On")
	reset("ForceRestart")
	ev := s.Events()
	if len(ev) != 2 {
		t.Fatalf("events %+v", ev)
	}
	if ev[0].BootTarget != "Pxe" || ev[0].BootMode != "UEFI" {
		t.Fatalf("first boot %+v, want PXE/UEFI", ev[0])
	}
	if ev[1].BootTarget != "" {
		t.Fatalf("second boot used the override again: %+v", ev[1])
	}
	if got := c.do("GET", sysPath, nil, nil).body["Boot"].(map[string]any)["BootSourceOverrideEnabled"]; got != "Disabled" {
		t.Fatalf("BootSourceOverrideEnabled %v after boot, want Disabled", got)
	}
}

func TestPowerDelay(t *testing.T) {
	s := startSim(t, Options{PowerDelay: time.Hour, Systems: []SystemOptions{{PowerState: "Off"}}})
	c := newClient(t, s)
	c.basic = true
	if r := c.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, nil); r.status != 204 {
		t.Fatalf("reset: %d", r.status)
	}
	if got := s.PowerState("437XR1138R2"); got != "Off" {
		t.Fatalf("power changed before the delay: %s", got)
	}

	s2 := startSim(t, Options{PowerDelay: 20 * time.Millisecond, Systems: []SystemOptions{{PowerState: "Off"}}})
	c2 := newClient(t, s2)
	c2.basic = true
	c2.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, nil)
	deadline := time.Now().Add(10 * time.Second)
	for s2.PowerState("437XR1138R2") != "On" {
		if time.Now().After(deadline) {
			t.Fatal("power never changed after the delay")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A Reset during a pending change restarts it (default) or is refused with
// 409; either way every request is counted by ResetType.
func TestResetWhileChanging(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		s := startSim(t, Options{PowerDelay: time.Hour, RefuseResetWhileChanging: refuse, Systems: []SystemOptions{{PowerState: "Off"}}})
		c := newClient(t, s)
		c.basic = true
		if r := c.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, nil); r.status != 204 {
			t.Fatalf("reset: %d", r.status)
		}
		r := c.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"}, nil)
		if refuse {
			redfishError(t, r, http.StatusConflict, "ResourceInUse")
		} else if r.status != 204 {
			t.Fatalf("second reset: %d", r.status)
		}
		st := s.Stats()
		wantAccepted := 2
		if refuse {
			wantAccepted = 1
		}
		if st.ResetRequests["On"] != 1 || st.ResetRequests["ForceOff"] != 1 || st.Resets != wantAccepted || s.PowerState("437XR1138R2") != "Off" {
			t.Fatalf("refuse=%t: requests %v, accepted %d, power %s", refuse, st.ResetRequests, st.Resets, s.PowerState("437XR1138R2"))
		}
	}
}

func TestErrorInjection(t *testing.T) {
	sequence := func(seed int64) []int {
		s := startSim(t, Options{ErrorRate: 0.5, Seed: seed, RetryAfter: 2 * time.Second})
		c := newClient(t, s)
		var out []int
		for range 40 {
			r := c.do("GET", "/redfish/v1/", nil, nil)
			if r.status == 503 {
				redfishError(t, r, 503, "ServiceTemporarilyUnavailable")
				if r.header.Get("Retry-After") != "2" {
					t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
				}
			}
			out = append(out, r.status)
		}
		if st := s.Stats(); st.InjectedErrors == 0 || st.InjectedErrors == 40 {
			t.Fatalf("error rate 0.5 injected %d of 40", st.InjectedErrors)
		}
		return out
	}
	a, b := sequence(7), sequence(7)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different outcomes: %v vs %v", a, b)
		}
	}

	s := startSim(t, Options{})
	s.FailNext(2)
	c := newClient(t, s)
	got := []int{c.do("GET", "/redfish/v1/", nil, nil).status, c.do("GET", "/redfish/v1/", nil, nil).status, c.do("GET", "/redfish/v1/", nil, nil).status}
	if got[0] != 503 || got[1] != 503 || got[2] != 200 {
		t.Fatalf("FailNext(2): %v", got)
	}
}

func TestSeveralSystems(t *testing.T) {
	s := startSim(t, Options{Systems: []SystemOptions{
		{PowerState: "Off"},
		{ID: "node2", PowerState: "Off", UUID: "00000000-0000-0000-0000-000000000002", MACs: []string{"52:54:00:00:00:02"}},
	}})
	c := newClient(t, s)
	c.basic = true
	coll := c.do("GET", "/redfish/v1/Systems", nil, nil)
	if coll.body["Members@odata.count"] != float64(2) {
		t.Fatalf("systems: %s", coll.raw)
	}
	n2 := c.do("GET", "/redfish/v1/Systems/node2", nil, nil)
	if n2.body["UUID"] != "00000000-0000-0000-0000-000000000002" || n2.body["Id"] != "node2" {
		t.Fatalf("node2: %v %v", n2.body["Id"], n2.body["UUID"])
	}
	target := n2.body["Actions"].(map[string]any)["#ComputerSystem.Reset"].(map[string]any)["target"].(string)
	if target != "/redfish/v1/Systems/node2/Actions/ComputerSystem.Reset" {
		t.Fatalf("clone's reset target %q", target)
	}
	nic := c.do("GET", "/redfish/v1/Systems/node2/EthernetInterfaces/12446A3B0411", nil, nil)
	if nic.body["MACAddress"] != "52:54:00:00:00:02" {
		t.Fatalf("MAC override: %v", nic.body["MACAddress"])
	}
	c.do("POST", target, map[string]string{"ResetType": "On"}, nil)
	if s.PowerState("node2") != "On" || s.PowerState("437XR1138R2") != "Off" {
		t.Fatalf("power: node2 %s, first %s", s.PowerState("node2"), s.PowerState("437XR1138R2"))
	}
}

func TestNoSessionService(t *testing.T) {
	s := startSim(t, Options{NoSessionService: true})
	c := newClient(t, s)
	root := c.do("GET", "/redfish/v1/", nil, nil)
	if _, ok := root.body["SessionService"]; ok {
		t.Fatal("root still links the SessionService")
	}
	r := c.do("POST", "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "password"}, nil)
	if r.status == 201 {
		t.Fatal("login worked without a SessionService")
	}
	c.basic = true
	if r := c.do("GET", sysPath, nil, nil); r.status != 200 {
		t.Fatalf("basic auth: %d", r.status)
	}
}

func TestTLS(t *testing.T) {
	s := startSim(t, Options{TLS: true})
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") || !strings.HasPrefix(s.BMCAddress(), "redfish+https://") {
		t.Fatalf("URL %s, address %s", s.URL(), s.BMCAddress())
	}
	c := newClient(t, s) // verifies against s.CertPool()
	if r := c.do("GET", "/redfish/v1/", nil, nil); r.status != 200 {
		t.Fatalf("GET over TLS: %d", r.status)
	}
	_, err := (&http.Client{Timeout: 5 * time.Second}).Get(s.URL() + "/redfish/v1/")
	if err == nil {
		t.Fatal("self-signed certificate accepted by the system pool")
	}
}
