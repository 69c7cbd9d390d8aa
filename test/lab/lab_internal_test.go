package lab

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/pxetest"
)

func TestOptionsDefaultsAndValidation(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Hosts: []HostOptions{{Name: "a"}, {Name: "b", BMC: Redfish}}, RedfishMockup: "/m"}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	if o.Name != DefaultName || o.Subnet != DefaultSubnet || o.QEMU != "qemu-system-x86_64" {
		t.Errorf("defaults: name %q subnet %s qemu %q", o.Name, o.Subnet, o.QEMU)
	}
	a, b := o.Hosts[0], o.Hosts[1]
	if a.BMC != IPMI || a.Firmware != pxetest.BIOS || a.MemoryMiB != DefaultMemoryMiB {
		t.Errorf("host defaults: %+v", a)
	}
	if bytes.Equal(a.MAC, b.MAC) || a.MAC[0] != 0x52 {
		t.Errorf("derived MACs %s and %s", a.MAC, b.MAC)
	}

	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no dir", Options{Hosts: []HostOptions{{Name: "a"}}}, "Dir is required"},
		{"no hosts", Options{Dir: dir}, "Hosts is empty"},
		{"bad host name", Options{Dir: dir, Hosts: []HostOptions{{Name: "A_1"}}}, "DNS label"},
		{"duplicate host", Options{Dir: dir, Hosts: []HostOptions{{Name: "a"}, {Name: "a"}}}, "used twice"},
		{"unknown BMC", Options{Dir: dir, Hosts: []HostOptions{{Name: "a", BMC: "idrac"}}}, `BMC "idrac"`},
		{"IPv6 subnet", Options{Dir: dir, Subnet: netip.MustParsePrefix("fd00::/64"), Hosts: []HostOptions{{Name: "a"}}}, "IPv4"},
		{"bad namespace", Options{Dir: dir, Name: "a/b", Hosts: []HostOptions{{Name: "a"}}}, "namespace name"},
		{"multicast MAC", Options{Dir: dir, Hosts: []HostOptions{{Name: "a", MAC: net.HardwareAddr{1, 0, 0, 0, 0, 1}}}}, "unicast"},
		{"duplicate MAC", Options{Dir: dir, Hosts: []HostOptions{{Name: "a", MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}},
			{Name: "b", MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}}}}, "used twice"},
		{"tiny VM", Options{Dir: dir, Hosts: []HostOptions{{Name: "a", MemoryMiB: 64}}}, "out of range"},
		{"unknown firmware", Options{Dir: dir, Hosts: []HostOptions{{Name: "a", Firmware: "coreboot"}}}, "firmware"},
		{"virtual media over IPMI", Options{Dir: dir, Hosts: []HostOptions{{Name: "a", Firmware: pxetest.UEFI, VirtualMedia: true}}}, "VirtualMedia needs BMC"},
		{"virtual media with BIOS", Options{Dir: dir, Hosts: []HostOptions{{Name: "a", BMC: Redfish, VirtualMedia: true}}}, "VirtualMedia needs BMC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.defaults()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// bootIndex returns the bootindex of the device whose -device value starts
// with prefix (-1 if absent).
func bootIndex(args []string, prefix string) int {
	for i, a := range args {
		if i > 0 && args[i-1] == "-device" && strings.HasPrefix(a, prefix) {
			var n int
			if _, err := fmt.Sscanf(a[strings.Index(a, "bootindex=")+len("bootindex="):], "%d", &n); err == nil {
				return n
			}
		}
	}
	return -1
}

func TestQEMUArgsBootOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fw         pxetest.Firmware
		disk       int
		boot       string
		nic, drive int // expected bootindex, -1 = no such device
		media      bool
		cd         int // expected CD bootindex, -1 = no CD drive
	}{
		{"bios pxe with disk", pxetest.BIOS, 64, BootPXE, 1, 2, false, -1},
		{"bios normal with disk", pxetest.BIOS, 64, BootNormal, 2, 1, false, -1},
		{"bios diskless normal", pxetest.BIOS, 0, BootNormal, 2, -1, false, -1},
		{"uefi pxe", pxetest.UEFI, 64, BootPXE, 1, 2, false, -1},
		{"uefi cd without a CD drive boots normally", pxetest.UEFI, 64, BootCD, 2, 1, false, -1},
		{"virtual media cd", pxetest.UEFI, 64, BootCD, 2, 3, true, 1},
		{"virtual media normal: CD last", pxetest.UEFI, 64, BootNormal, 2, 1, true, 3},
		{"virtual media pxe: CD last", pxetest.UEFI, 64, BootPXE, 1, 2, true, 3},
		{"uefi http: NIC first", pxetest.UEFI, 64, BootHTTP, 1, 2, false, -1},
		{"uefi diskless http", pxetest.UEFI, 0, BootHTTP, 1, -1, false, -1},
		{"virtual media http: CD last", pxetest.UEFI, 64, BootHTTP, 1, 2, true, 3},
		{"bios http boots as pxe", pxetest.BIOS, 64, BootHTTP, 1, 2, false, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &vm{HostOptions: HostOptions{Name: "h", Firmware: tc.fw, DiskMiB: tc.disk, MemoryMiB: 1024, VirtualMedia: tc.media,
				MAC: net.HardwareAddr{0x52, 0x54, 0, 1, 2, 3}}, dir: "/lab/hosts/h", tap: "tap0"}
			args := qemuArgs(v, tc.boot)
			if got := bootIndex(args, "virtio-net-pci"); got != tc.nic {
				t.Errorf("NIC bootindex %d, want %d", got, tc.nic)
			}
			if got := bootIndex(args, "virtio-blk-pci"); got != tc.drive {
				t.Errorf("disk bootindex %d, want %d", got, tc.drive)
			}
			if got := bootIndex(args, "ide-cd"); got != tc.cd {
				t.Errorf("CD bootindex %d, want %d", got, tc.cd)
			}
			if qmp := strings.Contains(strings.Join(args, " "), "-qmp unix:/lab/hosts/h/qmp.sock,server=on,wait=off"); qmp != tc.media {
				t.Errorf("QMP socket %t, want %t", qmp, tc.media)
			}
			joined := strings.Join(args, " ")
			for _, want := range []string{"mac=52:54:00:01:02:03", "ifname=tap0", "-m 1024", "path=/lab/hosts/h/serial.log", "strict=on"} {
				if !strings.Contains(joined, want) {
					t.Errorf("args lack %q: %s", want, joined)
				}
			}
			uefi := strings.Contains(joined, "romfile=") && strings.Contains(joined, "OVMF_VARS.fd")
			if uefi != (tc.fw == pxetest.UEFI) {
				t.Errorf("UEFI (OVMF, no iPXE ROM) = %t for firmware %s: %s", uefi, tc.fw, joined)
			}
			// Only a UEFI HTTP boot turns OVMF's PXEv4 off (its NIC's
			// entry is then UEFI HTTPv4).
			noPXE := strings.Contains(joined, "-fw_cfg name=opt/org.tianocore/IPv4PXESupport,string=n")
			if want := tc.boot == BootHTTP && tc.fw == pxetest.UEFI; noPXE != want {
				t.Errorf("IPv4PXESupport=n %t, want %t: %s", noPXE, want, joined)
			}
		})
	}
}

// testLab is a Lab that was never started: enough for the script and CSV.
func testLab(t *testing.T) *Lab {
	dir := t.TempDir()
	l := &Lab{o: Options{Dir: dir, Name: "anvil-lab", QEMU: "qemu-system-x86_64"}}
	for i, h := range []HostOptions{{Name: "vm-1", BMC: IPMI}, {Name: "vm-2", BMC: Redfish, VirtualMedia: true}} {
		h.MAC = net.HardwareAddr{0x52, 0x54, 0, 0xd3, 0, byte(0x10 + i)}
		h.MemoryMiB = 1024
		v := &vm{HostOptions: h, index: i, dir: filepath.Join(dir, "hosts", h.Name), tap: fmt.Sprintf("tap%d", i)}
		if err := os.MkdirAll(v.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		l.hosts = append(l.hosts, v)
	}
	if err := l.prepareHosts(); err != nil {
		t.Fatal(err)
	}
	l.hosts[0].host.BMCAddress = "ipmi://127.0.0.1:9700"
	l.hosts[1].host.BMCAddress = "redfish+https://127.0.0.1:9701/redfish/v1/Systems/1"
	l.hosts[1].host.BootMode = "UEFI" // as prepareHosts does for UEFI, without needing OVMF here
	return l
}

func TestWriteHostsCSVImports(t *testing.T) {
	l := testLab(t)
	var buf bytes.Buffer
	if err := l.WriteHostsCSV(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := inventory.ParseImport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if errs := inventory.ValidateRows(rows, "default", nil); len(errs) > 0 {
		t.Fatalf("the importer rejects the lab's CSV: %v", errs)
	}
	hosts := l.Hosts()
	if len(rows) != len(hosts) {
		t.Fatalf("%d rows for %d hosts", len(rows), len(hosts))
	}
	domains := map[string]bool{}
	for i, r := range rows {
		h := hosts[i]
		domains[r.FailureDomain] = true
		if r.Name != h.Name || r.BMCAddress != h.BMCAddress || r.Username != "admin" || r.Password != h.Credentials.Password ||
			len(r.Password) != 16 || !slices.Equal(r.BootMACs, []string{h.MAC.String()}) || r.BootMode != h.BootMode ||
			r.InsecureTLS != (h.BMC == Redfish) || r.Labels["anvil.dev/lab"] != "anvil-lab" {
			t.Errorf("row %d = %+v, host %+v", i, r, h)
		}
	}
	if len(domains) != 2 {
		t.Errorf("failure domains %v, want the hosts spread over two", domains)
	}
	// Printing a Host never shows its password.
	for _, h := range hosts {
		for _, s := range []string{fmt.Sprint(h), fmt.Sprintf("%+v", h), fmt.Sprintf("%#v", h)} {
			if strings.Contains(s, h.Credentials.Password) {
				t.Errorf("formatted Host shows the password: %s", s)
			}
		}
	}
	// Passwords survive a restart (Secrets stay valid).
	again := testLab(t)
	again.o.Dir, again.hosts[0].dir = l.o.Dir, l.hosts[0].dir
	if err := again.prepareHosts(); err != nil {
		t.Fatal(err)
	}
	if again.hosts[0].host.Credentials.Password != hosts[0].Credentials.Password {
		t.Error("the BMC password changed across a restart with the same Dir")
	}
}

func TestPowerScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	l := testLab(t)
	if err := writePowerScript(l); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", l.PowerScript()).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v: %s", err, out)
	}
	run := func(args ...string) (string, int) {
		out, err := exec.Command(l.PowerScript(), args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out)), code
	}
	if out, code := run("status", "vm-1"); out != "off" || code != 0 {
		t.Errorf("status of a VM never started: %q (exit %d)", out, code)
	}
	if _, code := run("status", "nope"); code != 2 {
		t.Errorf("unknown host: exit %d, want 2", code)
	}
	if _, code := run("on", "vm-1", "floppy"); code != 2 {
		t.Errorf("unknown boot mode: exit %d, want 2", code)
	}
	// A pid file pointing at a live process that is not this VM's qemu (a
	// recycled PID) is not the VM: status says off, off kills nothing.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	pidfile := filepath.Join(l.hosts[0].dir, "qemu.pid")
	if err := os.WriteFile(pidfile, []byte(fmt.Sprint(other.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _ := run("status", "vm-1"); out != "off" {
		t.Errorf("status with a foreign PID in the pid file: %q", out)
	}
	if out, code := run("off", "vm-1"); code != 0 {
		t.Errorf("off: exit %d: %s", code, out)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("off killed a process that was not the VM: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(l.hosts[0].dir, "power")); strings.TrimSpace(string(b)) != "off" {
		t.Errorf("power state after off: %q", b)
	}
}

// TestKillRecordedOnlyKillsItsOwn: cleanup after a crash kills a recorded
// PID only while its command line still names the lab's pid file.
func TestKillRecordedOnlyKillsItsOwn(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "qemu.pid")
	// A stand-in "qemu": sh under a qemu-system-* name with -pidfile <ours>.
	fake := filepath.Join(dir, "qemu-system-fake")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if err := os.Symlink(sh, fake); err != nil {
		t.Fatal(err)
	}
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(fake, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		return cmd
	}
	for _, tc := range []struct {
		name     string
		args     []string
		wantDead bool
	}{
		{"ours", []string{"-c", "sleep 30; :", "x", "-pidfile", pidfile}, true},
		{"another pid file", []string{"-c", "sleep 30; :", "x", "-pidfile", pidfile + ".other"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := start(tc.args...)
			// Start returns once the child has exec'd, but the kernel sets the
			// new argv (/proc/<pid>/cmdline) a moment later; a loaded machine
			// read it empty once. A real qemu writes its pid file later still.
			deadline := time.Now().Add(10 * time.Second)
			for len(cmdline(cmd.Process.Pid)) < len(tc.args) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if err := os.WriteFile(pidfile, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			if err := killRecorded(pidfile, qemuMatch(dir)); err != nil {
				t.Fatal(err)
			}
			if tc.wantDead {
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					// Its state and signal masks say why, if it happens again
					// (seen once, under make test's load).
					st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
					var lines []string
					for _, l := range strings.Split(string(st), "\n") {
						if strings.HasPrefix(l, "State:") || strings.HasPrefix(l, "Sig") {
							lines = append(lines, l)
						}
					}
					t.Errorf("the recorded qemu survived; matched %t, %v", qemuMatch(dir)(cmd.Process.Pid), lines)
				}
			} else if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err != nil || strings.Contains(string(b), ") Z ") {
				t.Errorf("killed a process that did not match (stat %q, %v)", b, err)
			}
			if _, err := os.Stat(pidfile); err == nil {
				t.Error("pid file left behind")
			}
		})
	}
}
