package backoff

import (
	"testing"
	"time"
)

func TestStep(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name      string
		base, cap time.Duration
		n         int
		want      time.Duration
	}{
		{"zeroth attempt is the first", s, time.Minute, 0, s},
		{"negative attempt is the first", s, time.Minute, -3, s},
		{"first attempt is base", s, time.Minute, 1, s},
		{"second doubles once", s, time.Minute, 2, 2 * s},
		{"third doubles twice", s, time.Minute, 3, 4 * s},
		{"sixth", s, time.Minute, 6, 32 * s},
		{"seventh reaches the cap", s, time.Minute, 7, time.Minute},
		{"exactly at the cap", s, 8 * s, 4, 8 * s},
		{"one below the cap", s, 8 * s, 3, 4 * s},
		{"far past the cap", s, time.Minute, 10000, time.Minute},
		{"base above cap is the cap", time.Hour, time.Minute, 1, time.Minute},
		{"base equal to cap", time.Minute, time.Minute, 5, time.Minute},
		{"redfish: 100ms base, 3s cap, attempt 6", 100 * time.Millisecond, 3 * time.Second, 6, 3 * time.Second},
		{"redfish: attempt 5", 100 * time.Millisecond, 3 * time.Second, 5, 1600 * time.Millisecond},
		{"ticket: 5s base, 2h cap, attempt 11", 5 * s, 2 * time.Hour, 11, 5120 * s},
		{"ticket: attempt 12 capped", 5 * s, 2 * time.Hour, 12, 2 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Backoff{Base: tc.base, Cap: tc.cap}).Step(tc.n); got != tc.want {
				t.Errorf("Step(%d) with base %s cap %s = %s, want %s", tc.n, tc.base, tc.cap, got, tc.want)
			}
		})
	}
}

func TestDelayBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		low, high float64
		n         int
		lo, hi    time.Duration
	}{
		{"no jitter is exact", 0, 0, 3, 4 * time.Second, 4 * time.Second},
		{"upper half", 0.5, 1, 3, 2 * time.Second, 4 * time.Second},
		{"plus or minus 20%", 0.8, 1.2, 2, 1600 * time.Millisecond, 2400 * time.Millisecond},
		{"up to 10% more", 1, 1.1, 1, time.Second, 1100 * time.Millisecond},
		{"capped then spread", 0.5, 1, 50, 30 * time.Second, time.Minute},
		{"low equals high", 0.9, 0.9, 1, 900 * time.Millisecond, 900 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Backoff{Base: time.Second, Cap: time.Minute, Low: tc.low, High: tc.high}
			var seenLow, seenHigh bool
			mid := tc.lo + (tc.hi-tc.lo)/2
			for range 2000 {
				d := b.Delay(tc.n)
				// One nanosecond of slack for float rounding.
				if d < tc.lo-1 || d > tc.hi+1 {
					t.Fatalf("Delay(%d) = %s, want within [%s, %s]", tc.n, d, tc.lo, tc.hi)
				}
				seenLow = seenLow || d <= mid
				seenHigh = seenHigh || d >= mid
			}
			// The draws cover both halves of the range, so a formula that
			// collapsed to one end would fail.
			if !seenLow || !seenHigh {
				t.Errorf("2000 draws in [%s, %s] all on one side of %s (below: %v, above: %v)", tc.lo, tc.hi, mid, seenLow, seenHigh)
			}
		})
	}
}
