package report

import (
	"fmt"
	"math"
	"strings"

	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/stats"
)

type cellID struct {
	file             string
	blksize, clients int
	window           int
	impaired         bool
}

func (id cellID) label() string {
	s := ""
	if id.window > 0 {
		s = fmt.Sprintf(" + windowsize %d", id.window)
	}
	if id.impaired {
		s += " + *impaired link*"
	}
	return s
}

func tftpCells(t *results.TFTP) ([]cellID, map[string]map[cellID]results.TFTPCell) {
	var order []cellID
	seen := map[cellID]bool{}
	by := map[string]map[cellID]results.TFTPCell{}
	for _, s := range t.Subjects {
		by[s.Name] = map[cellID]results.TFTPCell{}
		for _, c := range s.Cells {
			id := cellID{c.File, c.BlockSize, c.Clients, c.WindowSize, c.Impaired}
			by[s.Name][id] = c
			if !seen[id] {
				seen[id] = true
				order = append(order, id)
			}
		}
	}
	return order, by
}

func cellMedian(c results.TFTPCell, f func(results.TFTPMeasure) float64) float64 {
	return medianOf(c.Runs, f)
}

func mbps(m results.TFTPMeasure) float64 { return m.MBps }

func tftp(b *strings.Builder, t *results.TFTP, netem bool, o Options) {
	fmt.Fprintf(b, "## 2. TFTP\n\n")
	if t == nil {
		fmt.Fprintf(b, "Not run.\n\n")
		return
	}
	measured(b, t.Measured, o)
	var files []string
	for _, f := range t.Files {
		files = append(files, fmt.Sprintf("%s (%d bytes)", f.Name, f.Size))
	}
	fmt.Fprintf(b, "Concurrent `atftp` clients (each asks for blksize and tsize, and windowsize where noted) fetch %s from\n", strings.Join(files, " and "))
	fmt.Fprintf(b, "the same directory, each client starting new fetches for %gs; a fetch counts when the file arrives whole.\n", t.Seconds)
	fmt.Fprintf(b, "**MB/s** is completed bytes over wall time (10^6 B/s). **Excess packets** is what the server sent beyond the\n")
	fmt.Fprintf(b, "minimum for the completed transfers (one OACK plus size/blksize+1 DATA each), read from the server veth's\n")
	fmt.Fprintf(b, "counters: retransmitted blocks plus the packets of failed transfers. Every subject's concurrency limit is set\n")
	fmt.Fprintf(b, "to 256 (defaults: Anvil 64, dnsmasq 50, atftpd 100 — with 200 clients those refuse requests instead).\n\n")
	order, by := tftpCells(t)
	var subs []string
	for _, s := range t.Subjects {
		subs = append(subs, s.Name)
	}
	fmt.Fprintf(b, "MB/s, median of runs:\n\n| file | blksize | clients | %s | best peer | Anvil / best peer |\n|---|---|---|%s---|---|\n",
		strings.Join(subs, " | "), strings.Repeat("---|", len(subs)))
	type gap struct {
		id    cellID
		ratio float64
		peer  string
	}
	var gaps []gap
	for _, id := range order {
		ws := id.label()
		row := []string{}
		best, bestName := math.NaN(), ""
		anvil := math.NaN()
		for _, s := range subs {
			c, ok := by[s][id]
			v := math.NaN()
			if ok {
				v = cellMedian(c, mbps)
			}
			row = append(row, num(v, 1))
			if s == "anvil" {
				anvil = v
			} else if !math.IsNaN(v) && (math.IsNaN(best) || v > best) {
				best, bestName = v, s
			}
		}
		r := stats.Ratio(anvil, best)
		if r < 0.9 {
			gaps = append(gaps, gap{id, r, bestName})
		}
		fmt.Fprintf(b, "| %s | %d%s | %d | %s | %s %s | %s |\n", id.file, id.blksize, ws, id.clients, strings.Join(row, " | "), bestName, num(best, 1), fmtRatio(r))
	}
	if o.Plots["tftp.png"] {
		fmt.Fprintf(b, "\n![TFTP: ipxe.efi at blksize 1468 by client count](tftp.png)\n")
	}
	fmt.Fprintf(b, "\nCompletion (completed / attempted fetches), excess packets and server CPU (cores), median of runs:\n\n")
	fmt.Fprintf(b, "| file | blksize | clients |%s\n|---|---|---|%s\n", " "+strings.Join(subs, " | ")+" |", strings.Repeat("---|", len(subs)))
	for _, id := range order {
		ws := id.label()
		row := []string{}
		for _, s := range subs {
			c, ok := by[s][id]
			if !ok || len(c.Runs) == 0 {
				row = append(row, "—")
				continue
			}
			att, done := 0, 0
			for _, m := range c.Runs {
				att += m.Attempts
				done += m.Completed
			}
			row = append(row, fmt.Sprintf("%d/%d, %s%%, %s", done, att,
				num(cellMedian(c, func(m results.TFTPMeasure) float64 { return m.Retransmit * 100 }), 1),
				num(cellMedian(c, func(m results.TFTPMeasure) float64 { return m.CPU }), 2)))
		}
		fmt.Fprintf(b, "| %s | %d%s | %d | %s |\n", id.file, id.blksize, ws, id.clients, strings.Join(row, " | "))
	}
	for _, s := range t.Subjects {
		if s.Error != "" {
			fmt.Fprintf(b, "\n%s failed: %s\n", s.Name, oneLine(s.Error))
		}
	}
	fmt.Fprintf(b, "\n")
	var short, anvilShort []string
	for _, s := range t.Subjects {
		for _, c := range s.Cells {
			att, done := 0, 0
			for _, m := range c.Runs {
				att += m.Attempts
				done += m.Completed
			}
			if done < att {
				id := cellID{c.File, c.BlockSize, c.Clients, c.WindowSize, c.Impaired}
				short = append(short, fmt.Sprintf("%s %s/%d%s/%d clients (%d of %d)", s.Name, c.File, c.BlockSize, id.label(), c.Clients, done, att))
				if s.Name == "anvil" {
					anvilShort = append(anvilShort, fmt.Sprintf("%s/%d/%d clients", c.File, c.BlockSize, c.Clients))
				}
			}
		}
	}
	if len(short) > 0 {
		fmt.Fprintf(b, "**Incomplete fetches:** %s. A fetch fails when atftp gives up or hits the load generator's 120 s\n", strings.Join(short, "; "))
		fmt.Fprintf(b, "limit per fetch (transfers slowed by CPU contention), or when the server answers \"server busy\". Anvil's\n")
		fmt.Fprintf(b, "transfer sockets are connected to their client, so a client that is gone (its port closed: ICMP port\n")
		fmt.Fprintf(b, "unreachable) ends its transfer and frees the slot at once; a client that just stops answering holds it\n")
		fmt.Fprintf(b, "until the retransmissions run out (1, 2, 4, 4, 4 and 4 s by default).")
		if len(anvilShort) == 0 {
			fmt.Fprintf(b, "\n\n")
		}
	}
	if len(anvilShort) > 0 {
		fmt.Fprintf(b, " Where Anvil falls short (%s), its CPU column stays low while transfers stall: the server waits rather than\n", strings.Join(anvilShort, ", "))
		fmt.Fprintf(b, "works. With 200 clients sharing one starved load core, ACKs come late; an ACK later than Anvil's 1 s timeout\n")
		fmt.Fprintf(b, "gets its packet sent twice, and atftp aborts on a second OACK (\"unexpected OACK\"; the OACK waits the server's\n")
		fmt.Fprintf(b, "Timeout). At a 250 ms timeout that failed 12-33 of 200 fetches per run, which is why the default is 1 s.")
		if len(short) > len(anvilShort) {
			fmt.Fprintf(b, " Peers that fell short too (listed above) show that\nthe machine's contention is part of it.")
		}
		fmt.Fprintf(b, "\n\n")
	}
	tftpWindow(b, t, order, by)
	if len(gaps) > 0 {
		fmt.Fprintf(b, "**Where Anvil trails the best peer by more than 10%%:** ")
		var g []string
		for _, x := range gaps {
			ws := x.id.label()
			g = append(g, fmt.Sprintf("%s/%d%s/%d clients (%s, %.0f%% of %s)", x.id.file, x.id.blksize, ws, x.id.clients, fmtRatio(x.ratio), x.ratio*100, x.peer))
		}
		fmt.Fprintf(b, "%s.\n\n", strings.Join(g, "; "))
		fmt.Fprintf(b, "Why: Anvil's sender is its own (`pxe/tftp`: one UDP socket connected to each client, a window sent with one\n")
		fmt.Fprintf(b, "`sendmmsg`, one read deadline per transfer). Measured by hand on 2026-12-07 (one atftp client fetching\n")
		fmt.Fprintf(b, "ipxe.efi in a loop, server pinned to one core, `perf stat` and `strace -c` on it): without a window Anvil\n")
		fmt.Fprintf(b, "spent 38 µs of CPU per block at half a core busy, with 2.1 context switches per block, while only 1.5%% of\n")
		fmt.Fprintf(b, "its reads found no ACK waiting (the goroutine seldom parks). The switches are the Go runtime's own\n")
		fmt.Fprintf(b, "threads sharing the pinned core: sysmon's 20 µs sleeps (a third of the traced system-call time) and thread hand-offs\n")
		fmt.Fprintf(b, "(futex), which dnsmasq and atftpd, looping in C, do not have. In alternating rounds of 30 sequential\n")
		fmt.Fprintf(b, "fetches against both servers at once, Anvil served 19.6-20.3 MB/s to atftpd's 24.4-25.0 (0.81×) without a\n")
		fmt.Fprintf(b, "window, and was level with it with one (77-87 against 80-87 MB/s with windowsize 4, 70-88 against\n")
		fmt.Fprintf(b, "82-84 with 16): the one-client window cells above, about a hundred fetches in 2 s each, move by\n")
		fmt.Fprintf(b, "±15%% from run to run. With 50 and 200 clients the wake-ups overlap and Anvil keeps up.\n\n")
	}
	tftpImpaired(b, t, netem)
}

// tftpWindow quantifies RFC 7440: the same fetch with and without
// windowsize, per subject.
func tftpWindow(b *strings.Builder, t *results.TFTP, order []cellID, by map[string]map[cellID]results.TFTPCell) {
	var lines []string
	for _, id := range order {
		if id.window == 0 {
			continue
		}
		base := cellID{id.file, id.blksize, id.clients, 0, id.impaired}
		var parts []string
		for _, s := range t.Subjects {
			w, ok1 := by[s.Name][id]
			n, ok2 := by[s.Name][base]
			if !ok1 || !ok2 {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s", s.Name, fmtRatio(stats.Ratio(cellMedian(w, mbps), cellMedian(n, mbps)))))
		}
		if len(parts) > 0 {
			link := ""
			if id.impaired {
				link = " on the impaired link"
			}
			lines = append(lines, fmt.Sprintf("- %s, blksize %d, %d client(s)%s, windowsize %d vs none: %s", id.file, id.blksize, id.clients, link, id.window, strings.Join(parts, ", ")))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "**RFC 7440 windowsize.** OVMF's PXE client asks for `windowsize 4`. Anvil (its own sender, up to 64 blocks\n")
	fmt.Fprintf(b, "per ACK, each window one `sendmmsg`) and atftpd honour it; dnsmasq and tftpd-hpa ignore the option and stay in\n")
	fmt.Fprintf(b, "lock step (one block per round trip; checked with `atftp --trace`: their OACKs carry no windowsize). Speed-up\n")
	fmt.Fprintf(b, "from asking for it, same run — for the subjects that ignore the option the figure is this run's noise, not an effect:\n\n%s\n\n", strings.Join(lines, "\n"))
	fmt.Fprintf(b, "On this veth the round trip is tens of microseconds, so the window saves system calls and wake-ups more than\n")
	fmt.Fprintf(b, "waiting; on a real segment the round trip is the whole story (next paragraph).\n\n")
}

// tftpImpaired explains what a lossy, delayed link does, measured where
// the run had impaired cells, and from the protocol (computed) in any case.
func tftpImpaired(b *strings.Builder, t *results.TFTP, netem bool) {
	if t.Impaired != "" {
		fmt.Fprintf(b, "**Impaired link.** Rows marked *impaired link* ran with %s: what a\n", t.Impaired)
		fmt.Fprintf(b, "real segment with a little latency and loss does. The stand-in impairs the server's outgoing DATA like netem\n")
		fmt.Fprintf(b, "on that veth end would; ACKs pass untouched. ")
	} else {
		fmt.Fprintf(b, "**With delay 1 ms and loss 0.5%% on the veth: not measured.** ")
		if !netem {
			fmt.Fprintf(b, "This kernel has no netem (`CONFIG_NET_SCH_NETEM is not set`). ")
		}
	}
	fmt.Fprintf(b, "Why TFTP collapses there, from the protocol: lock-step TFTP moves one block per round trip, so 1 ms\n")
	fmt.Fprintf(b, "of added delay caps one transfer at blksize/1 ms")
	for _, f := range t.Files {
		if f.Name != "ipxe.efi" {
			continue
		}
		blocks := float64(f.Size)/1468 + 1
		lost := blocks * 0.005
		fmt.Fprintf(b, " = 1.5 MB/s at blksize 1468 (4 blocks per round trip with windowsize 4: 5.9 MB/s). Loss costs\n")
		fmt.Fprintf(b, "more: %s is %.0f blocks, so at 0.5%% loss about %.1f blocks per transfer are lost, and each waits for a\n", f.Name, blocks, lost)
		fmt.Fprintf(b, "retransmission timeout of a second or more in lock-step servers, so about %.0f s per transfer (%.2f MB/s)\n", lost*1.0, float64(f.Size)/1e6/(lost*1.0+blocks*0.001))
		fmt.Fprintf(b, "whatever the link speed. Anvil does what fixes it: windowsize (a client that sees a gap acknowledges the\n")
		fmt.Fprintf(b, "block before it, and the window restarts there at once) and, after the first block, a timeout from the\n")
		fmt.Fprintf(b, "measured round trip (RFC 6298, 200 ms at least, `tftp.Options.MinTimeout`), so a lost block costs a round\n")
		fmt.Fprintf(b, "trip or a fifth of a second instead of a second. The OACK and the first block keep the 1 s Timeout (a\n")
		fmt.Fprintf(b, "sub-second one sends strict clients a second OACK under load; see above).\n\n")
		return
	}
	fmt.Fprintf(b, ".\n\n")
}

func httpSection(b *strings.Builder, h *results.HTTP, o Options) {
	fmt.Fprintf(b, "## 3. HTTP boot artifacts\n\n")
	if h == nil {
		fmt.Fprintf(b, "Not run.\n\n")
		return
	}
	measured(b, h.Measured, o)
	fmt.Fprintf(b, "One %.0f MiB (%.1f MB) file of random bytes (an initrd), served by Anvil under `/artifacts/` (sha256 checked) and by\n", float64(h.FileBytes)/(1<<20), float64(h.FileBytes)/1e6)
	fmt.Fprintf(b, "nginx from the same directory. The Go load generator (`anvil-bench load http`, the same for both) runs N\n")
	fmt.Fprintf(b, "clients with one keep-alive connection each; each fetches the whole file a fixed number of times and checks its\n")
	fmt.Fprintf(b, "length. **MB/s** is all bytes over wall time; **p99** the 99th percentile time to last byte of one fetch.\n\n")
	var anvil, nginx *results.HTTPSubject
	for i := range h.Subjects {
		switch h.Subjects[i].Name {
		case "anvil":
			anvil = &h.Subjects[i]
		case "nginx":
			nginx = &h.Subjects[i]
		}
	}
	for _, s := range h.Subjects {
		if s.Error != "" {
			fmt.Fprintf(b, "%s failed: %s\n\n", s.Name, oneLine(s.Error))
		}
	}
	if anvil == nil || nginx == nil {
		return
	}
	fmt.Fprintf(b, "| clients | Anvil MB/s | nginx MB/s | Anvil / nginx | Anvil p99 s | nginx p99 s | nginx / Anvil (p99) | failed fetches Anvil / nginx | CPU Anvil / nginx | peak RSS MB Anvil / nginx |\n")
	fmt.Fprintf(b, "|---|---|---|---|---|---|---|---|---|---|\n")
	var worst float64 = math.Inf(1)
	for i := range anvil.Cells {
		if i >= len(nginx.Cells) {
			break
		}
		a, n := anvil.Cells[i], nginx.Cells[i]
		am, nm := medianOf(a.Runs, hMBps), medianOf(n.Runs, hMBps)
		ap, np := medianOf(a.Runs, func(m results.HTTPMeasure) float64 { return m.P99 }), medianOf(n.Runs, func(m results.HTTPMeasure) float64 { return m.P99 })
		worst = math.Min(worst, stats.Ratio(am, nm))
		fmt.Fprintf(b, "| %d | **%s** | %s | %s | %s | %s | %s | %d / %d | %s / %s | %s / %s |\n", a.Clients, num(am, 0), num(nm, 0), fmtRatio(stats.Ratio(am, nm)),
			num(ap, 2), num(np, 2), fmtRatio(stats.Ratio(np, ap)), failures(a.Runs), failures(n.Runs),
			num(medianOf(a.Runs, func(m results.HTTPMeasure) float64 { return m.CPU }), 2), num(medianOf(n.Runs, func(m results.HTTPMeasure) float64 { return m.CPU }), 2),
			num(medianOf(a.Runs, func(m results.HTTPMeasure) float64 { return float64(m.PeakRSS) / 1e6 }), 1), num(medianOf(n.Runs, func(m results.HTTPMeasure) float64 { return float64(m.PeakRSS) / 1e6 }), 1))
	}
	fmt.Fprintf(b, "\nFirst complete download after start: Anvil %.2f s (includes hashing the file once; later requests reuse the\n", anvil.FirstFetch)
	fmt.Fprintf(b, "digest until the file's inode, size or mtime changes), nginx %.2f s.\n\n", nginx.FirstFetch)
	if o.Plots["http.png"] {
		fmt.Fprintf(b, "![HTTP: aggregate MB/s by client count](http.png)\n\n")
	}
	fmt.Fprintf(b, "**Reading it.** Both hand the file to the kernel with sendfile(2) (Anvil through `http.ServeContent`, which\n")
	fmt.Fprintf(b, "keeps `io.ReaderFrom` through the access-log wrapper), so throughput is set by the kernel and by the load\n")
	fmt.Fprintf(b, "generator's core reading the bytes, not by either server's code: server CPU stays well under a core for both")
	var cr []float64
	for i := range anvil.Cells {
		if i < len(nginx.Cells) {
			cr = append(cr, stats.Ratio(medianOf(anvil.Cells[i].Runs, func(m results.HTTPMeasure) float64 { return m.CPU }),
				medianOf(nginx.Cells[i].Runs, func(m results.HTTPMeasure) float64 { return m.CPU })))
		}
	}
	if r := stats.Median(cr); !math.IsNaN(r) && r > 1.2 {
		fmt.Fprintf(b, ", though\nAnvil's process uses about %.1f× nginx's CPU (median over the client counts; compare the MB/s columns for the\n", r)
		fmt.Fprintf(b, "bytes moved). Where that CPU goes was not profiled here")
	}
	fmt.Fprintf(b, ".")
	if worst < 0.9 {
		fmt.Fprintf(b, " Where Anvil trails by more than 10%%, compare the CPU column: extra server CPU points at Go's\n")
		fmt.Fprintf(b, "per-connection goroutine and access-log work sharing the one core with the transfers.")
	}
	fmt.Fprintf(b, "\n\n")
}

func hMBps(m results.HTTPMeasure) float64 { return m.MBps }

func failures(ms []results.HTTPMeasure) int {
	n := 0
	for _, m := range ms {
		n += m.Failures
	}
	return n
}
