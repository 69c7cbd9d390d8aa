package storm

import (
	"bufio"
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

// summarize fills r from the generator's per-host results.
func summarize(r *results.StormRun, lr LoadResult) {
	r.Seconds = lr.Seconds
	steps := map[string][]float64{}
	type key struct{ stage, reason string }
	fails := map[key]int{}
	for _, h := range lr.Hosts {
		r.Retries.DHCPDiscover += h.DHCP.DiscoverRetries
		r.Retries.DHCPRequest += h.DHCP.RequestRetries
		r.Retries.DHCPNak += h.DHCP.Naks
		r.Retries.TFTP += h.TFTP.Retries
		r.Retries.TFTPDupData += h.TFTP.DupData
		r.Retries.Config += h.ConfigRetries
		if !h.OK {
			stage := h.Stage
			if stage == "" {
				stage = StageDHCP
			}
			fails[key{stage, h.Reason}]++
			continue
		}
		r.Succeeded++
		r.TTLB = append(r.TTLB, round3(h.TTLB))
		for _, s := range h.Steps {
			steps[s.Name] = append(steps[s.Name], s.Seconds)
		}
	}
	slices.Sort(r.TTLB)
	r.P50 = stats.Finite(stats.Percentile(r.TTLB, 50))
	r.P90 = stats.Finite(stats.Percentile(r.TTLB, 90))
	r.P99 = stats.Finite(stats.Percentile(r.TTLB, 99))
	if n := len(r.TTLB); n > 0 {
		r.Max = r.TTLB[n-1]
	}
	for _, name := range StepNames {
		xs := steps[name]
		if len(xs) == 0 {
			continue
		}
		r.Stages = append(r.Stages, results.StormStage{Name: name,
			P50: round3(stats.Percentile(xs, 50)), P99: round3(stats.Percentile(xs, 99)), Max: round3(stats.Percentile(xs, 100))})
	}
	for k, n := range fails {
		r.Failures = append(r.Failures, results.StormFailure{Stage: k.stage, Reason: k.reason, Hosts: n})
	}
	slices.SortFunc(r.Failures, func(a, b results.StormFailure) int {
		return cmp.Or(cmp.Compare(b.Hosts, a.Hosts), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Reason, b.Reason))
	})
}

func round3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	return v
}

// keptMetrics are the metric families the report reads: what Anvil's
// services answered, refused and why, and how its API client fared.
var keptMetrics = []string{
	"anvil_dhcp_packets_received_total", "anvil_dhcp_replies_sent_total", "anvil_dhcp_packets_dropped_total",
	"anvil_dhcp_queue_full_total", "anvil_dhcp_memory_renewals_total", "anvil_credential_cache_misses_total",
	"anvil_dhcp_requests_parked_total", "anvil_dhcp_lease_writes_at_offer_total",
	"anvil_dhcp_reply_duration_seconds_sum", "anvil_dhcp_reply_duration_seconds_count",
	"anvil_tftp_requests_total", "anvil_tftp_bytes_sent_total",
	"anvil_http_requests_total", "anvil_http_request_duration_seconds_sum", "anvil_http_request_duration_seconds_count",
	"anvil_boot_script_credentials_total",
	"anvil_config_requests_served_total", "anvil_config_requests_denied_total", "anvil_config_requests_failed_total",
	"rest_client_requests_total", "rest_client_rate_limiter_duration_seconds_sum", "rest_client_rate_limiter_duration_seconds_count",
	"rest_client_request_duration_seconds_sum", "rest_client_request_duration_seconds_count",
}

// scrapeMetrics reads the netboot process's /metrics inside the server
// namespace and keeps the families above with non-zero values.
func scrapeMetrics(ctx context.Context, ns string) (map[string]float64, error) {
	body, err := httpGetIn(ctx, ns, netbootMetricsAddr, "/metrics")
	if err != nil {
		return nil, err
	}
	return parseMetrics(body), nil
}

// parseMetrics parses Prometheus text exposition, keeping keptMetrics.
// Series are keyed "name{labels}" as exposed; rest_client_* series are
// summed over host and method labels down to their code (or to the name).
func parseMetrics(text string) map[string]float64 {
	keep := map[string]bool{}
	for _, k := range keptMetrics {
		keep[k] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		series, val := line[:sp], line[sp+1:]
		name, labels, _ := strings.Cut(series, "{")
		if !keep[name] {
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || v == 0 {
			continue
		}
		if strings.HasPrefix(name, "rest_client_") {
			series = name
			if code := labelValue(labels, "code"); code != "" {
				series = name + `{code="` + code + `"}`
			}
		}
		out[series] += v
	}
	return out
}

func labelValue(labels, name string) string {
	i := strings.Index(labels, name+`="`)
	if i < 0 {
		return ""
	}
	rest := labels[i+len(name)+2:]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return rest[:j]
}

// apiSeries accumulates one verb on one resource from the API server's
// metrics text.
type apiSeries struct{ sum, count, rejected float64 }

// parseAPI reads apiserver_request_duration_seconds_{sum,count} and the 429s
// of apiserver_request_total, keyed "VERB resource[/subresource]".
func parseAPI(text string) map[string]*apiSeries {
	out := map[string]*apiSeries{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var kind string
		switch {
		case strings.HasPrefix(line, "apiserver_request_duration_seconds_sum{"):
			kind = "sum"
		case strings.HasPrefix(line, "apiserver_request_duration_seconds_count{"):
			kind = "count"
		case strings.HasPrefix(line, "apiserver_request_total{"):
			kind = "total"
		default:
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if sp < 0 || err != nil {
			continue
		}
		labels := line[:sp]
		if kind == "total" && labelValue(labels, "code") != "429" {
			continue
		}
		key := labelValue(labels, "verb") + " " + labelValue(labels, "resource")
		if sub := labelValue(labels, "subresource"); sub != "" {
			key += "/" + sub
		}
		s := out[key]
		if s == nil {
			s = &apiSeries{}
			out[key] = s
		}
		switch kind {
		case "sum":
			s.sum += v
		case "count":
			s.count += v
		case "total":
			s.rejected += v
		}
	}
	return out
}

// apiDelta is what happened between two scrapes, busiest first.
func apiDelta(before, after string) []results.StormAPI {
	b, a := parseAPI(before), parseAPI(after)
	var out []results.StormAPI
	for k, x := range a {
		y := b[k]
		if y == nil {
			y = &apiSeries{}
		}
		n := x.count - y.count
		if n <= 0 {
			continue
		}
		verb, res, _ := strings.Cut(k, " ")
		if verb == "WATCH" || verb == "CONNECT" {
			continue // long-running: their duration is not latency
		}
		out = append(out, results.StormAPI{Verb: verb, Resource: res, Requests: n,
			MeanMs: round3((x.sum - y.sum) / n * 1000), Rejected: x.rejected - y.rejected})
	}
	slices.SortFunc(out, func(p, q results.StormAPI) int {
		return cmp.Or(cmp.Compare(q.Requests, p.Requests), cmp.Compare(p.Verb+p.Resource, q.Verb+q.Resource))
	})
	if len(out) > 15 {
		out = out[:15]
	}
	return out
}
