package report

import (
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/bench/internal/results"
)

func TestScaleSections(t *testing.T) {
	r := sampleRun()
	t0 := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	r.Scale = &results.Scale{Started: t0, Finished: t0.Add(time.Hour), Setup: "sim", Sizes: []results.ScaleSize{
		{Hosts: 500, Machines: 500, Completed: true, Ready: 500, ReadySeconds: 120, ReadyP50: 60, ReadyP99: 118, RegisterSeconds: 40, CreatedSeconds: 30,
			ScaleUp: results.Work{Seconds: 120, ReconcilesPerSecond: 50, APIPerMachine: 30, NetbootAPIPerMachine: 6,
				ReconcileP99: map[string]float64{"machine": 0.5, "host": 2, "machineset": 1}, QueueP99: map[string]float64{"machine": 3},
				APIByCode: map[string]float64{"409": 1000}, APIByResource: map[string]float64{"patch machines/status": 3500, "get secrets": 2500},
				NetbootAPIByResource: map[string]float64{"patch hosts/status": 2000}},
			IdleSeconds: 60, Idle: results.Work{CPU: 0.013, EndRSS: 200 << 20, APIPerSecond: 0.5},
			Runs: []results.ScaleRun{{Completed: true, Ready: 500, ReadySeconds: 110, IdleSeconds: 60, IdleCPU: 0.02, APIPerMachine: 31, NetbootAPIPerMachine: 6},
				{Completed: true, Ready: 500, ReadySeconds: 120, IdleSeconds: 60, IdleCPU: 0.013, APIPerMachine: 30, NetbootAPIPerMachine: 6},
				{Completed: false, Ready: 499, ReadySeconds: 2400, Error: "499 of 500 Machines Ready"}}, MedianRun: 1},
		{Hosts: 1000, Machines: 1000, ServeArgs: []string{"--kube-api-qps=500"}, Ready: 700, ReadySeconds: 2400, Error: "700 of 1000 Machines Ready"},
	}}
	r.Rollout = &results.Rollout{Started: t0, Finished: t0.Add(time.Hour), Machines: 500, MaxUnavailable: 50, From: "v1.36.4", To: "v1.37.2",
		Completed: true, Upgraded: 500, Seconds: 600, MaxUpdating: 50,
		Overhead: results.Dist{N: 500, P50: 1.5, P99: 4, Mean: 1.7}, Work: results.Work{APIPerMachine: 19, APIByResource: map[string]float64{"patch nodes": 1000}}}
	var b strings.Builder
	if err := Write(&b, r, Options{ResultsPath: "results.json"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| 500 | defaults | 40 s | 30 s | **120 s** | 60 / 118 s | 50.0 | 30.0 + 6.0 | 0.50 / 2.00 / 1.00 |",
		"| 1000 | `--kube-api-qps=500` |", "**not completed**: 700 of 1000 after 2400 s",
		"- 1000 Hosts: 700 of 1000 Machines Ready",
		"| controllers | patch machines/status | 7.00 | 58% |",
		"| network services | patch hosts/status | 4.00 | 100% |",
		"| 500 | 50 | 500 | 600 | 50 |",
		"**1.50 / 4.00 / 1.70**",
		"| controller scale: MachineSet 0 -> N, all Ready; idle CPU after | 120 s for 500 Machines; idle 1.30% of a core |",
		"| controllers | patch nodes | 2.00 | 100% |",
		"- 500 Hosts, 3 runs, each with its own seed for the BMC faults (the table shows their medians; its other columns and the sections below come from run 2,",
		"all Ready after 110 s, 120 s, not completed (499 of 500 after 2400 s); idle CPU controllers / network services 2.00% / 0.00%, 1.30% / 0.00%, —;",
		"API requests per Machine 31.0 + 6.0, 30.0 + 6.0, 0.0 + 0.0.",
		"  Run 3: 499 of 500 Machines Ready",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "NaN") {
		t.Error("report contains NaN")
	}
}
