package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"anvil.dev/anvil/bench/internal/results"
)

// scaleSection writes section 5, controller scale (issue 9, part 5).
func scaleSection(b *strings.Builder, s *results.Scale) {
	if s == nil {
		sizedHead(b, "5. Controller scale", false, "", 0)
		return
	}
	if !sizedHead(b, "5. Controller scale", true, s.Error, len(s.Sizes)) {
		return
	}
	fmt.Fprintf(b, "N Hosts are registered, then a MachineSet is scaled from 0 to N and every Machine must become Ready. The\n")
	fmt.Fprintf(b, "controllers run as production runs them: `anvil serve` with the controllers, and `anvil serve --controllers none`\n")
	fmt.Fprintf(b, "with the HTTP boot server, config delivery and agent API, against the real kube-apiserver and etcd (test/envtest's\n")
	fmt.Fprintf(b, "binaries), each process authenticating as its own user so the API server's audit log attributes every request.\n")
	fmt.Fprintf(b, "The hosts are simulated by `test/simhost`, over the real wire: when the Host controller has taken the boot through\n")
	fmt.Fprintf(b, "the BMC, the host fetches its iPXE script and its Ignition config with the one-time boot credential (that fetch is\n")
	fmt.Fprintf(b, "what counts as booted), its agent reports over the agent API with a new boot ID and polls for actions, and its kubelet\n")
	fmt.Fprintf(b, "registers a Ready Node with providerID `anvil://<host-uid>` and posts node status. One process simulates every\n")
	fmt.Fprintf(b, "host and serves every BMC, so its CPU is reported apart from Anvil's.\n\n")
	fmt.Fprintf(b, "- **Setup**: %s.\n", s.Setup)
	fmt.Fprintf(b, "- **Ready** is the first watch event with the Machine's Ready condition True, from the replicas patch. **Reconciles/s**\n")
	fmt.Fprintf(b, "  and **p99 reconcile** come from controller-runtime's own metrics (`controller_runtime_reconcile_total`,\n")
	fmt.Fprintf(b, "  `controller_runtime_reconcile_time_seconds`), **queue wait** from `workqueue_queue_duration_seconds`, API requests\n")
	fmt.Fprintf(b, "  from client-go's `rest_client_requests_total` of each process (the audit log agrees to the request). CPU and RSS\n")
	fmt.Fprintf(b, "  from /proc. **Idle** is measured over the window shown after every Machine is Ready and a settling pause.\n")
	fmt.Fprintf(b, "- Started %s (took %s), 1-minute load average %.2f at start and %.2f at end.\n",
		s.Started.Format(time.RFC3339), s.Finished.Sub(s.Started).Round(time.Second), s.Load[0], s.Load[1])
	fmt.Fprintf(b, "- Reproduce (no root needed): `go build -o bin/anvil-bench ./bench/cmd/anvil-bench && bin/anvil-bench run --only scale,rollout --merge bench/results.json`\n")
	fmt.Fprintf(b, "  (`--scale-sizes`, `--scale-extra 5000 --scale-extra-args \"--kube-api-qps=500 --kube-api-burst=1000\"`, `--rollout-machines`, `--runs` (each size that many times, 3 by default), `--keep` for the\n")
	fmt.Fprintf(b, "  processes' logs and the audit log). This part was measured with: `%s`.\n\n", s.Command)

	fmt.Fprintf(b, "| Hosts = Machines | controllers' flags | Hosts Available after | all Machines created after | all Ready after | per Machine p50 / p99 | reconciles/s | API requests per Machine (controllers + network services) | p99 reconcile s (machine / host / machineset) | p99 queue wait s (machine / host) | controllers peak RSS | idle CPU controllers / network services | idle RSS | idle API requests/s |\n")
	fmt.Fprintf(b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, z := range s.Sizes {
		ready := fmt.Sprintf("**%s s**", num(z.ReadySeconds, 0))
		if !z.Completed {
			ready = fmt.Sprintf("**not completed**: %d of %d after %s s", z.Ready, z.Machines, num(z.ReadySeconds, 0))
		}
		w, idle := z.ScaleUp, z.Idle
		idleCPU, idleRSS, idleAPI := "—", "—", "—"
		if z.IdleSeconds > 0 {
			idleCPU = fmt.Sprintf("%s%% / %s%% of a core", num(idle.CPU*100, 2), num(idle.NetbootCPU*100, 2))
			idleRSS = mb(idle.EndRSS)
			idleAPI = num(idle.APIPerSecond, 2)
		}
		fmt.Fprintf(b, "| %d | %s | %s s | %s s | %s | %s / %s s | %s | %s + %s | %s / %s / %s | %s / %s | %s | %s | %s | %s |\n",
			z.Machines, flags(z.ServeArgs), num(z.RegisterSeconds, 0), num(z.CreatedSeconds, 0), ready, num(z.ReadyP50, 0), num(z.ReadyP99, 0), num(w.ReconcilesPerSecond, 1),
			num(w.APIPerMachine, 1), num(w.NetbootAPIPerMachine, 1),
			num(w.ReconcileP99["machine"], 2), num(w.ReconcileP99["host"], 2), num(w.ReconcileP99["machineset"], 2),
			num(w.QueueP99["machine"], 2), num(w.QueueP99["host"], 2), mb(w.PeakRSS), idleCPU, idleRSS, idleAPI)
	}
	fmt.Fprintf(b, "\n")
	for _, z := range s.Sizes {
		if len(z.Runs) > 1 {
			scaleRuns(b, &z)
		}
		if z.Error != "" {
			fmt.Fprintf(b, "- %d Hosts: %s\n", z.Hosts, oneLine(z.Error))
		}
	}
	for _, z := range s.Sizes {
		if z.IdleSeconds <= 0 {
			continue
		}
		polls := "before the Host controller's first power polls (every 10 min per Host, ±20%)"
		if z.IdleAfterRegister >= 480 {
			polls = "the Host controller's power polls were running"
		}
		fmt.Fprintf(b, "- %d Hosts idle window: %s s, starting %s s after the last Host became Available (%s); the BMC emulator\n", z.Hosts, num(z.IdleSeconds, 0), num(z.IdleAfterRegister, 0), polls)
		what := ""
		if len(z.Idle.APIByResource) > 0 {
			what = " (" + kv(z.Idle.APIByResource) + ")"
		}
		fmt.Fprintf(b, "  answered %d requests in it; the controllers made %s API requests%s and %s reconciles.\n", z.IdleBMCRequests,
			num(z.Idle.APIRequests, 0), what, num(sum(z.Idle.Reconciles), 0))
	}
	fmt.Fprintf(b, "\n")

	fmt.Fprintf(b, "**Where the CPU went during the scale-up** (cores = CPU seconds / wall seconds; the machine has %s):\n\n", "2 cores")
	fmt.Fprintf(b, "| Machines | controllers' flags | wall s | controllers | network services | kube-apiserver + etcd | simulated hosts + BMC emulator | controllers' API requests/s mean / peak second | conflicts (409) per Machine |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, z := range s.Sizes {
		w := z.ScaleUp
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s / %s | %s |\n", z.Machines, flags(z.ServeArgs), num(w.Seconds, 0), num(w.CPU, 2), num(w.NetbootCPU, 2),
			num(w.APIServerCPU, 2), num(w.BenchCPU, 2), num(w.APIPerSecond, 1), num(w.APIPeakPerSecond, 0), num(w.APIByCode["409"]/float64(max(z.Machines, 1)), 2))
	}
	fmt.Fprintf(b, "\n")
	// The breakdown per Machine means something only for a size whose
	// Machines all got there.
	if z := largestCompleted(s); z != nil {
		apiBreakdown(b, fmt.Sprintf("scale-up to %d", z.Machines), z.ScaleUp, z.Machines)
		fmt.Fprintf(b, "Counters over the whole %d-Host size: the BMC emulator answered %d requests (%d injected 503s, %d hung), %d logins;\n",
			z.Hosts, z.BMC.Requests, z.BMC.InjectedErrors, z.BMC.InjectedTimeouts, z.BMC.Logins)
		fmt.Fprintf(b, "the simulated hosts booted %d times (%d boots failed, %d script re-requests while Anvil's cache caught up), sent %d agent\n",
			z.Fleet.Boots, z.Fleet.BootsFailed, z.Fleet.ScriptRetries, z.Fleet.Reports)
		fmt.Fprintf(b, "reports, %d action polls and %d node status updates.", z.Fleet.Polls, z.Fleet.NodeStatusPosts)
		if len(z.ConfigDenied) > 0 {
			fmt.Fprintf(b, " Config requests refused by reason: %s.", kv(z.ConfigDenied))
		}
		fmt.Fprintf(b, "\n\n")
	}
	scaleReading(b, s)
}

// rolloutSection writes section 5b, the in-place rollout (issue 7).
func rolloutSection(b *strings.Builder, r *results.Rollout) {
	fmt.Fprintf(b, "## 5b. In-place rollout at scale (issue 7)\n\n")
	if r == nil {
		fmt.Fprintf(b, "Not run.\n\n")
		return
	}
	fmt.Fprintf(b, "A MachineSet of %d simulated Machines, all Ready on kubelet %s, is patched to %s with maxUnavailable %d. Each Machine\n", r.Machines, r.From, r.To, r.MaxUnavailable)
	fmt.Fprintf(b, "is cordoned and drained, its agent gets the plan on its next poll, reports progress, \"installs\" the kubelet (a\n")
	fmt.Fprintf(b, "simulated delay), the kubelet restarts on the new version (the Node reports it) and the agent posts success; the\n")
	fmt.Fprintf(b, "controller verifies the Node and uncordons it. Per Machine, from watch events of the benchmark: **total** = its version\n")
	fmt.Fprintf(b, "patched by the set -> Verified; **agent** = plan published (Applying) -> outcome posted (poll wait + apply);\n")
	fmt.Fprintf(b, "**overhead** = total - agent, the time the controllers add (drain included: with no pods on the Nodes it is only the\n")
	fmt.Fprintf(b, "cordon and an empty eviction list, so there is no drain waiting to exclude); **notice** = outcome posted -> Verified.\n\n")
	fmt.Fprintf(b, "- **Setup**: %s.\n", r.Setup)
	fmt.Fprintf(b, "- Started %s (took %s, registration and the scale-up to %d included), 1-minute load average %.2f at start and %.2f at end.\n",
		r.Started.Format(time.RFC3339), r.Finished.Sub(r.Started).Round(time.Second), r.Machines, r.Load[0], r.Load[1])
	fmt.Fprintf(b, "- Measured with: `%s`.\n\n", r.Command)
	if r.Error != "" {
		fmt.Fprintf(b, "**Did not complete**: %s\n\n", oneLine(r.Error))
	}
	fmt.Fprintf(b, "| Machines | maxUnavailable | upgraded | rollout s | most updating at once | per Machine: total p50 / p99 s | agent p50 / p99 s | **overhead** p50 / p99 / mean s | notice p50 / p99 s | API requests per Machine (controllers + network services) | controllers peak RSS | controllers CPU (cores) |\n")
	fmt.Fprintf(b, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	w := r.Work
	fmt.Fprintf(b, "| %d | %d | %d | %s | %d | %s / %s | %s / %s | **%s / %s / %s** | %s / %s | %s + %s | %s | %s |\n\n",
		r.Machines, r.MaxUnavailable, r.Upgraded, num(r.Seconds, 0), r.MaxUpdating,
		num(r.Total.P50, 1), num(r.Total.P99, 1), num(r.Agent.P50, 1), num(r.Agent.P99, 1),
		num(r.Overhead.P50, 2), num(r.Overhead.P99, 2), num(r.Overhead.Mean, 2), num(r.NoticeOutcome.P50, 2), num(r.NoticeOutcome.P99, 2),
		num(w.APIPerMachine, 1), num(w.NetbootAPIPerMachine, 1), mb(w.PeakRSS), num(w.CPU, 2))
	fmt.Fprintf(b, "Reconciles during the rollout: %s (p99 %s s machine, %s s machineset).\n\n", kv(w.Reconciles),
		num(w.ReconcileP99["machine"], 2), num(w.ReconcileP99["machineset"], 2))
	apiBreakdown(b, fmt.Sprintf("rollout of %d", r.Machines), w, r.Machines)
	rolloutReading(b, r)
}

// rolloutReading explains the rollout's figures.
func rolloutReading(b *strings.Builder, r *results.Rollout) {
	if r.Upgraded == 0 {
		return
	}
	w := r.Work
	lat := w.APILatencyMs["patch machines/status"]
	fmt.Fprintf(b, "**Reading it.** Every step of an upgrade is an API round trip: the set's patch reaching the Machine controller,\n")
	fmt.Fprintf(b, "cordon, an empty drain, the plan published, the outcome noticed, the Node verified and uncordoned. The controllers add %s s\n", num(r.Overhead.P50, 2))
	fmt.Fprintf(b, "per Machine at the median (mean %s s) to the agent's own time. The set kept %d Machines updating at most (budget %d), and\n", num(r.Overhead.Mean, 2), r.MaxUpdating, r.MaxUnavailable)
	fmt.Fprintf(b, "the rollout took %s s. Over the rollout kube-apiserver and etcd used %s cores, the controllers %s, the network services %s and\n",
		num(r.Seconds, 0), num(w.APIServerCPU, 2), num(w.CPU, 2), num(w.NetbootCPU, 2))
	fmt.Fprintf(b, "the simulated fleet %s, of the machine's 2: with that many upgrades at once a Machine status patch took the API server\n", num(w.BenchCPU, 2))
	fmt.Fprintf(b, "%s ms at the median and %s ms at p99, the Machine controller's workers waited on such round trips, and a Machine waited up\n", num(lat[0], 0), num(lat[1], 0))
	fmt.Fprintf(b, "to %s s (p99) in its queue for a worker: that wait is most of the overhead. From the agent's outcome to Verified took %s s at\n", num(w.QueueP99["machine"], 0), num(r.NoticeOutcome.P50, 2))
	fmt.Fprintf(b, "the median and %s s at p99 (the outcome's write wakes the Machine at once; the wait is the queue's). The agent's own time\n", num(r.NoticeOutcome.P99, 1))
	fmt.Fprintf(b, "(median %s s) is its poll (up to 30 s), the simulated apply (10 s) and its reports, which wait on the same API server.\n", num(r.Agent.P50, 0))
	if c := w.APIByCode["409"]; c > 0 {
		fmt.Fprintf(b, "%s of the controllers' requests per Machine were conflicts (409). The audit log shows nearly all of them a\n", num(c/float64(r.Machines), 2))
		fmt.Fprintf(b, "moment after the controller's own status write, on the Node event of its own cordon or uncordon: the reconcile read a\n")
		fmt.Fprintf(b, "cache that did not have that write yet, did the step again and recorded its Event again (the recorder folds a repeat\n")
		fmt.Fprintf(b, "into a series: most of the Event patches, and the pod lists beyond one per drain). Since this run the Machine\n")
		fmt.Fprintf(b, "controller waits a second when its cache is still at the version its last write was made on (not measured yet).")
	}
	fmt.Fprintf(b, " The agent API's applies are the largest share: its progress phases are written at most once per 5 s\n")
	fmt.Fprintf(b, "per Machine, but the simulated agent reports its five phases about 5 s apart (2 s of simulated work each, plus the\n")
	fmt.Fprintf(b, "round trip on the loaded machine), so few are merged here; the real agent's install and switch phases take\n")
	fmt.Fprintf(b, "milliseconds, and those it merges.\n\n")
	fmt.Fprintf(b, "**Changed since the previous measurement** (2026-12-07T18:57Z, the same command and setup: 753 s, overhead p50 / p99\n")
	fmt.Fprintf(b, "22.84 / 42.20 s, notice p50 / p99 13.24 / 31.02 s, 10.2 + 8.3 requests per Machine, Machine queue wait p99 95 s):\n")
	fmt.Fprintf(b, "the Machine controller takes the agent's outcome and verifies the Node in one reconcile and one write (it wrote state\n")
	fmt.Fprintf(b, "Succeeded, then waited for that write's watch event and its turn in the queue to verify), and it no longer writes\n")
	fmt.Fprintf(b, "`status.version` when the kubelet restarts mid-upgrade (the version changes with Verified): that write made the\n")
	fmt.Fprintf(b, "agent's outcome apply conflict. The agent API reads its own last write until its cache has it (a conflict, a read\n")
	fmt.Fprintf(b, "past the cache and another apply for about one Machine in two before), and holds progress phases that come within\n")
	fmt.Fprintf(b, "5 s of the last one written. The MachineSet records one Event per rollout step instead of one per Machine. The\n")
	fmt.Fprintf(b, "overhead fell from 22.84 to %s s at the median and from 42.20 to %s s at p99, the notice from 13.24 to %s s. Issue\n",
		num(r.Overhead.P50, 2), num(r.Overhead.P99, 2), num(r.NoticeOutcome.P50, 2))
	fmt.Fprintf(b, "22's goal (p99 under 1 s) is still not met: with %d upgrades at once the API server is the limit on this 2-core\n", r.MaxUpdating)
	fmt.Fprintf(b, "machine, and a Machine still waits up to %s s (p99) in the controller's queue.\n\n", num(w.QueueP99["machine"], 0))
}

// apiBreakdown lists each process's requests by verb and resource.
func apiBreakdown(b *strings.Builder, what string, w results.Work, per int) {
	if len(w.APIByResource) == 0 && len(w.NetbootAPIByResource) == 0 {
		return
	}
	fmt.Fprintf(b, "**Where the API requests went** (%s; the API server's audit log, by the process's user; per Machine):\n\n", what)
	fmt.Fprintf(b, "| process | verb resource | per Machine | share | what makes them |\n|---|---|---|---|---|\n")
	for _, p := range []struct {
		name string
		m    map[string]float64
	}{{"controllers", w.APIByResource}, {"network services", w.NetbootAPIByResource}} {
		total := 0.0
		for _, v := range p.m {
			total += v
		}
		keys := make([]string, 0, len(p.m))
		for k := range p.m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return p.m[keys[i]] > p.m[keys[j]] || p.m[keys[i]] == p.m[keys[j]] && keys[i] < keys[j]
		})
		for _, k := range keys {
			if p.m[k]/float64(per) < 0.05 {
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s%% | %s |\n", p.name, k, num(p.m[k]/float64(per), 2), num(p.m[k]/total*100, 0), requestWhy[p.name+" "+k])
		}
	}
	fmt.Fprintf(b, "\n")
}

// requestWhy says which code makes a process's requests (read from the
// code of this revision; keep in step when it changes).
var requestWhy = map[string]string{
	"controllers get secrets":                "a BMC credentials Secret read when its resourceVersion in the cache changed (memo in `inventory`); a bootstrap token read to extend it",
	"controllers create events":              "Events of the Host, Machine and MachineSet controllers, one per step (claimed, network boot, joined, created; in a rollout, per Machine: updating, plan published, upgraded; per rollout step of the set: one)",
	"controllers patch events":               "the event recorder folding repeats",
	"controllers patch machines/status":      "one optimistic-lock status patch per step of a Machine (the agent's progress phases are not copied in: they stay in `upgrade.agentResult`), plus the retries after a conflict (409) with the agent API's writes",
	"controllers list secrets":               "bootstrap token lookups before the token informer has synced (afterwards from the informer)",
	"controllers update hosts":               "the claim (an update carrying the resourceVersion read) and the provisioned annotation at join",
	"controllers patch hosts/status":         "the Host controller: the boot request taken (power on with the one-time PXE boot) and state changes; a power poll that finds nothing new writes nothing",
	"controllers list hosts":                 "startup: informers listing (the claim reads the cache)",
	"controllers get hosts":                  "re-reads after conflicts; a claim memo older than 30 s checked with one GET",
	"controllers delete secrets":             "revoking the bootstrap token once the Node is Ready",
	"controllers create machines":            "the MachineSet, in slow-start batches (1, 2, 4 ... 64 creates in parallel); a Machine it created that the cache does not show yet is not created again",
	"controllers patch machines":             "the Machine finalizer (scale-up); the MachineSet setting spec.version (rollout; up to 64 in parallel, each once)",
	"controllers patch machinesets/status":   "the MachineSet's replica counts",
	"controllers patch nodes":                "cordon before and uncordon after the upgrade",
	"controllers list pods":                  "the drain listing the Node's pods (`drain.GetPodsForDeletion`)",
	"network services patch hosts/status":    "per boot: the script's boot credential, then its consumption with the agent credential's hash (one patch), the agent's reports (also after every action)",
	"network services create secrets":        "the bootstrap token minted at the config fetch",
	"network services get secrets":           "reading a still valid bootstrap token of the Machine to hand it out again",
	"network services list secrets":          "token lookups before the token informer has synced (afterwards from the informer)",
	"network services get hosts":             "a credential the Host cache does not show yet, checked on the API server (at most once per Host per 5 s)",
	"network services patch machines/status": "the agent's progress phases (five per plan, written at most once per 5 s per Machine) and its outcome, plus the applies that met a conflict (409)",
	"network services get machines":          "re-reads after a conflict on the Machine's status",
}

func flags(args []string) string {
	if len(args) == 0 {
		return "defaults"
	}
	return "`" + strings.Join(args, " ") + "`"
}

func sum(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}

func largestScale(s *results.Scale) *results.ScaleSize {
	var best *results.ScaleSize
	for i := range s.Sizes {
		z := &s.Sizes[i]
		if z.ScaleUp.Seconds > 0 && (best == nil || z.Machines > best.Machines) {
			best = z
		}
	}
	return best
}

// sizedHead writes the heading of a section measured in sizes, and says
// so and returns false when there is nothing to show: not run, or failed
// before any size.
func sizedHead(b *strings.Builder, title string, ran bool, err string, sizes int) bool {
	fmt.Fprintf(b, "## %s\n\n", title)
	switch {
	case !ran:
		fmt.Fprintf(b, "Not run.\n\n")
		return false
	case err != "" && sizes == 0:
		fmt.Fprintf(b, "Failed to run: %s\n\n", oneLine(err))
		return false
	}
	return true
}

// largestCompleted is the largest size whose Machines all became Ready,
// else the largest size.
func largestCompleted(s *results.Scale) *results.ScaleSize {
	var best *results.ScaleSize
	for i := range s.Sizes {
		z := &s.Sizes[i]
		if z.Completed && z.ScaleUp.Seconds > 0 && (best == nil || z.Machines > best.Machines) {
			best = z
		}
	}
	if best == nil {
		return largestScale(s)
	}
	return best
}

// scaleSummary is the summary table's rows for sections 5 and 5b.
func scaleSummary(s *results.Scale, r *results.Rollout) [][5]string {
	var rows [][5]string
	if s != nil {
		if z := largestScale(s); z != nil {
			v := fmt.Sprintf("%s s for %d Machines", num(z.ReadySeconds, 0), z.Machines)
			if !z.Completed {
				v = fmt.Sprintf("%d of %d Ready after %s s", z.Ready, z.Machines, num(z.ReadySeconds, 0))
			}
			met := z.Completed && z.Machines >= 5000 && z.ReadySeconds <= 300 && z.IdleSeconds > 0 && z.Idle.CPU < 0.02
			verdict := "not met in this run"
			switch {
			case met:
				verdict = "met in this run"
			case z.Machines < 5000:
				verdict = fmt.Sprintf("not met in this run (largest size run: %d; see section 5)", z.Machines)
			}
			idle := "—"
			if z.IdleSeconds > 0 {
				idle = num(z.Idle.CPU*100, 2) + "% of a core"
			}
			rows = append(rows, [5]string{"controller scale: MachineSet 0 -> N, all Ready; idle CPU after", v + "; idle " + idle, "no peer run", "",
				"5,000 Ready within a few minutes, idle < 2% of a core: " + verdict})
		}
	}
	if r != nil && r.Upgraded > 0 {
		verdict := "met in this run"
		if r.Machines < 5000 || !(r.Overhead.P99 < 1) {
			verdict = "not met in this run"
		}
		rows = append(rows, [5]string{fmt.Sprintf("in-place rollout of %d, controller overhead per Machine p50 / p99", r.Machines),
			fmt.Sprintf("%s / %s s", num(r.Overhead.P50, 2), num(r.Overhead.P99, 2)), "no peer run", "",
			"5,000 Machines, overhead p99 < 1 s (issue 22): " + verdict})
	}
	return rows
}

func kv(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if v := m[k]; !math.IsNaN(v) {
			parts = append(parts, fmt.Sprintf("%s %s", k, num(v, 0)))
		}
	}
	return strings.Join(parts, ", ")
}

// scaleReading explains the figures: what bounds the time, what grows
// with the fleet, what an idle fleet costs, and what would fix it (changes
// to machine/, inventory/ and ignition/ proposed, not made by the
// benchmark).
func scaleReading(b *strings.Builder, s *results.Scale) {
	var def, fast, polled *results.ScaleSize
	var small *results.ScaleSize
	for i := range s.Sizes {
		z := &s.Sizes[i]
		if z.ScaleUp.Seconds <= 0 {
			continue
		}
		if len(z.ServeArgs) == 0 && z.Completed && (def == nil || z.Machines > def.Machines) {
			def = z
		}
		if len(z.ServeArgs) == 0 && (small == nil || z.Machines < small.Machines) {
			small = z
		}
		if len(z.ServeArgs) > 0 && (fast == nil || z.Machines > fast.Machines) {
			fast = z
		}
		if z.IdleSeconds > 0 && z.IdleAfterRegister >= 480 && (polled == nil || z.Machines > polled.Machines) {
			polled = z
		}
	}
	if def == nil {
		return
	}
	w := def.ScaleUp
	fmt.Fprintf(b, "**Reading it.** The controllers are not CPU-bound: at %d Machines they used %s cores on average during the\n", def.Machines, num(w.CPU, 2))
	fmt.Fprintf(b, "scale-up while kube-apiserver and etcd used %s (on a shared machine: see the load average). The time goes to waiting on\n", num(w.APIServerCPU, 2))
	fmt.Fprintf(b, "the API server and on the simulated boot itself (POST, kernel, agent and kubelet start: about 75 s per host). The\n")
	fmt.Fprintf(b, "MachineSet created all %d Machines within %s s (slow-start batches of up to 64 creates in parallel)", def.Machines, num(def.CreatedSeconds, 0))
	if l, ok := w.APILatencyMs["create machines"]; ok {
		fmt.Fprintf(b, "; a create took the API server %s ms at the median and %s ms at p99", num(l[0], 0), num(l[1], 0))
	}
	fmt.Fprintf(b, ".\nA Machine waited up to %s s (p99) in the Machine controller's queue for one of its workers (`--machine-workers`,\n", num(w.QueueP99["machine"], 1))
	fmt.Fprintf(b, "default 32; reconcile p99 %s s). controller-runtime gives every resource type its own client limited to\n", num(w.ReconcileP99["machine"], 2))
	fmt.Fprintf(b, "`--kube-api-qps` (default 50/s, burst 100); the controllers' busiest second made %s requests.\n\n", num(w.APIPeakPerSecond, 0))

	if small != nil && small != def {
		sw := small.ScaleUp
		fmt.Fprintf(b, "**What grows with the fleet.** From %d to %d Machines the requests per Machine went from %s to %s and all Ready from\n", small.Machines, def.Machines,
			num(sw.APIPerMachine+sw.NetbootAPIPerMachine, 1), num(w.APIPerMachine+w.NetbootAPIPerMachine, 1))
		fmt.Fprintf(b, "%s s to %s s. ", num(small.ReadySeconds, 0), num(def.ReadySeconds, 0))
		if n := def.ScaleUp.APIByCode["504"]; n > 0 {
			fmt.Fprintf(b, "At %d the API server timed out %s requests (504). ", def.Machines, num(n, 0))
		}
		if n := def.ScaleUp.APIByCode["409"]; n > 0 {
			fmt.Fprintf(b, "The controllers' writes met %s conflicts (409) at %d, each a re-read and another reconcile. ", num(n, 0), def.Machines)
		}
		if def.Fleet.BootsFailed > 0 {
			fmt.Fprintf(b, "%d boots failed there (config refused: %s) and were retried after the boot timeout.", def.Fleet.BootsFailed, kv(def.ConfigDenied))
		}
		fmt.Fprintf(b, "\n\n")
	}

	idle := def
	if polled != nil {
		idle = polled
	}
	if idle.IdleSeconds > 0 {
		iw := idle.Idle
		fmt.Fprintf(b, "**Idle** (%d Hosts, a %s s window starting %s s after the last Host became Available): the controllers used %s%% of a\n", idle.Hosts, num(idle.IdleSeconds, 0), num(idle.IdleAfterRegister, 0), num(iw.CPU*100, 2))
		fmt.Fprintf(b, "core and made %s API requests/s", num(iw.APIPerSecond, 2))
		if len(iw.APIByResource) > 0 {
			fmt.Fprintf(b, " (%s)", kv(iw.APIByResource))
		}
		fmt.Fprintf(b, "; the network services %s%% of a core. The BMC emulator answered %d requests in the window: the Host controller's\n", num(iw.NetbootCPU*100, 2), idle.IdleBMCRequests)
		fmt.Fprintf(b, "power polls (every 10 minutes per Host, ±20%%), each a BMC read that writes nothing unless the power state or an error\n")
		fmt.Fprintf(b, "changed, with the credentials from memory. The Machine controller ran %s reconciles in the window, the Host\n", num(iw.Reconciles["machine"], 0))
		fmt.Fprintf(b, "controller %s (the polls).", num(iw.Reconciles["host"], 0))
		if n := iw.NetbootAPIPerMachine * float64(idle.Machines); n > 0 {
			fmt.Fprintf(b, " The network services made %s API requests", num(n, 0))
			if len(iw.NetbootAPIByResource) > 0 {
				fmt.Fprintf(b, " (%s)", kv(iw.NetbootAPIByResource))
			}
			fmt.Fprintf(b, ".")
		}
		fmt.Fprintf(b, "\n\n")
	}

	if def.Machines < 5000 && (fast == nil || fast.Machines < 5000 || !fast.Completed) {
		est := def.ReadySeconds / float64(def.Machines) * 5000
		fmt.Fprintf(b, "**5,000.** The largest size that completed here with the defaults is %d Machines; linearly that is about %s min for\n", def.Machines, num(est/60, 0))
		fmt.Fprintf(b, "5,000 (registration not counted).")
		if fast != nil {
			fmt.Fprintf(b, " The run with %s: %s.", flags(fast.ServeArgs), nonEmpty(fast.Error, fmt.Sprintf("%d of %d Ready after %s s", fast.Ready, fast.Machines, num(fast.ReadySeconds, 0))))
		}
		fmt.Fprintf(b, "\n\n")
	} else if fast != nil {
		fw := fast.ScaleUp
		done := fmt.Sprintf("all %d were Ready after %s s", fast.Machines, num(fast.ReadySeconds, 0))
		if !fast.Completed {
			done = fmt.Sprintf("%d of %d were Ready after %s s", fast.Ready, fast.Machines, num(fast.ReadySeconds, 0))
		}
		fmt.Fprintf(b, "**With %s**, %s (created after %s s); the controllers averaged %s requests/s (peak %s in one second)\n", flags(fast.ServeArgs), done, num(fast.CreatedSeconds, 0), num(fw.APIPerSecond, 0), num(fw.APIPeakPerSecond, 0))
		fmt.Fprintf(b, "and %s cores, kube-apiserver and etcd %s cores.\n\n", num(fw.CPU, 2), num(fw.APIServerCPU, 2))
	}

	fmt.Fprintf(b, "**Changed after the first measurement** (2026-11-29, on a machine loaded by other work: 2,000 Machines Ready after 1,816 s,\n")
	fmt.Fprintf(b, "41 API requests per Machine, idle 7.3%% of a core and 12 API requests/s with the power polls running):\n\n")
	for _, f := range []string{
		"MachineSet: Machines are created in slow-start batches (1, 2, 4 ... 64 in parallel, stopping after a failing batch) instead of one request after another.",
		"Host controller: a power poll that finds nothing new writes nothing (`status.lastPowerCheck` is written only with a real change), so it no longer wakes the Host's Machine; BMC credentials are kept per Secret and re-read only when the Secret's resourceVersion in the cache changes or a BMC refuses them.",
		"Bootstrap tokens are looked up in an informer (one per process, shared by config delivery and the Machine controller), and a joining Machine looks only when a token may need extending.",
		"Claim: no API LIST of the namespace's Hosts per claim; the pending-claim memo is checked with one GET once it is older than 30 s.",
		"Config delivery writes the credential's consumption and the agent credential in one Host status patch; a credential the cache does not hold yet is checked with one GET of that Host (a lagging cache no longer fails boots with 403).",
		"Machine workers default to 32 (`--machine-workers`); an upgrade's outcome wakes its Machine at once.",
		"Found at 5,000 (2026-11-30, by profiling the controllers): a claim reads at most 64 free Hosts from a claimable index instead of copying every matching Host; a free Host's events wake only the Machines waiting for hardware, not every unclaimed one; the MachineSet and the claims read the cache without deep copies; Redfish sessions outlive the 10-minute power poll (a poll was login, read and logout; now one read). The controllers averaged 0.34 cores over the scale-up instead of 0.48 (824 s then, 961 s now: the API server stayed the limit). After this run, the BMC pool sweeps idle sessions at most once per tenth of its idle timeout instead of on every call (5% of the controllers' CPU in a profile); not measured here.",
		"Idle, second pass (2026-11-30): Node updates that change only heartbeat times, and Host updates that change only the agent's lastSeen or the power-check time, wake no Machine; an agent report is written only when it changes something besides lastSeen (lastSeen is refreshed hourly); the agent's action poll is a long poll (held up to 5 minutes and answered as soon as an action is set) instead of a request every 30 s. The benchmark changed with it: each simulated agent keeps its HTTP connection alive, as anvil-agent does (before, every agent request opened a new connection), so the idle figures before and after are not measured the same way.",
		"Idle, third pass (2026-11-30, from CPU profiles of the idle window, `--scale-profile`): the power poll decodes only the ComputerSystem's PowerState (gofish's decode of the whole resource was 15% of the controllers' CPU in a profile of 1,000 Hosts polled every minute), and a reconnect to a BMC resumes its TLS session (the emulator now closes idle connections after a minute, as BMCs do, so each 10-minute poll reconnects). At 5,000 the controllers' idle CPU went from 8.1% to 7.2% of a core, about 7 ms per poll. Also since the last run: boot credential writes are JSON patches that test only the fields they change (no 409 from other writers).",
	} {
		fmt.Fprintf(b, "- %s\n", f)
	}
	fmt.Fprintf(b, "\n**What would still help:** fewer Machine status writes (a boot passes through five or six reconciles that each write, and\n")
	fmt.Fprintf(b, "the agent API's optimistic writes conflict with them; coalescing transitions or server-side apply of the controller's own\n")
	fmt.Fprintf(b, "fields would cut both), one client rate limiter shared by all resource types so `--kube-api-qps` means one budget, and\n")
	fmt.Fprintf(b, "the MachineSet status patched at most once a second rather than on every change of a Machine. At idle the poll is the\n")
	fmt.Fprintf(b, "fleet's main remaining cost: in the controllers' idle profile at 5,000, the TLS handshake of each reconnect was 15%% (most\n")
	fmt.Fprintf(b, "of it the hybrid post-quantum key share, which Anvil keeps), the garbage collector 12%%, the Go scheduler 17%% and system\n")
	fmt.Fprintf(b, "calls 21%%: per poll, not per byte. Under 2%% of a core at 5,000 Hosts takes polling less often (a Host whose power has\n")
	fmt.Fprintf(b, "not changed for several polls could back off to an hour, with any action or error resetting it), a policy Anvil has not adopted.\n")
	fmt.Fprintf(b, "For comparison, Ironic (the engine under Metal3) syncs every node's power state once a minute by default\n")
	fmt.Fprintf(b, "(`[conductor] sync_power_state_interval = 60`): ten times as often as Anvil's poll.\n\n")
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// scaleRuns lists each run of a size measured more than once: the table
// shows the medians of these, and its other figures come from one run.
func scaleRuns(b *strings.Builder, z *results.ScaleSize) {
	ready, idle, api := make([]string, len(z.Runs)), make([]string, len(z.Runs)), make([]string, len(z.Runs))
	for i, r := range z.Runs {
		ready[i] = num(r.ReadySeconds, 0) + " s"
		if !r.Completed {
			ready[i] = fmt.Sprintf("not completed (%d of %d after %s s)", r.Ready, z.Machines, num(r.ReadySeconds, 0))
		}
		idle[i] = "—"
		if r.IdleSeconds > 0 {
			idle[i] = fmt.Sprintf("%s%% / %s%%", num(r.IdleCPU*100, 2), num(r.IdleNetbootCPU*100, 2))
		}
		api[i] = fmt.Sprintf("%s + %s", num(r.APIPerMachine, 1), num(r.NetbootAPIPerMachine, 1))
	}
	fmt.Fprintf(b, "- %d Hosts%s, %d runs, each with its own seed for the BMC faults (the table shows their medians; its other columns and the sections below come from run %d, the median time to Ready):\n",
		z.Hosts, flagsNote(z.ServeArgs), len(z.Runs), z.MedianRun+1)
	fmt.Fprintf(b, "  all Ready after %s; idle CPU controllers / network services %s; API requests per Machine %s.\n",
		strings.Join(ready, ", "), strings.Join(idle, ", "), strings.Join(api, ", "))
	for i, r := range z.Runs {
		if r.Error != "" && i != z.MedianRun {
			fmt.Fprintf(b, "  Run %d: %s\n", i+1, oneLine(r.Error))
		}
	}
}

func flagsNote(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " with " + flags(args)
}
