package scale

import (
	"math"
	"sort"

	"anvil.dev/anvil/bench/internal/results"
)

// Metric names of controller-runtime and client-go.
const (
	mReconciles    = "controller_runtime_reconcile_total"
	mReconcileErrs = "controller_runtime_reconcile_errors_total"
	mReconcileTime = "controller_runtime_reconcile_time_seconds"
	mQueueDuration = "workqueue_queue_duration_seconds"
	mRequests      = "rest_client_requests_total"
	mConfigDenied  = "anvil_config_requests_denied_total"
)

// work is what happened between two readings; per is the Machine count
// requests are divided by.
func work(a, b usage, per int) results.Work {
	secs := b.at.Sub(a.at).Seconds()
	w := results.Work{Seconds: secs}
	w.Reconciles = delta(b.ctrlMetrics.by(mReconciles, "controller", nil), a.ctrlMetrics.by(mReconciles, "controller", nil))
	w.ReconcileErrors = delta(b.ctrlMetrics.by(mReconcileErrs, "controller", nil), a.ctrlMetrics.by(mReconcileErrs, "controller", nil))
	w.ReconcileP99 = map[string]float64{}
	w.QueueP99 = map[string]float64{}
	var total float64
	for c, n := range w.Reconciles {
		total += n
		if q := quantile(0.99, a.ctrlMetrics, b.ctrlMetrics, mReconcileTime, map[string]string{"controller": c}); !math.IsNaN(q) {
			w.ReconcileP99[c] = q
		}
		if q := quantile(0.99, a.ctrlMetrics, b.ctrlMetrics, mQueueDuration, map[string]string{"name": c}); !math.IsNaN(q) {
			w.QueueP99[c] = q
		}
	}
	if secs > 0 {
		w.ReconcilesPerSecond = total / secs
	}
	w.APIByMethod = delta(b.ctrlMetrics.by(mRequests, "method", nil), a.ctrlMetrics.by(mRequests, "method", nil))
	w.APIByCode = delta(b.ctrlMetrics.by(mRequests, "code", nil), a.ctrlMetrics.by(mRequests, "code", nil))
	w.APIRequests = sum(w.APIByMethod)
	w.NetbootAPIByMethod = delta(b.netMets.by(mRequests, "method", nil), a.netMets.by(mRequests, "method", nil))
	w.NetbootAPIRequests = sum(w.NetbootAPIByMethod)
	if per > 0 {
		w.APIPerMachine = w.APIRequests / float64(per)
		w.NetbootAPIPerMachine = w.NetbootAPIRequests / float64(per)
	}
	if secs > 0 {
		w.APIPerSecond = w.APIRequests / secs
		w.CPU = (b.ctrl.CPU - a.ctrl.CPU) / secs
		w.NetbootCPU = (b.net.CPU - a.net.CPU) / secs
		w.APIServerCPU = (b.api.CPU - a.api.CPU) / secs
		w.BenchCPU = (b.bench - a.bench) / secs
	}
	w.EndRSS = b.ctrl.RSS
	return w
}

func sum(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

// dist summarises durations in seconds.
func dist(xs []float64) results.Dist {
	if len(xs) == 0 {
		return results.Dist{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	var mean float64
	for _, x := range s {
		mean += x
	}
	return results.Dist{N: len(s), Mean: mean / float64(len(s)), P50: q(0.5), P99: q(0.99), Max: s[len(s)-1]}
}
