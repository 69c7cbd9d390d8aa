package stats

import (
	"math"
	"os"
	"strings"
	"testing"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		p    float64
		want float64
	}{{50, 5}, {99, 10}, {100, 10}, {10, 1}, {0, 1}, {11, 2}} {
		if got := Percentile(xs, tc.p); got != tc.want {
			t.Errorf("Percentile(p%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if xs[0] != 5 {
		t.Error("Percentile sorted its input in place")
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("Percentile of no samples is not NaN")
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{math.NaN(), 7}, 7},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
}

func TestRatioAndFinite(t *testing.T) {
	if Ratio(3, 2) != 1.5 || !math.IsNaN(Ratio(1, 0)) || !math.IsNaN(Ratio(math.NaN(), 1)) {
		t.Error("Ratio wrong")
	}
	if Finite(math.NaN()) != 0 || Finite(math.Inf(1)) != 0 || Finite(2) != 2 {
		t.Error("Finite wrong")
	}
}

func TestParsePerfdhcp(t *testing.T) {
	b, err := os.ReadFile("testdata/perfdhcp-x-t.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParsePerfdhcp(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if r.Rate != 199.301 || r.ExpectedRate != 200 {
		t.Errorf("rate %v expected %v", r.Rate, r.ExpectedRate)
	}
	if r.DO.Sent != 599 || r.DO.Received != 599 || r.DO.Drops != 0 {
		t.Errorf("DO = %+v", r.DO)
	}
	if r.RA.Sent != 599 || r.RA.Received != 598 || r.RA.Drops != 1 {
		t.Errorf("RA = %+v", r.RA)
	}
	if len(r.DO.Delays) != 4 || len(r.RA.Delays) != 4 {
		t.Fatalf("delays: %d DO, %d RA, want 4 each", len(r.DO.Delays), len(r.RA.Delays))
	}
	// First DO line: sent 000000.000779, received 000000.002437.
	if d := r.DO.Delays[0]; math.Abs(d-1.658) > 1e-6 {
		t.Errorf("first DO delay %v ms, want 1.658", d)
	}
}

func TestParsePerfdhcpIncomplete(t *testing.T) {
	for _, in := range []string{
		"",
		"Rate: 10 4-way exchanges/second, expected rate: 10\n",
		"***Statistics for: DISCOVER-OFFER***\nsent packets: 1\n",
	} {
		if _, err := ParsePerfdhcp(in); err == nil {
			t.Errorf("ParsePerfdhcp(%q): no error for an incomplete report", in)
		}
	}
	bad := "Rate: 1 4-way exchanges/second\n***Statistics for: DISCOVER-OFFER***\n***Statistics for: REQUEST-ACK***\n" +
		"***Timestamps for packets: DISCOVER-OFFER***\nsent / received: x / y\n"
	if _, err := ParsePerfdhcp(bad); err == nil || !strings.Contains(err.Error(), "timestamp") {
		t.Errorf("bad timestamp line: err = %v", err)
	}
}
