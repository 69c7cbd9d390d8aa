package lab

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// netns is the lab's network namespace. Sockets belong to the namespace of
// the thread that creates them, so Do and Go run code on a thread that has
// joined it (the approach of test/netnstest, without testing.TB).
type netns struct {
	name, dir string
	log       logr.Logger
}

// ownerAlias marks the bridge of a namespace this lab (this Dir) created.
func ownerAlias(dir string) string {
	h := sha256.Sum256([]byte(dir))
	return "anvil-lab " + hex.EncodeToString(h[:8])
}

func ipCmd(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

func netnsExists(name string) bool {
	_, err := os.Stat("/run/netns/" + name)
	return err == nil
}

// createNetns creates the namespace with the bridge (bridge address, and
// bridge6 if valid) and taps tap0..tap<n-1> on it. A namespace of the same
// name left by an earlier lab with this dir is deleted first; any other is
// an error.
func createNetns(ctx context.Context, name, dir string, bridge, bridge6 netip.Prefix, taps int, log logr.Logger) (*netns, error) {
	ns := &netns{name: name, dir: dir, log: log}
	record := filepath.Join(dir, "netns")
	if netnsExists(name) {
		if !ns.ours() {
			return nil, fmt.Errorf("lab: network namespace %q exists and was not created by a lab with Dir %s; "+
				"choose another Options.Name, or delete it (ip netns del %s) if it is a stale one of yours", name, dir, name)
		}
		log.Info("removing the namespace a killed earlier lab left", "namespace", name)
		if err := ns.destroy(taps); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(record, []byte(name+"\n"), 0o644); err != nil {
		return nil, err
	}
	if _, err := ipCmd("netns", "add", name); err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	steps := [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", BridgeName, "type", "bridge"},
		{"link", "set", BridgeName, "alias", ownerAlias(dir)},
		{"addr", "add", bridge.String(), "dev", BridgeName},
		{"link", "set", BridgeName, "up"},
	}
	if bridge6.IsValid() {
		// nodad: the services bind it at once; the namespace is ours alone.
		steps = append(steps, []string{"-6", "addr", "add", bridge6.String(), "dev", BridgeName, "nodad"})
	}
	for i := range taps {
		tap := "tap" + strconv.Itoa(i)
		steps = append(steps, []string{"tuntap", "add", tap, "mode", "tap"},
			[]string{"link", "set", tap, "master", BridgeName, "up"})
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return ns, err
		}
		if _, err := ipCmd(append([]string{"-n", name}, s...)...); err != nil {
			return ns, fmt.Errorf("lab: setting up namespace %s: %w", name, err)
		}
	}
	return ns, nil
}

// ours reports whether the existing namespace was made by a lab with this
// dir: its bridge carries our alias, or we recorded the name and it holds
// nothing but loopback (we were killed half way through creating it).
func (ns *netns) ours() bool {
	if out, err := ipCmd("-n", ns.name, "-o", "link", "show"); err == nil {
		if strings.Contains(out, "alias "+ownerAlias(ns.dir)) {
			return true
		}
		rec, _ := os.ReadFile(filepath.Join(ns.dir, "netns"))
		if strings.TrimSpace(string(rec)) != ns.name {
			return false
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[1] != "lo:" {
				return false
			}
		}
		return true
	}
	return false
}

// destroy deletes the taps, the bridge and the namespace. Processes still
// inside (not started by the lab, which kills its own by PID first) keep the
// namespace alive without its name; they are reported, not killed.
func (ns *netns) destroy(taps int) error {
	if !netnsExists(ns.name) {
		return nil
	}
	if out, err := ipCmd("netns", "pids", ns.name); err == nil {
		var others []string
		for _, f := range strings.Fields(out) {
			if f != strconv.Itoa(os.Getpid()) {
				others = append(others, f)
			}
		}
		if len(others) > 0 {
			ns.log.Info("processes the lab did not start are still in its namespace; stop them", "namespace", ns.name, "pids", strings.Join(others, ","))
		}
	}
	for i := range taps {
		_, _ = ipCmd("-n", ns.name, "link", "del", "tap"+strconv.Itoa(i))
	}
	_, _ = ipCmd("-n", ns.name, "link", "del", BridgeName)
	if _, err := ipCmd("netns", "del", ns.name); err != nil && netnsExists(ns.name) {
		return fmt.Errorf("lab: %w", err)
	}
	_ = os.Remove(filepath.Join(ns.dir, "netns"))
	return nil
}

func (ns *netns) enter() error {
	f, err := os.Open("/run/netns/" + ns.name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("lab: setns %s: %w", ns.name, err)
	}
	return nil
}

// Do runs fn on an OS thread inside the namespace and returns its error.
func (ns *netns) Do(fn func() error) error {
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
			// Stay locked: the runtime discards the thread when this
			// goroutine exits, so nothing else runs in the wrong namespace.
			errc <- errors.Join(ferr, fmt.Errorf("lab: restore netns: %w", err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Go runs fn on a goroutine whose thread stays in the namespace until fn
// returns; then the thread goes back to its own namespace and to the
// runtime. It must not be discarded: the runtime's threads are reused, this
// one may have started a child with Pdeathsig earlier (an anvil process of
// the stack), and the kernel kills that child when the thread exits.
func (ns *netns) Go(fn func()) error {
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
		errc <- nil
		fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			return // stay locked: the thread is discarded rather than reused in the wrong namespace
		}
		runtime.UnlockOSThread()
	}()
	return <-errc
}

// lockFile takes an exclusive flock on p (waiting when block is set).
func lockFile(p string, block bool) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if !block {
		how |= unix.LOCK_NB
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// waitLock takes the lock at p, giving up after timeout (nil then).
func waitLock(p string, timeout time.Duration) *os.File {
	deadline := time.Now().Add(timeout)
	for {
		f, err := lockFile(p, false)
		if err == nil {
			return f
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cmdline returns a process's arguments, nil when it is gone (or a zombie).
func cmdline(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// looksLike reports whether pid runs a program whose base name starts with
// prog and that has arg among its arguments: how the lab recognises its own
// processes after a crash, so it never kills a recycled PID.
func looksLike(pid int, prog, arg string) bool {
	args := cmdline(pid)
	if len(args) == 0 || !strings.HasPrefix(filepath.Base(args[0]), prog) {
		return false
	}
	for _, a := range args[1:] {
		if a == arg {
			return true
		}
	}
	return false
}

// qemuMatch and ipmiSimMatch identify the VM and BMC of the host whose
// directory is dir.
func qemuMatch(dir string) func(int) bool {
	return func(pid int) bool { return looksLike(pid, "qemu-system", filepath.Join(dir, "qemu.pid")) }
}

func ipmiSimMatch(dir string) func(int) bool {
	return func(pid int) bool { return looksLike(pid, "ipmi_sim", filepath.Join(dir, "bmc", "lan.conf")) }
}

func (v *vm) isQEMU(pid int) bool { return qemuMatch(v.dir)(pid) }

func (v *vm) running() bool { return recordedPID(filepath.Join(v.dir, "qemu.pid"), v.isQEMU) != 0 }

// recordedPID reads a pid file and returns the PID when that process is
// alive and matches, else 0.
func recordedPID(pidfile string, match func(int) bool) int {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 || !match(pid) {
		return 0
	}
	return pid
}

// killRecorded kills the process in pidfile if it still matches (SIGTERM,
// then SIGKILL after 5 s), waits until it is gone and removes the file.
func killRecorded(pidfile string, match func(int) bool) error {
	pid := recordedPID(pidfile, match)
	if pid != 0 {
		for _, sig := range []unix.Signal{unix.SIGTERM, unix.SIGKILL} {
			_ = unix.Kill(pid, sig)
			for i := 0; i < 100 && match(pid); i++ {
				time.Sleep(50 * time.Millisecond)
			}
			if !match(pid) {
				break
			}
		}
		if match(pid) {
			return fmt.Errorf("process %d (%s) did not exit", pid, pidfile)
		}
	}
	if err := os.Remove(pidfile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// cleanStale kills the VMs and ipmi_sims that a killed earlier lab with this
// Dir recorded, for every host directory (also hosts no longer configured).
func (l *Lab) cleanStale() {
	dirs, _ := filepath.Glob(filepath.Join(l.o.Dir, "hosts", "*"))
	for _, d := range dirs {
		for _, p := range []struct {
			file  string
			match func(int) bool
		}{{"qemu.pid", qemuMatch(d)}, {"ipmi_sim.pid", ipmiSimMatch(d)}} {
			pidfile := filepath.Join(d, p.file)
			if pid := recordedPID(pidfile, p.match); pid != 0 {
				l.log.Info("killing a process a killed earlier lab left", "pid", pid, "pidfile", pidfile)
			}
			if err := killRecorded(pidfile, p.match); err != nil {
				l.log.Error(err, "stale process")
			}
		}
		_ = os.WriteFile(filepath.Join(d, "power"), []byte("off\n"), 0o644)
	}
}
