package index_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/index"
)

func TestDiscoverCreatesOneUnacceptedHost(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name         string
		arch         pxe.Arch
		vendorClass  string
		wantArch     string // after the CRD defaults
		wantBootMode string
		wantMethod   metalv1.BootMethod // after the CRD default
	}{
		{"x86-64 UEFI", pxe.ArchX8664UEFI, "PXEClient:Arch:00007:UNDI:003016", "x86_64", "UEFI", metalv1.BootMethodPXE},
		{"BIOS", pxe.ArchX86BIOS, "PXEClient:Arch:00000:UNDI:002001", "x86_64", "Legacy", metalv1.BootMethodPXE},
		{"arm64 UEFI HTTP", pxe.ArchARM64UEFIHTTP, "HTTPClient:Arch:00019", "aarch64", "UEFI", metalv1.BootMethodHTTPBoot},
		{"x86-64 UEFI HTTP (OVMF)", pxe.ArchX8664UEFIHTTP, "HTTPClient:Arch:00016:UNDI:003000", "x86_64", "UEFI", metalv1.BootMethodHTTPBoot},
		{"unknown", pxe.ArchUnknown, "", "x86_64", "UEFI", metalv1.BootMethodPXE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := env.Namespace(t)
			d, err := index.NewDiscoverer(index.DiscovererOptions{Client: mgrClient, Namespace: ns, Index: ix, Logger: testLogger})
			must(t, err)
			mac := hw(t, randMAC(t))
			created, err := d.Discover(ctx, mac, tt.arch, tt.vendorClass)
			if err != nil || !created {
				t.Fatalf("Discover: created=%v err=%v", created, err)
			}
			h := &metalv1.Host{}
			must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: index.DiscoveredHostName(mac)}, h))
			if h.Labels[index.LabelDiscovered] != "true" || len(h.Spec.BootMACs) != 1 || h.Spec.BootMACs[0] != pxe.MACKey(mac) ||
				h.Spec.BMC.Address != "" || h.Spec.Architecture != tt.wantArch || h.Spec.BootMode != tt.wantBootMode ||
				h.Spec.BootMethod != tt.wantMethod || h.Annotations[index.AnnotationVendorClass] != tt.vendorClass {
				t.Fatalf("discovered Host: labels=%v annotations=%v spec=%+v", h.Labels, h.Annotations, h.Spec)
			}

			// Again, before and after the index has seen it: nothing new.
			if created, err := d.Discover(ctx, mac, tt.arch, tt.vendorClass); err != nil || created {
				t.Fatalf("second Discover: created=%v err=%v", created, err)
			}
			rec := lookup(t, pxe.MACKey(mac), "the discovered Host is indexed", func(_ pxe.HostRecord, err error) bool { return err == nil })
			if want := map[metalv1.BootMethod]pxe.BootMethod{metalv1.BootMethodPXE: pxe.BootMethodPXE,
				metalv1.BootMethodHTTPBoot: pxe.BootMethodHTTP}[tt.wantMethod]; rec.BootMethod != want {
				t.Errorf("indexed record's boot method %v, want spec.bootMethod %s", rec.BootMethod, tt.wantMethod)
			}
			if rec.Accepted || rec.PXE {
				t.Fatalf("a discovered Host is accepted: %+v", rec)
			}
			// Even an acknowledged boot request in state Provisioning
			// does not make a Host without a BMC boot anything.
			updateHost(t, client.ObjectKeyFromObject(h), false, func(h *metalv1.Host) { h.Spec.BootRequest = &metalv1.BootRequest{ID: "x"} })
			updateHost(t, client.ObjectKeyFromObject(h), true, func(h *metalv1.Host) {
				h.Status.State, h.Status.BootRequestID = metalv1.HostProvisioning, "x"
			})
			eventually(t, "the status reaches the index", func() bool {
				o, ok := ix.Host(mac)
				return ok && o.Status.BootRequestID == "x"
			})
			if rec, _ := ix.Lookup(ctx, mac); rec.Accepted || rec.PXE {
				t.Fatalf("a Host without a BMC is accepted: %+v", rec)
			}
			other, err := index.NewDiscoverer(index.DiscovererOptions{Client: mgrClient, Namespace: env.Namespace(t), Index: ix})
			must(t, err)
			if created, err := other.Discover(ctx, mac, tt.arch, ""); err != nil || created {
				t.Fatalf("a MAC some Host lists was discovered again in another namespace: created=%v err=%v", created, err)
			}
			var list metalv1.HostList
			must(t, env.Client.List(ctx, &list, client.MatchingLabels{index.LabelDiscovered: "true"}))
			n := 0
			for _, o := range list.Items {
				for _, m := range o.Spec.BootMACs {
					if m == pxe.MACKey(mac) {
						n++
					}
				}
			}
			if n != 1 {
				t.Fatalf("%d discovered Hosts list the MAC, want 1", n)
			}
		})
	}
}

// A registered Host is never shadowed by discovery.
func TestDiscoverSkipsRegisteredMAC(t *testing.T) {
	ns := env.Namespace(t)
	m := randMAC(t)
	newHost(t, ns, "registered", []string{m})
	waitIndexed(t, ix, m)
	d, err := index.NewDiscoverer(index.DiscovererOptions{Client: mgrClient, Namespace: ns, Index: ix})
	must(t, err)
	if created, err := d.Discover(context.Background(), hw(t, m), pxe.ArchX86BIOS, ""); err != nil || created {
		t.Fatalf("Discover of a registered MAC: created=%v err=%v", created, err)
	}
}
