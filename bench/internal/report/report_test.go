package report

import (
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/bench/internal/results"
)

func sampleRun() *results.Run {
	step := func(off int, ach, drop float64) results.DHCPStep {
		return results.DHCPStep{Offered: off, Sent: off * 5, Acks: int(ach * 5), Achieved: ach, Drop: drop, P50: 0.5, P99: 3, CPU: 0.4}
	}
	return &results.Run{
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2026, 1, 2, 3, 34, 5, 0, time.UTC),
		Command:   "anvil-bench run",
		Machine:   results.Machine{CPUModel: "Test CPU", CPUs: 2, Versions: map[string]string{"kea-dhcp4": "2.2.0"}},
		LoadStart: [3]float64{3.5, 2, 1},
		DHCP: &results.DHCP{Reservations: 10000, StepSeconds: 5, MaxDrop: 0.025, Subjects: []results.DHCPSubject{
			{Name: "anvil", Runs: []results.DHCPRun{
				{MaxRate: 9000, Steps: []results.DHCPStep{step(500, 500, 0), step(9000, 9000, 0.01)}},
				{MaxRate: 11000, Steps: []results.DHCPStep{step(500, 500, 0)}},
				{MaxRate: 10000, Steps: []results.DHCPStep{step(500, 500, 0)}},
			}},
			{Name: "kea-dhcp4", Runs: []results.DHCPRun{{MaxRate: 5000, Steps: []results.DHCPStep{step(500, 500, 0)}}}},
			{Name: "dnsmasq", Error: "did not start"},
		}},
		HTTP: &results.HTTP{FileBytes: 50 << 20, Subjects: []results.HTTPSubject{
			{Name: "anvil", Cells: []results.HTTPCell{{Clients: 1, Runs: []results.HTTPMeasure{{MBps: 800, P99: 0.1}}}}},
			{Name: "nginx", Cells: []results.HTTPCell{{Clients: 1, Runs: []results.HTTPMeasure{{MBps: 1000, P99: 0.05}}}}},
		}},
		TFTP: &results.TFTP{Seconds: 2, Files: []results.TFTPFile{{Name: "ipxe.efi", Size: 850528}}, Subjects: []results.TFTPSubject{
			{Name: "anvil", Cells: []results.TFTPCell{
				{File: "ipxe.efi", BlockSize: 1468, Clients: 1, Runs: []results.TFTPMeasure{{MBps: 4, Attempts: 3, Completed: 3}}},
				{File: "ipxe.efi", BlockSize: 1468, Clients: 1, WindowSize: 4, Runs: []results.TFTPMeasure{{MBps: 4, Attempts: 3, Completed: 3}}},
			}},
			{Name: "atftpd", Cells: []results.TFTPCell{
				{File: "ipxe.efi", BlockSize: 1468, Clients: 1, Runs: []results.TFTPMeasure{{MBps: 5, Attempts: 3, Completed: 3}}},
				{File: "ipxe.efi", BlockSize: 1468, Clients: 1, WindowSize: 4, Runs: []results.TFTPMeasure{{MBps: 10, Attempts: 3, Completed: 3}}},
			}},
		}},
	}
}

func TestWrite(t *testing.T) {
	var b strings.Builder
	r := sampleRun()
	t0 := time.Date(2026, 11, 30, 14, 41, 12, 0, time.UTC)
	r.DHCP.Subjects[0].Runs[0].Latency = []results.DHCPStep{{Offered: 500, P50: 0.5, P99: 3}}
	r.DHCP.Measured = &results.Measured{Started: t0, Finished: t0.Add(8 * time.Minute), Command: "anvil-bench run --only dhcp", LoadStart: [3]float64{0.69, 1, 1}, LoadEnd: [3]float64{1.5, 1, 1}}
	if err := Write(&b, r, Options{ResultsPath: "results.json", Plots: map[string]bool{"dhcp-rate.png": true}}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| anvil |  | **10,000** (9000, 11000, 10000) | — |", // median of three runs
		"| kea-dhcp4 |  | **5000** (5000) | 2.00× |",         // Anvil / Kea
		"| dnsmasq |  | failed: did not start |",
		"Anvil met the target",
		"![DHCP", "That run shared the CPU",
		"_Measured 2026-11-30T14:41:12Z (took 8m0s) with `anvil-bench run --only dhcp`; 1-minute load average 0.69 at the start and 1.50 at the end._",
		"## 3. HTTP boot artifacts\n\n_Measured in the run the header describes (started 2026-01-02T03:04:05Z)._",
		"two more steps\nper run, at 500/s and at the highest passing rate, run with them and give the latencies.",
		"This part ran on a\nquiet machine (the load averages in its line above).",
		"| 1 | **800** | 1000 | 0.80× | 0.10 | 0.05 | 0.50× |", // HTTP ratios
		"| ipxe.efi | 1468 | 1 | 4.0 | 5.0 | atftpd 5.0 | 0.80× |",
		"windowsize 4 vs none: anvil 1.00×, atftpd 2.00×",
		"## 4. Boot storm\n\nNot run.", "## 5. Controller scale\n\nNot run.", "## 5b. In-place rollout at scale (issue 7)\n\nNot run.",
		"not measured", "Where Anvil trails the best peer",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "NaN") {
		t.Error("report contains NaN")
	}
}

// TestWriteModes: results with both modes and the product path get a
// table per mode, the product as the headline with pxe/dhcp beside it,
// and a verdict computed from the data (goal, shortfall, generator limit).
func TestWriteModes(t *testing.T) {
	step := func(off int, ach, drop, cpu, gen float64) results.DHCPStep {
		return results.DHCPStep{Offered: off, Sent: off * 5, Acks: int(ach * 5), Achieved: ach, Drop: drop, CPU: cpu, GenCPU: gen}
	}
	run := func(max float64, cpu, gen, genFail float64) results.DHCPRun {
		return results.DHCPRun{MaxRate: max, Steps: []results.DHCPStep{step(500, 500, 0, 0.05, 0.1), step(int(max), max, 0.01, cpu, gen), step(int(max)*2, max, 0.5, 1, genFail)}}
	}
	r := sampleRun()
	r.DHCP = &results.DHCP{Reservations: 10000, StepSeconds: 5, MaxDrop: 0.025, ProductSetup: "a fresh kube-apiserver",
		Modes: []results.DHCPMode{{Name: "relay", Generator: "perfdhcp"}, {Name: "broadcast", Generator: "anvil-bench load dhcp"}},
		Subjects: []results.DHCPSubject{
			{Name: "anvil serve", Mode: "relay", Runs: []results.DHCPRun{run(20000, 0.6, 0.97, 0.99)}},
			{Name: "anvil", Mode: "relay", Runs: []results.DHCPRun{run(22000, 0.6, 0.97, 0.99)}},
			{Name: "kea-dhcp4", Mode: "relay", Runs: []results.DHCPRun{run(14000, 0.9, 0.7, 0.8)}},
			{Name: "anvil serve", Mode: "broadcast", Runs: []results.DHCPRun{run(9000, 0.95, 0.5, 0.6)}},
			{Name: "anvil", Mode: "broadcast", Runs: []results.DHCPRun{run(10000, 0.95, 0.5, 0.6)}},
			{Name: "kea-dhcp4", Mode: "broadcast", Runs: []results.DHCPRun{run(12000, 0.95, 0.5, 0.6)}},
		}}
	var b strings.Builder
	if err := Write(&b, r, Options{ResultsPath: "results.json"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"### 1a. Relay mode (perfdhcp, giaddr set)", "### 1b. Broadcast mode",
		"| subject | configuration | DORA/s (runs) | anvil serve / this | anvil / this |",
		"| kea-dhcp4 |  | **14,000** (14000) | 1.43× | 1.57× |",
		"| DHCP DORA/s at <= 2.5% drop, relay mode | 20,000 (`anvil serve`, Hosts); pxe/dhcp 22,000 | kea-dhcp4 14,000 | 1.43× | at least Kea's best, on the product path: met in this run |",
		"| DHCP DORA/s at <= 2.5% drop, broadcast mode | 9000 (`anvil serve`, Hosts); pxe/dhcp 10,000 | kea-dhcp4 12,000 | 0.75× | at least Kea's best, on the product path: not met in this run (25% short) |",
		"For anvil serve the generator was the limit (its core at 97% at the maximum, 99% at the first failing rate), not the server (60% of its core).",
		"did not meet the target of at least Kea's rate: 9000 vs 12000 DORA/s, 25% short (0.75×).",
		"For anvil serve the generator was not the limit (its core at 50% at the maximum, 60% at the first failing rate; the server at 95% of its core).",
		"a full core of it would serve about",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "NaN") {
		t.Error("report contains NaN")
	}
}

func TestNumbers(t *testing.T) {
	for in, want := range map[string]string{"1234567": "1,234,567", "12345": "12,345", "-98765": "-98,765", "123": "123"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%s) = %s, want %s", in, got, want)
		}
	}
	if num(12345.4, 0) != "12,345" || num(3.14159, 2) != "3.14" {
		t.Error("num formatting")
	}
}
