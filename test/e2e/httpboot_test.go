package e2e

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/lab"
)

// TestLabHTTPBoot: a Host with spec.bootMethod HTTPBoot (UEFI, Redfish) is
// provisioned by UEFI HTTP boot to a Ready Node. The Host controller asks
// the BMC (the emulator) for a one-time UefiHttp boot, which the lab's
// power hook turns into OVMF with PXEv4 off, so the firmware's only IPv4
// network boot is HTTP: Anvil's DHCP answers its HTTPClient request with
// /ipxe/snponly.efi (Debian's iPXE, --http-ipxe-dir), which OVMF fetches
// over HTTP and runs; iPXE chains the boot script and the Node joins. It
// checks that it was HTTP boot and not PXE: the power hook's "boot http",
// status.issuedPowerAction.bootDevice HTTP (watched), OVMF's "Start HTTP
// Boot over IPv4" and no "Start PXE over IPv4" on the console of that
// boot, and the boot server's access log of GET /ipxe/snponly.efi from the
// address the Host's boot script was served to.
func TestLabHTTPBoot(t *testing.T) {
	const name = "vm-http"
	e := startBootLab(t, lab.HostOptions{Name: name}, nil)
	st := e.st
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	e.importHosts(name)
	bootDevices := e.watchBootDevices(ctx, name)
	h := e.host(name)
	patch := client.MergeFrom(h.DeepCopy())
	h.Spec.BootMethod = metalv1.BootMethodHTTPBoot
	if err := e.c.Patch(ctx, h, patch); err != nil {
		t.Fatal(err)
	}
	e.logf("Host %s: bootMethod HTTPBoot", name)
	_, n := e.runMachine("mh")
	e.logf("Node %s Ready, kubelet %s", n.Name, n.Status.NodeInfo.KubeletVersion)

	// The Host controller issued a one-time HTTP boot (and no PXE one).
	seen := bootDevices()
	if !slices.Contains(seen, metalv1.BootDeviceHTTP) || slices.Contains(seen, metalv1.BootDevicePXE) {
		t.Errorf("status.issuedPowerAction.bootDevice took %v; want HTTP and never PXE", seen)
	} else {
		e.logf("status.issuedPowerAction.bootDevice took %v", seen)
	}

	// The boot, as the power hook started it (the BMC's UefiHttp) and as
	// OVMF printed it: up to the next power event on the console.
	serial := readFile(t, st.Lab.SerialLog(name))
	marker := "=== anvil lab: power on " + name + ", boot http,"
	i := strings.Index(serial, marker)
	if i < 0 {
		t.Fatalf("serial console lacks %q: the VM was not started for a UEFI HTTP boot", marker)
	}
	boot := serial[i+len(marker):]
	if j := strings.Index(boot, "=== anvil lab: power"); j >= 0 {
		boot = boot[:j]
	}
	if !strings.Contains(boot, "Start HTTP Boot over IPv4") {
		t.Errorf("the http boot's console lacks OVMF's \"Start HTTP Boot over IPv4\"")
	}
	if strings.Contains(boot, "Start PXE over IPv4") {
		t.Errorf("OVMF started PXE over IPv4 in the http boot")
	}

	// The boot server served the firmware the iPXE EFI binary over HTTP,
	// to the address its boot script then went to.
	bc := e.host(name).Status.BootCredential
	if bc == nil || bc.ScriptServedTo == "" {
		t.Fatalf("boot credential %+v: no boot script was served", bc)
	}
	addr, err := netip.ParseAddr(bc.ScriptServedTo)
	if err != nil {
		t.Fatal(err)
	}
	var got bool
	for _, l := range strings.Split(readFile(t, st.LogPath("netboot")), "\n") {
		if strings.Contains(l, "msg=request") && strings.Contains(l, " method=GET path=/ipxe/snponly.efi status=200 ") &&
			strings.Contains(l, " remote="+addr.String()+":") {
			got = true
			e.logf("the boot server's access log: %s", l[strings.Index(l, "method="):])
			break
		}
	}
	if !got {
		t.Errorf("the boot server's log has no GET /ipxe/snponly.efi (200) from %s, where the boot script went", addr)
	}
	// TFTP logs a served file at -v 1 only, which the lab does not set;
	// the console's "no PXE over IPv4" above is what rules TFTP out. Still,
	// no TFTP line (a refused or failed transfer) may name the host.
	for _, l := range strings.Split(readFile(t, st.LogPath("netboot")), "\n") {
		if strings.Contains(l, "logger=netboot/tftp") && strings.Contains(l, "remote="+addr.String()+":") {
			t.Errorf("TFTP from the HTTP-booted host: %s", l)
		}
	}
}

// watchBootDevices records every status.issuedPowerAction.bootDevice Host
// name shows from now on (a watch: an issued action lasts only until the
// power is read back); the function returns them without repeats.
func (e *e2e) watchBootDevices(ctx context.Context, name string) func() []metalv1.BootDevice {
	e.t.Helper()
	wc, err := client.NewWithWatch(e.st.CP.Config, client.Options{Scheme: e.c.Scheme()})
	if err != nil {
		e.t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &metalv1.HostList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	var mu sync.Mutex
	var seen []metalv1.BootDevice
	go func() {
		for ev := range w.ResultChan() {
			h, ok := ev.Object.(*metalv1.Host)
			if !ok || ev.Type == watch.Bookmark || h.Status.IssuedPowerAction == nil || h.Status.IssuedPowerAction.BootDevice == "" {
				continue
			}
			mu.Lock()
			if d := h.Status.IssuedPowerAction.BootDevice; !slices.Contains(seen, d) {
				seen = append(seen, d)
			}
			mu.Unlock()
		}
	}()
	return func() []metalv1.BootDevice {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
