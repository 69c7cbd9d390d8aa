// Package netns creates the two network namespaces every network benchmark
// runs in: a server namespace and a load namespace joined by one veth pair.
// Subjects (Anvil and the peers) run in the server namespace, load
// generators in the load namespace, each pinned to its own CPU, so no
// packet ever leaves the machine and the server does not compete with its
// load for a core.
package netns

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Pair is a server and a load namespace joined by a veth pair.
type Pair struct {
	Srv, Load     string // namespace names
	SrvIf, LoadIf string // veth ends
	Prefix        netip.Prefix
	SrvIP, LoadIP netip.Addr
}

// DefaultPrefix is RFC 2544's benchmarking range: never routed anywhere, and
// the /16 holds 10,000 reservations.
var DefaultPrefix = netip.MustParsePrefix("198.18.0.0/16")

// NewPair creates the namespaces (named anvb-<id>-srv and anvb-<id>-load),
// the veth pair and the addresses: the server gets the prefix's first host
// address, the load side the second. Call Close to remove them.
func NewPair(prefix netip.Prefix) (*Pair, error) {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	p := &Pair{
		Srv: "anvb-" + id + "-srv", Load: "anvb-" + id + "-load",
		SrvIf: "ab" + id + "s", LoadIf: "ab" + id + "l",
		Prefix: prefix.Masked(),
	}
	p.SrvIP = p.Prefix.Addr().Next()
	p.LoadIP = p.SrvIP.Next()
	steps := [][]string{
		{"ip", "netns", "add", p.Srv},
		{"ip", "netns", "add", p.Load},
		{"ip", "link", "add", p.SrvIf, "netns", p.Srv, "type", "veth", "peer", "name", p.LoadIf, "netns", p.Load},
		{"ip", "-n", p.Srv, "addr", "add", netip.PrefixFrom(p.SrvIP, p.Prefix.Bits()).String(), "dev", p.SrvIf},
		{"ip", "-n", p.Load, "addr", "add", netip.PrefixFrom(p.LoadIP, p.Prefix.Bits()).String(), "dev", p.LoadIf},
		{"ip", "-n", p.Srv, "link", "set", "lo", "up"},
		{"ip", "-n", p.Load, "link", "set", "lo", "up"},
		{"ip", "-n", p.Srv, "link", "set", p.SrvIf, "up"},
		{"ip", "-n", p.Load, "link", "set", p.LoadIf, "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// Close kills every process still inside the two namespaces (all of them
// were started by the benchmark: the namespaces are its own) and deletes
// them. It is safe to call more than once.
func (p *Pair) Close() {
	for _, ns := range []string{p.Srv, p.Load} {
		KillAll(ns)
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
}

// KillAll sends SIGKILL, by PID, to every process in namespace ns except
// this one.
func KillAll(ns string) {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(out)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil && pid > 1 && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func run(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Command returns a command that runs inside namespace ns, pinned to the
// given CPU list (taskset syntax, "" for no pinning). `ip netns exec` and
// taskset both exec, so cmd.Process.Pid is the program itself.
func Command(ctx context.Context, ns, cpus, name string, args ...string) *exec.Cmd {
	argv := []string{"netns", "exec", ns}
	if cpus != "" {
		argv = append(argv, "taskset", "-c", cpus)
	}
	argv = append(argv, name)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "ip", argv...)
	cmd.WaitDelay = 3 * time.Second
	return cmd
}

// IfCounters are an interface's packet counters.
type IfCounters struct {
	TxPackets, RxPackets, TxBytes, RxBytes uint64
}

// Counters reads the counters of interface dev in namespace ns.
func Counters(ns, dev string) (IfCounters, error) {
	out, err := exec.Command("ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev).Output()
	if err != nil {
		return IfCounters{}, fmt.Errorf("read counters of %s in %s: %w", dev, ns, err)
	}
	return parseCounters(out)
}

func parseCounters(js []byte) (IfCounters, error) {
	var links []struct {
		Stats64 struct {
			Rx struct{ Bytes, Packets uint64 } `json:"rx"`
			Tx struct{ Bytes, Packets uint64 } `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(js, &links); err != nil {
		return IfCounters{}, fmt.Errorf("parse ip -j output: %w", err)
	}
	if len(links) != 1 {
		return IfCounters{}, fmt.Errorf("ip -j: want 1 link, got %d", len(links))
	}
	s := links[0].Stats64
	return IfCounters{TxPackets: s.Tx.Packets, RxPackets: s.Rx.Packets, TxBytes: s.Tx.Bytes, RxBytes: s.Rx.Bytes}, nil
}
