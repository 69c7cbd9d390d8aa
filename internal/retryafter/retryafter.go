// Package retryafter reads the HTTP Retry-After header (RFC 9110 §10.2.3):
// delay-seconds or an HTTP-date. Anvil's HTTP clients (agent, Redfish,
// ticket webhooks) all honour it the same way.
package retryafter

import (
	"net/http"
	"strings"
	"time"
)

// Parse is how long v asks to wait from now, at most limit. ok is false
// when v is empty or neither delay-seconds nor an HTTP-date (a negative
// number included): the caller then falls back to its own backoff. A date
// in the past asks for no wait (0, true).
func Parse(v string, now time.Time, limit time.Duration) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		// Count digit by digit so that a huge value saturates at limit
		// instead of overflowing.
		maxSecs := int64(limit / time.Second)
		var n int64
		for _, c := range v {
			n = n*10 + int64(c-'0')
			if n > maxSecs {
				return limit, true
			}
		}
		return min(time.Duration(n)*time.Second, limit), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), limit), true
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
