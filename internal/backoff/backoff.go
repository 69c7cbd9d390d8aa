// Package backoff is Anvil's one retry schedule: a delay that doubles per
// attempt up to a cap (wait.Backoff's exponential steps), spread by one
// jitter rule (wait.Jitter) so that many callers do not retry in step.
// Each caller picks only its bounds.
package backoff

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Backoff is Base doubled per attempt, at most Cap (which must be
// positive). Delay(n) is drawn uniformly from [Low·d, High·d] around that
// step d (0 < Low <= High); Low = High = 0 means no jitter (d exactly).
type Backoff struct {
	Base, Cap time.Duration
	Low, High float64
}

// Step is the unjittered delay after the n-th attempt: Base·2^(n-1), at
// most Cap. n < 1 counts as 1.
func (b Backoff) Step(n int) time.Duration {
	if b.Cap > 0 && b.Base >= b.Cap {
		return b.Cap
	}
	// wait.Backoff stops doubling once it reaches Cap (Steps drops to 0),
	// so the loop runs at most log2(Cap/Base) times.
	w := wait.Backoff{Duration: b.Base, Factor: 2, Steps: n - 1, Cap: b.Cap}
	for w.Steps > 0 {
		w.Step()
	}
	return w.Duration
}

// Delay is Step(n) spread over [Low·d, High·d].
func (b Backoff) Delay(n int) time.Duration {
	return Spread(b.Step(n), b.Low, b.High)
}

// Spread draws uniformly from [low·d, high·d] (0 < low <= high); low =
// high = 0 returns d.
func Spread(d time.Duration, low, high float64) time.Duration {
	if low == 0 && high == 0 {
		return d
	}
	lo := time.Duration(low * float64(d))
	if high <= low || lo <= 0 {
		return lo
	}
	// wait.Jitter adds up to factor·lo on top of lo.
	return wait.Jitter(lo, (high-low)/low)
}
