package scale

import (
	"testing"

	"anvil.dev/anvil/bench/internal/results"
)

func TestFoldRuns(t *testing.T) {
	size := func(completed bool, ready int, readyS, idleCPU, api float64, tag string) results.ScaleSize {
		z := results.ScaleSize{Hosts: 10, Machines: 10, Completed: completed, Ready: ready, ReadySeconds: readyS, ReadyP50: readyS / 2,
			ReadyP99: readyS - 1, RegisterSeconds: readyS / 10, IdleSeconds: 60, Error: tag}
		z.ScaleUp.APIPerMachine, z.Idle.CPU, z.Idle.NetbootCPU = api, idleCPU, idleCPU/2
		return z
	}
	tests := []struct {
		name          string
		runs          []results.ScaleSize
		medianRun     int
		completed     bool
		ready         int
		readyS, idle  float64
		api, register float64
	}{
		{name: "one run is kept as is", runs: []results.ScaleSize{size(true, 10, 100, 0.05, 20, "a")},
			medianRun: 0, completed: true, ready: 10, readyS: 100, idle: 0.05, api: 20, register: 10},
		{name: "three runs: medians, breakdowns of the median run",
			runs:      []results.ScaleSize{size(true, 10, 300, 0.07, 18, "a"), size(true, 10, 100, 0.09, 22, "b"), size(true, 10, 200, 0.03, 20, "c")},
			medianRun: 2, completed: true, ready: 10, readyS: 200, idle: 0.07, api: 20, register: 20},
		{name: "an incomplete run counts as the slowest and makes the size incomplete",
			runs:      []results.ScaleSize{size(false, 7, 50, 0, 0, "a"), size(true, 10, 100, 0.04, 22, "b"), size(true, 10, 200, 0.06, 18, "c")},
			medianRun: 2, completed: false, ready: 7, readyS: 200, idle: 0.04, api: 20, register: 10},
		{name: "two runs: the mean of the middle two",
			runs:      []results.ScaleSize{size(true, 10, 100, 0.02, 20, "a"), size(true, 10, 300, 0.04, 30, "b")},
			medianRun: 0, completed: true, ready: 10, readyS: 200, idle: 0.03, api: 25, register: 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z := foldRuns(tc.runs)
			if len(tc.runs) > 1 && (len(z.Runs) != len(tc.runs) || z.MedianRun != tc.medianRun || z.Error != tc.runs[tc.medianRun].Error) {
				t.Fatalf("runs=%d medianRun=%d error=%q, want %d, %d, %q", len(z.Runs), z.MedianRun, z.Error, len(tc.runs), tc.medianRun, tc.runs[tc.medianRun].Error)
			}
			if z.Completed != tc.completed || z.Ready != tc.ready || z.ReadySeconds != tc.readyS || !near(z.Idle.CPU, tc.idle) ||
				!near(z.ScaleUp.APIPerMachine, tc.api) || z.RegisterSeconds != tc.register {
				t.Fatalf("got completed=%v ready=%d readyS=%v idle=%v api=%v register=%v", z.Completed, z.Ready, z.ReadySeconds, z.Idle.CPU, z.ScaleUp.APIPerMachine, z.RegisterSeconds)
			}
			for i, h := range z.Runs {
				if h.ReadySeconds != tc.runs[i].ReadySeconds || h.Error != tc.runs[i].Error {
					t.Fatalf("run %d headline %+v does not match the run", i, h)
				}
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
