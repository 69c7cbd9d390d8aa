package netboot_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/dhcp"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/pxe/netboot"
	"anvil.dev/anvil/test/netnstest"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func randBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	must(t, err)
	return b
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func randMAC(t testing.TB) net.HardwareAddr {
	b := randBytes(t, 6)
	b[0] = b[0]&0xfc | 0x02
	return b
}

// e2e is a server and a client namespace, the objects in the API server
// and the files the services serve.
type e2e struct {
	pair                  *netnstest.Pair
	ns                    string
	dir                   string
	kernel, initrd, bootf []byte
	runs                  int
}

func (e *e2e) addr(last byte) netip.Addr {
	b := e.pair.Subnet.Addr().As4()
	b[3] = last
	return netip.AddrFrom4(b)
}

// options are the flags an admin would pass, plus the manager's wiring.
func (e *e2e) options(t *testing.T) netboot.Options {
	fs := netboot.DefaultOptions()
	fs.DHCP, fs.TFTP, fs.HTTPBoot, fs.Discovery = true, true, true, true
	fs.Interface = e.pair.SrvIf
	fs.Range = dhcp.Range{Start: e.addr(100), End: e.addr(110)}
	fs.Router = e.pair.SrvIP
	fs.TFTPRoot = filepath.Join(e.dir, "tftp")
	fs.HTTPAddr = net.JoinHostPort(e.pair.SrvIP.String(), "80")
	fs.ArtifactDir = filepath.Join(e.dir, "artifacts")
	fs.DiscoveryNamespace = e.ns
	fs.Cache, fs.Client, fs.APIReader = env.Manager.GetCache(), env.Manager.GetClient(), env.Manager.GetAPIReader()
	fs.Registerer = prometheus.NewRegistry()
	fs.Logger = testr.NewWithOptions(t, testr.Options{Verbosity: 1})
	// Others mount their endpoints (config delivery, agent API) like this.
	fs.Handlers = map[string]http.Handler{"GET /config/{token}": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "config for %s", r.PathValue("token"))
	})}
	return fs
}

// start runs netboot.Run in the server namespace until the returned stop
// (also a t.Cleanup) is called.
func (e *e2e) start(t *testing.T, o netboot.Options) (netboot.Components, func()) {
	t.Helper()
	ready := make(chan netboot.Components, 1)
	o.OnReady = func(c netboot.Components) { ready <- c }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	must(t, e.pair.Srv.Go(func() { done <- netboot.Run(ctx, o) }))
	var comp netboot.Components
	select {
	case comp = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("services not ready after 60s")
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return comp, stop
}

// udhcpc runs busybox udhcpc once as mac and returns what its script saw
// on "bound", or an error if it got no lease.
func (e *e2e) udhcpc(t *testing.T, mac net.HardwareAddr, args ...string) (map[string]string, error) {
	t.Helper()
	e.pair.SetCliMAC(t, mac)
	e.runs++
	out := filepath.Join(e.dir, fmt.Sprintf("udhcpc-%d.env", e.runs))
	script := filepath.Join(e.dir, "udhcpc.sh")
	// The script only records; it never configures the interface.
	body := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = bound ]; then env > %q; fi\nexit 0\n", out)
	must(t, os.WriteFile(script, []byte(body), 0o755))
	argv := append([]string{"udhcpc", "-i", e.pair.CliIf, "-f", "-n", "-q", "-t", "3", "-T", "1", "-s", script}, args...)
	log, err := e.pair.Cli.Output(30*time.Second, "busybox", argv...)
	t.Logf("udhcpc %s:\n%s", mac, log)
	if err != nil {
		return nil, fmt.Errorf("udhcpc: %w", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("udhcpc bound but its script wrote nothing: %w", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env, nil
}

// bindClient gives the client interface the address DHCP handed out (the
// udhcpc script does not), for TFTP and HTTP clients.
func (e *e2e) bindClient(t *testing.T, ip string) {
	e.pair.Cli.Exec(t, "ip", "addr", "flush", "dev", e.pair.CliIf)
	e.pair.Cli.Exec(t, "ip", "addr", "add", ip+"/24", "dev", e.pair.CliIf)
}

func (e *e2e) curl(t *testing.T, path string, extra ...string) (string, error) {
	t.Helper()
	args := append([]string{"-sS", "-f", "--max-time", "10"}, extra...)
	args = append(args, "http://"+e.pair.SrvIP.String()+path)
	return e.pair.Cli.Output(20*time.Second, "curl", args...)
}

var (
	biosPXE = []string{"-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000"}
	ipxe    = []string{"-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000", "-x", "0x4d:69505845"}
)

func setHostStatus(t *testing.T, key client.ObjectKey, mutate func(*metalv1.Host)) {
	t.Helper()
	must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := &metalv1.Host{}
		if err := env.Client.Get(context.Background(), key, h); err != nil {
			return err
		}
		mutate(h)
		return env.Client.Status().Update(context.Background(), h)
	}))
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !netnstest.WaitFor(30*time.Second, cond) {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// TestEndToEnd runs netboot.Run in a network namespace against a real API
// server and talks to it with real clients (busybox udhcpc and tftp, curl)
// from another namespace: a Host being provisioned gets its static
// address, the iPXE binary, its boot script and verified artifacts; then it
// boots from disk; a dynamic lease lands in Host status and survives a
// restart; an unknown MAC becomes one Discovered Host and gets nothing.
func TestEndToEnd(t *testing.T) {
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "busybox", "curl", "ip")
	ctx := context.Background()
	e := &e2e{pair: netnstest.NewPair(t, netnstest.PairOptions{}), ns: env.Namespace(t), dir: t.TempDir()}
	e.kernel, e.initrd, e.bootf = randBytes(t, 256<<10), randBytes(t, 64<<10), randBytes(t, 4<<10)
	for p, b := range map[string][]byte{"artifacts/os/vmlinuz": e.kernel, "artifacts/os/initrd.img": e.initrd, "tftp/undionly.kpxe": e.bootf} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(e.dir, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(e.dir, p), b, 0o644))
	}

	// The inventory: a class, a Machine, a Host with a static address held
	// by the Machine, and two Hosts with dynamic addresses.
	must(t, env.Client.Create(ctx, &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "fcos"},
		Spec: metalv1.MachineClassSpec{
			Kernel:     metalv1.Artifact{URL: "os/vmlinuz", SHA256: sum(e.kernel)},
			Initrds:    []metalv1.Artifact{{URL: "os/initrd.img", SHA256: sum(e.initrd)}},
			KernelArgs: []string{"console=ttyS0"},
			Config:     metalv1.ConfigTemplate{Format: "cloud-init", Template: "#cloud-config\n"},
		},
	}))
	must(t, env.Client.Create(ctx, &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "m1"},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "fcos"}, Version: "v1.37.2"},
	}))
	macStatic, macDyn, macDyn2, macUnknown := randMAC(t), randMAC(t), randMAC(t), randMAC(t)
	newHost := func(name string, mac net.HardwareAddr, mutate func(*metalv1.Host)) client.ObjectKey {
		h := &metalv1.Host{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
			Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: []string{mac.String()}},
		}
		if mutate != nil {
			mutate(h)
		}
		must(t, env.Client.Create(ctx, h))
		return client.ObjectKeyFromObject(h)
	}
	static := newHost("node-50", macStatic, func(h *metalv1.Host) {
		h.Spec.Network = &metalv1.HostNetwork{Address: e.addr(50).String() + "/24", Gateway: e.pair.SrvIP.String(), Hostname: "node-50.lab"}
		h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Name: "m1"}
		h.Spec.BootRequest = &metalv1.BootRequest{ID: "boot-1", Purpose: "Provision"}
	})
	// Play the Host controller: it acted on the boot request.
	setHostStatus(t, static, func(h *metalv1.Host) {
		h.Status.State, h.Status.BootRequestID = metalv1.HostProvisioning, "boot-1"
	})
	dyn := newHost("dyn", macDyn, nil)
	newHost("dyn2", macDyn2, nil)

	comp, stop := e.start(t, e.options(t))
	srv := e.pair.SrvIP.String()
	outer := t // the restarted services must outlive the subtest that restarts them

	t.Run("PXE ROM gets the static address and the iPXE binary", func(t *testing.T) {
		got, err := e.udhcpc(t, macStatic, biosPXE...)
		must(t, err)
		want := map[string]string{"ip": e.addr(50).String(), "boot_file": "undionly.kpxe", "siaddr": srv, "router": srv, "hostname": "node-50.lab", "subnet": "255.255.255.0"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		e.bindClient(t, got["ip"])
		local := filepath.Join(e.dir, "got.kpxe")
		if out, err := e.pair.Cli.Output(20*time.Second, "busybox", "tftp", "-g", "-r", "undionly.kpxe", "-l", local, srv); err != nil {
			t.Fatalf("tftp: %v\n%s", err, out)
		}
		b, err := os.ReadFile(local)
		if err != nil || !bytes.Equal(b, e.bootf) {
			t.Fatalf("TFTP download differs (%v)", err)
		}
	})

	t.Run("iPXE gets its script, the kernel and the initrd", func(t *testing.T) {
		got, err := e.udhcpc(t, macStatic, ipxe...)
		must(t, err)
		scriptURL := "http://" + srv + "/boot/" + pxe.MACKey(macStatic) + ".ipxe"
		if got["boot_file"] != scriptURL {
			t.Fatalf("boot_file = %q, want %q", got["boot_file"], scriptURL)
		}
		e.bindClient(t, got["ip"])
		script, err := e.curl(t, "/boot/"+pxe.MACKey(macStatic)+".ipxe")
		must(t, err)
		base := "/artifacts/" + e.ns + "/fcos/"
		want := "#!ipxe\nkernel " + base + "kernel/vmlinuz initrd=initrd0 console=ttyS0\ninitrd --name initrd0 " + base + "initrd/0/initrd.img\nboot\n"
		if script != want {
			t.Fatalf("script:\n%s\nwant:\n%s", script, want)
		}
		for path, content := range map[string][]byte{base + "kernel/vmlinuz": e.kernel, base + "initrd/0/initrd.img": e.initrd} {
			local := filepath.Join(e.dir, "dl")
			if out, err := e.curl(t, path, "-o", local); err != nil {
				t.Fatalf("curl %s: %v %s", path, err, out)
			}
			b, err := os.ReadFile(local)
			if err != nil || sum(b) != sum(content) {
				t.Fatalf("%s: sha256 %s, want %s (%v)", path, sum(b), sum(content), err)
			}
		}
		if out, err := e.curl(t, "/config/tok123"); err != nil || out != "config for tok123" {
			t.Fatalf("mounted handler: %q %v", out, err)
		}
	})

	t.Run("once provisioned it boots from disk", func(t *testing.T) {
		setHostStatus(t, static, func(h *metalv1.Host) { h.Status.State = metalv1.HostProvisioned })
		waitFor(t, "the index sees Provisioned", func() bool {
			r, err := comp.Index.Lookup(ctx, macStatic)
			return err == nil && !r.PXE
		})
		got, err := e.udhcpc(t, macStatic, biosPXE...)
		must(t, err)
		if got["ip"] != e.addr(50).String() || got["boot_file"] != "" {
			t.Fatalf("ip=%q boot_file=%q, want the address and no boot file", got["ip"], got["boot_file"])
		}
		e.bindClient(t, got["ip"])
		script, err := e.curl(t, "/boot/"+pxe.MACKey(macStatic)+".ipxe")
		if err != nil || !strings.Contains(script, "\nexit 1\n") || strings.Contains(script, "kernel") {
			t.Fatalf("script for a provisioned Host: %v\n%s", err, script)
		}
	})

	var leased string
	t.Run("a dynamic lease is written to the Host", func(t *testing.T) {
		got, err := e.udhcpc(t, macDyn, biosPXE...)
		must(t, err)
		leased = got["ip"]
		if leased != e.addr(100).String() || got["boot_file"] != "" {
			t.Fatalf("ip=%q boot_file=%q, want %v and no boot file (Host not provisioning)", leased, got["boot_file"], e.addr(100))
		}
		h := &metalv1.Host{}
		must(t, env.Client.Get(ctx, dyn, h))
		if len(h.Status.Leases) != 1 || h.Status.Leases[0].MAC != pxe.MACKey(macDyn) || h.Status.Leases[0].IP != leased ||
			h.Status.Leases[0].ExpiresAt.Time.Before(time.Now().Add(50*time.Minute)) {
			t.Fatalf("Host status leases %+v", h.Status.Leases)
		}
		if a, ok := comp.Leases.AddressOf(macDyn); !ok || a.String() != leased {
			t.Fatalf("AddressOf = %v %v", a, ok)
		}
	})

	t.Run("after a restart the leased address goes to no other MAC", func(t *testing.T) {
		if leased == "" {
			t.Skip("no lease from the previous step")
		}
		stop()
		comp, _ = e.start(outer, e.options(outer))
		got, err := e.udhcpc(t, macDyn2, append([]string{"-r", leased}, biosPXE...)...)
		must(t, err)
		if got["ip"] == leased || got["ip"] == "" {
			t.Fatalf("second MAC got %q, leased to the first", got["ip"])
		}
		again, err := e.udhcpc(t, macDyn, biosPXE...)
		must(t, err)
		if again["ip"] != leased {
			t.Fatalf("first MAC got %q after the restart, had %q", again["ip"], leased)
		}
	})

	t.Run("an unknown MAC becomes one Discovered Host and gets nothing", func(t *testing.T) {
		name := index.DiscoveredHostName(macUnknown)
		for i := range 2 {
			if got, err := e.udhcpc(t, macUnknown, biosPXE...); err == nil {
				t.Fatalf("attempt %d: unknown MAC got a lease: %v", i, got)
			}
			waitFor(t, "the discovered Host exists", func() bool {
				return env.Client.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &metalv1.Host{}) == nil
			})
		}
		var list metalv1.HostList
		must(t, env.Client.List(ctx, &list, client.InNamespace(e.ns), client.MatchingLabels{index.LabelDiscovered: "true"}))
		if len(list.Items) != 1 || list.Items[0].Name != name || list.Items[0].Spec.BootMACs[0] != pxe.MACKey(macUnknown) ||
			list.Items[0].Spec.BootMode != "Legacy" || list.Items[0].Spec.BMC.Address != "" {
			t.Fatalf("discovered Hosts: %+v", list.Items)
		}
		// The Host controller would put it in Discovered; still nothing.
		setHostStatus(t, client.ObjectKeyFromObject(&list.Items[0]), func(h *metalv1.Host) { h.Status.State = metalv1.HostDiscovered })
		if got, err := e.udhcpc(t, macUnknown, ipxe...); err == nil {
			t.Fatalf("a Discovered Host got a lease: %v", got)
		}
		e.bindClient(t, e.addr(77).String())
		script, err := e.curl(t, "/boot/"+pxe.MACKey(macUnknown)+".ipxe")
		if err != nil || strings.Contains(script, "kernel") || !strings.Contains(script, "not registered or not accepted") {
			t.Fatalf("script for a discovered Host: %v\n%s", err, script)
		}
	})
}

// provisioningHost creates a MachineClass (kernel and initrd from
// artifacts/<dir>), a Machine and a manual:// Host holding it with a
// Provision boot request acknowledged, as the Machine and Host controllers
// leave a Host being provisioned: DHCP gives boot options only to those.
// It returns the Host's boot MAC.
func (e *e2e) provisioningHost(t *testing.T, ctx context.Context, name string) net.HardwareAddr {
	t.Helper()
	kernel := randBytes(t, 4<<10)
	must(t, os.MkdirAll(filepath.Join(e.dir, "artifacts", name), 0o755))
	must(t, os.WriteFile(filepath.Join(e.dir, "artifacts", name, "vmlinuz"), kernel, 0o644))
	must(t, os.WriteFile(filepath.Join(e.dir, "artifacts", name, "initrd"), kernel, 0o644))
	must(t, env.Client.Create(ctx, &metalv1.MachineClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: metalv1.MachineClassSpec{Kernel: metalv1.Artifact{URL: name + "/vmlinuz", SHA256: sum(kernel)},
			Initrds: []metalv1.Artifact{{URL: name + "/initrd", SHA256: sum(kernel)}},
			Config:  metalv1.ConfigTemplate{Format: "cloud-init", Template: "#cloud-config\n"}},
	}))
	must(t, env.Client.Create(ctx, &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: name}, Version: "v1.37.2"},
	}))
	mac := randMAC(t)
	h := &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: []string{mac.String()},
			ConsumerRef: &corev1.ObjectReference{Kind: "Machine", Name: name},
			BootRequest: &metalv1.BootRequest{ID: "boot-1", Purpose: "Provision"}},
	}
	must(t, env.Client.Create(ctx, h))
	setHostStatus(t, client.ObjectKeyFromObject(h), func(h *metalv1.Host) {
		h.Status.State, h.Status.BootRequestID = metalv1.HostProvisioning, "boot-1"
	})
	return mac
}
