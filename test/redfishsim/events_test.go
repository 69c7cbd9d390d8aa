package redfishsim

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// openStream GETs the event stream with c's session and returns the body's
// reader once the headers are in.
func openStream(t *testing.T, c *client) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, err := http.NewRequest("GET", c.s.URL()+ssePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", c.token)
	hc := &http.Client{} // no overall timeout: the body is a stream
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp, bufio.NewReader(resp.Body)
}

// nextData returns the next "data:" line's JSON, within 10 seconds.
func nextData(t *testing.T, r *bufio.Reader) map[string]any {
	t.Helper()
	type line struct {
		s   string
		err error
	}
	lines := make(chan line, 1)
	for {
		go func() { s, err := r.ReadString('\n'); lines <- line{s, err} }()
		var l line
		select {
		case l = <-lines:
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
		}
		if l.err != nil {
			t.Fatalf("stream ended: %v", l.err)
		}
		if d, ok := strings.CutPrefix(l.s, "data: "); ok {
			var doc map[string]any
			if err := json.Unmarshal([]byte(d), &doc); err != nil {
				t.Fatalf("data %q: %v", d, err)
			}
			return doc
		}
	}
}

// The EventService advertises its stream only with EventStream; the stream
// needs authentication, refuses a $filter, sends each power transition
// (after PowerDelay) as a ResourceEvent with the system as its origin, and
// ends with the session.
func TestEventStream(t *testing.T) {
	off := startSim(t, Options{})
	c := newClient(t, off)
	c.basic = true
	if r := c.do("GET", "/redfish/v1/EventService", nil, nil); r.body["ServerSentEventUri"] != nil {
		t.Fatalf("without EventStream the EventService advertises %v", r.body["ServerSentEventUri"])
	}
	redfishError(t, c.do("GET", ssePath, nil, nil), http.StatusNotFound, "ResourceMissingAtURI")

	s := startSim(t, Options{EventStream: true, PowerDelay: 30 * time.Millisecond, MaxEventStreams: 2, Systems: []SystemOptions{{PowerState: "Off"}}})
	anon := newClient(t, s)
	redfishError(t, anon.do("GET", ssePath, nil, nil), http.StatusUnauthorized, "NoValidSession")
	c = newClient(t, s)
	c.login()
	if r := c.do("GET", "/redfish/v1/EventService", nil, nil); r.body["ServerSentEventUri"] != ssePath {
		t.Fatalf("ServerSentEventUri = %v, want %s", r.body["ServerSentEventUri"], ssePath)
	}
	redfishError(t, c.do("GET", ssePath+"?$filter=MessageId%20eq%20'x'", nil, nil), http.StatusBadRequest, "QueryNotSupported")
	redfishError(t, c.do("POST", ssePath, map[string]any{}, nil), http.StatusMethodNotAllowed, "GeneralError")

	_, r := openStream(t, c)
	if r := c.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, nil); r.status != http.StatusNoContent {
		t.Fatalf("reset: %d %s", r.status, r.raw)
	}
	doc := nextData(t, r)
	evs, _ := doc["Events"].([]any)
	if len(evs) != 1 {
		t.Fatalf("event %v: want one record", doc)
	}
	rec := evs[0].(map[string]any)
	origin, _ := rec["OriginOfCondition"].(map[string]any)
	if rec["MessageId"] != "ResourceEvent.1.3.ResourcePoweredOn" || origin["@odata.id"] != sysPath {
		t.Fatalf("record %v", rec)
	}
	if s.PowerState("437XR1138R2") != "On" {
		t.Fatal("the event came before the power changed")
	}

	// A second stream fits, a third is over MaxEventStreams.
	_, r2 := openStream(t, c)
	redfishError(t, c.do("GET", ssePath, nil, nil), http.StatusServiceUnavailable, "ServiceTemporarilyUnavailable")
	if err := s.PushPowerButton("437XR1138R2"); err != nil {
		t.Fatal(err)
	}
	for _, rd := range []*bufio.Reader{r, r2} {
		if id := nextData(t, rd)["Events"].([]any)[0].(map[string]any)["MessageId"]; id != "ResourceEvent.1.3.ResourcePoweredOff" {
			t.Fatalf("after the button: %v", id)
		}
	}
	if st := s.Stats(); st.EventStreamsOpened != 2 || st.EventsSent != 3 {
		t.Fatalf("stats %+v: want 2 streams opened, 3 events sent", st)
	}

	// Logging out ends the session's streams.
	sessions := c.do("GET", "/redfish/v1/SessionService/Sessions", nil, nil)
	for _, m := range sessions.body["Members"].([]any) {
		c.do("DELETE", m.(map[string]any)["@odata.id"].(string), nil, nil)
	}
	for i, rd := range []*bufio.Reader{r, r2} {
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			for {
				if _, err := rd.ReadString('\n'); err != nil {
					return
				}
			}
		}()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("stream %d still open 10s after logout", i+1)
		}
	}
	if n := s.EventStreams(); n != 0 {
		t.Fatalf("%d streams open after logout", n)
	}
}
