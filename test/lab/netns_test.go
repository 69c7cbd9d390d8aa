package lab_test

import (
	"anvil.dev/anvil/test/logs"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/pxetest"
)

// requireLab needs what Start needs without booting a VM.
func requireLab(t *testing.T) {
	t.Helper()
	requireRoot(t)
	for _, c := range []string{"qemu-system-x86_64", "ipmi_sim"} {
		if _, err := exec.LookPath(c); err != nil {
			need.OrSkip(t, "program %q not found (Debian packages qemu-system-x86, openipmi)", c)
		}
	}
}

func ipmiLab(t *testing.T, dir, name string) lab.Options {
	return lab.Options{Dir: dir, Name: name, Subnet: netipMust("10.213.11.0/24"),
		Hosts: []lab.HostOptions{{Name: "vm-1"}}, Logger: testr.New(t)}
}

func ipNetns(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v: %v: %s", args, err, out)
	}
}

// TestStartNamespaceOwnership: Start takes over a namespace only when a lab
// with the same Dir made it, and refuses a Dir another running lab holds.
func TestStartNamespaceOwnership(t *testing.T) {
	requireLab(t)
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir, ns string)
		want    string // error substring; "" = Start succeeds
	}{
		{"someone else's, with a link", func(t *testing.T, dir, ns string) {
			ipNetns(t, "netns", "add", ns)
			ipNetns(t, "-n", ns, "link", "add", "br-other", "type", "bridge")
		}, "was not created by a lab"},
		{"someone else's, empty", func(t *testing.T, dir, ns string) {
			ipNetns(t, "netns", "add", ns)
		}, "was not created by a lab"},
		{"ours, killed while creating it", func(t *testing.T, dir, ns string) {
			ipNetns(t, "netns", "add", ns)
			must(t, os.WriteFile(filepath.Join(dir, "netns"), []byte(ns+"\n"), 0o644))
		}, ""},
		{"another running lab's", func(t *testing.T, dir, ns string) {
			other, err := lab.Start(context.Background(), ipmiLab(t, t.TempDir(), ns))
			must(t, err)
			t.Cleanup(func() { _ = other.Close() })
		}, "was not created by a lab"},
		{"this Dir is in use", func(t *testing.T, dir, ns string) {
			other, err := lab.Start(context.Background(), ipmiLab(t, dir, ns+"x"))
			must(t, err)
			t.Cleanup(func() { _ = other.Close() })
		}, "in use by another running lab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ns := t.TempDir(), "anvil-lab-t"+randHex(3)
			t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
			tc.prepare(t, dir, ns)
			before, _ := os.Stat("/run/netns/" + ns)
			l, err := lab.Start(context.Background(), ipmiLab(t, dir, ns))
			if tc.want == "" {
				must(t, err)
				must(t, l.Close())
				return
			}
			if l != nil {
				_ = l.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v, want an error containing %q", err, tc.want)
			}
			if before != nil {
				after, err := os.Stat("/run/netns/" + ns)
				if err != nil || !os.SameFile(before, after) {
					t.Errorf("a refused Start touched namespace %s: %v", ns, err)
				}
			}
		})
	}
}

// TestLabChildProcess is the lab process TestStartCleansUpAfterAKilledLab
// kills; it runs only as that test's child.
func TestLabChildProcess(t *testing.T) {
	dir, ns := os.Getenv("ANVIL_LAB_CHILD_DIR"), os.Getenv("ANVIL_LAB_CHILD_NS")
	if dir == "" {
		t.Skip("runs as the child of TestStartCleansUpAfterAKilledLab")
	}
	l, err := lab.Start(context.Background(), ipmiLab(t, dir, ns))
	must(t, err)
	if out, err := exec.Command(l.PowerScript(), "on", "vm-1", "pxe").CombinedOutput(); err != nil {
		t.Fatalf("power on: %v: %s", err, out)
	}
	must(t, os.WriteFile(filepath.Join(dir, "child-ready"), nil, 0o644))
	time.Sleep(5 * time.Minute) // killed long before
}

// TestStartCleansUpAfterAKilledLab kills a lab process (SIGKILL) with a VM
// running and starts a new lab on its Dir: the old qemu and ipmi_sim are
// killed (found through their pid files) and the namespace is rebuilt.
func TestStartCleansUpAfterAKilledLab(t *testing.T) {
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to run QEMU")
	}
	requireLab(t)
	dir, ns := t.TempDir(), "anvil-lab-t"+randHex(3)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	child := exec.Command(os.Args[0], "-test.run=^TestLabChildProcess$", "-test.v")
	child.Env = append(os.Environ(), "ANVIL_LAB_CHILD_DIR="+dir, "ANVIL_LAB_CHILD_NS="+ns)
	var out logs.Buffer
	child.Stdout, child.Stderr = &out, &out
	must(t, child.Start())
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }()
	t.Cleanup(func() { _ = child.Process.Kill(); <-exited })
	if !waitFor(2*time.Minute, func() bool { _, err := os.Stat(filepath.Join(dir, "child-ready")); return err == nil }) {
		t.Fatalf("the child lab did not come up:\n%s", out.String())
	}
	host := filepath.Join(dir, "hosts", "vm-1")
	qemuPID, simPID := readPID(t, filepath.Join(host, "qemu.pid")), readPID(t, filepath.Join(host, "ipmi_sim.pid"))
	oldNS := inode(t, "/run/netns/"+ns)
	must(t, child.Process.Kill())
	<-exited
	if !alive(qemuPID) || !alive(simPID) {
		t.Fatalf("killing the lab process already stopped qemu (%t) or ipmi_sim (%t): nothing to test", alive(qemuPID), alive(simPID))
	}

	l, err := lab.Start(context.Background(), ipmiLab(t, dir, ns))
	must(t, err)
	defer l.Close()
	if !waitFor(10*time.Second, func() bool { return !alive(qemuPID) && !alive(simPID) }) {
		t.Errorf("stale processes alive after Start: qemu %t, ipmi_sim %t", alive(qemuPID), alive(simPID))
	}
	if inode(t, "/run/netns/"+ns) == oldNS {
		t.Error("the stale namespace was reused instead of rebuilt")
	}
	if l.Running("vm-1") {
		t.Error("a VM is running right after Start")
	}
	must(t, l.Close())
	if _, err := os.Stat("/run/netns/" + ns); err == nil {
		t.Errorf("namespace %s left after Close", ns)
	}
}

// TestUEFIVMStartsAndStops powers a UEFI VM (OVMF, blank disk) on and off
// through the power script: qemu accepts the generated UEFI arguments and
// the VM is killed by PID. (The full OVMF PXE path, TFTP included, is
// test/pxetest's TestQEMUPXEBoot.)
func TestUEFIVMStartsAndStops(t *testing.T) {
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to run QEMU")
	}
	requireLab(t)
	if _, err := os.Stat("/usr/share/OVMF/OVMF_CODE_4M.fd"); err != nil {
		need.OrSkip(t, "OVMF missing (Debian package ovmf)")
	}
	o := ipmiLab(t, t.TempDir(), "anvil-lab-t"+randHex(3))
	o.Hosts[0].Firmware, o.Hosts[0].DiskMiB = pxetest.UEFI, 64
	l, err := lab.Start(context.Background(), o)
	must(t, err)
	defer l.Close()
	if l.Hosts()[0].BootMode != "UEFI" {
		t.Errorf("boot mode %q, want UEFI", l.Hosts()[0].BootMode)
	}
	script := func(args ...string) string {
		out, err := exec.Command(l.PowerScript(), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("power %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	script("on", "vm-1", "pxe")
	pid := l.PID("vm-1")
	if !l.Running("vm-1") || pid == 0 || script("status", "vm-1") != "on" {
		t.Fatalf("UEFI VM not running after power on (pid %d)", pid)
	}
	script("off", "vm-1")
	if l.Running("vm-1") || alive(pid) || script("status", "vm-1") != "off" {
		t.Errorf("UEFI VM (pid %d) still running after power off", pid)
	}
}
