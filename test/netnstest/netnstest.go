// Package netnstest gives the pxe tests private network namespaces joined by
// a veth pair, so DHCP/TFTP servers and real clients (dhclient, udhcpc,
// atftp, ...) can talk without touching the host's network.
//
// Sockets belong to the network namespace of the thread that creates them,
// so servers are started in-process: Do runs a function on a locked OS thread
// that has joined the namespace (use it to open listeners), Go runs a
// long-lived goroutine that stays in it (use it for servers that open more
// sockets later, like pxe/tftp's per-transfer sockets). Client commands run
// through `ip netns exec`.
package netnstest

import (
	"anvil.dev/anvil/test/logs"
	"anvil.dev/anvil/test/need"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Require skips the test when ok is false, or fails it when the environment
// variable CI is "true" (CI installs every dependency, so a missing one
// there is a bug, not a reason to skip).
func Require(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if ok {
		return
	}
	need.OrSkip(t, format, args...)
}

// RequireRoot needs uid 0 (network namespaces, binding port 67/69).
func RequireRoot(t testing.TB) {
	t.Helper()
	Require(t, os.Geteuid() == 0, "test needs root for network namespaces")
}

// RequireCommands needs each named program on PATH.
func RequireCommands(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		_, err := exec.LookPath(n)
		Require(t, err == nil, "program %q not found (install its Debian package)", n)
	}
}

// NS is a network namespace created by the test.
type NS struct {
	Name string
	t    testing.TB
}

// Pair is two namespaces joined by a veth pair: the server side has SrvIP,
// the client side has no address (DHCP clients configure it).
type Pair struct {
	Srv, Cli     *NS
	SrvIf, CliIf string
	Subnet       netip.Prefix
	SrvIP        netip.Addr
	CliIP        netip.Addr // valid only with PairOptions.CliAddress
}

// PairOptions configures NewPair.
type PairOptions struct {
	// Subnet for the segment; the server gets its first host address.
	// Default: a random 10.x.y.0/24.
	Subnet netip.Prefix
	// CliMAC sets the client interface's MAC address when non-nil.
	CliMAC net.HardwareAddr
	// CliAddress gives the client the subnet's second host address (for
	// TFTP/HTTP clients; DHCP clients configure themselves).
	CliAddress bool
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewNS creates a namespace named anvil-t-<id>-<suffix> with loopback up and
// registers its removal (and the killing of anything still in it) with
// t.Cleanup.
func NewNS(t testing.TB, id, suffix string) *NS {
	t.Helper()
	RequireRoot(t)
	RequireCommands(t, "ip")
	ns := &NS{Name: "anvil-t-" + id + "-" + suffix, t: t}
	run(t, "ip", "netns", "add", ns.Name)
	t.Cleanup(func() {
		// Kill leftovers by PID (only processes inside this namespace,
		// which the test started), then delete the namespace.
		if out, err := exec.Command("ip", "netns", "pids", ns.Name).Output(); err == nil {
			for _, f := range strings.Fields(string(out)) {
				var pid int
				// Skip ourselves: a thread of the test process may be in
				// the namespace (NS.Go), and ip reports its PID.
				if _, err := fmt.Sscan(f, &pid); err == nil && pid > 1 && pid != os.Getpid() {
					_ = unix.Kill(pid, unix.SIGKILL)
				}
			}
		}
		_ = exec.Command("ip", "netns", "del", ns.Name).Run()
	})
	ns.Exec(t, "ip", "link", "set", "lo", "up")
	return ns
}

// NewVMSegment creates a namespace (as NewNS) holding a QEMU VM's L2
// segment: bridge br0 with the server's address addr (an IPv6 one without
// duplicate address detection, so it is usable at once) and tap0 on it,
// for QEMU's -netdev tap,ifname=tap0.
func NewVMSegment(t testing.TB, id, suffix string, addr netip.Prefix) *NS {
	t.Helper()
	ns := NewNS(t, id, suffix)
	ns.Exec(t, "ip", "link", "add", "br0", "type", "bridge")
	if addr.Addr().Is6() {
		ns.Exec(t, "ip", "-6", "addr", "add", addr.String(), "dev", "br0", "nodad")
	} else {
		ns.Exec(t, "ip", "addr", "add", addr.String(), "dev", "br0")
	}
	ns.Exec(t, "ip", "link", "set", "br0", "up")
	ns.Exec(t, "ip", "tuntap", "add", "tap0", "mode", "tap")
	ns.Exec(t, "ip", "link", "set", "tap0", "master", "br0", "up")
	return ns
}

// NewPair creates a server and a client namespace joined by a veth pair.
func NewPair(t testing.TB, opts PairOptions) *Pair {
	t.Helper()
	id := randHex(3)
	if !opts.Subnet.IsValid() {
		b := make([]byte, 2)
		_, _ = rand.Read(b)
		opts.Subnet = netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 100 + b[0]%100, b[1], 0}), 24)
	}
	p := &Pair{
		Srv:    NewNS(t, id, "srv"),
		Cli:    NewNS(t, id, "cli"),
		SrvIf:  "av" + id + "s",
		CliIf:  "av" + id + "c",
		Subnet: opts.Subnet.Masked(),
	}
	p.SrvIP = p.Subnet.Addr().Next()
	run(t, "ip", "link", "add", p.SrvIf, "netns", p.Srv.Name, "type", "veth", "peer", "name", p.CliIf, "netns", p.Cli.Name)
	p.Srv.Exec(t, "ip", "addr", "add", netip.PrefixFrom(p.SrvIP, p.Subnet.Bits()).String(), "dev", p.SrvIf)
	p.Srv.Exec(t, "ip", "link", "set", p.SrvIf, "up")
	if opts.CliMAC != nil {
		p.Cli.Exec(t, "ip", "link", "set", p.CliIf, "address", opts.CliMAC.String())
	}
	if opts.CliAddress {
		p.CliIP = p.SrvIP.Next()
		p.Cli.Exec(t, "ip", "addr", "add", netip.PrefixFrom(p.CliIP, p.Subnet.Bits()).String(), "dev", p.CliIf)
	}
	p.Cli.Exec(t, "ip", "link", "set", p.CliIf, "up")
	return p
}

// SetCliMAC changes the client interface's MAC (down, set, up) so one pair
// can play several hosts.
func (p *Pair) SetCliMAC(t testing.TB, mac net.HardwareAddr) {
	t.Helper()
	p.Cli.Exec(t, "ip", "link", "set", p.CliIf, "down")
	p.Cli.Exec(t, "ip", "addr", "flush", "dev", p.CliIf)
	p.Cli.Exec(t, "ip", "link", "set", p.CliIf, "address", mac.String())
	p.Cli.Exec(t, "ip", "link", "set", p.CliIf, "up")
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// Exec runs a command inside the namespace and fails the test on error.
func (ns *NS) Exec(t testing.TB, name string, args ...string) {
	t.Helper()
	run(t, "ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// Command returns an exec.Cmd that runs name inside the namespace. `ip netns
// exec` execs the program, so cmd.Process.Pid is the program itself.
func (ns *NS) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// Output runs a command inside the namespace with a timeout and returns its
// combined output and error.
func (ns *NS) Output(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var buf bytes.Buffer
	cmd := ns.Command(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// Start starts a long-running command inside the namespace; t.Cleanup kills
// it by PID and waits for it.
func (ns *NS) Start(t testing.TB, stdout, stderr *SyncBuffer, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := ns.Command(context.Background(), name, args...)
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	})
	return cmd
}

// SyncBuffer is a bytes.Buffer safe for a process writer and a test reader.
type SyncBuffer = logs.Buffer

func (ns *NS) path() string { return "/run/netns/" + ns.Name }

// Do runs fn on an OS thread that has joined the namespace and returns its
// error. Sockets fn creates stay in the namespace afterwards.
func (ns *NS) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		if err := ns.enter(); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			// Leave the thread locked: the runtime destroys it when this
			// goroutine exits, so no other goroutine runs in the wrong
			// namespace.
			errc <- fmt.Errorf("restore netns: %w", err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Go runs fn in a new goroutine whose OS thread stays in the namespace for
// fn's whole life; the thread is discarded when fn returns. Go blocks until
// the thread has joined the namespace and returns any error doing so.
func (ns *NS) Go(fn func()) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := ns.enter(); err != nil {
			errc <- err
			return
		}
		errc <- nil
		fn()
	}()
	return <-errc
}

func (ns *NS) enter() error {
	f, err := os.Open(ns.path())
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns %s: %w", ns.Name, err)
	}
	return nil
}

// WaitFor polls cond every 50ms until it returns true or the timeout passes.
func WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
