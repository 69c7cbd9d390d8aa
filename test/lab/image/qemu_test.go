package image

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent/server/kube"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/render"
	"anvil.dev/anvil/test/netnstest"
)

// TestQEMULabJoin boots the lab image in QEMU (direct kernel boot, TCG
// without KVM) with configs rendered from the lab MachineClass, against a
// real kube-apiserver and kube-controller-manager, with Anvil's CSR
// approver, MachineClass controller and agent API:
//
//   - provision: Ignition fetches the config and the kubelet; the kubelet,
//     run by anvil-agent, bootstraps with the minted token, Anvil approves
//     the node name of the token's Machine, kube-controller-manager signs,
//     and the Node becomes Ready with the rendered name, providerID and
//     kubelet version; the agent reports to the agent API;
//   - wipe: that VM is killed, its Host set Deprovisioning, and the image
//     booted again without a config (as Anvil's wipe boot); the agent, its
//     config restored from the disk, gets the wipe action, wipes the disk
//     and reports: Host Wiped=True, the disk's first and last MiB zero;
//   - no-agent-credential: a config without Agent.Credential (what Anvil's
//     config endpoint renders today) still joins: the init runs the kubelet
//     itself and says so on the console.
//
// Runs only with ANVIL_QEMU_TEST=1 (root, qemu-system-x86, make tools).
func TestQEMULabJoin(t *testing.T) {
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to boot QEMU VMs (about 4 minutes)")
	}
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "qemu-system-x86_64", "ip")
	repo := needBuildInputs(t)
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		_, err := os.Stat(filepath.Join(repo, "bin", b))
		netnstest.Require(t, err == nil, "bin/%s missing: run `make tools`", b)
	}
	buildStart := time.Now()
	img := buildImage(t)
	buildTook := time.Since(buildStart)
	kubeletBin := filepath.Join(repo, "bin", "kubelet")
	kubeletSHA, err := FileSHA256(kubeletBin)
	must(t, err)

	l := newLab(t, repo)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ns := l.namespace()
	apiEndpoint := "https://" + netip.AddrPortFrom(l.bridgeIP, 6443).String()

	// The class, validated by Anvil's MachineClass controller.
	mc, err := MachineClass(ClassOptions{Namespace: ns, Image: img, KubeletSHA256: kubeletSHA, APIServerEndpoint: apiEndpoint})
	must(t, err)
	must(t, l.admin.Create(ctx, mc))
	waitFor(t, ctx, l.admin, mc, "ConfigValid=True", 60*time.Second, func(c *metalv1.MachineClass) bool {
		cond := meta.FindStatusCondition(c.Status.Conditions, metalv1.ConditionConfigValid)
		if cond != nil && cond.Status == metav1.ConditionFalse {
			t.Fatalf("MachineClass rejected: %s", cond.Message)
		}
		return cond != nil && cond.Status == metav1.ConditionTrue
	})
	kubeletPath := index.ArtifactURLPrefix + index.KubeletPath(types.NamespacedName{Namespace: ns, Name: mc.Name}, mc.Spec.Kubelets[0])
	l.mu.Lock()
	l.files[kubeletPath] = kubeletBin
	l.mu.Unlock()
	caPEM, err := os.ReadFile(l.cp.CACert)
	must(t, err)

	hosts := []*labHost{
		{name: "vm-1", mac: net.HardwareAddr{0x52, 0x54, 0x00, 0x1a, 0xb0, 0x01}, ip: l.subnet.Addr().Next().Next().Next(), credential: true},
		{name: "vm-2", mac: net.HardwareAddr{0x52, 0x54, 0x00, 0x1a, 0xb0, 0x02}, ip: l.subnet.Addr().Next().Next().Next().Next()},
	}
	for _, h := range hosts {
		l.prepareHost(ctx, h, mc, caPEM, apiEndpoint, l.url(kubeletPath), kubeletSHA)
	}
	l.startDHCP(hosts)

	const diskSize = 64 << 20
	disk := filepath.Join(l.dir, "vm-1.disk")
	must(t, os.WriteFile(disk, nil, 0o600))
	must(t, os.Truncate(disk, diskSize))

	vm1 := hosts[0]
	provisioned := t.Run("provision", func(t *testing.T) {
		v := l.bootVM(t, vmOptions{name: "provision", img: img, mac: vm1.mac, disk: disk, args: vm1.bootArgs(mc), memoryMB: 1024})
		node, readyAfter := waitNodeReady(t, ctx, l, v, vm1.machine.Name, 10*time.Minute)
		checkNode(t, node, vm1)
		// The agent in the VM reported with its credential.
		waitFor(t, ctx, l.admin, vm1.host, "an agent report with the kubelet version", 2*time.Minute, func(h *metalv1.Host) bool {
			return h.Status.Agent != nil && h.Status.Agent.KubeletVersion == DefaultKubeletVersion
		})
		checkConsole(t, v, []string{MarkerNetworkUp, MarkerConfigApplied, MarkerStateSaved, MarkerAgentStarted, MarkerKubeletJoined, MarkerKubeletHealthy})
		checkNoSecrets(t, v, vm1)
		serial := v.serialLog()
		rss := v.peakRSS()
		v.stop()
		t.Logf("MEASURED: image build %v (cached %v); VM start -> Node Ready %v; QEMU peak RSS %s; guest %s",
			buildTook.Round(time.Millisecond), img.Cached, readyAfter.Round(100*time.Millisecond), rss, guestMemory(serial))
	})

	t.Run("wipe", func(t *testing.T) {
		if !provisioned {
			t.Skip("the provisioning boot failed")
		}
		before, err := os.ReadFile(disk)
		must(t, err)
		if !bytes.HasPrefix(before, []byte(StateMagic)) {
			t.Fatalf("the provisioning boot left no state on the disk (first bytes %q)", before[:32])
		}
		if !bytes.Contains(before[:1<<20], []byte(vm1.cred)) {
			t.Errorf("the saved state does not hold the agent config")
		}
		// Something the wipe must erase at the end of the disk, too.
		f, err := os.OpenFile(disk, os.O_WRONLY, 0)
		must(t, err)
		_, err = f.WriteAt([]byte("ANVIL-LAB-TEST-END-OF-DISK"), diskSize-4096)
		must(t, err)
		must(t, f.Close())
		h := vm1.host
		must(t, l.admin.Get(ctx, client.ObjectKeyFromObject(h), h))
		h.Status.State = metalv1.HostDeprovisioning
		must(t, l.admin.Status().Update(ctx, h))
		waitFor(t, ctx, l.cached, h, "Deprovisioning in the agent API's cache", 30*time.Second, func(h *metalv1.Host) bool {
			return h.Status.State == metalv1.HostDeprovisioning
		})

		v := l.bootVM(t, vmOptions{name: "wipe", img: img, mac: vm1.mac, disk: disk, args: mc.Spec.KernelArgs, memoryMB: 1024})
		h = waitFor(t, ctx, l.admin, h, "Wiped", 6*time.Minute, func(h *metalv1.Host) bool {
			return meta.FindStatusCondition(h.Status.Conditions, kube.ConditionWiped) != nil
		})
		wipedAfter := time.Since(v.start)
		cond := meta.FindStatusCondition(h.Status.Conditions, kube.ConditionWiped)
		if cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "vda") {
			t.Errorf("Wiped condition %s: %s, want True naming vda", cond.Status, cond.Message)
		}
		checkConsole(t, v, []string{MarkerStateRestored, MarkerAgentStarted})
		checkNoSecrets(t, v, vm1)
		v.stop()
		after, err := os.ReadFile(disk)
		must(t, err)
		if !allZero(after[:1<<20]) || !allZero(after[diskSize-(1<<20):]) {
			t.Errorf("the disk's first or last MiB is not zero after the wipe (starts %q)", after[:32])
		}
		t.Logf("MEASURED: wipe boot: VM start -> Host Wiped %v", wipedAfter.Round(100*time.Millisecond))
	})

	t.Run("no-agent-credential", func(t *testing.T) {
		vm2 := hosts[1]
		v := l.bootVM(t, vmOptions{name: "no-credential", img: img, mac: vm2.mac, args: vm2.bootArgs(mc), memoryMB: 1024})
		node, readyAfter := waitNodeReady(t, ctx, l, v, vm2.machine.Name, 10*time.Minute)
		checkNode(t, node, vm2)
		checkConsole(t, v, []string{MarkerConfigApplied, MarkerKubeletJoined, MarkerKubeletHealthy}, FailPrefix+"no agent credential")
		checkNoSecrets(t, v, vm2)
		if strings.Contains(v.serialLog(), MarkerAgentStarted) {
			t.Errorf("serial console says the agent started, without a credential")
		}
		v.stop()
		t.Logf("MEASURED: without the agent: VM start -> Node Ready %v", readyAfter.Round(100*time.Millisecond))
	})
}

// labHost is one VM's Host, Machine and rendered config.
type labHost struct {
	name       string
	mac        net.HardwareAddr
	ip         netip.Addr
	credential bool // render an agent credential into the config

	host    *metalv1.Host
	machine *metalv1.Machine
	cred    string
	vars    render.Vars
	// configURL is what the kernel command line carries; configSecret is
	// the credential in its query.
	configURL, configSecret string
}

func (h *labHost) configPath() string { return "/config/" + h.name + ".ign" }

// bootArgs are what Anvil's iPXE script passes on a provisioning boot.
func (h *labHost) bootArgs(mc *metalv1.MachineClass) []string {
	return slices.Concat(mc.Spec.KernelArgs, []string{"ignition.config.url=" + h.configURL, delivery.IgnitionPlatformArg})
}

// prepareHost creates the Host held by a Machine (as the Machine controller
// would leave them), mints the bootstrap token for both, issues the agent
// credential, renders the class's config as the config endpoint would and
// serves it.
func (l *lab) prepareHost(ctx context.Context, h *labHost, mc *metalv1.MachineClass, caPEM []byte, apiEndpoint, kubeletURL, kubeletSHA string) {
	t := l.t
	ns := mc.Namespace
	h.host = &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: h.name},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: []string{h.mac.String()}},
	}
	must(t, l.admin.Create(ctx, h.host))
	h.machine = &metalv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lab-" + l.id + "-" + h.name},
		Spec:       metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: mc.Name}, Version: DefaultKubeletVersion},
	}
	must(t, l.admin.Create(ctx, h.machine))
	h.host.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", APIVersion: metalv1.GroupVersion.String(), Namespace: ns, Name: h.machine.Name, UID: h.machine.UID}
	must(t, l.admin.Update(ctx, h.host))
	h.host.Status.State = metalv1.HostProvisioning
	must(t, l.admin.Status().Update(ctx, h.host))
	if h.credential {
		var err error
		h.cred, err = kube.IssueCredential(ctx, l.admin, h.host, nil)
		must(t, err)
	}
	tok, err := token.Mint(ctx, l.kube, token.MintOptions{TTL: 30 * time.Minute, Owner: token.Owner{
		Host:    token.ObjectRef{Namespace: ns, Name: h.host.Name, UID: h.host.UID},
		Machine: token.ObjectRef{Namespace: ns, Name: h.machine.Name, UID: h.machine.UID},
	}})
	must(t, err)
	caHash, err := token.CACertHash(caPEM)
	must(t, err)
	h.vars = render.Vars{
		Hostname: h.machine.Name, MACs: []string{h.mac.String()}, Addresses: []string{h.ip.String()},
		Labels: map[string]string{}, Extra: map[string]string{}, SecretExtra: map[string]string{},
		Join: render.Join{
			APIServerEndpoint: apiEndpoint, Token: tok.Value(), CACertHash: caHash, CACertPEM: string(caPEM),
			NodeName: h.machine.Name, ProviderID: delivery.ProviderIDPrefix + string(h.host.UID),
			KubeletVersion: DefaultKubeletVersion, KubeletURL: kubeletURL, KubeletSHA256: kubeletSHA,
		},
		Agent: render.Agent{Endpoint: l.url(""), Credential: h.cred},
	}
	cfg, err := render.NewRenderer(render.Options{}).Ignition(ctx, mc.Spec.Config.Template, render.Variant(mc.Spec.Config.Variant), h.vars)
	must(t, err)
	l.mu.Lock()
	l.blobs[h.configPath()] = cfg
	l.mu.Unlock()
	// Like Anvil's config URLs, this one carries a secret in its query.
	h.configSecret = randomID(16)
	h.configURL = l.url(h.configPath()) + "?cred=" + h.configSecret
}

// checkNoSecrets: the console shows none of the host's secrets.
func checkNoSecrets(t *testing.T, v *vm, h *labHost) {
	t.Helper()
	serial := v.serialLog()
	for what, secret := range map[string]string{"config URL credential": h.configSecret, "bootstrap token": h.vars.Join.Token, "agent credential": h.cred} {
		if secret != "" && strings.Contains(serial, secret) {
			t.Errorf("%s: the serial console shows the %s", v.name, what)
		}
	}
}

// checkConsole waits (briefly: the console may lag the API) for every
// marker in want, then fails on failure markers other than the allowed
// ones, and on crashes.
func checkConsole(t *testing.T, v *vm, want []string, allowedFailures ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, m := range want {
		for !strings.Contains(v.serialLog(), m) && time.Now().Before(deadline) {
			time.Sleep(500 * time.Millisecond)
		}
		if !strings.Contains(v.serialLog(), m) {
			t.Errorf("%s: serial console lacks %q", v.name, m)
		}
	}
	for _, line := range strings.Split(v.serialLog(), "\n") {
		switch {
		case strings.Contains(line, "Segmentation fault"), strings.Contains(line, "Kernel panic"):
			t.Errorf("%s: crash on the console: %s", v.name, line)
		case strings.Contains(line, FailPrefix):
			ok := false
			for _, a := range allowedFailures {
				ok = ok || strings.Contains(line, a)
			}
			if !ok {
				t.Errorf("%s: %s", v.name, strings.TrimSpace(line))
			}
		}
	}
	for _, a := range allowedFailures {
		if !strings.Contains(v.serialLog(), a) {
			t.Errorf("%s: serial console lacks %q", v.name, a)
		}
	}
}

// checkNode: the Node is the one the config named.
func checkNode(t *testing.T, node *corev1.Node, h *labHost) {
	t.Helper()
	if node.Spec.ProviderID != h.vars.Join.ProviderID || !strings.HasPrefix(node.Spec.ProviderID, delivery.ProviderIDPrefix) {
		t.Errorf("Node providerID %q, want %q", node.Spec.ProviderID, h.vars.Join.ProviderID)
	}
	if got := node.Status.NodeInfo.KubeletVersion; got != DefaultKubeletVersion {
		t.Errorf("Node kubeletVersion %q, want %s", got, DefaultKubeletVersion)
	}
}

// waitNodeReady polls the Node until it is Ready, the VM exits or timeout.
func waitNodeReady(t *testing.T, ctx context.Context, l *lab, v *vm, name string, timeout time.Duration) (*corev1.Node, time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		n := &corev1.Node{}
		err := l.admin.Get(ctx, client.ObjectKey{Name: name}, n)
		switch {
		case err == nil:
			c := nodeReady(n)
			if c != nil && c.Status == corev1.ConditionTrue {
				return n, time.Since(v.start)
			}
			if c != nil && c.Message != last {
				last = c.Message
				t.Logf("node %s: Ready=%s %s: %s", name, c.Status, c.Reason, c.Message)
			}
		case !apierrors.IsNotFound(err):
			t.Logf("reading node %s: %v", name, err)
		}
		select {
		case <-v.exited:
			t.Fatalf("the VM exited before node %s was Ready", name)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
	t.Fatalf("node %s not Ready after %v", name, timeout)
	return nil, 0
}

func nodeReady(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// waitFor polls obj through c until cond holds.
func waitFor[T client.Object](t *testing.T, ctx context.Context, c client.Reader, obj T, what string, timeout time.Duration, cond func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err == nil && cond(obj) {
			return obj
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s: never %s within %v", obj.GetNamespace(), obj.GetName(), what, timeout)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// guestMemory is the init's memory line, if it printed one.
func guestMemory(serial string) string {
	for _, l := range strings.Split(serial, "\n") {
		if i := strings.Index(l, MarkerPrefix+"memory: "); i >= 0 {
			return strings.TrimSpace(l[i+len(MarkerPrefix):])
		}
	}
	return "no memory line"
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
