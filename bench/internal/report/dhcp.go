package report

import (
	"fmt"
	"math"
	"strings"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

// The DHCP section: one table per mode (relay: perfdhcp, which sets giaddr;
// broadcast: as firmware sends). The headline Anvil is the product path
// ("anvil serve", a real API server's Hosts) when the results have it, else
// the pxe/dhcp subject ("anvil", results from before the product path).

const (
	modeRelay     = "relay"
	modeBroadcast = "broadcast"
	productName   = "anvil serve"
	// genLimit is the generator CPU (cores) at which its one core, not the
	// server, is taken to be the limit.
	genLimit = 0.9
)

func subjectMode(s results.DHCPSubject) string {
	if s.Mode == "" {
		return modeRelay
	}
	return s.Mode
}

func dhcpModes(d *results.DHCP) []results.DHCPMode {
	if len(d.Modes) > 0 {
		return d.Modes
	}
	return []results.DHCPMode{{Name: modeRelay, Generator: "perfdhcp -M (it puts its own address in giaddr: relay-style unicast)"}}
}

func dhcpSubject(d *results.DHCP, name, mode string) (results.DHCPSubject, bool) {
	for _, s := range d.Subjects {
		if s.Name == name && subjectMode(s) == mode {
			return s, true
		}
	}
	return results.DHCPSubject{}, false
}

// headline is the Anvil subject the goal is judged on in mode.
func headline(d *results.DHCP, mode string) string {
	if s, ok := dhcpSubject(d, productName, mode); ok && len(s.Runs) > 0 {
		return productName
	}
	return "anvil"
}

func dhcpRate(d *results.DHCP, name, mode string) float64 {
	s, ok := dhcpSubject(d, name, mode)
	if !ok {
		return math.NaN()
	}
	return medianOf(s.Runs, func(r results.DHCPRun) float64 { return r.MaxRate })
}

// atMax is the median over s's runs of f at each run's highest passing step.
func atMax(s results.DHCPSubject, maxDrop float64, f func(results.DHCPStep) float64) float64 {
	var xs []float64
	for _, r := range s.Runs {
		if st, ok := maxStep(r, maxDrop); ok {
			xs = append(xs, f(st))
		}
	}
	return stats.Median(xs)
}

// atFirstFail is the median of f at each run's lowest failing step: what
// stopped the ramp.
func atFirstFail(s results.DHCPSubject, maxDrop float64, f func(results.DHCPStep) float64) float64 {
	var xs []float64
	for _, r := range s.Runs {
		for _, st := range r.Steps { // sorted by offered rate
			if st.Drop > maxDrop {
				xs = append(xs, f(st))
				break
			}
		}
	}
	return stats.Median(xs)
}

func usPerDORA(st results.DHCPStep) float64 {
	if st.Achieved <= 0 {
		return math.NaN()
	}
	return st.CPU / st.Achieved * 1e6
}

func genCPU(st results.DHCPStep) float64 {
	if st.GenCPU == 0 {
		return math.NaN() // not measured (older results)
	}
	return st.GenCPU
}

func dhcp(b *strings.Builder, d *results.DHCP, o Options) {
	fmt.Fprintf(b, "## 1. DHCP rate\n\n")
	if d == nil {
		fmt.Fprintf(b, "Not run.\n\n")
		return
	}
	measured(b, d.Measured, o)
	modes := dhcpModes(d)
	fmt.Fprintf(b, "A load generator offers a fixed rate of full DORA exchanges for %gs per step, choosing clients at random\n", d.StepSeconds)
	fmt.Fprintf(b, "from the same %d reserved MACs every subject holds; the rate doubles until more than %.1f%% of\n", d.Reservations, d.MaxDrop*100)
	fmt.Fprintf(b, "DISCOVERs get no ACK, then bisects. **DORA/s** is the highest completed rate within that drop.\n")
	fmt.Fprintf(b, "Latencies are per-exchange round trips (DISCOVER-OFFER and REQUEST-ACK pooled), at 500/s (all\n")
	fmt.Fprintf(b, "subjects comfortable) and at the subject's own maximum. Server CPU is the subject's, in cores, at its maximum;\n")
	fmt.Fprintf(b, "generator CPU is the load generator's own (user+system over its sending period, in cores of its one pinned core);\n")
	fmt.Fprintf(b, "µs/DORA is server CPU per completed exchange at the maximum.")
	if separateLatency(d) {
		fmt.Fprintf(b, " perfdhcp's rate steps run without its per-packet timestamps (`-x t`), which slow it down; two more steps\n")
		fmt.Fprintf(b, "per run, at 500/s and at the highest passing rate, run with them and give the latencies. At the highest rate\n")
		fmt.Fprintf(b, "perfdhcp with timestamps may not send all it is asked to, so those latencies are at the rate it did send.")
	}
	fmt.Fprintf(b, "\n\n")
	if d.ProductSetup != "" {
		fmt.Fprintf(b, "**The product path** (`%s`, the headline Anvil): %s. The `anvil` rows are pxe/dhcp alone with the\n", productName, d.ProductSetup)
		fmt.Fprintf(b, "same reservations in a StaticBackend (what `anvil serve` wires up, without the API server and informer).\n\n")
	}
	for i, m := range modes {
		dhcpMode(b, d, m, i, len(modes) > 1, o)
	}
	dhcpWhy(b, d)
}

func dhcpMode(b *strings.Builder, d *results.DHCP, m results.DHCPMode, i int, several bool, o Options) {
	if several {
		title := map[string]string{modeRelay: "Relay mode (perfdhcp, giaddr set)", modeBroadcast: "Broadcast mode (as firmware sends: giaddr 0, broadcast)"}[m.Name]
		if title == "" {
			title = m.Name
		}
		fmt.Fprintf(b, "### 1%c. %s\n\n", 'a'+rune(i), title)
	}
	fmt.Fprintf(b, "Load: %s.\n\n", m.Generator)
	head := headline(d, m.Name)
	refs := []string{head}
	if head == productName {
		refs = append(refs, "anvil")
	}
	hdr := "| subject | configuration | DORA/s (runs) |"
	for _, r := range refs {
		label := r
		if len(refs) == 1 {
			label = "Anvil"
		}
		hdr += " " + label + " / this |"
	}
	hdr += " p50 / p99 ms at 500/s | p50 / p99 ms at max | server CPU at max | generator CPU at max | µs/DORA | RSS idle / peak |"
	fmt.Fprintf(b, "%s\n|%s\n", hdr, strings.Repeat("---|", strings.Count(hdr, "|")-1))
	for _, s := range d.Subjects {
		if subjectMode(s) != m.Name {
			continue
		}
		if s.Error != "" && len(s.Runs) == 0 {
			fmt.Fprintf(b, "| %s | %s | failed: %s |%s\n", s.Name, s.Config, oneLine(s.Error), strings.Repeat(" |", len(refs)+6))
			continue
		}
		rate := medianOf(s.Runs, func(r results.DHCPRun) float64 { return r.MaxRate })
		runs := make([]string, len(s.Runs))
		for i, r := range s.Runs {
			runs[i] = fmt.Sprintf("%.0f", r.MaxRate)
		}
		at := func(pick func(results.DHCPRun) (results.DHCPStep, bool), f func(results.DHCPStep) float64) float64 {
			var xs []float64
			for _, r := range s.Runs {
				if st, ok := pick(r); ok {
					xs = append(xs, f(st))
				}
			}
			return stats.Median(xs)
		}
		p500 := func(r results.DHCPRun) (results.DHCPStep, bool) { return stepAt(r, 500) }
		pmax := func(r results.DHCPRun) (results.DHCPStep, bool) { return maxStep(r, d.MaxDrop) }
		fmt.Fprintf(b, "| %s | %s | **%s** (%s) |", s.Name, s.Config, num(rate, 0), strings.Join(runs, ", "))
		for _, r := range refs {
			if r == s.Name {
				fmt.Fprintf(b, " — |")
			} else {
				fmt.Fprintf(b, " %s |", fmtRatio(stats.Ratio(dhcpRate(d, r, m.Name), rate)))
			}
		}
		fmt.Fprintf(b, " %s / %s | %s / %s | %s | %s | %s | %s / %s MB |\n",
			num(at(p500, func(s results.DHCPStep) float64 { return s.P50 }), 2), num(at(p500, func(s results.DHCPStep) float64 { return s.P99 }), 2),
			num(at(pmax, func(s results.DHCPStep) float64 { return s.P50 }), 2), num(at(pmax, func(s results.DHCPStep) float64 { return s.P99 }), 2),
			num(at(pmax, func(s results.DHCPStep) float64 { return s.CPU }), 2), num(atMax(s, d.MaxDrop, genCPU), 2),
			num(atMax(s, d.MaxDrop, usPerDORA), 0),
			num(medianOf(s.Runs, func(r results.DHCPRun) float64 { return float64(r.IdleRSS) / 1e6 }), 1),
			num(medianOf(s.Runs, func(r results.DHCPRun) float64 { return float64(r.PeakRSS) / 1e6 }), 1))
	}
	fmt.Fprintf(b, "\n")
	if i == 0 && o.Plots["dhcp-rate.png"] {
		fmt.Fprintf(b, "![DHCP: completed DORA/s against offered rate, one line per subject and mode](dhcp-rate.png)\n\n")
	}
	for _, s := range d.Subjects {
		if subjectMode(s) != m.Name {
			continue
		}
		if st, want, ok := generatorLimited(d, s); ok {
			fmt.Fprintf(b, "- The generator sent only %d of %.0f DISCOVERs at %d/s against %s: above that rate the load generator,\n  not the server, is the limit.\n", st.Sent, want, st.Offered, s.Name)
		}
	}
	dhcpVerdict(b, d, m.Name, head)
}

// dhcpVerdict is the mode's "Reading it": the goal (the headline at least
// Kea's rate), by how much, and what limited each side, from the data.
func dhcpVerdict(b *strings.Builder, d *results.DHCP, mode, head string) {
	a, k := dhcpRate(d, head, mode), dhcpRate(d, "kea-dhcp4", mode)
	fmt.Fprintf(b, "\n**Reading it (%s).** ", mode)
	if math.IsNaN(a) || math.IsNaN(k) {
		fmt.Fprintf(b, "No comparison: %s or kea-dhcp4 has no result in this mode.\n\n", head)
		return
	}
	who := "Anvil"
	if head == productName {
		who = "Anvil's product path (`anvil serve` from Host objects)"
	}
	if a >= k {
		fmt.Fprintf(b, "%s met the target of at least Kea's rate on the same machine: %.0f vs %.0f DORA/s (%.2f×). ", who, a, k, a/k)
	} else {
		fmt.Fprintf(b, "%s did not meet the target of at least Kea's rate: %.0f vs %.0f DORA/s, %.0f%% short (%.2f×). ", who, a, k, (1-a/k)*100, a/k)
	}
	if lo, hi := runRange(d, head, mode), runRange(d, "kea-dhcp4", mode); lo[0] > 0 && hi[1] > 0 && len(runsOf(d, head, mode)) > 1 {
		fmt.Fprintf(b, "The runs spread (%s %.0f-%.0f, Kea %.0f-%.0f): the slowest %s run against Kea's fastest is %.2f×. ",
			head, lo[0], lo[1], hi[0], hi[1], head, lo[0]/hi[1])
	}
	if head == productName {
		if p := dhcpRate(d, "anvil", mode); !math.IsNaN(p) && p > 0 {
			fmt.Fprintf(b, "pxe/dhcp alone (`anvil`) passed %.0f: the product path is %.2f× of it. ", p, a/p)
		}
	}
	// What stopped each ramp: the generator's core or the server.
	for _, name := range []string{head, "kea-dhcp4"} {
		s, _ := dhcpSubject(d, name, mode)
		gMax, gFail := atMax(s, d.MaxDrop, genCPU), atFirstFail(s, d.MaxDrop, genCPU)
		srvMax := atMax(s, d.MaxDrop, func(st results.DHCPStep) float64 { return st.CPU })
		us := atMax(s, d.MaxDrop, usPerDORA)
		if math.IsNaN(gMax) {
			continue // older results: generator CPU not measured
		}
		gen := fmt.Sprintf("its core at %.0f%% at the maximum", gMax*100)
		if !math.IsNaN(gFail) {
			gen += fmt.Sprintf(", %.0f%% at the first failing rate", gFail*100)
		}
		if gMax >= genLimit || gFail >= genLimit {
			fmt.Fprintf(b, "For %s the generator was the limit (%s), not the server (%.0f%% of its core). ", name, gen, srvMax*100)
		} else {
			fmt.Fprintf(b, "For %s the generator was not the limit (%s; the server at %.0f%% of its core). ", name, gen, srvMax*100)
		}
		switch {
		case math.IsNaN(us) || us <= 0:
		case srvMax >= 0.5:
			fmt.Fprintf(b, "At %.0f µs of server CPU per DORA there, a full core of it would serve about %s/s. ", us, num(1e6/us, 0))
		default:
			fmt.Fprintf(b, "Its %.0f µs of server CPU per DORA were measured far below a full core, where fixed costs weigh more: not a ceiling. ", us)
		}
	}
	ua := atMaxOf(d, head, mode, usPerDORA)
	uk := atMaxOf(d, "kea-dhcp4", mode, usPerDORA)
	if !math.IsNaN(ua) && !math.IsNaN(uk) && ua > 0 {
		fmt.Fprintf(b, "Compared by server CPU per exchange at the maxima (what bounds each server once its core is full, whatever the generator), %s is %.2f× Kea.", head, uk/ua)
	}
	fmt.Fprintf(b, "\n\n")
}

func atMaxOf(d *results.DHCP, name, mode string, f func(results.DHCPStep) float64) float64 {
	s, ok := dhcpSubject(d, name, mode)
	if !ok {
		return math.NaN()
	}
	return atMax(s, d.MaxDrop, f)
}

func runsOf(d *results.DHCP, name, mode string) []results.DHCPRun {
	s, _ := dhcpSubject(d, name, mode)
	return s.Runs
}

// generatorLimited returns the first step of s where the generator sent less
// than 90% of the DISCOVERs asked for, and how many were asked for.
func generatorLimited(d *results.DHCP, s results.DHCPSubject) (results.DHCPStep, float64, bool) {
	for _, r := range s.Runs {
		for _, st := range r.Steps {
			if want := float64(st.Offered) * d.StepSeconds; float64(st.Sent) < 0.9*want {
				return st, want, true
			}
		}
	}
	return results.DHCPStep{}, 0, false
}

func stepAt(r results.DHCPRun, offered int) (results.DHCPStep, bool) {
	for _, s := range r.Steps {
		if s.Offered == offered {
			return s, true
		}
	}
	if len(r.Steps) > 0 {
		return r.Steps[0], true
	}
	return results.DHCPStep{}, false
}

// maxStep is the passing step with the highest completed rate.
func maxStep(r results.DHCPRun, maxDrop float64) (results.DHCPStep, bool) {
	var best results.DHCPStep
	ok := false
	for _, s := range r.Steps {
		if s.Drop <= maxDrop && (!ok || s.Achieved > best.Achieved) {
			best, ok = s, true
		}
	}
	return best, ok
}

// dhcpWhy explains the gaps that hold in every mode, and says whether the
// machine was quiet.
func dhcpWhy(b *strings.Builder, d *results.DHCP) {
	cpu := map[string]float64{}
	for _, s := range d.Subjects {
		key := s.Name
		if len(d.Modes) > 1 {
			key += " (" + subjectMode(s) + ")"
		}
		cpu[key] = atMax(s, d.MaxDrop, usPerDORA)
	}
	fmt.Fprintf(b, "**Why.** Server CPU per completed DORA at each subject's maximum, in microseconds: %s (from /proc; a\n", cpuList(cpu))
	fmt.Fprintf(b, "subject that waits for the CPU rather than using it shows low CPU and high latency; on a veth pair the kernel's\n")
	fmt.Fprintf(b, "delivery of a packet into the server's socket runs on the sender's core, so it counts as the generator's, for\n")
	fmt.Fprintf(b, "every subject alike). Anvil answers reservations\n")
	fmt.Fprintf(b, "from memory and writes nothing per lease for a static address (the Host object is the record); Kea appends\n")
	if len(d.Modes) > 0 { // Kea tuned for speed since the modes came
		fmt.Fprintf(b, "every lease to its memfile CSV (with cache-threshold set, not when a client asks again within the threshold);\n")
	} else {
		fmt.Fprintf(b, "every lease to its memfile CSV;\n")
	}
	fmt.Fprintf(b, "dnsmasq rewrites its whole lease file on every change. With clients drawn\n")
	fmt.Fprintf(b, "from %s MACs the lease table grows to thousands of entries within the first step (and keeps them: the\n", num(float64(d.Reservations), 0))
	fmt.Fprintf(b, "bisection steps come later), so every dnsmasq DHCPACK rewrites thousands of lines while requests queue up and\n")
	fmt.Fprintf(b, "drop — with few leases it manages a few hundred per second. For scale, LAB.md measured on an idle machine of this kind: kea-dhcp4 memfile 12,000-14,500 DORA/s and\n")
	if quiet := d.Measured != nil && d.Measured.LoadStart[0] < 1.5 && d.Measured.LoadEnd[0] < 2.5; quiet {
		fmt.Fprintf(b, "dnsmasq 311/s with its lease file (1,190/s without); LAB.md does not say how its perfdhcp was run. This part ran on a\n")
		fmt.Fprintf(b, "quiet machine (the load averages in its line above).\n\n")
		return
	}
	fmt.Fprintf(b, "dnsmasq 311/s with its lease file (1,190/s without). Figures far below those mean the subjects, pinned to\n")
	fmt.Fprintf(b, "one core each, waited for a CPU that other work was using (see the load average above); every subject\n")
	fmt.Fprintf(b, "suffered that, interleaved run by run, so compare them with each other, not with an idle machine.")
	if k := dhcpRate(d, "kea-dhcp4", modeRelay); !math.IsNaN(k) && k < 0.5*11686 && d.Reservations >= 10000 {
		fmt.Fprintf(b, " Kea's figure here is far below its published single-threaded\n")
		fmt.Fprintf(b, "11,686/s (ISC) and LAB.md's 12,000-14,500/s: the ratio says how the two fared side by side under this\n")
		fmt.Fprintf(b, "contention, not how they compare on an idle machine; a rerun on a quiet machine is the check.")
	}
	fmt.Fprintf(b, "\n\n")
}

// separateLatency: perfdhcp's latencies come from their own timestamped
// steps (results since 2026-11-30), not from the rate steps.
func separateLatency(d *results.DHCP) bool {
	for _, s := range d.Subjects {
		for _, r := range s.Runs {
			if len(r.Latency) > 0 {
				return true
			}
		}
	}
	return false
}

// runRange is a subject's lowest and highest DORA/s over its runs.
func runRange(d *results.DHCP, name, mode string) [2]float64 {
	var r [2]float64
	for i, run := range runsOf(d, name, mode) {
		if i == 0 || run.MaxRate < r[0] {
			r[0] = run.MaxRate
		}
		r[1] = max(r[1], run.MaxRate)
	}
	return r
}

func cpuList(m map[string]float64) string {
	var s []string
	for _, k := range sortedKeys(m) {
		if !math.IsNaN(m[k]) {
			s = append(s, fmt.Sprintf("%s %.0f", k, m[k]))
		}
	}
	return strings.Join(s, ", ")
}
