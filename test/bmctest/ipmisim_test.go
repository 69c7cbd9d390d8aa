package bmctest

import (
	"anvil.dev/anvil/test/need"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func startOrSkip(t *testing.T, opts IPMISimOptions) *IPMISim {
	t.Helper()
	if _, err := FindIPMISim(""); err != nil {
		need.OrSkip(t, "%v", err)
	}
	return StartIPMISim(t, opts)
}

// ipmitool (Debian package ipmitool) is the independent client here.
func ipmitool(t *testing.T, s *IPMISim, args ...string) string {
	t.Helper()
	tool, err := exec.LookPath("ipmitool")
	if err != nil {
		need.OrSkip(t, "ipmitool not installed (Debian package ipmitool): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"-I", "lanplus", "-C", "3", "-H", "127.0.0.1", "-p", strings.TrimPrefix(s.HostPort(), "127.0.0.1:"), "-U", s.Username(), "-P", s.Password()}
	out, err := exec.CommandContext(ctx, tool, append(base, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ipmitool %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestIPMISimWithIpmitool(t *testing.T) {
	s := startOrSkip(t, IPMISimOptions{FRU: &FRU{
		BoardManufacturer: "Anvil Boards", BoardProduct: "AB-1", BoardSerial: "BS123", BoardPartNumber: "BP-9",
		Manufacturer: "Anvil Systems", Product: "Forge 9000", PartNumber: "F9K", Version: "2", SerialNumber: "SN-42", AssetTag: "rack7",
	}})
	if out := ipmitool(t, s, "chassis", "power", "status"); !strings.Contains(out, "off") {
		t.Fatalf("power status %q", out)
	}
	ipmitool(t, s, "chassis", "power", "on")
	if on, err := s.PowerOn(); err != nil || !on {
		t.Fatalf("PowerOn = %t, %v after ipmitool power on", on, err)
	}
	if out := ipmitool(t, s, "chassis", "power", "status"); !strings.Contains(out, "on") {
		t.Fatalf("power status %q", out)
	}
	ipmitool(t, s, "chassis", "bootdev", "pxe")
	if dev, err := s.BootDevice(); err != nil || dev != "pxe" {
		t.Fatalf("BootDevice = %q, %v", dev, err)
	}
	ipmitool(t, s, "chassis", "power", "soft")
	if on, _ := s.PowerOn(); on {
		t.Fatal("graceful shutdown did not power off")
	}
	calls, err := s.SetCalls()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"set power 1", "set boot pxe", "set shutdown 1"}
	var got []string
	for _, c := range calls {
		got = append(got, c.String())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("set calls %v, want %v", got, want)
	}
	fru := ipmitool(t, s, "fru", "print", "0")
	for _, w := range []string{"Anvil Systems", "Forge 9000", "SN-42", "Anvil Boards", "BS123"} {
		if !strings.Contains(fru, w) {
			t.Fatalf("fru print lacks %q:\n%s", w, fru)
		}
	}
	if guid := ipmitool(t, s, "mc", "guid"); !strings.Contains(guid, "efcdab89-6745-23a1-efcd-ab89674523a1") {
		t.Fatalf("mc guid:\n%s", guid)
	}
	pid := s.PID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		t.Fatalf("ipmi_sim pid %d still running after Close", pid)
	}
}

func TestIPMISimHook(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "hook.out")
	hook := filepath.Join(dir, "hook.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"$@\" >> '"+out+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startOrSkip(t, IPMISimOptions{Hook: []string{hook, "vm 1"}})
	ipmitool(t, s, "chassis", "power", "on")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if strings.TrimSpace(string(b)) == "vm 1 set power 1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hook output %q", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []IPMISimOptions{
		{Username: "admin", Password: `pa"ss`, GUID: DefaultGUID},
		{Username: "a-very-long-username", Password: "pw", GUID: DefaultGUID},
		{Username: "admin", Password: "12345678901234567", GUID: DefaultGUID},
		{Username: "admin", Password: "pw", GUID: "xyz"},
		{Username: "admin", Password: "pw", GUID: DefaultGUID, Hook: []string{"a\nb"}},
	} {
		if validate(o) == nil {
			t.Errorf("accepted %+v", o)
		}
	}
}

func TestFRUEncoding(t *testing.T) {
	b := (&FRU{Manufacturer: "M", Product: "P"}).Bytes()
	if b[0] != 1 || checksum(b[:8]) != 0 || b[3] != 1 {
		t.Fatalf("bad header % x", b[:8])
	}
	boardLen := int(b[9]) * 8
	if checksum(b[8:8+boardLen]) != 0 {
		t.Fatal("board area checksum")
	}
	prod := b[8+boardLen:]
	if int(b[4])*8 != 8+boardLen || len(prod) != int(prod[1])*8 || checksum(prod) != 0 {
		t.Fatalf("product area: offset %d, % x", b[4], prod)
	}
}
