package machine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/internal/ratelimit"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/pxe/netboot"
)

// bootServices is the network side of a second `anvil serve` (the lab
// runs DHCP, TFTP and HTTP boot in their own process): the boot index and
// config delivery over its own manager's cache, serving HTTP boot on
// loopback. Hosts are told apart by their static address (proxy DHCP).
type bootServices struct {
	srv *httptest.Server
	ix  *index.Index
}

// waitIndex waits until the boot index (what the boot services answer
// from) has Host mac in network boot bootReq.
func (b *bootServices) waitIndex(t *testing.T, mac, bootReq string) {
	t.Helper()
	hw, err := net.ParseMAC(mac)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the boot index to see boot "+bootReq, func(context.Context) (bool, string) {
		h, ok := b.ix.Host(hw)
		if !ok {
			return false, "no Host for " + mac
		}
		return index.Decide(h).PXE && h.Status.BootRequestID == bootReq, "acked " + h.Status.BootRequestID
	})
}

func (e *machineEnv) startBootServices(t *testing.T) *bootServices {
	t.Helper()
	env := apiServer(t)
	skip := true
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	log := logr.FromSlogHandler(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.Level(-2)})).WithName("boot")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		Controller: config.Controller{SkipNameValidation: &skip}, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ix, err := index.New(ctx, index.Options{Informers: mgr.GetCache(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	w, err := delivery.Wire(ctx, delivery.WireOptions{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Indexer: mgr.GetFieldIndexer(), Clientset: e.cs,
		CACertPEM: env.Config.CAData, APIServerEndpoint: env.Config.Host,
		Limiter: ratelimit.New(ratelimit.Options{Burst: 1000}), ScriptRate: delivery.ScriptRate{Burst: 1000}, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	comp := netboot.Components{Index: ix}
	scripts, err := w.Scripts(comp)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := httpboot.New(httpboot.Options{Scripts: scripts, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.HTTPHook(comp, hs); err != nil {
		t.Fatal(err)
	}
	done := startManager(ctx, t, mgr, "boot services manager")
	sctx, scancel := context.WithTimeout(ctx, 60*time.Second)
	defer scancel()
	if !mgr.GetCache().WaitForCacheSync(sctx) {
		t.Fatal("boot services cache did not sync")
	}
	if err := ix.WaitForSync(sctx); err != nil {
		t.Fatal(err)
	}
	b := &bootServices{srv: httptest.NewServer(hs.Handler()), ix: ix}
	t.Cleanup(func() {
		b.srv.Close()
		hs.Close()
		cancel()
		<-done
	})
	return b
}

// get fetches path (or a whole URL) from the loopback source address
// from, as a host at that address would.
func (b *bootServices) get(t *testing.T, from, path string) (int, string) {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	url := path
	if !strings.HasPrefix(url, "http") {
		url = b.srv.URL + path
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

var ignitionURLRe = regexp.MustCompile(`ignition\.config\.url=(\S+cred=([A-Za-z0-9_-]{43}))`)

// setBootID plays the kubelet posting its Node's boot ID.
func (e *machineEnv) setBootID(t *testing.T, n *corev1.Node, id string) {
	t.Helper()
	ctx := context.Background()
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
		t.Fatal(err)
	}
	n.Status.NodeInfo.BootID = id
	if err := e.c.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// TestLiveHostRejoinsAfterReboot: while a Machine of a diskless class
// runs, its Host carries an acknowledged Rejoin boot request, so a reboot
// network-boots it with a one-time credential whose config installs the
// kubelet the Machine runs now (after an in-place upgrade, not the first
// version). A second script request in that boot gets no credential. The
// Node's new boot ID re-arms the Host with a new request ID, the Machine
// stays Running throughout and nothing is reinstalled, and the next boot's
// credential is a new one. A Machine of a class that installs to disk gets
// no Rejoin request.
func TestLiveHostRejoinsAfterReboot(t *testing.T) {
	e := newMachineEnv(t, 2, fastOptions())
	ctx := context.Background()
	e.addUpgradableClass(t) // flatcar-worker: live, kubelets v1.37.2 and v1.36.4
	disk := loadExample(t, "machineclass-cloudinit.yaml")
	disk.Namespace, disk.Name = e.ns, "disk"
	noWipe := false
	disk.Spec.Wipe = &noWipe
	mustCreate(t, e.c, disk)
	waitConfigValid(t, e.c, client.ObjectKeyFromObject(disk), metav1.ConditionTrue)

	const hostIP = "127.0.0.3" // the live host's static address; requests from it are the host's
	h := e.addHost(t, 0, map[string]string{"role": "live"})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(h), h); err != nil {
			return err
		}
		h.Spec.Network = &metalv1.HostNetwork{Address: hostIP + "/8"}
		return e.c.Update(ctx, h)
	}); err != nil {
		t.Fatal(err)
	}
	e.addHost(t, 1, map[string]string{"role": "disk"})
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.waitHostState(t, "host-1", metalv1.HostAvailable)
	boot := e.startBootServices(t)
	mac := h.Spec.BootMACs[0]

	// An image class: Running, and its Host still has the provisioning
	// request (an arming would have been written before the Running status).
	mustCreate(t, e.c, &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m-disk", Namespace: e.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "disk"}, Version: kubeletVersion,
		HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"role": "disk"}}}})
	mDisk, _ := e.runMachine(t, "m-disk")
	e.waitHostState(t, "host-1", metalv1.HostProvisioned)
	h1, err := e.host(ctx, "host-1")
	if err != nil {
		t.Fatal(err)
	}
	if br := h1.Spec.BootRequest; br == nil || br.Purpose != metalv1.BootPurposeProvision || br.ID != mDisk.Status.Boot.RequestID {
		t.Fatalf("Host of an image-class Machine: boot request %+v, want its provisioning boot %s", br, mDisk.Status.Boot.RequestID)
	}

	// The live Machine runs v1.36.4 and its Host is armed.
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m-live", Namespace: e.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"}, Version: oldVersion,
		HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"role": "live"}}}}
	mustCreate(t, e.c, m)
	n := e.runningMachine(t, m)
	e.setBootID(t, n, "boot-1")
	provision := ""
	armed := e.waitArmed(t, "host-0", func(m *metalv1.Machine) bool {
		provision = m.Status.Boot.RequestID
		return m.Status.NodeBootID == "boot-1"
	}, "")

	// Upgraded in place to v1.37.2.
	e.setVersion(t, "m-live", kubeletVersion)
	eventually(t, 30*time.Second, "upgrade plan published", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m-live")
		return m.Status.Upgrade != nil && m.Status.Upgrade.State == metalv1.UpgradeApplying, describe(m)
	})
	if err := e.playAgent(ctx, m, true, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "upgrade verified", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m-live")
		return m.Status.Upgrade.State == metalv1.UpgradeVerified && m.Status.Version == kubeletVersion && m.Status.Phase == metalv1.MachineRunning, describe(m)
	})

	// The host reboots: iPXE asks for its script, from its address.
	boot.waitIndex(t, mac, armed)
	code, script := boot.get(t, hostIP, "/boot/"+mac+".ipxe")
	match := ignitionURLRe.FindStringSubmatch(script)
	if code != http.StatusOK || match == nil {
		t.Fatalf("script of the rebooting live host: HTTP %d, no credential:\n%s", code, script)
	}
	url1, cred1 := match[1], match[2]
	// The config carries the version the Machine runs now.
	var cfg string
	eventually(t, 30*time.Second, "the rejoin config", func(context.Context) (bool, string) {
		code, cfg = boot.get(t, hostIP, url1)
		return code == http.StatusOK, "HTTP " + http.StatusText(code)
	})
	for _, want := range []string{"Description=kubelet " + kubeletVersion, "/kubelet/" + kubeletVersion + "/kubelet", "--hostname-override=m-live"} {
		if !strings.Contains(cfg, want) {
			t.Fatalf("rejoin config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(cfg, oldVersion) {
		t.Fatalf("rejoin config names the first version %s:\n%s", oldVersion, cfg)
	}
	if infos, err := token.List(ctx, e.cs, token.ListOptions{MachineUID: m.UID}); err != nil || len(infos) != 1 {
		t.Fatalf("bootstrap tokens after the rejoin config: %d, %v; want 1", len(infos), err)
	}
	// A second script request of this boot gets none.
	if _, again := boot.get(t, hostIP, "/boot/"+mac+".ipxe"); strings.Contains(again, "cred=") || !strings.Contains(again, "(second_request)") {
		t.Fatalf("second script of the rejoin boot:\n%s", again)
	}

	// Its kubelet rejoins: the Node posts a new boot ID.
	e.setBootID(t, n, "boot-2")
	rearmed := e.waitArmed(t, "host-0", func(m *metalv1.Machine) bool { return m.Status.Reboots == 1 }, armed)
	m, err = e.machine(ctx, "m-live")
	if err != nil {
		t.Fatal(err)
	}
	if m.Status.Phase != metalv1.MachineRunning || m.Status.FailureReason != "" || m.Status.Boot.RequestID != provision || m.Status.Boot.Purpose != metalv1.BootPurposeProvision {
		t.Fatalf("after the rejoin (armed %s -> %s): %s boot=%+v, want Running on its first provisioning boot %s", armed, rearmed, describe(m), m.Status.Boot, provision)
	}
	// Arming touched no power: the BMC saw the provisioning boot's power-on
	// only (an action for a request is sent before its acknowledgement).
	var power []string
	for _, ev := range e.sim.Events() {
		if ev.SystemID == "node-0" {
			power = append(power, fmt.Sprintf("%+v", ev))
		}
	}
	if len(power) != 1 {
		t.Fatalf("BMC power events of the live host: %v, want the provisioning power-on only", power)
	}
	eventually(t, 30*time.Second, "the rejoin's bootstrap token revoked", func(ctx context.Context) (bool, string) {
		infos, err := token.List(ctx, e.cs, token.ListOptions{MachineUID: m.UID})
		return err == nil && len(infos) == 0, "tokens left"
	})

	// The next reboot gets a new credential, and the spent one is refused.
	boot.waitIndex(t, mac, rearmed)
	code, script = boot.get(t, hostIP, "/boot/"+mac+".ipxe")
	match = ignitionURLRe.FindStringSubmatch(script)
	if code != http.StatusOK || match == nil || match[2] == cred1 {
		t.Fatalf("script of the next reboot: HTTP %d, want a new credential:\n%s", code, script)
	}
	// (Within its grace the cache may still hold the old credential for
	// a moment.)
	eventually(t, 30*time.Second, "the first rejoin's credential refused", func(context.Context) (bool, string) {
		code, _ := boot.get(t, hostIP, url1)
		return code == http.StatusForbidden, "HTTP " + http.StatusText(code)
	})
	if logs := e.logs.String(); strings.Contains(logs, cred1) || strings.Contains(logs, match[2]) {
		t.Fatal("a boot credential appears in the logs")
	}
}

// waitArmed waits until Host name carries a Rejoin request other than
// previous that the Host controller acknowledged, while its Machine stays
// Running and machineOK holds, and returns the request's ID.
func (e *machineEnv) waitArmed(t *testing.T, name string, machineOK func(*metalv1.Machine) bool, previous string) string {
	t.Helper()
	var id string
	eventually(t, 30*time.Second, "Host "+name+" armed for a rejoin", func(ctx context.Context) (bool, string) {
		h, err := e.host(ctx, name)
		if err != nil {
			return false, err.Error()
		}
		br := h.Spec.BootRequest
		if br == nil || br.Purpose != metalv1.BootPurposeRejoin || br.ID == previous || h.Status.BootRequestID != br.ID || h.Status.State != metalv1.HostProvisioned {
			return false, "host " + string(h.Status.State) + " acked " + h.Status.BootRequestID
		}
		m, err := e.machine(ctx, h.Spec.ConsumerRef.Name)
		if err != nil {
			return false, err.Error()
		}
		id = br.ID
		return m.Status.Phase == metalv1.MachineRunning && machineOK(m), describe(m)
	})
	return id
}
