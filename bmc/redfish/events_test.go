package redfish_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/test/redfishsim"
)

func subscribe(t *testing.T, d bmc.Driver) bmc.EventStream {
	t.Helper()
	es, err := bmc.EventSourceOf(d, "sim")
	if err != nil {
		t.Fatal(err)
	}
	s, err := es.SubscribeEvents(context.Background())
	if err != nil {
		t.Fatalf("SubscribeEvents: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// next reads the next event, failing the test after a bound.
func next(t *testing.T, s bmc.EventStream) (bmc.Event, error) {
	t.Helper()
	type got struct {
		ev  bmc.Event
		err error
	}
	ch := make(chan got, 1)
	go func() { ev, err := s.Next(); ch <- got{ev, err} }()
	select {
	case g := <-ch:
		return g.ev, g.err
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	return bmc.Event{}, nil
}

// A power change at the BMC arrives on the stream as a ResourceEvent whose
// origin is the system, over the driver's session; the stream ends when
// the BMC ends the session, and the driver subscribes again after a login.
func TestSubscribeEvents(t *testing.T) {
	sim := startSim(t, redfishsim.Options{EventStream: true, PowerDelay: 20 * time.Millisecond})
	d := open(t, options(sim))
	s := subscribe(t, d)
	if n := sim.EventStreams(); n != 1 {
		t.Fatalf("the BMC has %d event streams open, want 1", n)
	}
	must(t, sim.PushPowerButton(sysID))
	ev, err := next(t, s)
	must(t, err)
	want := bmc.Event{MessageID: "ResourceEvent.1.3.ResourcePoweredOn", Origin: sim.SystemPath(sysID)}
	if ev != want {
		t.Fatalf("event %+v, want %+v", ev, want)
	}
	if !ev.AboutPower() || !ev.ConcernsSystem(sim.SystemPath(sysID)) || ev.ConcernsSystem(sim.SystemPath(sysID)+"0") {
		t.Fatalf("event %+v: AboutPower %t, ConcernsSystem its own %t, another's %t", ev, ev.AboutPower(),
			ev.ConcernsSystem(sim.SystemPath(sysID)), ev.ConcernsSystem(sim.SystemPath(sysID)+"0"))
	}
	// Through the driver too: a reset it sends is pushed back.
	must(t, d.SetPower(context.Background(), bmc.PowerOff))
	ev, err = next(t, s)
	must(t, err)
	if ev.MessageID != "ResourceEvent.1.3.ResourcePoweredOff" {
		t.Fatalf("after SetPower(Off): %+v", ev)
	}

	sim.ExpireSessions()
	if _, err := next(t, s); err == nil {
		t.Fatal("the stream outlived its session")
	}
	s2 := subscribe(t, d) // logs in again
	must(t, sim.PushPowerButton(sysID))
	if ev, err := next(t, s2); err != nil || ev.MessageID != "ResourceEvent.1.3.ResourcePoweredOn" {
		t.Fatalf("after a new subscription: %+v, %v", ev, err)
	}
}

// A BMC without a stream, with its EventService off or missing, is
// ErrUnsupported with the reason; wrong credentials are ErrAuthFailed and
// the password appears in no error.
func TestSubscribeEventsUnsupported(t *testing.T) {
	sim := startSim(t, redfishsim.Options{})
	_, err := mustEvents(t, open(t, options(sim))).SubscribeEvents(context.Background())
	if !errors.Is(err, bmc.ErrUnsupported) || !strings.Contains(err.Error(), "ServerSentEventUri") {
		t.Fatalf("BMC without a stream: %v, want ErrUnsupported naming ServerSentEventUri", err)
	}

	bad := startSim(t, redfishsim.Options{EventStream: true})
	o := options(bad)
	o.Credentials.Password = secret + "-wrong"
	_, err = mustEvents(t, open(t, o)).SubscribeEvents(context.Background())
	if !errors.Is(err, bmc.ErrAuthFailed) || strings.Contains(err.Error(), secret) {
		t.Fatalf("wrong password: %v, want ErrAuthFailed without the password", err)
	}

	for name, es := range map[string]string{
		"disabled": `{"ServiceEnabled": false, "ServerSentEventUri": "/sse"}`,
		"no uri":   `{"ServiceEnabled": true}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := fakeService(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/redfish/v1/EventService" {
					_, _ = io.WriteString(w, es)
					return
				}
				http.NotFound(w, r)
			})
			_, err := mustEvents(t, open(t, srv)).SubscribeEvents(context.Background())
			if !errors.Is(err, bmc.ErrUnsupported) {
				t.Fatalf("%s: %v, want ErrUnsupported", name, err)
			}
		})
	}
}

// The stream's framing, as BMCs send it: CRLF or LF lines, comments
// (keep-alives), id and event fields, data split over lines, events with
// several records, and data that is no Event; an event larger than the
// bound ends the stream instead of growing without end.
func TestEventStreamFraming(t *testing.T) {
	rec := func(id, origin string) string {
		return fmt.Sprintf(`{"MessageId":%q,"OriginOfCondition":{"@odata.id":%q}}`, id, origin)
	}
	body := ": keep-alive\r\n\r\n" +
		"id: 1\r\nevent: Event\r\ndata: {\"Events\":[" + rec("ResourceEvent.1.3.ResourcePoweredOff", "/redfish/v1/Systems/a") + "]}\r\n\r\n" +
		":\n\n" +
		"id: 2\ndata: {\"Events\":[" + rec("ResourceEvent.1.0.ResourceChanged", "/redfish/v1/Systems/b") + ",\n" +
		"data: " + rec("OpenBMC.0.4.SensorThresholdWarningHigh", "/redfish/v1/Chassis/1/Sensors/t") + "]}\n\n" +
		"data: {\"@odata.type\":\"#MetricReport.v1_4_0.MetricReport\"}\n\n" +
		"data:{\"Events\":[" + rec("iLOEvents.2.1.ServerPoweredOn", "/redfish/v1/Systems/c/") + "]}\n\n" +
		"data: " + strings.Repeat("x", 1<<20+10) + "\n\n"
	srv := fakeService(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redfish/v1/EventService":
			_, _ = io.WriteString(w, `{"ServerSentEventUri": "/redfish/v1/EventService/SSE"}`)
		case "/redfish/v1/EventService/SSE":
			if r.Header.Get("Accept") != "text/event-stream" {
				http.Error(w, "want Accept: text/event-stream", http.StatusNotAcceptable)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			_, _ = io.WriteString(w, body)
		default:
			http.NotFound(w, r)
		}
	})
	s, err := mustEvents(t, open(t, srv)).SubscribeEvents(context.Background())
	must(t, err)
	defer s.Close()
	want := []struct {
		ev    bmc.Event
		power bool
	}{
		{bmc.Event{MessageID: "ResourceEvent.1.3.ResourcePoweredOff", Origin: "/redfish/v1/Systems/a"}, true},
		{bmc.Event{MessageID: "ResourceEvent.1.0.ResourceChanged", Origin: "/redfish/v1/Systems/b"}, true},
		{bmc.Event{MessageID: "OpenBMC.0.4.SensorThresholdWarningHigh", Origin: "/redfish/v1/Chassis/1/Sensors/t"}, false},
		{bmc.Event{MessageID: "iLOEvents.2.1.ServerPoweredOn", Origin: "/redfish/v1/Systems/c/"}, true},
	}
	for i, w := range want {
		ev, err := next(t, s)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev != w.ev || ev.AboutPower() != w.power {
			t.Fatalf("event %d: %+v (AboutPower %t), want %+v (%t)", i, ev, ev.AboutPower(), w.ev, w.power)
		}
	}
	if !want[3].ev.ConcernsSystem("/redfish/v1/Systems/c") {
		t.Fatal("an origin with a trailing slash does not concern its system")
	}
	if _, err := next(t, s); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("an event over 1 MiB: %v, want an error other than EOF", err)
	}
}

// fakeService is a minimal Redfish service (basic auth, no sessions) whose
// other paths h answers.
func fakeService(t *testing.T, h http.HandlerFunc) bmc.Options {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redfish/v1" || r.URL.Path == "/redfish/v1/" {
			_, _ = io.WriteString(w, `{"@odata.id":"/redfish/v1","RedfishVersion":"1.15.0","Systems":{"@odata.id":"/redfish/v1/Systems"}}`)
			return
		}
		if r.URL.Path == "/redfish/v1/Systems" {
			_, _ = io.WriteString(w, `{"Members":[{"@odata.id":"/redfish/v1/Systems/1"}]}`)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return bmc.Options{Address: "redfish+" + srv.URL, Credentials: bmc.Credentials{Username: "u", Password: secret},
		Timeout: 10 * time.Second, Guard: lab, AllowPlainHTTP: true}
}

func mustEvents(t *testing.T, d bmc.Driver) bmc.EventSource {
	t.Helper()
	es, err := bmc.EventSourceOf(d, "test")
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
