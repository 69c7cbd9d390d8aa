package netboot_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/pxe/netboot"
	"anvil.dev/anvil/test/envtest"
)

// readManifest is the DaemonSet's manifest and its roles (generated into
// deploy/rbac/role.yaml with the controller's).
func readManifest(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	root, err := envtest.RepoRoot()
	must(t, err)
	var out []*unstructured.Unstructured
	for _, f := range []string{"pxe/daemonset.yaml", "rbac/role.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "deploy", f))
		must(t, err)
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatal(err)
			}
			if len(u.Object) > 0 && (f == "pxe/daemonset.yaml" || strings.HasPrefix(u.GetName(), "anvil-pxe")) {
				out = append(out, u)
			}
		}
	}
	return out
}

// The DaemonSet's arguments are valid flags that switch the services on,
// and the API server accepts every object.
func TestDaemonSetManifest(t *testing.T) {
	ctx := context.Background()
	objs := readManifest(t)
	kinds := map[string]int{}
	for _, u := range objs {
		kinds[u.GetKind()]++
		if u.GetKind() != "DaemonSet" {
			continue
		}
		ds := &appsv1.DaemonSet{}
		must(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ds))
		if !ds.Spec.Template.Spec.HostNetwork {
			t.Error("the DaemonSet must use the host network")
		}
		args := ds.Spec.Template.Spec.Containers[0].Args
		if len(args) == 0 || args[0] != "serve" {
			t.Fatalf("args %v do not start with serve", args)
		}
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		fs.ParseErrorsAllowlist.UnknownFlags = true // --leader-elect, --controllers, ... belong to anvil serve
		var o netboot.Options
		netboot.BindFlags(fs, &o)
		if err := fs.Parse(args[1:]); err != nil {
			t.Fatalf("DaemonSet args: %v", err)
		}
		if !o.DHCP || !o.TFTP || !o.HTTPBoot || !o.Discovery || o.Interface == "" {
			t.Fatalf("DaemonSet does not enable the services: %+v", o)
		}
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s objects, want 1", kinds[k], k)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "anvil-system"}}
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, u := range objs {
		opts := []client.ApplyOption{client.FieldOwner("test"), client.ForceOwnership}
		if u.GetKind() == "DaemonSet" {
			opts = append(opts, client.DryRunAll) // nothing runs pods here anyway
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// With the manifest's RBAC, as its ServiceAccount, the services can do all
// they need (watch the inventory, create a discovered Host, write a lease)
// and no more (no Host deletion, no Secrets).
func TestDaemonSetRBACIsEnough(t *testing.T) {
	TestDaemonSetManifest(t) // applies the ServiceAccount and its role
	if t.Failed() {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:anvil-system:anvil-pxe"}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: testLogger})
	must(t, err)
	x, err := index.New(ctx, index.Options{Informers: mgr.GetCache()})
	must(t, err)
	go func() { _ = mgr.Start(ctx) }()
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	if err := x.WaitForSync(sctx); err != nil {
		t.Fatalf("as the DaemonSet's ServiceAccount the informers do not sync (list/watch denied?): %v", err)
	}

	ns := env.Namespace(t)
	mac := randMAC(t)
	// Discovered Hosts may be created in anvil-system (the manifest's
	// --discovery-namespace) only.
	d, err := index.NewDiscoverer(index.DiscovererOptions{Client: mgr.GetClient(), Namespace: "anvil-system", Index: x})
	must(t, err)
	if created, err := d.Discover(ctx, mac, pxe.ArchX8664UEFI, ""); err != nil || !created {
		t.Fatalf("discovery as the ServiceAccount: created=%v err=%v", created, err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: "anvil-system", Name: index.DiscoveredHostName(mac)}})
	})
	elsewhere, err := index.NewDiscoverer(index.DiscovererOptions{Client: mgr.GetClient(), Namespace: ns, Index: x})
	must(t, err)
	_, errElsewhere := elsewhere.Discover(ctx, randMAC(t), pxe.ArchX8664UEFI, "")
	known := randMAC(t)
	must(t, env.Client.Create(ctx, &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h"},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://x"}, BootMACs: []string{known.String()}},
	}))
	waitFor(t, "the Host is indexed", func() bool { _, err := x.Lookup(ctx, known); return err == nil })
	store, err := index.NewLeaseStore(index.LeaseStoreOptions{Index: x, Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()})
	must(t, err)
	rng := dhcp.Range{Start: netip4("10.251.0.10"), End: netip4("10.251.0.20")}
	l, err := store.Allocate(ctx, dhcp.AllocateRequest{MAC: known, Range: rng, TTL: time.Minute})
	must(t, err)
	if _, err := store.Renew(ctx, known, l.IP, time.Hour); err != nil {
		t.Fatalf("writing a lease as the ServiceAccount: %v", err)
	}

	denied := []struct {
		name string
		err  error
	}{
		{"delete a Host", mgr.GetClient().Delete(ctx, &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h"}})},
		{"discover a Host outside anvil-system", errElsewhere},
		{"read a Secret", mgr.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: ns, Name: "any"}, &corev1.Secret{})},
		{"update a Host spec", mgr.GetClient().Patch(ctx, &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h"}},
			client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"online":true}}`)))},
	}
	for _, dd := range denied {
		if !apierrors.IsForbidden(dd.err) {
			t.Errorf("%s: %v, want Forbidden", dd.name, dd.err)
		}
	}
}

func netip4(s string) netip.Addr { return netip.MustParseAddr(s) }
