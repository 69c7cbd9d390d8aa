package scale

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// metrics is one scrape of a /metrics endpoint.
type metrics []sample

// scrape reads a Prometheus text endpoint (counters, gauges and classic
// histogram buckets are all this package needs).
func scrape(ctx context.Context, url string) (metrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	var out metrics
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if s, ok := parseLine(sc.Text()); ok {
			out = append(out, s)
		}
	}
	return out, sc.Err()
}

func parseLine(line string) (sample, bool) {
	if line == "" || line[0] == '#' {
		return sample{}, false
	}
	var s sample
	rest := line
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return sample{}, false
		}
		s.name = line[:i]
		s.labels = parseLabels(line[i+1 : j])
		rest = strings.TrimSpace(line[j+1:])
	} else {
		f := strings.Fields(line)
		if len(f) < 2 {
			return sample{}, false
		}
		s.name, rest = f[0], f[1]
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return sample{}, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return sample{}, false
	}
	s.value = v
	return s, true
}

func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		k := strings.TrimSpace(s[:eq])
		var b strings.Builder
		i := eq + 2
		for ; i < len(s); i++ {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[i])
				}
				continue
			}
			if c == '"' {
				break
			}
			b.WriteByte(c)
		}
		out[k] = b.String()
		s = strings.TrimLeft(s[min(i+1, len(s)):], ", ")
	}
	return out
}

// by groups sum(name) by one label.
func (m metrics) by(name, label string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m {
		if s.name == name && matches(s.labels, match) {
			out[s.labels[label]] += s.value
		}
	}
	return out
}

func matches(l, match map[string]string) bool {
	for k, v := range match {
		if l[k] != v {
			return false
		}
	}
	return true
}

// delta is after minus before, per label value.
func delta(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// quantile estimates the q-quantile of the observations a histogram
// (name_bucket with label match) received between two scrapes, by linear
// interpolation inside the bucket, as Prometheus' histogram_quantile does.
func quantile(q float64, before, after metrics, name string, match map[string]string) float64 {
	type bucket struct{ le, n float64 }
	count := func(m metrics) map[float64]float64 {
		out := map[float64]float64{}
		for _, s := range m {
			if s.name != name+"_bucket" || !matches(s.labels, match) {
				continue
			}
			le, err := strconv.ParseFloat(s.labels["le"], 64)
			if err != nil {
				continue
			}
			out[le] += s.value
		}
		return out
	}
	a, b := count(after), count(before)
	var bs []bucket
	for le, n := range a {
		bs = append(bs, bucket{le, n - b[le]})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	if len(bs) == 0 || bs[len(bs)-1].n <= 0 {
		return math.NaN()
	}
	total := bs[len(bs)-1].n
	rank := q * total
	prevLe, prevN := 0.0, 0.0
	for _, x := range bs {
		if x.n >= rank {
			if math.IsInf(x.le, 1) {
				return prevLe // beyond the last finite bucket: its bound
			}
			if x.n == prevN {
				return x.le
			}
			return prevLe + (x.le-prevLe)*(rank-prevN)/(x.n-prevN)
		}
		prevLe, prevN = x.le, x.n
	}
	return prevLe
}
