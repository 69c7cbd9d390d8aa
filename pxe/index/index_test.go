package index_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
)

func TestDecide(t *testing.T) {
	const bmc = "manual://x"
	host := func(addr string, state metalv1.HostState, req, ack string) *metalv1.Host {
		h := &metalv1.Host{Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: addr}}, Status: metalv1.HostStatus{State: state, BootRequestID: ack}}
		if req != "" {
			h.Spec.BootRequest = &metalv1.BootRequest{ID: req, Purpose: "Provision"}
		}
		return h
	}
	rejoin := func(state metalv1.HostState, req, ack string) *metalv1.Host {
		h := host(bmc, state, req, ack)
		h.Spec.BootRequest.Purpose = metalv1.BootPurposeRejoin
		return h
	}
	method := func(m metalv1.BootMethod, h *metalv1.Host) *metalv1.Host { h.Spec.BootMethod = m; return h }
	tests := []struct {
		name string
		host *metalv1.Host
		want index.BootDecision
	}{
		{"discovered, no BMC", host("", metalv1.HostDiscovered, "", ""), index.BootDecision{}},
		{"no BMC, not reconciled yet", host("", "", "", ""), index.BootDecision{}},
		{"no BMC even with an acknowledged request", host("", metalv1.HostProvisioning, "b1", "b1"), index.BootDecision{}},
		{"BMC added, controller has not moved it out of Discovered", host(bmc, metalv1.HostDiscovered, "b1", "b1"), index.BootDecision{}},
		{"available", host(bmc, metalv1.HostAvailable, "", ""), index.BootDecision{Accepted: true}},
		{"provisioning, request not acknowledged", host(bmc, metalv1.HostProvisioning, "b1", ""), index.BootDecision{Accepted: true}},
		{"provisioning, older request acknowledged", host(bmc, metalv1.HostProvisioning, "b2", "b1"), index.BootDecision{Accepted: true}},
		{"provisioning, acknowledged", host(bmc, metalv1.HostProvisioning, "b1", "b1"), index.BootDecision{Accepted: true, PXE: true}},
		{"deprovisioning (wipe), acknowledged", host(bmc, metalv1.HostDeprovisioning, "w1", "w1"), index.BootDecision{Accepted: true, PXE: true}},
		{"provisioned with a stale request", host(bmc, metalv1.HostProvisioned, "b1", "b1"), index.BootDecision{Accepted: true}},
		{"available with a stale request", host(bmc, metalv1.HostAvailable, "b1", "b1"), index.BootDecision{Accepted: true}},
		{"claimed, acknowledged", host(bmc, metalv1.HostClaimed, "b1", "b1"), index.BootDecision{Accepted: true}},
		{"error state, acknowledged", host(bmc, metalv1.HostError, "b1", "b1"), index.BootDecision{Accepted: true}},
		{"acknowledged but no request any more", host(bmc, metalv1.HostProvisioning, "", "b1"), index.BootDecision{Accepted: true}},
		{"provisioned, rejoin acknowledged", rejoin(metalv1.HostProvisioned, "j1", "j1"), index.BootDecision{Accepted: true, PXE: true}},
		{"provisioned, rejoin not acknowledged yet", rejoin(metalv1.HostProvisioned, "j2", "j1"), index.BootDecision{Accepted: true}},
		{"rejoin acknowledged, Host controller has not moved it to Provisioned", rejoin(metalv1.HostProvisioning, "j1", "j1"), index.BootDecision{Accepted: true, PXE: true}},
		{"available with a stale rejoin request", rejoin(metalv1.HostAvailable, "j1", "j1"), index.BootDecision{Accepted: true}},
		{"error state with a rejoin request", rejoin(metalv1.HostError, "j1", "j1"), index.BootDecision{Accepted: true}},
		// spec.bootMethod picks the firmware client DHCP answers; it never
		// decides whether the Host network boots.
		{"HTTPBoot, acknowledged", method(metalv1.BootMethodHTTPBoot, host(bmc, metalv1.HostProvisioning, "b1", "b1")),
			index.BootDecision{Accepted: true, PXE: true, Method: pxe.BootMethodHTTP}},
		{"HTTPBoot, not acknowledged", method(metalv1.BootMethodHTTPBoot, host(bmc, metalv1.HostProvisioning, "b1", "")),
			index.BootDecision{Accepted: true, Method: pxe.BootMethodHTTP}},
		{"HTTPBoot, discovered", method(metalv1.BootMethodHTTPBoot, host("", metalv1.HostDiscovered, "", "")),
			index.BootDecision{Method: pxe.BootMethodHTTP}},
		{"PXE spelled out", method(metalv1.BootMethodPXE, host(bmc, metalv1.HostProvisioning, "b1", "b1")),
			index.BootDecision{Accepted: true, PXE: true, Method: pxe.BootMethodPXE}},
		{"VirtualMedia boots as PXE until its ISO boot exists", method(metalv1.BootMethodVirtualMedia, host(bmc, metalv1.HostProvisioning, "b1", "b1")),
			index.BootDecision{Accepted: true, PXE: true, Method: pxe.BootMethodPXE}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := index.Decide(tt.host); got != tt.want {
				t.Fatalf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// lookup waits until the index answers for mac with a record cond accepts.
func lookup(t *testing.T, mac string, what string, cond func(pxe.HostRecord, error) bool) pxe.HostRecord {
	t.Helper()
	var rec pxe.HostRecord
	eventually(t, what, func() bool {
		var err error
		rec, err = ix.Lookup(context.Background(), hw(t, mac))
		return cond(rec, err)
	})
	return rec
}

func TestLookupFollowsTheAPI(t *testing.T) {
	ns := env.Namespace(t)
	mac := randMAC(t)
	h := newHost(t, ns, "node-a", []string{strings.ToUpper(mac)}, func(h *metalv1.Host) {
		h.Spec.Architecture = "aarch64"
		h.Spec.BootMode = "Legacy"
		h.Spec.Network = &metalv1.HostNetwork{Address: "10.9.0.5/24", Address6: "fd00:9::5/64", Gateway: "10.9.0.1", DNS: []string{"10.9.0.2", "10.9.0.3"}, Hostname: "a.example"}
	})
	key := client.ObjectKeyFromObject(h)

	rec := lookup(t, mac, "the new Host is indexed", func(_ pxe.HostRecord, err error) bool { return err == nil })
	want := pxe.HostRecord{
		Name: "node-a", Namespace: ns, MAC: hw(t, mac), Hostname: "a.example",
		IP: netip.MustParsePrefix("10.9.0.5/24"), IP6: netip.MustParsePrefix("fd00:9::5/64"), Gateway: netip.MustParseAddr("10.9.0.1"),
		DNS:  []netip.Addr{netip.MustParseAddr("10.9.0.2"), netip.MustParseAddr("10.9.0.3")},
		Arch: "aarch64", UEFI: false, PXE: false, Accepted: true,
	}
	if !equalRecord(rec, want) {
		t.Fatalf("record\n got %+v\nwant %+v", rec, want)
	}

	steps := []struct {
		name    string
		status  bool
		mutate  func(*metalv1.Host)
		wantPXE bool
	}{
		{"boot request set, not acknowledged", false, func(h *metalv1.Host) { h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1"} }, false},
		{"acknowledged while Claimed", true, func(h *metalv1.Host) { h.Status.State = metalv1.HostClaimed; h.Status.BootRequestID = "b1" }, false},
		{"Provisioning", true, func(h *metalv1.Host) { h.Status.State = metalv1.HostProvisioning }, true},
		{"Provisioned", true, func(h *metalv1.Host) { h.Status.State = metalv1.HostProvisioned }, false},
		{"Deprovisioning with a new, unacknowledged request", false, func(h *metalv1.Host) { h.Spec.BootRequest = &metalv1.BootRequest{ID: "w1", Purpose: "Wipe"} }, false},
		{"wipe acknowledged", true, func(h *metalv1.Host) { h.Status.State = metalv1.HostDeprovisioning; h.Status.BootRequestID = "w1" }, true},
	}
	for _, s := range steps {
		updateHost(t, key, s.status, s.mutate)
		// Wait for the event that carries this step's change: the
		// resourceVersion the API server gave it.
		cur := &metalv1.Host{}
		must(t, env.Client.Get(context.Background(), key, cur))
		eventually(t, s.name+" reaches the index", func() bool {
			o, ok := ix.Host(hw(t, mac))
			return ok && o.ResourceVersion == cur.ResourceVersion
		})
		rec, err := ix.Lookup(context.Background(), hw(t, mac))
		if err != nil || rec.PXE != s.wantPXE || !rec.Accepted {
			t.Fatalf("%s: PXE=%v Accepted=%v err=%v, want PXE=%v", s.name, rec.PXE, rec.Accepted, err, s.wantPXE)
		}
	}

	must(t, env.Client.Delete(context.Background(), h))
	lookup(t, mac, "the deleted Host leaves the index", func(_ pxe.HostRecord, err error) bool { return errors.Is(err, pxe.ErrNotFound) })
	if ix.Known(hw(t, mac)) {
		t.Fatal("Known still reports the deleted Host's MAC")
	}
}

func equalRecord(a, b pxe.HostRecord) bool {
	return a.Name == b.Name && a.Namespace == b.Namespace && a.MAC.String() == b.MAC.String() && a.Hostname == b.Hostname &&
		a.IP == b.IP && a.IP6 == b.IP6 && a.Gateway == b.Gateway && slices.Equal(a.DNS, b.DNS) && a.Arch == b.Arch && a.UEFI == b.UEFI &&
		a.PXE == b.PXE && a.Accepted == b.Accepted
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	shaC = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

func newClass(t testing.TB, ns, name string, mutate ...func(*metalv1.MachineClass)) *metalv1.MachineClass {
	t.Helper()
	c := &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: metalv1.MachineClassSpec{
			Kernel:     metalv1.Artifact{URL: "fcos/vmlinuz", SHA256: shaA},
			Initrds:    []metalv1.Artifact{{URL: "./fcos/initrd.img", SHA256: shaB}, {URL: "https://mirror.example/x/extra.cpio.gz?sig=abc", SHA256: shaC}},
			KernelArgs: []string{"console=ttyS0", "ignition.platform.id=metal"},
			Config:     metalv1.ConfigTemplate{Format: "cloud-init", Template: "#cloud-config\n"},
		},
	}
	for _, m := range mutate {
		m(c)
	}
	must(t, env.Client.Create(context.Background(), c))
	return c
}

func newMachine(t testing.TB, ns, name, class string) *metalv1.Machine {
	t.Helper()
	m := &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: class}, Version: "v1.37.2"},
	}
	must(t, env.Client.Create(context.Background(), m))
	return m
}

func TestBootSpecAndArtifacts(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	class := newClass(t, ns, "fcos", func(c *metalv1.MachineClass) {
		c.Spec.Image = &metalv1.Artifact{URL: "https://mirror.example/fcos.raw.xz", SHA256: shaA}
		c.Spec.Kubelets = []metalv1.KubeletArtifact{{Version: "v1.37.2", Artifact: metalv1.Artifact{URL: "bin/v1.37.2/kubelet", SHA256: shaB}}}
	})
	newMachine(t, ns, "m1", "fcos")
	mac := randMAC(t)
	newHost(t, ns, "h1", []string{mac}, func(h *metalv1.Host) {
		h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Name: "m1"}
	})
	rec := lookup(t, mac, "the Host is indexed", func(_ pxe.HostRecord, err error) bool { return err == nil })

	prefix := "/artifacts/" + ns + "/fcos/"
	want := httpboot.BootSpec{
		KernelURL:  prefix + "kernel/vmlinuz",
		InitrdURLs: []string{prefix + "initrd/0/initrd.img", prefix + "initrd/1/extra.cpio.gz"},
		Args:       []string{"console=ttyS0", "ignition.platform.id=metal"},
	}
	var spec httpboot.BootSpec
	eventually(t, "the BootSpec resolves Host -> Machine -> MachineClass", func() bool {
		var err error
		spec, err = ix.BootSpec(ctx, rec)
		return err == nil
	})
	if spec.KernelURL != want.KernelURL || !slices.Equal(spec.InitrdURLs, want.InitrdURLs) || !slices.Equal(spec.Args, want.Args) {
		t.Fatalf("BootSpec\n got %+v\nwant %+v", spec, want)
	}
	classKey := types.NamespacedName{Namespace: ns, Name: "fcos"}
	arts := []struct {
		path string
		want httpboot.Artifact
	}{
		{ns + "/fcos/kernel/vmlinuz", httpboot.Artifact{SHA256: shaA, File: "fcos/vmlinuz"}},
		{ns + "/fcos/initrd/0/initrd.img", httpboot.Artifact{SHA256: shaB, File: "fcos/initrd.img"}},
		{ns + "/fcos/initrd/1/extra.cpio.gz", httpboot.Artifact{SHA256: shaC, URL: "https://mirror.example/x/extra.cpio.gz?sig=abc"}},
		{ns + "/fcos/image/fcos.raw.xz", httpboot.Artifact{SHA256: shaA, URL: "https://mirror.example/fcos.raw.xz"}},
		{index.KubeletPath(classKey, class.Spec.Kubelets[0]), httpboot.Artifact{SHA256: shaB, File: "bin/v1.37.2/kubelet"}},
	}
	for _, a := range arts {
		got, err := ix.Artifact(ctx, a.path)
		if err != nil || got != a.want {
			t.Errorf("Artifact(%q) = %+v, %v; want %+v", a.path, got, err, a.want)
		}
		if c, ok := ix.ClassOfArtifact(a.path); !ok || c != classKey {
			t.Errorf("ClassOfArtifact(%q) = %v, %v", a.path, c, ok)
		}
	}
	if _, err := ix.Artifact(ctx, "fcos/vmlinuz"); !errors.Is(err, pxe.ErrNotFound) {
		t.Errorf("the bare file path must not be an artifact of its own: %v", err)
	}

	// A new digest in the class reaches the artifact table.
	c := &metalv1.MachineClass{}
	must(t, env.Client.Get(ctx, classKey, c))
	c.Spec.Kernel.SHA256 = shaC
	must(t, env.Client.Update(ctx, c))
	eventually(t, "the kernel digest changes", func() bool {
		a, err := ix.Artifact(ctx, ns+"/fcos/kernel/vmlinuz")
		return err == nil && a.SHA256 == shaC
	})

	// Broken links: no consumer, missing Machine, missing class.
	m2 := randMAC(t)
	newHost(t, ns, "free", []string{m2})
	m3 := randMAC(t)
	newHost(t, ns, "orphan", []string{m3}, func(h *metalv1.Host) { h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Name: "gone"} })
	newMachine(t, ns, "m-noclass", "nope")
	m4 := randMAC(t)
	newHost(t, ns, "noclass", []string{m4}, func(h *metalv1.Host) {
		h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Name: "m-noclass"}
	})
	for _, m := range []string{m2, m3, m4} {
		r := lookup(t, m, "the Host is indexed", func(_ pxe.HostRecord, err error) bool { return err == nil })
		if _, err := ix.BootSpec(ctx, r); !errors.Is(err, pxe.ErrNotFound) {
			t.Errorf("BootSpec for %s: %v, want ErrNotFound", r.Name, err)
		}
	}

	// Deleting the class removes its BootSpec and artifacts.
	must(t, env.Client.Delete(ctx, c))
	eventually(t, "the class leaves the index", func() bool {
		_, err := ix.BootSpec(ctx, rec)
		return errors.Is(err, pxe.ErrNotFound)
	})
	if _, err := ix.Artifact(ctx, ns+"/fcos/kernel/vmlinuz"); !errors.Is(err, pxe.ErrNotFound) {
		t.Errorf("artifact of a deleted class: %v", err)
	}
}

// A class whose artifact URL cannot be served gives a BootSpec error that
// names the field, never the URL (it may carry credentials).
func TestBadArtifactURLIsReportedWithoutTheURL(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const secret = "s3cr3t-t0ken"
	tests := []struct {
		name, url, field string
	}{
		{"other scheme with credentials", "ftp://user:" + secret + "@mirror/vmlinuz", "spec.kernel.url"},
		{"absolute path", "/var/lib/" + secret + "/vmlinuz", "spec.kernel.url"},
		{"parent reference", "../" + secret + "/vmlinuz", "spec.kernel.url"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cname := "bad" + string(rune('a'+i))
			newClass(t, ns, cname, func(c *metalv1.MachineClass) { c.Spec.Kernel.URL = tt.url })
			newMachine(t, ns, "m-"+cname, cname)
			mac := randMAC(t)
			newHost(t, ns, "h-"+cname, []string{mac}, func(h *metalv1.Host) {
				h.Spec.ConsumerRef = &corev1.ObjectReference{Name: "m-" + cname}
			})
			rec := lookup(t, mac, "the Host is indexed", func(_ pxe.HostRecord, err error) bool { return err == nil })
			var err error
			eventually(t, "the class is indexed", func() bool {
				_, err = ix.BootSpec(ctx, rec)
				return err != nil && !errors.Is(err, pxe.ErrNotFound)
			})
			if !strings.Contains(err.Error(), tt.field) || strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q should name %s and not contain the URL", err, tt.field)
			}
			if !strings.Contains(logs.String(), "unusable artifacts") || strings.Contains(logs.String(), secret) {
				t.Fatalf("the log should report the class without the URL:\n%s", logs.String())
			}
			// The initrds of the class are still served.
			if _, aerr := ix.Artifact(ctx, ns+"/"+cname+"/initrd/0/initrd.img"); aerr != nil {
				t.Fatalf("initrd of a class with a bad kernel: %v", aerr)
			}
		})
	}
}

func TestDuplicateMACOwnership(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	mac := randMAC(t)
	old := newHost(t, ns, "z-old", []string{mac})
	// Make the second Host measurably younger (timestamps have seconds).
	for time.Now().Truncate(time.Second).Equal(old.CreationTimestamp.Time.Truncate(time.Second)) {
		time.Sleep(50 * time.Millisecond)
	}
	young := newHost(t, ns, "a-young", []string{mac})
	owner := func() string {
		r, err := ix.Lookup(ctx, hw(t, mac))
		if err != nil {
			return ""
		}
		return r.Name
	}
	setValid := func(h *metalv1.Host, v metav1.ConditionStatus) {
		updateHost(t, client.ObjectKeyFromObject(h), true, func(h *metalv1.Host) {
			meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{Type: metalv1.ConditionValid, Status: v, Reason: "Test"})
		})
	}
	steps := []struct {
		name  string
		apply func()
		want  string
	}{
		{"neither valid: the older owns", func() {}, "z-old"},
		{"the younger becomes Valid: it owns", func() { setValid(young, metav1.ConditionTrue) }, "a-young"},
		{"both Valid: the older owns", func() { setValid(old, metav1.ConditionTrue) }, "z-old"},
		{"the older turns invalid (duplicate)", func() { setValid(old, metav1.ConditionFalse) }, "a-young"},
		{"the owner is deleted: the other takes over", func() { must(t, env.Client.Delete(ctx, young)) }, "z-old"},
	}
	for _, s := range steps {
		s.apply()
		eventually(t, s.name+" (owner "+s.want+")", func() bool { return owner() == s.want })
	}
}

// Every answer comes from memory: thousands of lookups, boot specs and
// artifact queries send no request to the API server, while a single
// uncached read does (so the counter works).
func TestHotPathMakesNoAPICalls(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	newClass(t, ns, "c")
	newMachine(t, ns, "m", "c")
	mac := randMAC(t)
	newHost(t, ns, "h", []string{mac}, func(h *metalv1.Host) {
		h.Spec.ConsumerRef = &corev1.ObjectReference{Name: "m"}
	})
	rec := lookup(t, mac, "the Host is indexed", func(_ pxe.HostRecord, err error) bool { return err == nil })
	eventually(t, "the BootSpec resolves", func() bool { _, err := ix.BootSpec(ctx, rec); return err == nil })
	store, err := index.NewLeaseStore(index.LeaseStoreOptions{Index: ix, Client: mgrClient, APIReader: mgrReader})
	must(t, err)
	p := testSubnet()
	rng := dhcp.Range{Start: addr(p, 10), End: addr(p, 20)}

	before := apiCalls.Load()
	for i := range 2000 {
		if _, err := ix.Lookup(ctx, hw(t, mac)); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.BootSpec(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Artifact(ctx, ns+"/c/kernel/vmlinuz"); err != nil {
			t.Fatal(err)
		}
		_, _ = ix.Lookup(ctx, hw(t, randMAC(t))) // unknown MACs too
		if i%100 == 0 {
			// Offers are memory-only as well.
			if _, err := store.Allocate(ctx, dhcp.AllocateRequest{MAC: hw(t, mac), Range: rng, TTL: time.Minute}); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Get(ctx, hw(t, mac)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := apiCalls.Load() - before; n != 0 {
		t.Fatalf("%d API requests on the hot path, want 0", n)
	}
	h := &metalv1.Host{}
	must(t, mgrReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h"}, h))
	if apiCalls.Load() == before {
		t.Fatal("the request counter did not see an uncached read: the test proves nothing")
	}
}
