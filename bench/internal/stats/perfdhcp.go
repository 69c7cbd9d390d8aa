package stats

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// Exchange is one half of a DORA as perfdhcp reports it: DISCOVER-OFFER or
// REQUEST-ACK.
type Exchange struct {
	Sent, Received, Drops int
	// Delays are the round trips of the successful exchanges in
	// milliseconds (present only with perfdhcp -x t).
	Delays []float64
}

// Perfdhcp is the parsed final report of one perfdhcp run.
type Perfdhcp struct {
	// Rate is perfdhcp's own "Rate:" line (4-way exchanges it initiated per
	// second), ExpectedRate what it was asked for.
	Rate, ExpectedRate float64
	DO, RA             Exchange
}

// ParsePerfdhcp reads perfdhcp's final report. It needs the rate line and
// both statistics sections; the timestamp sections are optional.
func ParsePerfdhcp(out string) (Perfdhcp, error) {
	var r Perfdhcp
	var cur *Exchange
	inTimes := false
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "Rate:"):
			// "Rate: 199.301 4-way exchanges/second, expected rate: 200"
			f := strings.Fields(line)
			if len(f) >= 2 {
				r.Rate, _ = strconv.ParseFloat(f[1], 64)
			}
			if i := strings.Index(line, "expected rate:"); i >= 0 {
				r.ExpectedRate, _ = strconv.ParseFloat(strings.TrimSpace(line[i+len("expected rate:"):]), 64)
			}
			seen["rate"] = true
		case strings.HasPrefix(line, "***Statistics for: DISCOVER-OFFER"):
			cur, inTimes = &r.DO, false
			seen["do"] = true
		case strings.HasPrefix(line, "***Statistics for: REQUEST-ACK"):
			cur, inTimes = &r.RA, false
			seen["ra"] = true
		case strings.HasPrefix(line, "***Timestamps for packets: DISCOVER-OFFER"):
			cur, inTimes = &r.DO, true
		case strings.HasPrefix(line, "***Timestamps for packets: REQUEST-ACK"):
			cur, inTimes = &r.RA, true
		case strings.HasPrefix(line, "***"):
			cur, inTimes = nil, false
		case cur == nil:
		case inTimes && strings.HasPrefix(line, "sent / received:"):
			// "sent / received: 000000.000779 / 000000.002437"
			f := strings.Fields(strings.TrimPrefix(line, "sent / received:"))
			if len(f) != 3 {
				return r, fmt.Errorf("perfdhcp: bad timestamp line %q", line)
			}
			s, err1 := strconv.ParseFloat(f[0], 64)
			e, err2 := strconv.ParseFloat(f[2], 64)
			if err1 != nil || err2 != nil {
				return r, fmt.Errorf("perfdhcp: bad timestamp line %q", line)
			}
			cur.Delays = append(cur.Delays, (e-s)*1000)
		case !inTimes:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				continue
			}
			switch k {
			case "sent packets":
				cur.Sent = n
			case "received packets":
				cur.Received = n
			case "drops":
				cur.Drops = n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return r, err
	}
	for _, k := range []string{"rate", "do", "ra"} {
		if !seen[k] {
			return r, fmt.Errorf("perfdhcp: report incomplete (no %s section); output starts %q", k, head(out, 300))
		}
	}
	return r, nil
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
