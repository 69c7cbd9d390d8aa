package retryafter

import (
	"net/http"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	limit := time.Hour
	for _, tc := range []struct {
		name   string
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"absent", "", 0, false},
		{"blank", "   ", 0, false},
		{"zero seconds", "0", 0, true},
		{"one second", "1", time.Second, true},
		{"seconds", "120", 2 * time.Minute, true},
		{"seconds with spaces", " 30 ", 30 * time.Second, true},
		{"one below the limit", "3599", 3599 * time.Second, true},
		{"exactly the limit", "3600", time.Hour, true},
		{"one past the limit", "3601", time.Hour, true},
		{"huge", "999999999", time.Hour, true},
		{"beyond int64", "99999999999999999999999999", time.Hour, true},
		{"negative", "-5", 0, false},
		{"plus sign", "+5", 0, false},
		{"fraction", "1.5", 0, false},
		{"junk", "soon", 0, false},
		{"digits then junk", "10s", 0, false},
		{"HTTP-date ahead", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"HTTP-date now", now.Format(http.TimeFormat), 0, true},
		{"HTTP-date past", now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"HTTP-date past the limit", now.Add(2 * time.Hour).Format(http.TimeFormat), time.Hour, true},
		{"RFC 850 date", now.Add(time.Minute).Format(time.RFC850), time.Minute, true},
		{"ANSI C date", now.Add(time.Minute).Format(time.ANSIC), time.Minute, true},
		{"ISO date is not HTTP", now.Add(time.Minute).Format(time.RFC3339), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Parse(tc.in, now, limit)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Parse(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
