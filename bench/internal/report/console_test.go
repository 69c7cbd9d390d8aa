package report

import (
	"strings"
	"testing"

	"anvil.dev/anvil/bench/internal/results"
)

// TestConsoleSection: the figures, kubectl beside them, the ratio as
// kubectl / console, and a section that says it was not run.
func TestConsoleSection(t *testing.T) {
	b := &strings.Builder{}
	consoleSection(b, nil, Options{})
	if !strings.Contains(b.String(), "Not run.") {
		t.Errorf("no console results: %q", b.String())
	}
	run := results.ConsoleRun{FirstPage: results.PageLoad{Ready: 2000, Tiles: 1000, Racks: 25}, SecondPage: results.PageLoad{Ready: 600, Tiles: 1000},
		FirstPageWarm: results.PageLoad{Ready: 500}, UpdateMs: []float64{300, 280, 290}, Burst: results.ConsoleBurst{AllMs: 6000, SendSeconds: 5},
		Kubectl: results.KubectlRun{GetCold: results.KubectlGet{TotalMs: 1000}, GetWarm: results.KubectlGet{TotalMs: 900, Lines: 5001}, UpdateMs: []float64{10, 12, 11}}}
	c := &results.Console{Hosts: 5000, Racks: 125, Updates: 3, BurstHosts: 500, Runs: []results.ConsoleRun{run}}
	b.Reset()
	consoleSection(b, c, Options{})
	out := b.String()
	for _, want := range []string{"| first render, page 1 (cold) | **2000 ms** (2000) | 1000 ms (1000) | 0.50× |",
		"| live update p50 | **290 ms** (290) | 11 ms (11) |", "1000 of the 5000 Hosts", "The 279 ms between them are the console's own work"} {
		if !strings.Contains(out, want) {
			t.Errorf("the section lacks %q:\n%s", want, out)
		}
	}
	if rows := consoleSummary(c); len(rows) != 2 || !strings.Contains(rows[0][3], "0.50×") {
		t.Errorf("summary rows %v", rows)
	}
}
