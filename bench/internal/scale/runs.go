package scale

import (
	"math"
	"sort"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

// foldRuns makes one size of several runs of it: the breakdowns of the
// run whose time to Ready is the median (an incomplete run counts as the
// slowest), the headline figures as medians over the runs, and every
// run's headline kept in Runs.
func foldRuns(runs []results.ScaleSize) results.ScaleSize {
	if len(runs) == 1 {
		return runs[0]
	}
	heads := make([]results.ScaleRun, len(runs))
	order := make([]int, len(runs))
	for i := range runs {
		heads[i] = runs[i].Headline()
		order[i] = i
	}
	readyTime := func(h results.ScaleRun) float64 {
		if !h.Completed {
			return math.Inf(1)
		}
		return h.ReadySeconds
	}
	sort.SliceStable(order, func(a, b int) bool { return readyTime(heads[order[a]]) < readyTime(heads[order[b]]) })
	mid := order[(len(order)-1)/2]
	sz := runs[mid]
	sz.Runs, sz.MedianRun = heads, mid

	med := func(f func(results.ScaleRun) float64, ok func(results.ScaleRun) bool) float64 {
		var xs []float64
		for _, h := range heads {
			if ok(h) {
				xs = append(xs, f(h))
			}
		}
		return stats.Finite(stats.Median(xs))
	}
	all := func(results.ScaleRun) bool { return true }
	completed := func(h results.ScaleRun) bool { return h.Completed }
	idle := func(h results.ScaleRun) bool { return h.IdleSeconds > 0 }
	sz.Completed, sz.Ready = true, runs[0].Machines
	for _, h := range heads {
		sz.Completed = sz.Completed && h.Completed
		sz.Ready = min(sz.Ready, h.Ready)
	}
	sz.RegisterSeconds = med(func(h results.ScaleRun) float64 { return h.RegisterSeconds }, all)
	if sz.Completed {
		sz.ReadySeconds = med(func(h results.ScaleRun) float64 { return h.ReadySeconds }, completed)
	}
	sz.ReadyP50 = med(func(h results.ScaleRun) float64 { return h.ReadyP50 }, completed)
	sz.ReadyP99 = med(func(h results.ScaleRun) float64 { return h.ReadyP99 }, completed)
	sz.ScaleUp.APIPerMachine = med(func(h results.ScaleRun) float64 { return h.APIPerMachine }, completed)
	sz.ScaleUp.NetbootAPIPerMachine = med(func(h results.ScaleRun) float64 { return h.NetbootAPIPerMachine }, completed)
	if sz.IdleSeconds > 0 {
		sz.Idle.CPU = med(func(h results.ScaleRun) float64 { return h.IdleCPU }, idle)
		sz.Idle.NetbootCPU = med(func(h results.ScaleRun) float64 { return h.IdleNetbootCPU }, idle)
	}
	return sz
}
