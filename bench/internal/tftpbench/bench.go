package tftpbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"anvil.dev/anvil/bench/internal/harness"
	"anvil.dev/anvil/bench/internal/impair"
	"anvil.dev/anvil/bench/internal/machine"
	"anvil.dev/anvil/bench/internal/netns"
	"anvil.dev/anvil/bench/internal/results"
)

// Options selects the cells.
type Options struct {
	// Source is where the iPXE binaries come from (Debian's ipxe package).
	Source     string
	Files      []string
	BlockSizes []int
	Clients    []int
	// Window cells: ipxe.efi at blksize 1468 with the RFC 7440 windowsize
	// option asked for, each size for these client counts (OVMF asks for
	// 4; the target names 4 and 16).
	WindowSizes   []int
	WindowClients []int
	Seconds       float64
	// Impaired cells run with delay and loss on the server's veth egress
	// (netem, or the NFQUEUE stand-in); a fetch there can take tens of
	// seconds, so they are few.
	Impaired    []Cell
	ImpairDelay time.Duration
	ImpairLoss  float64 // percent
	// MaxConcurrent for every subject that has such a limit (Anvil 64,
	// dnsmasq 50 and atftpd 100 by default), so 200 clients measure
	// throughput, not refusals.
	MaxConcurrent int
}

// Cell names one impaired measurement.
type Cell struct {
	File               string
	BlockSize, Clients int
	WindowSize         int
}

func DefaultOptions() Options {
	return Options{
		Source: "/usr/lib/ipxe", Files: []string{"undionly.kpxe", "ipxe.efi"},
		BlockSizes: []int{512, 1468}, Clients: []int{1, 50, 200},
		WindowSizes: []int{4, 16}, WindowClients: []int{1, 50},
		Seconds: 2, MaxConcurrent: 256,
		Impaired: []Cell{
			{"undionly.kpxe", 1468, 1, 0}, {"undionly.kpxe", 1468, 1, 4}, {"undionly.kpxe", 1468, 50, 0},
			{"ipxe.efi", 1468, 1, 0}, {"ipxe.efi", 1468, 1, 4},
		},
		ImpairDelay: time.Millisecond, ImpairLoss: 0.5,
	}
}

func SmokeOptions() Options {
	return Options{
		Source: "/usr/lib/ipxe", Files: []string{"undionly.kpxe"},
		BlockSizes: []int{1468}, Clients: []int{1, 20},
		WindowSizes: []int{4}, WindowClients: []int{1},
		Seconds: 0.5, MaxConcurrent: 256,
		Impaired:    []Cell{{"undionly.kpxe", 1468, 1, 0}},
		ImpairDelay: time.Millisecond, ImpairLoss: 0.5,
	}
}

type subject struct {
	name, config string
	start        func(env *harness.Env, root string) (*harness.Proc, error)
}

func subjects(o Options, p *netns.Pair) []subject {
	max := strconv.Itoa(o.MaxConcurrent)
	return []subject{
		{"anvil", "pxe/tftp (its own windowed sender: sendmmsg per window, honours windowsize up to 64), MaxConcurrent " + max + ", first retransmission after 1s, doubling to 4s, 5 retries, no random pause, slog info log to a file",
			func(env *harness.Env, root string) (*harness.Proc, error) {
				return env.Start("anvil-tftp", env.Self, "subject", "tftp", "--root", root, "--iface", p.SrvIf,
					"--addr", p.SrvIP.String()+":69", "--max", max, "--log", filepath.Join(env.Dir, "anvil-tftp.jsonl"))
			}},
		{"dnsmasq", "--enable-tftp --tftp-max=" + max + ", DNS and DHCP off",
			func(env *harness.Env, root string) (*harness.Proc, error) {
				return env.Start("dnsmasq-tftp", "dnsmasq", "-k", "--conf-file=/dev/null", "--port=0", "--enable-tftp",
					"--tftp-root="+root, "--tftp-max="+max, "--interface="+p.SrvIf, "--bind-interfaces", "--user=root",
					"--pid-file="+filepath.Join(env.Dir, "dnsmasq-tftp.pid"), "--log-facility="+filepath.Join(env.Dir, "dnsmasq-tftp.syslog"))
			}},
		{"atftpd", "--daemon --no-fork --maxthread " + max + " (threads; honours windowsize)",
			func(env *harness.Env, root string) (*harness.Proc, error) {
				return env.Start("atftpd", "atftpd", "--daemon", "--no-fork", "--port", "69", "--bind-address", p.SrvIP.String(),
					"--maxthread", max, "--logfile", filepath.Join(env.Dir, "atftpd.syslog"), root)
			}},
		{"tftpd-hpa", "in.tftpd --listen --secure (a process per transfer)",
			func(env *harness.Env, root string) (*harness.Proc, error) {
				return env.Start("tftpd-hpa", machine.TftpdHPA(), "--listen", "--foreground", "--address", p.SrvIP.String()+":69", "--secure", root)
			}},
	}
}

type cellKey struct {
	file             string
	blksize, clients int
	window           int
	impaired         bool
}

func cells(o Options) []cellKey {
	var out []cellKey
	for _, f := range o.Files {
		for _, b := range o.BlockSizes {
			for _, c := range o.Clients {
				out = append(out, cellKey{f, b, c, 0, false})
			}
		}
	}
	win := o.Files[len(o.Files)-1]
	for _, w := range o.WindowSizes {
		for _, c := range o.WindowClients {
			out = append(out, cellKey{win, 1468, c, w, false})
		}
	}
	for _, c := range o.Impaired {
		out = append(out, cellKey{c.File, c.BlockSize, c.Clients, c.WindowSize, true})
	}
	return out
}

// Run measures every subject env.Runs times over all cells.
func Run(ctx context.Context, env *harness.Env, o Options) *results.TFTP {
	out := &results.TFTP{Seconds: o.Seconds}
	if len(o.Impaired) > 0 {
		out.Impaired = impair.Describe(o.ImpairDelay, o.ImpairLoss)
	}
	root := filepath.Join(env.Dir, "tftproot")
	if err := os.MkdirAll(root, 0o755); err != nil {
		out.Subjects = append(out.Subjects, results.TFTPSubject{Name: "all", Error: err.Error()})
		return out
	}
	sizes := map[string]int64{}
	for _, f := range o.Files {
		n, err := copyFile(filepath.Join(o.Source, f), filepath.Join(root, f))
		if err != nil {
			out.Subjects = append(out.Subjects, results.TFTPSubject{Name: "all", Error: err.Error()})
			return out
		}
		sizes[f] = n
		out.Files = append(out.Files, results.TFTPFile{Name: f, Size: n})
	}
	subs := subjects(o, env.Pair)
	ck := cells(o)
	for _, s := range subs {
		ts := results.TFTPSubject{Name: s.name, Config: s.config}
		for _, c := range ck {
			ts.Cells = append(ts.Cells, results.TFTPCell{File: c.file, BlockSize: c.blksize, Clients: c.clients, WindowSize: c.window, Impaired: c.impaired})
		}
		out.Subjects = append(out.Subjects, ts)
	}
	for run := range env.Runs {
		for i, s := range subs {
			sub := &out.Subjects[i]
			if ctx.Err() != nil || sub.Error != "" {
				continue
			}
			env.Logf("tftp: %s run %d/%d", s.name, run+1, env.Runs)
			if err := runSubject(ctx, env, o, s, root, sizes, ck, sub); err != nil {
				sub.Error = err.Error()
				env.Logf("tftp: %s: %v", s.name, err)
			}
		}
	}
	return out
}

func runSubject(ctx context.Context, env *harness.Env, o Options, s subject, root string, sizes map[string]int64, ck []cellKey, sub *results.TFTPSubject) error {
	p, err := s.start(env, root)
	if err != nil {
		return err
	}
	defer p.Stop()
	probe := ck[0]
	err = p.WaitReady(30*time.Second, func() error {
		lr, err := load(ctx, env, LoadOptions{Server: env.Pair.SrvIP.String(), File: probe.file, Size: sizes[probe.file], BlockSize: 512, Clients: 1})
		if err == nil && lr.Completed == 0 {
			err = fmt.Errorf("probe fetch failed: %s", lr.FirstErr)
		}
		return err
	})
	if err != nil {
		return err
	}
	var link *impair.Link
	defer func() {
		if link != nil {
			link.Stop()
		}
	}()
	for i, c := range ck {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if c.impaired && link == nil {
			if link, err = impair.Start(env, o.ImpairDelay, o.ImpairLoss); err != nil {
				return fmt.Errorf("impair the link: %w", err)
			}
		}
		before, err := netns.Counters(env.Pair.Srv, env.Pair.SrvIf)
		if err != nil {
			return err
		}
		p.Mon.ResetPeak()
		u0, t0 := p.Mon.Now(), time.Now()
		lr, err := load(ctx, env, LoadOptions{Server: env.Pair.SrvIP.String(), File: c.file, Size: sizes[c.file],
			BlockSize: c.blksize, WindowSize: c.window, Clients: c.clients, Seconds: o.Seconds})
		if err != nil {
			return err
		}
		u1, wall := p.Mon.Now(), time.Since(t0)
		after, err := netns.Counters(env.Pair.Srv, env.Pair.SrvIf)
		if err != nil {
			return err
		}
		if p.Exited() {
			return fmt.Errorf("server exited:\n%s", p.Tail(2000))
		}
		m := results.TFTPMeasure{
			Attempts: lr.Attempts, Completed: lr.Completed, Bytes: lr.Bytes, Seconds: lr.Seconds, P99: lr.P99,
			ServerPackets: after.TxPackets - before.TxPackets,
			MinPackets:    uint64(lr.Completed) * MinPackets(sizes[c.file], c.blksize),
			CPU:           (u1.CPU - u0.CPU) / wall.Seconds(),
			PeakRSS:       p.Mon.Peak(),
		}
		if lr.Seconds > 0 {
			m.MBps = float64(lr.Bytes) / lr.Seconds / 1e6
		}
		if m.MinPackets > 0 && m.ServerPackets > m.MinPackets {
			m.Retransmit = float64(m.ServerPackets-m.MinPackets) / float64(m.MinPackets)
		}
		sub.Cells[i].Runs = append(sub.Cells[i].Runs, m)
		ws := ""
		if c.window > 0 {
			ws = fmt.Sprintf(" windowsize %d", c.window)
		}
		if c.impaired {
			ws += " IMPAIRED"
		}
		env.Logf("tftp: %s %s blksize %d%s x%d: %.1f MB/s, %d/%d done, excess packets %.1f%%, cpu %.2f%s",
			s.name, c.file, c.blksize, ws, c.clients, m.MBps, m.Completed, m.Attempts, m.Retransmit*100, m.CPU, firstErr(lr))
	}
	return nil
}

func firstErr(lr LoadResult) string {
	if lr.FirstErr == "" {
		return ""
	}
	return ", first error: " + lr.FirstErr
}

// MinPackets is what a server must send for one transfer of size bytes:
// one OACK and size/blksize+1 DATA blocks (the last one short, maybe empty).
func MinPackets(size int64, blksize int) uint64 {
	return uint64(size/int64(blksize)) + 1 + 1
}

// load runs the load generator in the load namespace and parses its result.
func load(ctx context.Context, env *harness.Env, o LoadOptions) (LoadResult, error) {
	var lr LoadResult
	c, cancel := context.WithTimeout(ctx, time.Duration(o.Seconds*float64(time.Second))+5*time.Minute)
	defer cancel()
	cmd := env.LoadCommand(c, env.Self, "load", "tftp", "--server", o.Server, "--file", o.File,
		"--size", strconv.FormatInt(o.Size, 10), "--blksize", strconv.Itoa(o.BlockSize), "--windowsize", strconv.Itoa(o.WindowSize),
		"--clients", strconv.Itoa(o.Clients), "--seconds", strconv.FormatFloat(o.Seconds, 'f', -1, 64),
		"--tmp", filepath.Join("/dev/shm", filepath.Base(env.Dir)+"-tftp"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return lr, fmt.Errorf("tftp load: %v: %s", err, stderr.String())
	}
	if err := json.Unmarshal(out, &lr); err != nil {
		return lr, fmt.Errorf("tftp load output %q: %w", out, err)
	}
	// A cell where nothing completed is a result (0 MB/s), not an error.
	return lr, nil
}

func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src) // follows symlinks: Debian's ipxe.efi points into /boot
	if err != nil {
		return 0, fmt.Errorf("%s: %w (install Debian's ipxe package)", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}
