package lab_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/boot/media"
	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/pxetest"
)

// TestLabVirtualMediaCD: a VirtualMedia host's Redfish BMC takes an ISO
// (Anvil's ISO format, its iPXE running the ISO's autoexec.ipxe) while the
// VM is off: the lab downloads it from an HTTP server in the namespace, and
// the one-time Cd boot the BMC was given boots it (the serial console shows
// the script's echo). Then, with the VM running, EjectMedia and a second
// InsertMedia reach the VM's drive through QMP (eject,
// blockdev-change-medium), and a GET counter shows each insert downloaded
// the image once.
func TestLabVirtualMediaCD(t *testing.T) {
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to run QEMU")
	}
	requireLab(t)
	if _, err := os.Stat("/usr/share/OVMF/OVMF_CODE_4M.fd"); err != nil {
		need.OrSkip(t, "OVMF missing (Debian package ovmf)")
	}
	efi, err := ipxebin.Autoexec(ipxebin.EFI.Data)
	must(t, err)
	const marker = "ANVIL-LAB-CD-TEST booted from the virtual CD"
	iso, err := media.Build(media.BootFiles(efi, []byte("#!ipxe\necho "+marker+"\n:idle\nsleep 3600\ngoto idle\n")))
	must(t, err)

	l, err := lab.Start(context.Background(), lab.Options{Dir: t.TempDir(), Name: "anvil-lab-t" + randHex(3),
		Subnet: netip.MustParsePrefix("10.213.9.0/24"), RedfishMockup: need.RedfishMockup(t), Logger: testr.New(t),
		Hosts: []lab.HostOptions{{Name: "vm-cd", BMC: lab.Redfish, Firmware: pxetest.UEFI, VirtualMedia: true, MemoryMiB: 256}}})
	must(t, err)
	defer l.Close()
	h := l.Hosts()[0]
	t.Cleanup(func() {
		if t.Failed() {
			serial, _ := os.ReadFile(l.SerialLog(h.Name))
			t.Logf("serial (tail):\n%s", tail(string(serial), 3000))
		}
	})

	gets := make(chan struct{}, 10)
	var ln net.Listener
	must(t, l.Do(func() (err error) { ln, err = net.Listen("tcp", l.BridgeIP().String()+":8080"); return err }))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cd.iso" {
			http.NotFound(w, r)
			return
		}
		gets <- struct{}{}
		_, _ = w.Write(iso)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	imageURL := "http://" + l.BridgeIP().String() + ":8080/cd.iso"

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d := openDriver(t, h)
	vm, err := bmc.VirtualMediaOf(d, h.BMCAddress)
	must(t, err)
	must(t, vm.InsertMedia(ctx, imageURL))
	must(t, d.SetBootOnce(ctx, bmc.BootCD))
	must(t, d.SetPower(ctx, bmc.PowerOn))
	if !waitFor(4*time.Minute, func() bool {
		b, _ := os.ReadFile(l.SerialLog(h.Name))
		return strings.Contains(string(b), marker)
	}) {
		t.Fatal("the VM did not boot the virtual CD: its script's echo never reached the serial console")
	}
	serial, _ := os.ReadFile(l.SerialLog(h.Name))
	if !strings.Contains(string(serial), "power on vm-cd, boot cd,") {
		t.Error("the power script did not start the VM with the CD first")
	}

	must(t, vm.EjectMedia(ctx))
	must(t, vm.InsertMedia(ctx, imageURL))
	recs := l.MediaRecords()
	if len(recs) != 3 {
		t.Fatalf("media records %+v, want insert, eject, insert", recs)
	}
	for i, want := range []struct{ inserted, attached bool }{{true, false}, {false, true}, {true, true}} {
		r := recs[i]
		if r.Err != "" || r.Inserted != want.inserted || r.Attached != want.attached || (r.Inserted && r.Bytes != int64(len(iso))) {
			t.Errorf("media record %d: %+v, want inserted %t, attached to the running VM %t, %d bytes", i, r, want.inserted, want.attached, len(iso))
		}
	}
	if n := len(gets); n != 2 {
		t.Errorf("the image was downloaded %d times, want 2 (once per insert)", n)
	}
}
