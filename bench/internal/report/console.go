package report

import (
	"fmt"
	"math"
	"strings"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

// consoleSection is the admin console benchmark: the racks page in
// Chromium beside kubectl, from the same patches.
func consoleSection(b *strings.Builder, c *results.Console, o Options) {
	fmt.Fprintf(b, "## 7. Admin console: the racks page (issue \"admin console\")\n\n")
	if c == nil {
		fmt.Fprintf(b, "Not run.\n\n")
		return
	}
	measured(b, c.Measured, o)
	if c.Error != "" {
		fmt.Fprintf(b, "**Failed**: %s\n\n", oneLine(c.Error))
	}
	fmt.Fprintf(b, "%d Hosts in one namespace, %d racks (labels metal.anvil.dev/rack and failure-domain), status written through\n", c.Hosts, c.Racks)
	fmt.Fprintf(b, "the status subresource (about 75%% Provisioned and on, 17%% Available and off, the rest Provisioning or Claimed;\n")
	fmt.Fprintf(b, "%d with BMCReachable=False, red). No controllers and no BMCs run: the console only reads. `anvil console` signs the\n", c.Problems)
	fmt.Fprintf(b, "person in with a ServiceAccount token (read and watch on metal.anvil.dev and Events); kubectl uses the same token.\n")
	fmt.Fprintf(b, "Every run starts a fresh console process, a fresh headless Chromium and fresh kubectl processes against the same API server.\n\n")
	fmt.Fprintf(b, "- **Setup**: %s.\n", c.Setup)
	fmt.Fprintf(b, "- **First render** is the browser's Navigation Timing, from the navigation's start (`performance.timeOrigin`) to the\n")
	fmt.Fprintf(b, "  later of the first animation frame after DOMContentLoaded (every tile parsed, then laid out and painted) and the\n")
	fmt.Fprintf(b, "  live stream (`/live`, EventSource) open. Page 1 cold is the person's first /racks after signing in: the console lists\n")
	fmt.Fprintf(b, "  and starts watching the Hosts for that person then. kubectl's is `kubectl get hosts -n NS -o wide` to its last line\n")
	fmt.Fprintf(b, "  (process exit), with an empty discovery cache (cold) and again (warm).\n")
	fmt.Fprintf(b, "- **Live update**: one Host's `status.powerState` patched (%d per run, a second apart), timed from sending the patch to\n", c.Updates)
	fmt.Fprintf(b, "  the tile's `data-power` changing in the DOM (a MutationObserver records `Date.now()`; the same machine's clock) and,\n")
	fmt.Fprintf(b, "  from the same patch, to `kubectl get hosts --watch --output-watch-events` printing the MODIFIED line. p50 and p99\n")
	fmt.Fprintf(b, "  are per run (nearest rank), the median over runs shown. The **burst** patches %d Hosts shown on the page at once\n", c.BurstHosts)
	fmt.Fprintf(b, "  (16 requests in flight), timed to the last tile changed and to kubectl's last line.\n")
	fmt.Fprintf(b, "- **Memory**: after garbage collection (DevTools HeapProfiler.collectGarbage), Performance.getMetrics' JSHeapUsedSize\n")
	fmt.Fprintf(b, "  and Nodes; the tab's renderer RSS and every Chromium process's RSS summed (shared pages counted in each) from /proc.\n")
	fmt.Fprintf(b, "  kubectl's is its peak RSS (`get`) or RSS after the burst (`--watch`). The console process's RSS and CPU from /proc.\n\n")
	if len(c.Runs) == 0 {
		return
	}
	runs := c.Runs
	med := func(f func(results.ConsoleRun) float64) float64 { return medianOf(runs, f) }
	list := func(f func(results.ConsoleRun) float64, prec int) string {
		xs := make([]string, len(runs))
		for i, r := range runs {
			xs[i] = num(f(r), prec)
		}
		return strings.Join(xs, ", ")
	}
	pct := func(xs []float64, p float64) float64 { return stats.Percentile(xs, p) }
	type row struct {
		what             string
		console, kubectl func(results.ConsoleRun) float64
		unit             string
		prec             int
		note             string
	}
	mb := func(x int64) float64 { return float64(x) / 1e6 }
	rows := []row{
		{"first render, page 1 (cold)", func(r results.ConsoleRun) float64 { return r.FirstPage.Ready },
			func(r results.ConsoleRun) float64 { return r.Kubectl.GetCold.TotalMs }, "ms", 0, "kubectl get, empty discovery cache"},
		{"first render, page 1 again (warm)", func(r results.ConsoleRun) float64 { return r.FirstPageWarm.Ready },
			func(r results.ConsoleRun) float64 { return r.Kubectl.GetWarm.TotalMs }, "ms", 0, "kubectl get, warm cache (all Hosts)"},
		{"first render, page 2", func(r results.ConsoleRun) float64 { return nz(r.SecondPage.Ready) },
			func(r results.ConsoleRun) float64 { return r.Kubectl.GetWarm.TotalMs }, "ms", 0, "kubectl has no pages: the same warm get"},
		{"live update p50", func(r results.ConsoleRun) float64 { return pct(r.UpdateMs, 50) },
			func(r results.ConsoleRun) float64 { return pct(r.Kubectl.UpdateMs, 50) }, "ms", 0, "kubectl --watch, MODIFIED line"},
		{"live update p99", func(r results.ConsoleRun) float64 { return pct(r.UpdateMs, 99) },
			func(r results.ConsoleRun) float64 { return pct(r.Kubectl.UpdateMs, 99) }, "ms", 0, ""},
		{fmt.Sprintf("burst of %d: last one shown", c.BurstHosts), func(r results.ConsoleRun) float64 { return r.Burst.AllMs },
			func(r results.ConsoleRun) float64 { return r.Kubectl.BurstAllMs }, "ms", 0, "kubectl's last MODIFIED line"},
		{"memory: JS heap used, page 1 loaded", func(r results.ConsoleRun) float64 { return r.Loaded.JSHeapUsed / 1e6 },
			nil, "MB", 1, ""},
		{"memory: JS heap used, after the burst", func(r results.ConsoleRun) float64 { return r.AfterBurst.JSHeapUsed / 1e6 },
			nil, "MB", 1, ""},
		{"DOM nodes, page 1 (Performance.getMetrics Nodes)", func(r results.ConsoleRun) float64 { return r.Loaded.DOMNodes }, nil, "", 0, ""},
		{"renderer RSS, page 1 loaded", func(r results.ConsoleRun) float64 { return mb(r.Loaded.RendererRSS) },
			func(r results.ConsoleRun) float64 { return mb(r.Kubectl.GetWarm.MaxRSS) }, "MB", 0, "kubectl get peak RSS"},
		{"renderer RSS, after the burst", func(r results.ConsoleRun) float64 { return mb(r.AfterBurst.RendererRSS) },
			func(r results.ConsoleRun) float64 { return mb(r.Kubectl.WatchRSS) }, "MB", 0, "kubectl --watch RSS after the burst"},
		{"all Chromium processes RSS, after the burst", func(r results.ConsoleRun) float64 { return mb(r.AfterBurst.ChromiumRSS) },
			func(r results.ConsoleRun) float64 { return mb(r.Kubectl.WatchRSS) }, "MB", 0, ""},
	}
	fmt.Fprintf(b, "| figure | console (runs) | kubectl (runs) | kubectl / console | kubectl's figure |\n|---|---|---|---|---|\n")
	for _, x := range rows {
		cv := med(x.console)
		cell := fmt.Sprintf("**%s %s** (%s)", num(cv, x.prec), x.unit, list(x.console, x.prec))
		if x.kubectl == nil {
			fmt.Fprintf(b, "| %s | %s | — | | |\n", x.what, cell)
			continue
		}
		kv := med(x.kubectl)
		fmt.Fprintf(b, "| %s | %s | %s %s (%s) | %s | %s |\n", x.what, cell, num(kv, x.prec), x.unit, list(x.kubectl, x.prec),
			fmtRatio(stats.Ratio(kv, cv)), x.note)
	}
	fmt.Fprintf(b, "\n")
	r0 := runs[0]
	fmt.Fprintf(b, "Page 1 cold in parts (median ms from navigation start): HTML received %s, parsed (DOMContentLoaded) %s, first frame\n",
		num(med(func(r results.ConsoleRun) float64 { return r.FirstPage.ResponseEnd }), 0), num(med(func(r results.ConsoleRun) float64 { return r.FirstPage.DOMContentLoaded }), 0))
	fmt.Fprintf(b, "after it %s, live stream open %s; the benchmark's own wall clock around the navigation %s. Page 1 holds %d tiles in %d racks\n",
		num(med(func(r results.ConsoleRun) float64 { return r.FirstPage.Rendered }), 0), num(med(func(r results.ConsoleRun) float64 { return r.FirstPage.LiveOpen }), 0),
		num(med(func(r results.ConsoleRun) float64 { return r.FirstPage.WallMs }), 0), r0.FirstPage.Tiles, r0.FirstPage.Racks)
	fmt.Fprintf(b, "(%s kB of HTML, %s elements), page 2 %d tiles; kubectl prints all %d Hosts (%d lines). The burst reached the page in %s live\n",
		num(r0.FirstPage.HTMLBytes/1e3, 0), num(r0.Loaded.Elements, 0), r0.SecondPage.Tiles, c.Hosts, r0.Kubectl.GetWarm.Lines, list(func(r results.ConsoleRun) float64 { return float64(r.Burst.LiveUpdates) }, 0))
	fmt.Fprintf(b, "updates (runs); sending its patches took %s s (runs: the API server accepting them, on the same cores, is most of the\n",
		list(func(r results.ConsoleRun) float64 { return r.Burst.SendSeconds }, 2))
	fmt.Fprintf(b, "burst's time), and the last tile changed %s ms after the last patch was accepted, kubectl's last line %s ms after it.\n",
		num(med(func(r results.ConsoleRun) float64 { return r.Burst.AllMs - r.Burst.SendSeconds*1000 }), 0),
		num(med(func(r results.ConsoleRun) float64 { return r.Kubectl.BurstAllMs - r.Burst.SendSeconds*1000 }), 0))
	fmt.Fprintf(b, "`anvil console`: RSS %s MB started, %s MB peak; CPU %s s over the three\n",
		num(med(func(r results.ConsoleRun) float64 { return mb(r.Console.IdleRSS) }), 0), num(med(func(r results.ConsoleRun) float64 { return mb(r.Console.PeakRSS) }), 0),
		num(med(func(r results.ConsoleRun) float64 { return r.Console.LoadCPU }), 2))
	fmt.Fprintf(b, "page loads, %s s over the %d single updates, %s s over the burst (kubectl --watch: %s s over the whole watch).\n\n",
		num(med(func(r results.ConsoleRun) float64 { return r.Console.UpdateCPU }), 2), c.Updates,
		num(med(func(r results.ConsoleRun) float64 { return r.Console.BurstCPU }), 2), num(med(func(r results.ConsoleRun) float64 { return r.Kubectl.WatchCPU }), 2))
	for i, r := range runs {
		if r.Error != "" {
			fmt.Fprintf(b, "- Run %d failed: %s\n", i+1, oneLine(r.Error))
		}
		if r.Kubectl.Error != "" {
			fmt.Fprintf(b, "- Run %d, kubectl: %s\n", i+1, oneLine(r.Kubectl.Error))
		}
	}
	fmt.Fprintf(b, "**What the ratios mean.** kubectl / console above 1: the console was faster or smaller. They do not compare like with\n")
	fmt.Fprintf(b, "like, and say so: the page is HTML for one page of racks (%d of the %d Hosts here) that a browser parses, lays out\n", r0.FirstPage.Tiles, c.Hosts)
	fmt.Fprintf(b, "and paints, with a stream kept open and grouped, coloured, filterable tiles; kubectl prints one text line per Host of all of\n")
	fmt.Fprintf(b, "them into a pipe and exits. A live update in the console is a re-render of the page on the server (the first change\n")
	fmt.Fprintf(b, "after a quiet spell at once, then at most one update per 250 ms while a burst lasts), sent as the changed rack sections'\n")
	fmt.Fprintf(b, "HTML and swapped into the DOM; kubectl prints the watch event as it comes. The browser's memory is a whole Chromium against\n")
	fmt.Fprintf(b, "a CLI process.\n\n")
	p50 := med(func(r results.ConsoleRun) float64 { return pct(r.UpdateMs, 50) })
	k50 := med(func(r results.ConsoleRun) float64 { return pct(r.Kubectl.UpdateMs, 50) })
	if !math.IsNaN(p50) && !math.IsNaN(k50) && p50 > k50 {
		fmt.Fprintf(b, "The console's live update p50 is %s ms, kubectl's %s ms. The %s ms between them are the console's own work: waking\n",
			num(p50, 0), num(k50, 0), num(p50-k50, 0))
		fmt.Fprintf(b, "the stream, rendering the page's %d tiles again on the server, sending the changed rack sections and swapping their\n", r0.FirstPage.Tiles)
		fmt.Fprintf(b, "HTML into the DOM (a Host's own tile, not its whole rack, would send less; not done). In a burst the 250 ms between\n")
		fmt.Fprintf(b, "updates adds up to that much to each.\n\n")
	}
}

// nz is x, or NaN for 0 (not measured).
func nz(x float64) float64 {
	if x == 0 {
		return math.NaN()
	}
	return x
}

// consoleSummary is the summary table's row.
func consoleSummary(c *results.Console) [][5]string {
	if c == nil || len(c.Runs) == 0 {
		return nil
	}
	first := medianOf(c.Runs, func(r results.ConsoleRun) float64 { return r.FirstPage.Ready })
	kget := medianOf(c.Runs, func(r results.ConsoleRun) float64 { return r.Kubectl.GetCold.TotalMs })
	upd := medianOf(c.Runs, func(r results.ConsoleRun) float64 { return stats.Percentile(r.UpdateMs, 50) })
	kupd := medianOf(c.Runs, func(r results.ConsoleRun) float64 { return stats.Percentile(r.Kubectl.UpdateMs, 50) })
	return [][5]string{
		{fmt.Sprintf("console racks page, %s Hosts: first render (page 1, cold)", thousands(fmt.Sprint(c.Hosts))), num(first, 0) + " ms",
			"kubectl get -o wide " + num(kget, 0) + " ms", fmtRatio(stats.Ratio(kget, first)) + " (kubectl / console: below 1, the console slower)", "(admin console issue: measured, no target)"},
		{"console: live update p50, Host status patch to tile", num(upd, 0) + " ms", "kubectl --watch " + num(kupd, 0) + " ms",
			fmtRatio(stats.Ratio(kupd, upd)) + " (kubectl / console)", "(admin console issue: measured, no target)"},
	}
}
