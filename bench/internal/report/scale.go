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
	fmt.Fprintf(b, "## 5. Controller scale\n\n")
	if s == nil {
		fmt.Fprintf(b, "Not run.\n\n")
		return
	}
	if s.Error != "" && len(s.Sizes) == 0 {
		fmt.Fprintf(b, "Failed to run: %s\n\n", oneLine(s.Error))
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
	fmt.Fprintf(b, "  (`--scale-sizes`, `--scale-extra 5000 --scale-extra-args \"--kube-api-qps=500 --kube-api-burst=1000\"`, `--rollout-machines`, `--keep` for the\n")
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
	if z := largestScale(s); z != nil {
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
	fmt.Fprintf(b, "**Reading it.** The controllers add %s s per Machine at the median (mean %s s) to the agent's own time: the set's patch\n", num(r.Overhead.P50, 2), num(r.Overhead.Mean, 2))
	fmt.Fprintf(b, "reaching the Machine controller, cordon, an empty drain, the plan published, the outcome noticed, the Node verified and\n")
	fmt.Fprintf(b, "uncordoned, each an API round trip. The set kept %d Machines updating at most (budget %d), and the rollout took %s s, about\n", r.MaxUpdating, r.MaxUnavailable, num(r.Seconds, 0))
	fmt.Fprintf(b, "%d / %d x the agent's median %s s (its 30 s poll and the simulated apply).", r.Machines, r.MaxUnavailable, num(r.Agent.P50, 0))
	if r.NoticeOutcome.P99 > 30 {
		fmt.Fprintf(b, " The tail is the outcome noticed late (p99 %s s from the\n", num(r.NoticeOutcome.P99, 0))
		fmt.Fprintf(b, "agent's outcome to Verified, against a median of %s s): the agent API writes the outcome into Machine.status, but the\n", num(r.NoticeOutcome.P50, 2))
		fmt.Fprintf(b, "Machine controller reconciles its own type only on spec, label, annotation or deletion changes. It usually learns of\n")
		fmt.Fprintf(b, "the outcome from the Host status write of the agent's next report; when its Machine cache has not caught up with the\n")
		fmt.Fprintf(b, "outcome by then, it waits for the one-minute requeue of the Applying state. Letting changes of `status.upgrade.state`\n")
		fmt.Fprintf(b, "through its predicate (or requeueing Applying after seconds) would remove that minute.")
	}
	fmt.Fprintf(b, "\n")
	if c := w.APIByCode["409"]; c > 0 {
		fmt.Fprintf(b, "%s of the controllers' requests per Machine were conflicts (409): their Machine status patches carry the\n", num(c/float64(r.Machines), 1))
		fmt.Fprintf(b, "resourceVersion they read, and the agent API writes the same status five times per plan (its progress phases); each\n")
		fmt.Fprintf(b, "conflict costs a retry and another reconcile. The MachineSet recounts its Machines and patches its status on every change\n")
		fmt.Fprintf(b, "of any of them (%s reconciles for %d Machines).", num(w.Reconciles["machineset"], 0), r.Machines)
	}
	fmt.Fprintf(b, "\n\n")
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
	"controllers get secrets":                "the Host controller reads the BMC credentials Secret through the API reader before every BMC call (`inventory.DriverOptions`): registration, each boot, each power read-back and poll",
	"controllers create events":              "Events of the Host, Machine and MachineSet controllers, one per step (claimed, network boot, joined, created; in a rollout: updating, plan published, upgraded, rollout step)",
	"controllers patch events":               "the event recorder folding repeats",
	"controllers patch machines/status":      "one optimistic-lock status patch per phase change of a Machine, plus the retries after a conflict (409) with the agent API's writes",
	"controllers list secrets":               "bootstrap token lookups (`ignition/token.List`, a LIST of kube-system Secrets by label, not from a cache): when a boot is requested, on every reconcile of a Machine waiting for its Node (`keepTokensAlive`) and before revoking; the API server filters every token Secret each time",
	"controllers update hosts":               "the claim (an update carrying the resourceVersion read) and the provisioned annotation at join",
	"controllers patch hosts/status":         "the Host controller: the boot request taken (power on with the one-time PXE boot), state changes, and `status.lastPowerCheck` after every power poll",
	"controllers list hosts":                 "the claim re-lists the namespace's Hosts by consumer label through the API reader before taking one (a LIST the API server answers by filtering every Host)",
	"controllers get hosts":                  "re-reads after conflicts (`updateHost`)",
	"controllers delete secrets":             "revoking the bootstrap token once the Node is Ready",
	"controllers create machines":            "the MachineSet, one create at a time",
	"controllers patch machines":             "the Machine finalizer (scale-up); the MachineSet setting spec.version (rollout)",
	"controllers patch machinesets/status":   "the MachineSet's replica counts",
	"controllers patch nodes":                "cordon before and uncordon after the upgrade",
	"controllers list pods":                  "the drain listing the Node's pods (`drain.GetPodsForDeletion`)",
	"network services patch hosts/status":    "per boot: the script's boot credential, its use by the config fetch, the agent credential's hash, the agent's report (also after every action)",
	"network services create secrets":        "the bootstrap token minted at the config fetch",
	"network services list secrets":          "looking for a still valid token of the Machine before minting one (a LIST by label)",
	"network services patch machines/status": "the agent's progress phases (five per plan) and its outcome",
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
		rows = append(rows, [5]string{fmt.Sprintf("in-place rollout of %d, controller overhead per Machine p50 / p99", r.Machines),
			fmt.Sprintf("%s / %s s", num(r.Overhead.P50, 2), num(r.Overhead.P99, 2)), "no peer run", "", "(issue 7: recorded, no target)"})
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
	fmt.Fprintf(b, "the API server, one round trip after another. The MachineSet creates its Machines one request after another in a single\n")
	fmt.Fprintf(b, "reconcile, so the last of the %d existed only %s s after the scale-up began (of %s s to all Ready)", def.Machines, num(def.CreatedSeconds, 0), num(def.ReadySeconds, 0))
	if l, ok := w.APILatencyMs["create machines"]; ok {
		fmt.Fprintf(b, "; a create took the API server %s ms at the median and %s ms at p99 under this load", num(l[0], 0), num(l[1], 0))
		if sec, ok := w.APIServerSeconds["create machines"]; ok && def.CreatedSeconds > sec {
			fmt.Fprintf(b, ", %s s in all, so\nfor the other %s s the MachineSet waited between creates (its client's budget, which the Machine controller's\nstatus writes share)", num(sec, 0), num(def.CreatedSeconds-sec, 0))
		}
	}
	fmt.Fprintf(b, ".\nEach Machine then passes through five to seven reconciles of a few API calls each and waited up to %s s (p99) in the\n", num(w.QueueP99["machine"], 0))
	fmt.Fprintf(b, "Machine controller's queue for one of its 16 workers (reconcile p99 %s s). Client-side limits add to the waits:\n", num(w.ReconcileP99["machine"], 2))
	fmt.Fprintf(b, "controller-runtime gives every resource type its own client limited to `--kube-api-qps` 50/s (burst 100), and the\n")
	fmt.Fprintf(b, "Machine type's (creates, finalizers, status patches) nears it while the set is being created (the controllers' busiest\n")
	fmt.Fprintf(b, "second: %s requests).\n\n", num(w.APIPeakPerSecond, 0))

	if small != nil && small != def {
		sw := small.ScaleUp
		fmt.Fprintf(b, "**What grows with the fleet.** From %d to %d Machines the requests per Machine went from %s to %s and all Ready from\n", small.Machines, def.Machines,
			num(sw.APIPerMachine+sw.NetbootAPIPerMachine, 1), num(w.APIPerMachine+w.NetbootAPIPerMachine, 1))
		fmt.Fprintf(b, "%s s to %s s. The longer a scale-up lasts, the more of the Host controller's power polls fall inside it (each a\n", num(small.ReadySeconds, 0), num(def.ReadySeconds, 0))
		fmt.Fprintf(b, "Secret GET and a Host status write, see below), and two requests cost more with every Host or Machine: the claim's LIST\n")
		fmt.Fprintf(b, "of the namespace's Hosts by label")
		if a, c := sw.APILatencyMs["list hosts"], w.APILatencyMs["list hosts"]; a != [2]float64{} && c != [2]float64{} {
			fmt.Fprintf(b, " (API server p99 %s ms at %d, %s ms at %d)", num(a[1], 0), small.Machines, num(c[1], 0), def.Machines)
		}
		fmt.Fprintf(b, " and the bootstrap-token LISTs of kube-system Secrets")
		if a, c := sw.APILatencyMs["list secrets"], w.APILatencyMs["list secrets"]; a != [2]float64{} && c != [2]float64{} {
			fmt.Fprintf(b, " (p50 %s ms at %d, %s ms at %d)", num(a[0], 0), small.Machines, num(c[0], 0), def.Machines)
		}
		fmt.Fprintf(b, ": the API server filters every object for each. ")
		if n := def.ScaleUp.APIByCode["504"]; n > 0 {
			fmt.Fprintf(b, "At %d the API server timed out %s requests (504). ", def.Machines, num(n, 0))
		}
		if def.Fleet.BootsFailed > 0 {
			fmt.Fprintf(b, "%d boots failed there: their config fetch, %s after the script, was refused (%s) because the network services'\n", def.Fleet.BootsFailed, "30 s", kv(def.ConfigDenied))
			fmt.Fprintf(b, "Host cache did not yet hold the script's credential (their watch lagged that far behind on the overloaded machine); Ignition\n")
			fmt.Fprintf(b, "gives up on a 403, so those Machines waited for the 20-minute boot timeout and booted again, which is most of the gap\n")
			fmt.Fprintf(b, "between the per-Machine p99 (%s s) and all Ready (%s s).", num(def.ReadyP99, 0), num(def.ReadySeconds, 0))
		}
		fmt.Fprintf(b, "\n\n")
	}

	if polled != nil {
		iw := polled.Idle
		fmt.Fprintf(b, "**Idle.** With the power polls running (the %d-Host idle window started %s s after registration), the controllers made\n", polled.Hosts, num(polled.IdleAfterRegister, 0))
		fmt.Fprintf(b, "%s API requests/s and used %s%% of a core at idle, and the BMC emulator answered %d requests in %s s: every Host's\n", num(iw.APIPerSecond, 1), num(iw.CPU*100, 1), polled.IdleBMCRequests, num(polled.IdleSeconds, 0))
		fmt.Fprintf(b, "poll (every 10 minutes, ±20%%) reads the credentials Secret from the API server, asks the BMC, and writes\n")
		fmt.Fprintf(b, "`status.lastPowerCheck` even when nothing changed; that write wakes the Host's Machine (%s Machine reconciles in the window).\n", num(iw.Reconciles["machine"], 0))
		fmt.Fprintf(b, "All of it is proportional to the Hosts: about %s requests/s and %s%% of a core per 1,000 Hosts, so at 5,000 Hosts about\n", num(iw.APIPerSecond/float64(polled.Hosts)*1000, 1), num(iw.CPU*100/float64(polled.Hosts)*1000, 2))
		fmt.Fprintf(b, "%s%% of a core (extrapolated, above issue 9's 2%%). ", num(iw.CPU*100/float64(polled.Hosts)*5000, 1))
		var early []string
		for _, z := range s.Sizes {
			if z.IdleSeconds > 0 && z.IdleAfterRegister < 480 {
				early = append(early, fmt.Sprintf("%d (%s%%)", z.Hosts, num(z.Idle.CPU*100, 2)))
			}
		}
		if len(early) > 0 {
			fmt.Fprintf(b, "The smaller sizes' idle windows came before the first polls and show the floor without them: %s of a core, the\n", strings.Join(early, ", "))
			fmt.Fprintf(b, "kubelets' node status every 5 minutes waking one reconcile each and nothing written.")
		}
		fmt.Fprintf(b, "\n\n")
	}

	if def.Machines < 5000 && (fast == nil || fast.Machines < 5000 || !fast.Completed) {
		est := def.ReadySeconds / float64(def.Machines) * 5000
		fmt.Fprintf(b, "**5,000.** The largest size that completed here is %d Machines. Scaling its time linearly gives about %s min for 5,000\n", def.Machines, num(est/60, 0))
		fmt.Fprintf(b, "(registration not counted), beyond the half hour this benchmark allows a size on this shared 2-core machine, so 5,000 is\n")
		fmt.Fprintf(b, "reported by its trend, not measured.")
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

	fmt.Fprintf(b, "**What would fix it** (proposed for machine/, inventory/ and ignition/, where the requests come from; not changed here):\n\n")
	for _, f := range []string{
		"MachineSet: create Machines in parallel slow-start batches (1, 2, 4, ... as the ReplicaSet controller does) instead of one request after another in one reconcile.",
		"Host controller, power polls: do not write `status.lastPowerCheck` when nothing changed (keep the time in memory, or write it at most hourly), and let the Machine controller's Host watch ignore Host status fields a Machine does not read. An idle fleet then costs one BMC read per Host per poll interval and nothing on the API server.",
		"Host controller: read BMC credentials from the manager's cache (a Secret informer limited to the Secrets Hosts name) or keep them in `bmc.Pool` keyed by the Secret's resourceVersion, instead of an API GET before every BMC call (registration, each boot, each power read-back and poll).",
		"Bootstrap tokens: serve `token.List` from an informer on kube-system's bootstrap-token Secrets (label-selected) instead of a LIST per reconcile of a joining Machine and per config fetch; each LIST makes the API server filter every token Secret, so the total cost grows with N² during a scale-up.",
		"Claim: drop the API LIST of the namespace's Hosts by consumer label before each claim (O(N) on the server per claim, the slowest request at scale) in favour of the cache plus the pending-claim memo the controller already keeps, or a GET of the one Host it is about to take.",
		"Fewer Machine status writes: a boot passes through five or six reconciles that each write (claimed, powering on, network booting, booted, waiting for the Node, Ready), and conflicts (409) with the agent API's optimistic writes add retries; coalescing transitions and applying the controller's own fields server-side would cut both.",
		"More Machine workers than 16 (`MaxConcurrentReconciles`, not a flag of `anvil serve`): reconciles that are mostly API round trips leave the queue waiting; and document or raise `--kube-api-qps`/`--kube-api-burst` for large fleets.",
		"Robustness: the config endpoint and the agent API authenticate against the informer cache; a request that reaches the network services before their cache holds the new credential is refused (403 for the config, which Ignition does not retry; 401 for the agent, which then waits its 10-minute report interval). On a cache miss, re-reading the MAC's (or credential's) Host from the API server once would close that window.",
	} {
		fmt.Fprintf(b, "- %s\n", f)
	}
	fmt.Fprintf(b, "\n")
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
