package redfishsim

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"anvil.dev/anvil/test/need"
)

// TestLogNormalLatency checks the drawn latencies have the configured
// median and 99th percentile, and that a seed repeats them. It calls the
// decision function directly: no clocks involved.
func TestLogNormalLatency(t *testing.T) {
	draw := func(seed int64) []time.Duration {
		s := startSim(t, Options{LatencyMedian: 300 * time.Millisecond, LatencyP99: 3 * time.Second, Seed: seed})
		out := make([]time.Duration, 20000)
		for i := range out {
			d, f := s.decide()
			if f != faultNone {
				t.Fatal("fault injected with ErrorRate and TimeoutRate 0")
			}
			out[i] = d
		}
		return out
	}
	a, b := draw(11), draw(11)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different latencies")
	}
	slices.Sort(a)
	q := func(p float64) time.Duration { return a[int(p*float64(len(a)-1))] }
	tests := []struct {
		name     string
		got      time.Duration
		min, max time.Duration
	}{
		{"median", q(0.5), 270 * time.Millisecond, 330 * time.Millisecond},
		{"p99", q(0.99), 2400 * time.Millisecond, 3700 * time.Millisecond},
		{"p10 below the median", q(0.1), 50 * time.Millisecond, 150 * time.Millisecond},
	}
	for _, tc := range tests {
		if tc.got < tc.min || tc.got > tc.max {
			t.Errorf("%s %s outside [%s, %s]", tc.name, tc.got, tc.min, tc.max)
		}
	}
}

func TestLatencyOptionsValidated(t *testing.T) {
	dir := need.RedfishMockup(t)
	for _, o := range []Options{
		{MockupDir: dir, LatencyMedian: time.Second},
		{MockupDir: dir, LatencyP99: time.Second},
		{MockupDir: dir, LatencyMedian: time.Second, LatencyP99: time.Millisecond},
	} {
		if s, err := New(o); err == nil {
			s.Close()
			t.Errorf("New(median %s, p99 %s) accepted", o.LatencyMedian, o.LatencyP99)
		}
	}
}

// TestTimeoutInjection: a timed-out request gets no HTTP answer at all,
// the connection is dropped, and the rate is seeded like errors.
func TestTimeoutInjection(t *testing.T) {
	s := startSim(t, Options{TimeoutRate: 1, TimeoutHold: 20 * time.Millisecond})
	resp, err := http.Get(s.URL() + "/redfish/v1/")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a timed-out request was answered: %s", resp.Status)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Logf("client error (connection dropped): %v", err)
	}
	if st := s.Stats(); st.InjectedTimeouts != 1 || st.InjectedErrors != 0 {
		t.Fatalf("stats %+v", st)
	}

	mixed := func(seed int64) []fault {
		s := startSim(t, Options{ErrorRate: 0.2, TimeoutRate: 0.2, Seed: seed})
		out := make([]fault, 200)
		for i := range out {
			_, out[i] = s.decide()
		}
		return out
	}
	a, b := mixed(5), mixed(5)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different faults")
	}
	if !slices.Contains(a, faultError) || !slices.Contains(a, faultTimeout) || !slices.Contains(a, faultNone) {
		t.Fatalf("200 draws at 20%% errors and 20%% timeouts lack a kind: %v", a)
	}
}

// TestThousandsOfSystems: one simulator serves a system per Host of a
// scale test, each with its own path, MAC, power state and boot override.
func TestThousandsOfSystems(t *testing.T) {
	const n = 5000
	specs := make([]SystemOptions, n)
	for i := range specs {
		specs[i] = SystemOptions{ID: fmt.Sprintf("host-%d", i), PowerState: "Off",
			MACs: []string{fmt.Sprintf("52:54:01:%02x:%02x:%02x", i>>16, (i>>8)&0xff, i&0xff)}}
	}
	s := startSim(t, Options{Systems: specs, MaxSessions: -1})
	if got := len(s.SystemIDs()); got != n {
		t.Fatalf("%d systems", got)
	}
	c := newClient(t, s)
	c.login()
	coll := c.do("GET", "/redfish/v1/Systems", nil, nil)
	if coll.body["Members@odata.count"] != float64(n) {
		t.Fatalf("collection count %v", coll.body["Members@odata.count"])
	}
	for _, i := range []int{0, 1234, n - 1} {
		id := fmt.Sprintf("host-%d", i)
		doc := c.do("GET", s.SystemPath(id), nil, nil)
		if doc.status != 200 || doc.body["Id"] != id || doc.body["PowerState"] != "Off" {
			t.Fatalf("%s: %d %v %v", id, doc.status, doc.body["Id"], doc.body["PowerState"])
		}
		nic := c.do("GET", s.SystemPath(id)+"/EthernetInterfaces/12446A3B0411", nil, nil)
		if want := specs[i].MACs[0]; nic.body["MACAddress"] != want {
			t.Fatalf("%s MAC %v, want %s", id, nic.body["MACAddress"], want)
		}
		if p := c.do("PATCH", s.SystemPath(id), map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}}, nil); p.status != 204 {
			t.Fatalf("%s PATCH: %d %s", id, p.status, p.raw)
		}
		if r := c.do("POST", s.SystemPath(id)+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, nil); r.status != 204 {
			t.Fatalf("%s reset: %d %s", id, r.status, r.raw)
		}
		if s.PowerState(id) != "On" {
			t.Fatalf("%s did not power on", id)
		}
	}
	if got := s.PowerState("host-1"); got != "Off" {
		t.Fatalf("host-1 changed with the others: %s", got)
	}
	ev := s.Events()
	if len(ev) != 3 || ev[1].SystemID != "host-1234" || ev[1].BootTarget != "Pxe" {
		t.Fatalf("events %+v", ev)
	}
	if r := c.do("GET", "/redfish/v1/Systems/host-5000", nil, nil); r.status != 404 {
		t.Fatalf("unknown system: %d", r.status)
	}
}
