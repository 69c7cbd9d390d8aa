// Package qemuaccel chooses QEMU's accelerator for the tests and the lab.
// A /dev/kvm node is not proof that KVM works: under nested virtualisation
// iPXE can die with "KVM internal error. Suberror: 1 ... emulation
// failure" while SeaBIOS alone boots a disk fine (seen on these machines).
// So the choice is probed once per process with what the tests boot:
// SeaBIOS runs the NIC's iPXE ROM first (QEMU's user network, restricted,
// answers its DHCP; nothing leaves the QEMU process), iPXE finds nothing
// to boot and returns, and SeaBIOS boots a tiny disk that exits QEMU
// through isa-debug-exit. ANVIL_QEMU_ACCEL=kvm or =tcg forces either.
package qemuaccel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Choice is the accelerator and the -cpu model that goes with it.
type Choice struct {
	Accel string // "kvm" or "tcg"
	CPU   string // "host" with KVM, "max" with TCG
	// Why says how it was chosen, for the test output.
	Why string
}

func (c Choice) String() string { return fmt.Sprintf("QEMU accelerator %s (%s)", c.Accel, c.Why) }

// Args are the QEMU arguments for the choice.
func (c Choice) Args() []string { return []string{"-accel", c.Accel, "-cpu", c.CPU} }

var (
	once   sync.Once
	chosen Choice
)

// Env is the variable that forces the choice.
const Env = "ANVIL_QEMU_ACCEL"

// Choose returns the accelerator to use, probing KVM the first time.
func Choose() Choice {
	once.Do(func() { chosen = choose(os.Getenv(Env), "qemu-system-x86_64") })
	return chosen
}

func choose(force, qemu string) Choice {
	kvm, tcg := Choice{Accel: "kvm", CPU: "host"}, Choice{Accel: "tcg", CPU: "max"}
	switch force {
	case "kvm":
		kvm.Why = Env + "=kvm"
		return kvm
	case "tcg":
		tcg.Why = Env + "=tcg"
		return tcg
	case "":
	default:
		tcg.Why = fmt.Sprintf("%s=%q is neither kvm nor tcg; using tcg", Env, force)
		return tcg
	}
	if _, err := os.Stat("/dev/kvm"); err != nil {
		tcg.Why = "no /dev/kvm"
		return tcg
	}
	if err := Probe(qemu, kvm, time.Minute); err != nil {
		tcg.Why = "/dev/kvm exists but a probe guest failed under KVM: " + err.Error()
		return tcg
	}
	kvm.Why = "/dev/kvm works: a probe guest booted under KVM"
	return kvm
}

// probeMBR is a boot sector: out 0xf4 <- 0x10 (isa-debug-exit: QEMU exits
// with status 0x10<<1|1 = 33), then hlt forever.
var probeMBR = func() []byte {
	b := make([]byte, 512)
	copy(b, []byte{0xba, 0xf4, 0x00, 0xb0, 0x10, 0xee, 0xf4, 0xeb, 0xfd})
	b[510], b[511] = 0x55, 0xaa
	return b
}()

// probeExit is QEMU's exit status when the probe guest ran to its end.
const probeExit = 33

// kvmFailure is what QEMU prints when KVM cannot run the guest's code;
// the VM then hangs rather than exits.
const kvmFailure = "KVM internal error"

// Probe boots the NIC's iPXE, then the tiny disk, under c with SeaBIOS and
// waits for the disk to exit QEMU; a guest that does not get there within
// timeout, or a KVM failure on the way, failed.
func Probe(qemu string, c Choice, timeout time.Duration) error {
	dir, err := os.MkdirTemp("", "anvil-qemu-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	img := filepath.Join(dir, "probe.img")
	if err := os.WriteFile(img, probeMBR, 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"-nodefaults", "-display", "none", "-monitor", "none", "-serial", "none",
		"-machine", "pc", "-m", "512", "-no-reboot",
		"-netdev", "user,id=n0,restrict=on", "-device", "virtio-net-pci,netdev=n0,bootindex=1",
		"-drive", "file=" + img + ",format=raw,if=none,id=d0", "-device", "ide-hd,drive=d0,bootindex=2",
		"-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"}, c.Args()...)
	cmd := exec.CommandContext(ctx, qemu, args...)
	out := &watch{cancel: cancel}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case out.failed():
		return fmt.Errorf("KVM could not run the NIC's iPXE ROM (QEMU: %s)", kvmLine(out.bytes()))
	case ctx.Err() != nil:
		return fmt.Errorf("the guest did not finish within %s%s", timeout, tail(out.bytes()))
	case errors.As(err, &ee) && ee.ExitCode() == probeExit:
		return nil
	case err == nil:
		return fmt.Errorf("QEMU exited 0 before the guest ran%s", tail(out.bytes()))
	default:
		return fmt.Errorf("%v%s", err, tail(out.bytes()))
	}
}

// watch collects QEMU's output and stops QEMU as soon as it reports a KVM
// failure (the VM would hang until the timeout).
type watch struct {
	mu     sync.Mutex
	buf    []byte
	kvm    bool
	cancel context.CancelFunc
}

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if !w.kvm && bytes.Contains(w.buf, []byte(kvmFailure)) {
		w.kvm = true
		w.cancel()
	}
	return len(p), nil
}

func (w *watch) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.kvm
}

func (w *watch) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.buf...)
}

// kvmLine is QEMU's line naming the KVM failure, without the register dump.
func kvmLine(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, kvmFailure) {
			return strings.TrimSpace(l)
		}
	}
	return kvmFailure
}

func tail(out []byte) string {
	if len(out) == 0 {
		return ""
	}
	if len(out) > 300 {
		out = out[len(out)-300:]
	}
	return ": " + string(out)
}
