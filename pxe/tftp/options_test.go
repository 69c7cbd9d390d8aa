package tftp

import (
	"testing"
	"time"
)

// The default must stay far above a rack powering on at once: firmware
// does not retry a refused transfer (see Options.MaxConcurrent).
func TestMaxConcurrentDefault(t *testing.T) {
	for _, tc := range []struct {
		set, want int
	}{
		{0, 1024},
		{-1, 1024},
		{5000, 5000},
		{8, 8},
	} {
		o := Options{MaxConcurrent: tc.set}
		o.setDefaults()
		if o.MaxConcurrent != tc.want {
			t.Errorf("MaxConcurrent %d: got %d, want %d", tc.set, o.MaxConcurrent, tc.want)
		}
	}
}

// The gaps between sends of one unacknowledged packet are the timeout plus
// our pause: they must double from the timeout up to the cap, and never be
// negative or beyond it.
func TestRetransmitSchedule(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		timeout, maxWait time.Duration
		gaps             []time.Duration
	}{
		{1000 * ms, 4000 * ms, []time.Duration{1000 * ms, 2000 * ms, 4000 * ms, 4000 * ms, 4000 * ms}},
		{250 * ms, 4000 * ms, []time.Duration{250 * ms, 500 * ms, 1000 * ms, 2000 * ms, 4000 * ms, 4000 * ms, 4000 * ms}},
		{300 * ms, 1000 * ms, []time.Duration{300 * ms, 600 * ms, 1000 * ms, 1000 * ms}},
		{2000 * ms, 2000 * ms, []time.Duration{2000 * ms, 2000 * ms, 2000 * ms}},
	} {
		for attempt, want := range tc.gaps {
			if got := tc.timeout + retransmitPause(tc.timeout, tc.maxWait, attempt); got != want {
				t.Errorf("timeout %v, cap %v: gap before retransmission %d = %v, want %v", tc.timeout, tc.maxWait, attempt+1, got, want)
			}
		}
	}
	// A huge attempt count must not overflow into a negative pause.
	if p := retransmitPause(250*ms, 4*time.Second, 200); p != 3750*ms {
		t.Errorf("pause at attempt 200 = %v, want 3.75s", p)
	}
}

func TestTimeoutDefaults(t *testing.T) {
	for _, tc := range []struct {
		timeout, maxWait, wantTimeout, wantMax time.Duration
	}{
		{0, 0, time.Second, 4 * time.Second},
		{time.Second, 0, time.Second, 4 * time.Second},
		{10 * time.Second, 0, 10 * time.Second, 10 * time.Second},
		{time.Second, 2 * time.Second, time.Second, 2 * time.Second},
	} {
		o := Options{Timeout: tc.timeout, MaxTimeout: tc.maxWait}
		o.setDefaults()
		if o.Timeout != tc.wantTimeout || o.MaxTimeout != tc.wantMax {
			t.Errorf("Timeout %v MaxTimeout %v: got %v/%v, want %v/%v", tc.timeout, tc.maxWait, o.Timeout, o.MaxTimeout, tc.wantTimeout, tc.wantMax)
		}
	}
}

// A transfer's own timeout follows RFC 6298 (srtt + 4 rttvar) within
// [MinTimeout, Timeout], and is Timeout before the first sample.
func TestRTTEstimate(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name    string
		samples []time.Duration
		want    time.Duration
	}{
		{"no sample: the server's Timeout", nil, 1000 * ms},
		{"one fast sample: the floor", []time.Duration{1 * ms}, 200 * ms},
		{"steady 150ms: 150 + 4*var", []time.Duration{150 * ms, 150 * ms, 150 * ms, 150 * ms}, 150*ms + 4*(75*ms*27/64)},
		{"slow link: capped at Timeout", []time.Duration{900 * ms}, 1000 * ms},
		{"one spike in fast samples stays under Timeout", []time.Duration{2 * ms, 2 * ms, 150 * ms, 2 * ms}, 0},
	} {
		var r rttEstimate
		for _, d := range tc.samples {
			r.sample(d)
		}
		got := r.timeout(200*ms, 1000*ms)
		if tc.want == 0 {
			if got < 200*ms || got >= 1000*ms {
				t.Errorf("%s: timeout %v, want within [200ms, 1s)", tc.name, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s: timeout %v, want %v", tc.name, got, tc.want)
		}
	}
	o := Options{Timeout: 100 * ms}
	o.setDefaults()
	if o.MinTimeout != 100*ms {
		t.Errorf("MinTimeout with a 100ms Timeout: %v, want 100ms (never above Timeout)", o.MinTimeout)
	}
}
