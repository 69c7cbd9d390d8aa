package pxetest_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp6"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/pxe/tftp"
	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/pxetest"
)

// TestQEMUPXEBootIPv6 network-boots OVMF on an IPv6-only segment (no IPv4
// address, no DHCPv4): router advertisements with the M flag, OVMF's PXEv6
// (PXEv4 off through fw_cfg) asks our DHCPv6 server (arch 7) and gets
// tftp://[server]/ipxe.efi, fetches pxe/ipxebin's x86-64 ipxe.efi (iPXE with IPv6)
// by TFTP over IPv6; iPXE asks DHCPv6 again and fetches
// http://[server]/boot/<mac>.ipxe. Asserted from what the servers saw:
// DHCPv6 answers to both clients, a whole TFTP transfer of ipxe.efi over
// IPv6, and the script request over IPv6. The boot stops there (the
// kernel's IPv6 callback is the next step of issue #23).
func TestQEMUPXEBootIPv6(t *testing.T) {
	pxetest.RequireOVMF(t)

	id := fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff)
	prefix := netip.MustParsePrefix("fd00:210:6::/64")
	srv := netip.MustParseAddr("fd00:210:6::1")
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0xa6, 0x00, 0x01}
	ns := netnstest.NewVMSegment(t, id, "vm6", netip.PrefixFrom(srv, 64))
	dir := t.TempDir()
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 1})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	var ra *pxetest.RouterAdvertiser
	must(t, ns.Do(func() (err error) { ra, err = pxetest.NewRouterAdvertiser("br0"); return err }))
	ra.Managed = prefix
	wg.Go(func() { ra.Run(ctx) })

	backend := pxe.NewStaticBackend(pxe.HostRecord{Name: "vm6", Namespace: "test", MAC: mac, PXE: true, Accepted: true})

	// HTTP on IPv6: the script iPXE fetches (it only has to be fetched).
	scripts, err := httpboot.NewScripts(httpboot.ScriptOptions{Backend: backend, BootSpecs: httpboot.BootSpecFunc(
		func(context.Context, pxe.HostRecord) (httpboot.BootSpec, error) {
			return httpboot.BootSpec{KernelURL: "/artifacts/kernel", Args: []string{"console=ttyS0"}}, nil
		})})
	must(t, err)
	httpReg := prometheus.NewRegistry()
	hs, err := httpboot.New(httpboot.Options{Scripts: scripts, Logger: log, Registerer: httpReg})
	must(t, err)
	var ln net.Listener
	must(t, ns.Do(func() (err error) { ln, err = net.Listen("tcp6", "["+srv.String()+"]:80"); return err }))
	wg.Go(func() { _ = hs.Serve(ctx, ln) })

	// TFTP on IPv6, serving pxe/ipxebin's ipxe.efi (Debian's has no IPv6;
	// ipxebin.SNP is an arm64 build).
	root := filepath.Join(dir, "tftp")
	must(t, os.MkdirAll(root, 0o755))
	must(t, os.WriteFile(filepath.Join(root, ipxebin.EFI.Name), ipxebin.EFI.Data, 0o644))
	tftpReg := prometheus.NewRegistry()
	var ts *tftp.Server
	must(t, ns.Do(func() (err error) {
		ts, err = tftp.NewServer(tftp.Options{Root: root, Interface: "br0", ListenAddr: netip.MustParseAddrPort("[::]:69"),
			Logger: log, Registerer: tftpReg})
		return err
	}))
	tftpDone := make(chan struct{})
	must(t, ns.Go(func() { _ = ts.Serve(ctx); close(tftpDone) }))
	t.Cleanup(func() { cancel(); <-tftpDone })

	// DHCPv6, and no DHCPv4 at all.
	dhcpReg := prometheus.NewRegistry()
	var ds *dhcp6.Server
	must(t, ns.Do(func() (err error) {
		ds, err = dhcp6.NewServer(dhcp6.Options{Interface: "br0", Backend: backend, Logger: log, Registerer: dhcpReg,
			Range: dhcp6.Range{Start: netip.MustParseAddr("fd00:210:6::100"), End: netip.MustParseAddr("fd00:210:6::1ff")}})
		return err
	}))
	wg.Go(func() { _ = ds.Serve(ctx) })

	serial := filepath.Join(dir, "serial.log")
	args, err := pxetest.QEMUArgs(pxetest.QEMUOptions{Firmware: pxetest.UEFIPXE6, Tap: "tap0", MAC: mac, SerialLog: serial})
	must(t, err)
	var qout netnstest.SyncBuffer
	start := time.Now()
	qemu := ns.Start(t, &qout, &qout, "qemu-system-x86_64", args...)
	exited := make(chan struct{})
	go func() { _ = qemu.Wait(); close(exited) }()
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(serial)
			t.Logf("qemu output:\n%s\nserial console (last 6000 bytes):\n%s", qout.String(), tail(string(data), 6000))
		}
	})

	scriptPath := "/boot/" + mac.String() + ".ipxe"
	gotScript := func() bool {
		return counter(t, httpReg, "anvil_http_requests_total", map[string]string{"endpoint": "GET /boot/{file}", "code": "200"}) > 0
	}
	var tftpAt time.Duration
	// The firmware's shell: every boot option failed.
	shell := make(chan struct{})
	wg.Go(func() {
		for {
			if data, _ := os.ReadFile(serial); strings.Contains(string(data), "EFI Internal Shell") {
				close(shell)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	})
	deadline := time.After(300 * time.Second)
wait:
	for !gotScript() {
		if tftpAt == 0 && counter(t, tftpReg, "anvil_tftp_requests_total", map[string]string{"result": "ok"}) > 0 {
			tftpAt = time.Since(start)
		}
		select {
		case <-exited:
			t.Fatalf("qemu exited before iPXE fetched %s", scriptPath)
		case <-shell:
			t.Fatalf("the firmware gave up network boot (EFI shell) before iPXE fetched %s", scriptPath)
		case <-deadline:
			t.Fatalf("iPXE fetched no %s within 300s", scriptPath)
		case <-time.After(500 * time.Millisecond):
			continue wait
		}
	}
	t.Logf("qemu start -> ipxe.efi over TFTP/IPv6 done in %v, -> GET %s over IPv6 in %v",
		tftpAt.Round(100*time.Millisecond), scriptPath, time.Since(start).Round(100*time.Millisecond))

	// Both clients were answered over DHCPv6: the firmware (Solicit and
	// Request) and iPXE (again).
	if n := counter(t, dhcpReg, "anvil_dhcp6_packets_total", map[string]string{"type": "request", "result": "answered"}); n < 2 {
		t.Errorf("DHCPv6 Requests answered: %v, want the firmware's and iPXE's", n)
	}
	if n := counter(t, tftpReg, "anvil_tftp_requests_total", map[string]string{"result": "ok"}); n < 1 {
		t.Errorf("no whole TFTP transfer of ipxe.efi")
	}
	if data, _ := os.ReadFile(serial); !strings.Contains(string(data), "PXE over IPv6") {
		t.Errorf("serial console lacks OVMF's \"Start PXE over IPv6\"")
	}
}

// counter sums a counter's samples whose labels include want.
func counter(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	must(t, err)
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if l[k] != v {
					continue metric
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}
