package netboot_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/netboot"
)

func TestRunWithNothingEnabledReturns(t *testing.T) {
	done := make(chan error, 1)
	go func() { done <- netboot.Run(context.Background(), netboot.DefaultOptions()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run with every service off did not return")
	}
}

func freeLoopbackAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, string(b)
}

// HTTP boot alone, on loopback (no root needed): the hooks see the index,
// the script and artifacts come from the API objects, a second Run on the
// same address fails instead of hanging, and cancel stops Run cleanly.
func TestRunHTTPOnlyOnLoopback(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	dir := t.TempDir()
	kernel := randBytes(t, 10000)
	must(t, os.MkdirAll(filepath.Join(dir, "k"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "k", "vmlinuz"), kernel, 0o644))
	must(t, env.Client.Create(ctx, &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"},
		Spec: metalv1.MachineClassSpec{
			Kernel:  metalv1.Artifact{URL: "k/vmlinuz", SHA256: sum(kernel)},
			Initrds: []metalv1.Artifact{{URL: "k/initrd", SHA256: sum([]byte("x"))}},
			Config:  metalv1.ConfigTemplate{Format: "cloud-init", Template: "x"},
		},
	}))
	must(t, env.Client.Create(ctx, &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "c"}, Version: "v1.37.2"},
	}))
	mac := randMAC(t)
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h"},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://x"}, BootMACs: []string{mac.String()},
			ConsumerRef: &corev1.ObjectReference{Name: "m"}, BootRequest: &metalv1.BootRequest{ID: "1"}},
	}
	must(t, env.Client.Create(ctx, h))
	h.Status.State, h.Status.BootRequestID = metalv1.HostProvisioning, "1"
	must(t, env.Client.Status().Update(ctx, h))

	addr := freeLoopbackAddr(t)
	o := netboot.DefaultOptions()
	o.HTTPBoot, o.HTTPAddr, o.ArtifactDir = true, addr, dir
	o.Cache = env.Manager.GetCache()
	o.Client = env.Client // artifact mismatches become MachineClass conditions
	o.Registerer = prometheus.NewRegistry()
	o.Logger = testLogger
	o.HTTPHook = func(c netboot.Components, s *httpboot.Server) error {
		if c.Index == nil || c.HTTP != s || c.Leases != nil {
			t.Errorf("hook components: %+v", c)
		}
		return s.Handle("GET /hook", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hooked") }))
	}
	ready := make(chan netboot.Components, 1)
	o.OnReady = func(c netboot.Components) { ready <- c }
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- netboot.Run(rctx, o) }()
	var comp netboot.Components
	select {
	case comp = <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("not ready")
	}
	waitFor(t, "the Host is netbooting in the index", func() bool {
		r, err := comp.Index.Lookup(ctx, mac)
		return err == nil && r.PXE
	})
	base := "http://" + addr
	if code, body := httpGet(t, base+"/boot/"+pxe.MACKey(mac)+".ipxe"); code != 200 || !strings.Contains(body, "kernel /artifacts/"+ns+"/c/kernel/vmlinuz initrd=initrd0\n") {
		t.Fatalf("script: %d\n%s", code, body)
	}
	if code, body := httpGet(t, base+"/artifacts/"+ns+"/c/kernel/vmlinuz"); code != 200 || sum([]byte(body)) != sum(kernel) {
		t.Fatalf("kernel: %d, %d bytes", code, len(body))
	}
	if code, _ := httpGet(t, base+"/artifacts/"+ns+"/c/initrd/0/initrd"); code != 404 {
		t.Fatalf("missing initrd: %d, want 404", code)
	}
	// An initrd whose bytes do not match the class's sha256 is never
	// served, and the class says why.
	must(t, os.WriteFile(filepath.Join(dir, "k", "initrd"), []byte("not what the class pinned"), 0o644))
	if code, body := httpGet(t, base+"/artifacts/"+ns+"/c/initrd/0/initrd"); code == 200 || strings.Contains(body, "not what") {
		t.Fatalf("mismatched initrd served: %d %q", code, body)
	}
	waitFor(t, "the MachineClass reports the digest mismatch", func() bool {
		var mc metalv1.MachineClass
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c"}, &mc); err != nil {
			return false
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, metalv1.ConditionArtifactsValid)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == netboot.ReasonDigestMismatch && strings.Contains(c.Message, "spec.initrds[0].url") &&
			!strings.Contains(c.Message, sum([]byte("not what the class pinned"))) // the file's own digest is told nowhere
	})
	if code, body := httpGet(t, base+"/hook"); code != 200 || body != "hooked" {
		t.Fatalf("hook: %d %q", code, body)
	}

	// The address is taken: a second Run fails and is never ready.
	o2 := o
	o2.Registerer = prometheus.NewRegistry()
	o2.OnReady = func(netboot.Components) { t.Error("a Run that cannot listen reported ready") }
	o2.HTTPHook = nil
	if err := netboot.Run(ctx, o2); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("second Run on the same address: %v", err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
