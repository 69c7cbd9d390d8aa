package report

import (
	"fmt"
	"math"
	"strings"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

// summary is the one table a reader needs first: each headline figure,
// the best peer's, the ratio and the target (never asserted).
func summary(b *strings.Builder, r *results.Run) {
	type row struct{ what, anvil, peer, ratio, target string }
	var rows []row
	verdict := func(ok bool) string {
		if ok {
			return "met in this run"
		}
		return "not met in this run"
	}
	if d := r.DHCP; d != nil {
		modes := dhcpModes(d)
		for _, m := range modes {
			head := headline(d, m.Name)
			a, k := dhcpRate(d, head, m.Name), dhcpRate(d, "kea-dhcp4", m.Name)
			rr := stats.Ratio(a, k)
			what, val, target := "DHCP DORA/s at <= 2.5% drop", num(a, 0), "at least Kea's: "
			if len(modes) > 1 || head == productName {
				what = fmt.Sprintf("DHCP DORA/s at <= 2.5%% drop, %s mode", m.Name)
				target = "at least Kea's best, on the product path: "
			}
			if head == productName {
				val = fmt.Sprintf("%s (`anvil serve`, Hosts); pxe/dhcp %s", num(a, 0), num(dhcpRate(d, "anvil", m.Name), 0))
			}
			v := verdict(!math.IsNaN(rr) && rr >= 1)
			if !math.IsNaN(rr) && rr < 1 {
				v += fmt.Sprintf(" (%.0f%% short", (1-rr)*100)
				// A ramp the load generator stopped says little about the
				// server: say so, with the per-exchange CPU comparison.
				s, _ := dhcpSubject(d, head, m.Name)
				ua, uk := atMaxOf(d, head, m.Name, usPerDORA), atMaxOf(d, "kea-dhcp4", m.Name, usPerDORA)
				if limited := atMax(s, d.MaxDrop, genCPU) >= genLimit || atFirstFail(s, d.MaxDrop, genCPU) >= genLimit; limited && ua > 0 && !math.IsNaN(uk) {
					v += fmt.Sprintf("; the load generator's core was the limit, and by server CPU per exchange Anvil is %.2f× Kea", uk/ua)
				}
				v += ")"
			}
			rows = append(rows, row{what, val, "kea-dhcp4 " + num(k, 0), fmtRatio(rr), target + v})
		}
	}
	if t := r.TFTP; t != nil {
		_, by := tftpCells(t)
		for _, id := range []cellID{{"ipxe.efi", 1468, 50, 0, false}, {"ipxe.efi", 1468, 200, 0, false}} {
			a := math.NaN()
			if c, ok := by["anvil"][id]; ok {
				a = cellMedian(c, mbps)
			}
			best, name := math.NaN(), ""
			for _, s := range t.Subjects {
				if s.Name == "anvil" {
					continue
				}
				if c, ok := by[s.Name][id]; ok {
					if v := cellMedian(c, mbps); math.IsNaN(best) || v > best {
						best, name = v, s.Name
					}
				}
			}
			if math.IsNaN(a) && math.IsNaN(best) {
				continue
			}
			rr := stats.Ratio(a, best)
			rows = append(rows, row{fmt.Sprintf("TFTP MB/s, %s blksize %d, %d clients", id.file, id.blksize, id.clients), num(a, 1),
				name + " " + num(best, 1), fmtRatio(rr), "within 10% of the best peer: " + verdict(!math.IsNaN(rr) && rr >= 0.9)})
		}
	}
	if h := r.HTTP; h != nil {
		var an, ng *results.HTTPSubject
		for i := range h.Subjects {
			switch h.Subjects[i].Name {
			case "anvil":
				an = &h.Subjects[i]
			case "nginx":
				ng = &h.Subjects[i]
			}
		}
		if an != nil && ng != nil && len(an.Cells) > 0 && len(ng.Cells) == len(an.Cells) {
			i := len(an.Cells) - 1
			a, n := medianOf(an.Cells[i].Runs, hMBps), medianOf(ng.Cells[i].Runs, hMBps)
			rr := stats.Ratio(a, n)
			rows = append(rows, row{fmt.Sprintf("HTTP MB/s, %d clients", an.Cells[i].Clients), num(a, 0), "nginx " + num(n, 0), fmtRatio(rr),
				"within 10% of nginx: " + verdict(!math.IsNaN(rr) && rr >= 0.9)})
		}
	}
	if rd := r.Render; rd != nil {
		ps := map[string]float64{}
		for _, s := range rd.Subjects {
			ps[s.Name] = medianOf(s.Runs, func(m results.RenderMeasure) float64 { return m.PerSecond })
		}
		cli := ps["butane CLI per host"]
		for _, n := range []string{"anvil cold", "anvil cached"} {
			if v, ok := ps[n]; ok {
				rows = append(rows, row{"renders/s, " + n, num(v, 0), "butane CLI " + num(cli, 0), fmtRatio(stats.Ratio(v, cli)), "(none set)"})
			}
		}
	}
	if what, v, target, ok := stormSummary(r.Storm); ok {
		rows = append(rows, row{what, v, "no peer (section 4)", "", target})
	}
	for _, x := range consoleSummary(r.Console) {
		rows = append(rows, row{x[0], x[1], x[2], x[3], x[4]})
	}
	for _, x := range scaleSummary(r.Scale, r.Rollout) {
		rows = append(rows, row{x[0], x[1], x[2], x[3], x[4]})
	}
	fmt.Fprintf(b, "## Summary\n\n| figure | Anvil | best peer | Anvil / peer | target (issue 9) |\n|---|---|---|---|---|\n")
	for _, x := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", x.what, x.anvil, x.peer, x.ratio, x.target)
	}
	fmt.Fprintf(b, "\n")
}
