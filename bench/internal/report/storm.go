package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

// storm writes section 4, the boot storm. There is no peer: no other tool
// does the whole path (DHCP, TFTP, iPXE, a script with a one-time
// credential, kernel and initrd, a config rendered per host with a token
// minted at first fetch), so the figures stand alone; sections 1-3 put
// each service beside its peers.
func storm(b *strings.Builder, s *results.Storm, o Options) {
	if s == nil {
		sizedHead(b, "4. Boot storm", false, "", 0)
		return
	}
	if !sizedHead(b, "4. Boot storm", true, s.Error, len(s.Sizes)) {
		return
	}
	fmt.Fprintf(b, "A rack of N hosts powers on at once and network-boots from Anvil up to the last byte of its config. Every host is\n")
	fmt.Fprintf(b, "a real Host object (`manual://`, no BMC) claimed by its own Machine of a MachineClass that renders (the QEMU lab's\n")
	fmt.Fprintf(b, "Butane template), so Anvil sets the boot request, mints the one-time boot credential, hands out the script once,\n")
	fmt.Fprintf(b, "renders Ignition and mints a bootstrap token per host exactly as in production. \"Power on\" is acknowledging the\n")
	fmt.Fprintf(b, "manual power action of every Host (`anvil hosts ack-power`); the hosts start once all are acknowledged.\n\n")
	fmt.Fprintf(b, "- **Each simulated host** (`anvil-bench load storm`, one process for the rack, in the load namespace): %s.\n", s.Client)
	fmt.Fprintf(b, "- **Anvil**: %s.\n", s.Setup)
	var files []string
	for _, f := range s.Files {
		files = append(files, fmt.Sprintf("%s %s (%s)", f.Name, mb(f.Bytes), f.Via))
	}
	fmt.Fprintf(b, "- **Per host**: %s, plus the script and the config (a few KB each). The kernel and initrd have the sizes of the\n", strings.Join(files, ", "))
	fmt.Fprintf(b, "  lab image's (random bytes).\n")
	fmt.Fprintf(b, "- **Time to last byte** is from a host's first DISCOVER to the last byte of its config. It includes %.0f s the\n", s.ClientWaitSeconds)
	fmt.Fprintf(b, "  clients spend by design: EDK2 collects DHCP offers for its whole first 4 s window, and the simulated kernel boot.\n")
	fmt.Fprintf(b, "- **No peer**: nothing else serves this whole path, so there is no peer to run the same storm against; sections 1-3\n")
	fmt.Fprintf(b, "  compare each service with its peers.\n")
	fmt.Fprintf(b, "- Started %s (took %s), load average %.2f / %.2f / %.2f at start, %.2f / %.2f / %.2f at end.\n\n",
		s.Started.Format(time.RFC3339), s.Finished.Sub(s.Started).Round(time.Second),
		s.LoadStart[0], s.LoadStart[1], s.LoadStart[2], s.LoadEnd[0], s.LoadEnd[1], s.LoadEnd[2])

	fmt.Fprintf(b, "| hosts | booted (runs) | p50 s | p90 s | p99 s | max s | last host done s | netboot CPU s (cores) | netboot RSS idle / peak MB | controllers CPU s / peak MB | apiserver+etcd CPU s |\n")
	fmt.Fprintf(b, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, z := range s.Sizes {
		runs := z.Runs
		if len(runs) == 0 {
			continue
		}
		var booted []string
		for _, r := range runs {
			if r.Error != "" {
				booted = append(booted, "error")
				continue
			}
			booted = append(booted, fmt.Sprintf("%d", r.Succeeded))
		}
		ok := okRuns(runs)
		med := func(f func(results.StormRun) float64) float64 { return medianOf(ok, f) }
		api := "—"
		if v := med(func(r results.StormRun) float64 {
			if r.APIServer == nil {
				return math.NaN()
			}
			return r.APIServer.CPUSeconds
		}); !math.IsNaN(v) {
			api = num(v, 1)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | **%s** | %s | %s | %s (%s) | %s / %s | %s / %s | %s |\n", z.Hosts, strings.Join(booted, ", "),
			num(med(func(r results.StormRun) float64 { return r.P50 }), 1), num(med(func(r results.StormRun) float64 { return r.P90 }), 1),
			num(med(func(r results.StormRun) float64 { return r.P99 }), 1), num(med(func(r results.StormRun) float64 { return r.Max }), 1),
			num(med(func(r results.StormRun) float64 { return r.Seconds }), 1),
			num(med(func(r results.StormRun) float64 { return r.Netboot.CPUSeconds }), 1), num(med(func(r results.StormRun) float64 { return r.Netboot.Cores }), 2),
			num(med(func(r results.StormRun) float64 { return float64(r.Netboot.IdleRSS) / 1e6 }), 0), num(med(func(r results.StormRun) float64 { return float64(r.Netboot.PeakRSS) / 1e6 }), 0),
			num(med(func(r results.StormRun) float64 { return r.Controllers.CPUSeconds }), 1), num(med(func(r results.StormRun) float64 { return float64(r.Controllers.PeakRSS) / 1e6 }), 0),
			api)
	}
	fmt.Fprintf(b, "\nEvery figure is the median over the runs (booted lists each run). Time percentiles are over the hosts that booted.\n")
	fmt.Fprintf(b, "CPU is from /proc for each process between power-on and the last host; cores = CPU s / wall s.\n")
	var peaks []string
	for _, z := range s.Sizes {
		for _, r := range z.Runs {
			if r.LoadMax > 0 {
				peaks = append(peaks, fmt.Sprintf("%d: %.1f", z.Hosts, r.LoadMax))
			}
		}
	}
	if len(peaks) > 0 {
		fmt.Fprintf(b, "Highest 1-minute load average during each storm (hosts: load; 2 cores): %s.\n", strings.Join(peaks, ", "))
	}
	fmt.Fprintf(b, "\n")
	if o.Plots["storm.png"] {
		fmt.Fprintf(b, "![Boot storm: histogram of time to last byte per host, one panel per rack size](storm.png)\n\n")
	}
	stormFailures(b, s)
	stormRetries(b, s)
	stormStages(b, s)
	stormCounters(b, s)
	stormAPI(b, s)
	stormProfile(b, s)
	stormReading(b, s)
}

// largestRun is the first run without an error of the largest size.
func largestRun(s *results.Storm) (*results.StormRun, int) {
	var run *results.StormRun
	hosts := 0
	for _, z := range s.Sizes {
		if z.Hosts <= hosts {
			continue
		}
		for i := range z.Runs {
			if z.Runs[i].Error == "" {
				run, hosts = &z.Runs[i], z.Hosts
				break
			}
		}
	}
	return run, hosts
}

// stormAPI: what the API server saw during the largest storm.
func stormAPI(b *strings.Builder, s *results.Storm) {
	run, hosts := largestRun(s)
	if run == nil || len(run.API) == 0 {
		return
	}
	fmt.Fprintf(b, "**The API server during the first %d-host storm** (its own `apiserver_request_duration_seconds` and\n", hosts)
	fmt.Fprintf(b, "`apiserver_request_total`, from power-on to the last host; all clients: both anvil processes and the benchmark's polling):\n\n")
	fmt.Fprintf(b, "| verb | resource | requests | mean ms | refused (429) |\n|---|---|---|---|---|\n")
	for _, a := range run.API {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", a.Verb, a.Resource, num(a.Requests, 0), num(a.MeanMs, 1), num(a.Rejected, 0))
	}
	fmt.Fprintf(b, "\n")
}

func okRuns(runs []results.StormRun) []results.StormRun {
	var out []results.StormRun
	for _, r := range runs {
		if r.Error == "" {
			out = append(out, r)
		}
	}
	return out
}

func mb(n int64) string {
	if n >= 1e6 {
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.0f KB", float64(n)/1e3)
}

func stormFailures(b *strings.Builder, s *results.Storm) {
	fmt.Fprintf(b, "**Failures by stage** (a failed host is one whose real firmware, iPXE or Ignition would have given up):\n\n")
	shown := false
	for _, z := range s.Sizes {
		for i, r := range z.Runs {
			if r.Error != "" {
				if !shown {
					fmt.Fprintf(b, "| hosts | run | stage | reason | hosts hit |\n|---|---|---|---|---|\n")
				}
				shown = true
				fmt.Fprintf(b, "| %d | %d | (run) | %s | all |\n", z.Hosts, i+1, oneLine(r.Error))
			}
			for _, f := range r.Failures {
				if !shown {
					fmt.Fprintf(b, "| hosts | run | stage | reason | hosts hit |\n|---|---|---|---|---|\n")
				}
				shown = true
				fmt.Fprintf(b, "| %d | %d | %s | %s | %d |\n", z.Hosts, i+1, f.Stage, oneLine(f.Reason), f.Hosts)
			}
		}
	}
	if !shown {
		fmt.Fprintf(b, "none: every host of every run got its config.\n")
	}
	fmt.Fprintf(b, "\n")
}

func stormRetries(b *strings.Builder, s *results.Storm) {
	fmt.Fprintf(b, "**Retries** (summed over the hosts, median over the runs): DHCP DISCOVERs and REQUESTs the clients sent again after\n")
	fmt.Fprintf(b, "their timeout (iPXE's first window is 1 s, EDK2's 4 s), NAKs, TFTP packets the client sent again (4 s timeout), TFTP\n")
	fmt.Fprintf(b, "blocks the server sent twice, config fetches Ignition repeated after a 5xx or connection error; and what the kernel\n")
	fmt.Fprintf(b, "dropped, which neither Anvil's counters nor the sender see: UDP datagrams for a full receive buffer (`/proc/net/snmp`\n")
	fmt.Fprintf(b, "RcvbufErrors) and on the way out (SndbufErrors: sendto succeeded, the datagram never left), per namespace, and the\n")
	fmt.Fprintf(b, "times the machine's neighbour (ARP) table was full (`/proc/net/stat/arp_cache` table_fulls; each drops a packet).\n\n")
	fmt.Fprintf(b, "| hosts | DISCOVER again | REQUEST again | NAK | TFTP again | TFTP block twice | config again | UDP dropped, receive: server / load | UDP dropped, send: server / load | ARP table full |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, z := range s.Sizes {
		ok := okRuns(z.Runs)
		if len(ok) == 0 {
			continue
		}
		m := func(f func(results.StormRetries) int) string {
			return num(medianOf(ok, func(r results.StormRun) float64 { return float64(f(r.Retries)) }), 0)
		}
		u := func(f func(results.StormRun) uint64) string {
			return num(medianOf(ok, func(r results.StormRun) float64 { return float64(f(r)) }), 0)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s |\n", z.Hosts,
			m(func(x results.StormRetries) int { return x.DHCPDiscover }), m(func(x results.StormRetries) int { return x.DHCPRequest }),
			m(func(x results.StormRetries) int { return x.DHCPNak }), m(func(x results.StormRetries) int { return x.TFTP }),
			m(func(x results.StormRetries) int { return x.TFTPDupData }), m(func(x results.StormRetries) int { return x.Config }),
			u(func(r results.StormRun) uint64 { return r.UDPDrops }), u(func(r results.StormRun) uint64 { return r.LoadUDPDrops }),
			u(func(r results.StormRun) uint64 { return r.UDPSendDrops }), u(func(r results.StormRun) uint64 { return r.LoadUDPSendDrops }),
			u(func(r results.StormRun) uint64 { return r.NeighbourOverflows }))
	}
	fmt.Fprintf(b, "\n")
}

// stormStages: where the time goes, per step, at every size.
func stormStages(b *strings.Builder, s *results.Storm) {
	var names []string
	for _, z := range s.Sizes {
		for _, r := range z.Runs {
			for _, st := range r.Stages {
				if !slices.Contains(names, st.Name) {
					names = append(names, st.Name)
				}
			}
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(b, "**Where the time goes**: each step's p50 / p99 in seconds over the hosts that booted (median over the runs).\n\n")
	fmt.Fprintf(b, "| step |")
	for _, z := range s.Sizes {
		fmt.Fprintf(b, " %d hosts |", z.Hosts)
	}
	fmt.Fprintf(b, "\n|---|")
	for range s.Sizes {
		fmt.Fprintf(b, "---|")
	}
	fmt.Fprintf(b, "\n")
	for _, n := range names {
		fmt.Fprintf(b, "| %s |", n)
		for _, z := range s.Sizes {
			var p50, p99 []float64
			for _, r := range okRuns(z.Runs) {
				for _, st := range r.Stages {
					if st.Name == n {
						p50 = append(p50, st.P50)
						p99 = append(p99, st.P99)
					}
				}
			}
			fmt.Fprintf(b, " %s / %s |", num(stats.Median(p50), 2), num(stats.Median(p99), 2))
		}
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "\n")
}

// stormCounters: what Anvil itself counted, at the largest size (first
// run), from the netboot process's /metrics.
func stormCounters(b *strings.Builder, s *results.Storm) {
	run, hosts := largestRun(s)
	if run == nil || len(run.Metrics) == 0 {
		return
	}
	fmt.Fprintf(b, "**Anvil's own counters** (netboot process `/metrics` after the first %d-host run; zero series left out):\n\n", hosts)
	fmt.Fprintf(b, "| series | value |\n|---|---|\n")
	for _, k := range sortedKeys(run.Metrics) {
		fmt.Fprintf(b, "| `%s` | %s |\n", strings.ReplaceAll(k, "|", "/"), num(run.Metrics[k], 2))
	}
	fmt.Fprintf(b, "\n")
}

func stormProfile(b *strings.Builder, s *results.Storm) {
	for _, z := range s.Sizes {
		for i, r := range z.Runs {
			if len(r.Profile) == 0 {
				continue
			}
			fmt.Fprintf(b, "**CPU profile of the netboot process** during run %d with %d hosts (`perf record -F 199 -g` on the process;\n", i+1, z.Hosts)
			fmt.Fprintf(b, "perf also sees kernel time; Go binaries keep frame pointers and symbols):\n\n```\n")
			for _, l := range r.Profile {
				fmt.Fprintf(b, "%s\n", strings.TrimSuffix(l, " - -"))
			}
			fmt.Fprintf(b, "```\n\n")
			return
		}
	}
}

// stormSummary is the summary table's row: the largest rack.
func stormSummary(s *results.Storm) (what, anvil, target string, ok bool) {
	if s == nil || len(s.Sizes) == 0 {
		return "", "", "", false
	}
	z := s.Sizes[len(s.Sizes)-1]
	for _, y := range s.Sizes {
		if y.Hosts > z.Hosts {
			z = y
		}
	}
	runs := okRuns(z.Runs)
	if len(runs) == 0 {
		return fmt.Sprintf("boot storm, %d hosts", z.Hosts), "failed to run", "", true
	}
	failed := 0
	for _, r := range z.Runs {
		failed += r.Hosts - r.Succeeded
	}
	p99 := medianOf(runs, func(r results.StormRun) float64 { return r.P99 })
	verdict := "met in this run"
	if failed > 0 || len(runs) < len(z.Runs) {
		verdict = "not met in this run"
	}
	return fmt.Sprintf("boot storm, %d hosts: p99 s to config (failed hosts, all runs)", z.Hosts),
		fmt.Sprintf("%s (%d failed)", num(p99, 1), failed), fmt.Sprintf("%d hosts, zero failures: %s", z.Hosts, verdict), true
}

// stageP99 is the p99 of one boot stage of run (NaN if absent).
func stageP99(run *results.StormRun, name string) float64 {
	for _, st := range run.Stages {
		if st.Name == name {
			return st.P99
		}
	}
	return math.NaN()
}

// stormReading explains the largest storm from its own numbers: which
// service dropped what and why, and what would fix it. Each paragraph is
// printed only when its counter says it happened.
func stormReading(b *strings.Builder, s *results.Storm) {
	run, hosts := largestRun(s)
	if run == nil {
		return
	}
	m := run.Metrics
	get := func(k string) float64 { return m[k] }
	failed, total := 0, 0
	for _, z := range s.Sizes {
		if z.Hosts == hosts {
			for _, r := range z.Runs {
				total += r.Hosts
				failed += r.Hosts - r.Succeeded
			}
		}
	}
	fmt.Fprintf(b, "**Reading it.** The figures below come from the first %d-host run (the counters above); the failures from all its runs\n", hosts)
	fmt.Fprintf(b, "(%d of %d hosts failed). This machine has 2 cores shared by the API server, etcd, both anvil processes, the\n", failed, total)
	fmt.Fprintf(b, "simulated rack and other work (see the load average), so absolute times are pessimistic; where the time goes is not.\n\n")
	apiMs := func(verb, res string) (float64, float64) {
		for _, a := range run.API {
			if a.Verb == verb && a.Resource == res {
				return a.MeanMs, a.Requests
			}
		}
		return math.NaN(), 0
	}
	// Series with label values, summed by a filter on the key.
	sumOf := func(prefix string, parts ...string) float64 {
		var t float64
		for k, v := range m {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(k, p)
			}
			if ok {
				t += v
			}
		}
		return t
	}
	patchMs, patches := apiMs("PATCH", "hosts/status")
	q, l := get(`anvil_dhcp_packets_dropped_total{reason="queue_full"}`), get(`anvil_dhcp_packets_dropped_total{reason="lease_error"}`)
	dup := get(`anvil_dhcp_packets_dropped_total{reason="request_in_flight"}`)
	per := math.NaN()
	if c := get("anvil_dhcp_reply_duration_seconds_count"); c > 0 {
		per = get("anvil_dhcp_reply_duration_seconds_sum") / c * 1000
	}
	memRenew := "an uncounted number of" // runs before the counter existed
	if v, ok := m["anvil_dhcp_memory_renewals_total"]; ok {
		memRenew = num(v, 0)
	}
	_, atOffer := m[`anvil_dhcp_lease_writes_at_offer_total{result="written"}`]
	fmt.Fprintf(b, "- **DHCP.** DISCOVERs, INFORMs and the REQUESTs that need no lease write (iPXE's and the OS's: the firmware's REQUEST\n")
	fmt.Fprintf(b, "  wrote a lease that still has over half its time left) are answered from memory by their own workers: %s REQUESTs\n", memRenew)
	if atOffer {
		fmt.Fprintf(b, "  were. The firmware's lease write starts when its OFFER is sent, on one of 32 write workers, while EDK2 collects\n")
		fmt.Fprintf(b, "  offers for 4 s: %s such writes landed, %s failed (the REQUEST then wrote again). Its REQUEST waits for that write\n",
			num(get(`anvil_dhcp_lease_writes_at_offer_total{result="written"}`), 0), num(get(`anvil_dhcp_lease_writes_at_offer_total{result="failed"}`), 0))
		fmt.Fprintf(b, "  instead of queueing a second one (%s REQUESTs waited so), and is ACKed once the lease is durable (a Host status\n", num(get("anvil_dhcp_requests_parked_total"), 0))
		fmt.Fprintf(b, "  PATCH took %s ms on average at the API server during the storm). Packets took %s ms on average from receipt to\n", num(patchMs, 0), num(per, 1))
		fmt.Fprintf(b, "  reply. ")
	} else {
		fmt.Fprintf(b, "  were. A REQUEST that must write (the firmware's) moves to a second queue for one of 32 workers, which write the\n")
		fmt.Fprintf(b, "  lease to the Host's status before the ACK (a Host status PATCH took %s ms on average at the API server during\n", num(patchMs, 0))
		fmt.Fprintf(b, "  the storm). Packets took %s ms on average from receipt to reply. ", num(per, 1))
	}
	if q+l+dup == 0 {
		fmt.Fprintf(b, "Nothing was dropped.\n")
	} else {
		fmt.Fprintf(b, "Dropped: %s with a queue full (memory queue %s, write queue %s), %s REQUESTs retransmitted while\n",
			num(q, 0), num(sumOf("anvil_dhcp_queue_full_total", `queue="memory"`), 0), num(sumOf("anvil_dhcp_queue_full_total", `queue="write"`), 0), num(dup, 0))
		if atOffer {
			fmt.Fprintf(b, "  their lease write was queued or in flight and a newer copy took their place (only the latest copy waits), %s\n", num(l, 0))
			fmt.Fprintf(b, "  whose lease write failed or\n")
		} else {
			fmt.Fprintf(b, "  their lease write was in flight (that write's ACK answers them), %s whose lease write failed or\n", num(l, 0))
		}
		fmt.Fprintf(b, "  outlasted its 3.5 s deadline. The clients retransmit on their own clocks (iPXE after 1, 2, 4, 8 s; EDK2 after 4, 8,\n")
		fmt.Fprintf(b, "  16, 32 s).")
		if w := sumOf("anvil_dhcp_queue_full_total", `queue="write"`); w > 0 {
			fmt.Fprintf(b, " The write queue's drops are REQUEST retransmissions that found its 1,024 slots taken by earlier\n")
			fmt.Fprintf(b, "  copies waiting for their writes.")
		}
		fmt.Fprintf(b, "\n")
	}
	if fw := stageP99(run, "dhcp-firmware"); failed > 0 && fw > 30 {
		fmt.Fprintf(b, "  **Why hosts failed:** the firmware's DHCP took up to %s s (p99), nearly all of it waiting for the lease writes\n", num(fw, 1))
		fmt.Fprintf(b, "  queued ahead of its own: every host's first REQUEST needs one, they all arrive within seconds, and the API server\n")
		fmt.Fprintf(b, "  on these 2 shared cores takes them at the rate above (the lease writes go before the scripts' and configs',\n")
		fmt.Fprintf(b, "  `internal/apigate`). EDK2 stops after 4 unanswered REQUESTs (about 60 s). Writing the lease behind the ACK would\n")
		fmt.Fprintf(b, "  remove the wait but break the rule that no address is promised before it is durable.\n")
	}
	if sent, full := run.UDPSendDrops+run.LoadUDPSendDrops, run.NeighbourOverflows; sent+full > 0 {
		fmt.Fprintf(b, "- **The kernel dropped %s UDP datagrams on the way out** (server %s, load %s: SndbufErrors, sendto succeeded) and found\n",
			num(float64(sent), 0), num(float64(run.UDPSendDrops), 0), num(float64(run.LoadUDPSendDrops), 0))
		fmt.Fprintf(b, "  its neighbour (ARP) table full %s times. Neither Anvil nor the client sees such a drop. A full table drops the DHCP\n", num(float64(full), 0))
		fmt.Fprintf(b, "  replies to 255.255.255.255 first; raise `net.ipv4.neigh.default.gc_thresh3` above the number of hosts (README).\n")
	}
	if busy := get(`anvil_tftp_requests_total{result="busy"}`); busy > 0 {
		fmt.Fprintf(b, "- **TFTP refused %s requests** beyond `--tftp-max-concurrent` transfers (default 1,024). A refusal is a TFTP ERROR,\n", num(busy, 0))
		fmt.Fprintf(b, "  which EDK2 and iPXE do not retry: each is a failed host. Raise the flag above the hosts that boot at once.\n")
	} else {
		fmt.Fprintf(b, "- **TFTP** refused nothing (up to 1,024 transfers at once, `--tftp-max-concurrent`).\n")
	}
	if inv := get(`anvil_config_requests_denied_total{reason="invalid"}`); inv > 0 {
		fmt.Fprintf(b, "- **%s config fetches got 403 \"invalid\"**: their credential was neither in the netboot process's Host cache nor on\n", num(inv, 0))
		fmt.Fprintf(b, "  the Host when re-read from the API server. Ignition does not retry a 4xx, so a real host would stop there.\n")
	}
	if api, recent := sumOf("anvil_credential_cache_misses_total", `outcome="found_api"`), sumOf("anvil_credential_cache_misses_total", `outcome="found_recent"`); api+recent > 0 {
		fmt.Fprintf(b, "- **The Host cache lagged** the process's own writes for %s credential checks, answered by re-reading that Host from the\n", num(api+recent, 0))
		fmt.Fprintf(b, "  API server (%s GETs; at most one per Host per 5 s) instead of refusing a valid credential.\n", num(api, 0))
	}
	conflicts := get(`rest_client_requests_total{code="409"}`)
	var writes float64
	for _, a := range run.API {
		if a.Verb == "PATCH" || a.Verb == "POST" || a.Verb == "PUT" || a.Verb == "CREATE" || a.Verb == "UPDATE" {
			writes += a.Requests
		}
	}
	if len(run.API) > 0 {
		booted := math.NaN()
		if run.Succeeded > 0 {
			booted = patches / float64(run.Succeeded)
		}
		fmt.Fprintf(b, "- **The API server sets the pace.** Per boot the netboot process writes the Host's status for the lease (once), the\n")
		fmt.Fprintf(b, "  boot credential when the script is served, and the credential's consumption with the agent credential when the config\n")
		fmt.Fprintf(b, "  is served (one patch), and creates a bootstrap-token Secret (looked up in an informer, no LIST); the controllers write\n")
		fmt.Fprintf(b, "  the same Hosts and Machines. The API server took %s writes during the storm (table above; %s Host status patches per\n", num(writes, 0), num(booted, 1))
		fmt.Fprintf(b, "  booted host, from both processes); the netboot process's writes hit %s conflicts (409), each a re-read and a retry.\n", num(conflicts, 0))
		fmt.Fprintf(b, "  The lease writes and the credential's consumption test only the fields they change (a JSON patch), so other writers\n")
		fmt.Fprintf(b, "  do not make them conflict; the script's credential write still carries the resourceVersion it decided on (it\n")
		fmt.Fprintf(b, "  decides on the Host's state, boot request and PXE decision), and the conflicts left are most likely its.\n")
		fmt.Fprintf(b, "  On 2 shared cores the API server and etcd are the bottleneck: more parallel writers only\n")
		fmt.Fprintf(b, "  raise each write's latency (64 DHCP write workers instead of 32 did worse in development runs).\n")
	}
	if l := run.Load; l != nil {
		fmt.Fprintf(b, "- The load generator (all %d simulated hosts in one process) used %s CPU s (%s cores), peak RSS %s MB.\n",
			hosts, num(l.CPUSeconds, 1), num(l.Cores, 2), num(float64(l.PeakRSS)/1e6, 0))
	}
	if c := run.Netboot.Cores; c > 0 && c < 0.5 {
		fmt.Fprintf(b, "- **The netboot process was not CPU-bound**: %s cores on average during the storm (peak RSS %s MB). It waited on the\n", num(c, 2), num(float64(run.Netboot.PeakRSS)/1e6, 0))
		fmt.Fprintf(b, "  API server, not on its own code; the profile above shows where the CPU it did use went (`[k]` lines are the\n")
		fmt.Fprintf(b, "  kernel: on this VM, `pvm_irq_enable` is the paravirtualised kernel's cost on syscall paths).\n")
	}
	fmt.Fprintf(b, "\n")
}
