// Package qemuaccel chooses QEMU's accelerator for the tests and the lab.
// A /dev/kvm node is not proof that KVM works: under nested virtualisation
// SeaBIOS can die with "KVM internal error. Suberror: 1 ... emulation
// failure". So the choice is probed once per process, with a tiny guest
// that SeaBIOS must boot and that then exits QEMU through isa-debug-exit.
// ANVIL_QEMU_ACCEL=kvm or =tcg forces either.
package qemuaccel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	if err := Probe(qemu, kvm, 20*time.Second); err != nil {
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

// Probe boots the tiny guest under c with SeaBIOS and waits for it to exit
// QEMU; a guest that does not get there within timeout failed.
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
		"-machine", "pc", "-m", "32", "-no-reboot",
		"-drive", "file=" + img + ",format=raw,if=ide",
		"-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"}, c.Args()...)
	cmd := exec.CommandContext(ctx, qemu, args...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the guest did not finish within %s%s", timeout, tail(out))
	case errors.As(err, &ee) && ee.ExitCode() == probeExit:
		return nil
	case err == nil:
		return fmt.Errorf("QEMU exited 0 before the guest ran%s", tail(out))
	default:
		return fmt.Errorf("%v%s", err, tail(out))
	}
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
