package redfishsim

import (
	"math"
	"math/rand"
	"time"
)

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// logNormal draws from the log-normal distribution whose median and 99th
// percentile are the given durations: exp(N(ln median, sigma)) with
// sigma = ln(p99/median) / z99.
func logNormal(rnd *rand.Rand, median, p99 time.Duration) time.Duration {
	if median <= 0 {
		return 0
	}
	sigma := 0.0
	if p99 > median {
		sigma = math.Log(float64(p99)/float64(median)) / z99
	}
	return time.Duration(float64(median) * math.Exp(sigma*rnd.NormFloat64()))
}
