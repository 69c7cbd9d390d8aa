package report

import (
	"strings"
	"testing"

	"anvil.dev/anvil/bench/internal/results"
)

func TestStormSection(t *testing.T) {
	run := func(ok int, p99 float64, fails ...results.StormFailure) results.StormRun {
		return results.StormRun{Hosts: 1000, Succeeded: ok, P50: 20, P90: 30, P99: p99, Max: p99 + 1, Seconds: p99 + 2,
			Failures: fails, Retries: results.StormRetries{DHCPDiscover: 10, TFTP: 3},
			Stages:  []results.StormStage{{Name: "dhcp-firmware", P50: 4.5, P99: 6}},
			Netboot: results.StormProc{CPUSeconds: 40, Cores: 0.8, IdleRSS: 60e6, PeakRSS: 200e6},
			Metrics: map[string]float64{`anvil_tftp_requests_total{result="busy"}`: 12}}
	}
	r := sampleRun()
	r.Storm = &results.Storm{Client: "EDK2", Setup: "fresh", ClientWaitSeconds: 7, Sizes: []results.StormSize{
		{Hosts: 100, Runs: []results.StormRun{run(100, 10), run(100, 12), {Hosts: 100, Error: "setting up the rack: boom"}}},
		{Hosts: 1000, Runs: []results.StormRun{run(998, 60, results.StormFailure{Stage: "tftp", Reason: `TFTP: server sent ERROR 0 "server busy"`, Hosts: 2}), run(1000, 50), run(1000, 70)}},
	}}
	var b strings.Builder
	if err := Write(&b, r, Options{ResultsPath: "results.json", Plots: map[string]bool{"storm.png": true}}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## 4. Boot storm",
		"| 100 | 100, 100, error | 20.0 | 30.0 | **11.0** |", // median over the runs without an error
		"| 1000 | 998, 1000, 1000 | 20.0 | 30.0 | **60.0** |",
		`| 1000 | 1 | tftp | TFTP: server sent ERROR 0 "server busy" | 2 |`,
		"| 100 | 3 | (run) | setting up the rack: boom | all |",
		"![Boot storm",
		"| dhcp-firmware | 4.50 / 6.00 | 4.50 / 6.00 |",
		"`anvil_tftp_requests_total{result=\"busy\"}` | 12.00 |",
		"| boot storm, 1000 hosts: p99 s to config (failed hosts, all runs) | 60.0 (2 failed) | no peer (section 4) |  | 1000 hosts, zero failures: not met in this run |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "NaN") {
		t.Error("report contains NaN")
	}
}
