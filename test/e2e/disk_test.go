package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/drivers" // redfish, ipmi: the test power-cycles a Host itself
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/lab/hostos"
	"anvil.dev/anvil/test/lab/image"
	"anvil.dev/anvil/test/lab/stack"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/pxetest"
)

// The web image hack/hostimage imports into the Debian image's containerd
// (there is no registry in the lab), and the port it serves on.
const (
	webImage = "anvil.local/web:1"
	webPort  = 8080
)

// The patch upgrade of the disk test: real kubelets hack/tools builds.
const (
	patchFrom = stack.PatchKubeletVersion
	patchTo   = stack.OldKubeletVersion
)

// patchUpgradeKeepsContainers upgrades m's kubelet by a patch release in
// place (skipDrainForPatch: no drain) while a client in the lab polls the
// web pod on its Node: no request fails, and the pod's containers are the
// same ones before and after (the kubelet restarted under them).
func (e *e2e) patchUpgradeKeepsContainers(ctx context.Context, m *metalv1.Machine, pods []corev1.Pod) {
	e.t.Helper()
	var pod *corev1.Pod
	for i := range pods {
		if pods[i].Spec.NodeName == m.Status.NodeRef.Name {
			pod = &pods[i]
		}
	}
	if pod == nil {
		e.t.Fatalf("no web pod on %s", m.Status.NodeRef.Name)
	}
	ids := containerIDs(pod)
	boots := e.bootIDs(ctx, []*metalv1.Machine{m})
	stop := e.pollWeb(net.JoinHostPort(pod.Status.HostIP, fmt.Sprint(webPort)))
	e.anvil("machines", "upgrade", m.Name, "--version", patchTo, "-n", ns)
	e.checkUpgraded(ctx, m.Name, patchTo, boots)
	ok, failed, last := stop()
	after := &corev1.Pod{}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), after); err != nil {
		e.t.Fatal(err)
	}
	if got := containerIDs(after); got != ids {
		e.t.Fatalf("the web pod's containers changed during the patch upgrade: %s, were %s", got, ids)
	}
	if failed > 0 || ok == 0 {
		e.t.Fatalf("polling the web pod during the patch upgrade: %d answered, %d failed (last: %s)", ok, failed, last)
	}
	e.logf("patch upgrade %s -> %s of %s: web pod polled %d times, none failed, same containers %s", patchFrom, patchTo, m.Name, ok, ids)
}

func containerIDs(p *corev1.Pod) string {
	var ids []string
	for _, c := range p.Status.ContainerStatuses {
		ids = append(ids, c.ContainerID)
	}
	return strings.Join(ids, ",")
}

// pollWeb GETs / from addr inside the lab's namespace every 100 ms until
// the returned stop is called, which says how many answered 200 and how
// many did not. The socket is opened on the goroutine that Lab.Go keeps in
// the namespace (net/http would dial on goroutines of its own).
func (e *e2e) pollWeb(addr string) (stop func() (ok, failed int, last string)) {
	e.t.Helper()
	done, finished := make(chan struct{}), make(chan struct{})
	var ok, failed int
	var last string
	get := func() error {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return nil
	}
	err := e.st.Lab.Go(func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if err := get(); err != nil {
				failed, last = failed+1, err.Error()
			} else {
				ok++
			}
		}
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return func() (int, int, string) {
		close(done)
		<-finished
		return ok, failed, last
	}
}

// diskImage is the built Debian image (make host-image), or a skip.
func diskImage(t *testing.T) string {
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "bin", "hostimage", "debian-12-amd64.raw")
	if _, err := os.Stat(p); err != nil {
		need.OrSkip(t, "bin/hostimage/debian-12-amd64.raw missing: run make host-image")
	}
	return p
}

// TestLabDiskInstall: two Hosts (IPMI + SeaBIOS, Redfish + OVMF) install
// the Debian image to disk, boot it, join with real containerd and serve a
// web Deployment behind a PodDisruptionBudget; then one is power-cycled
// through its BMC and comes back from its disk as the same Node, its
// Machine Running throughout, no reinstall and no new token, on the kubelet
// a patch upgrade (containers kept, no failed request) put there and the
// other's failed upgrade rolled back from; then the whole
// rack loses power and comes back; then a deleted Machine's disk is wiped
// and its Host installed again; then deploy/ runs Anvil as a pod on one of
// the Nodes, and that Anvil takes a new Host to Available.
func TestLabDiskInstall(t *testing.T) {
	gateE2E(t)
	img := diskImage(t)
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{patchFrom, patchTo} {
		if _, err := os.Stat(filepath.Join(root, "bin", "kubelet-"+v)); err != nil {
			need.OrSkip(t, "bin/kubelet-%s missing: run make tools", v)
		}
	}
	e := startLabWith(t, []lab.HostOptions{
		{Name: "vm-bios", BMC: lab.IPMI, DiskMiB: 4096, MemoryMiB: 2048},
		{Name: "vm-uefi", BMC: lab.Redfish, Firmware: pxetest.UEFI, DiskMiB: 4096, MemoryMiB: 2048},
	}, []string{"--machine-boot-timeout", "25m", "--machine-join-timeout", "20m"}, func(o *stack.Options) { o.DiskImage = img })
	st, ctx := e.st, context.Background()
	if st.DiskClass == nil {
		t.Fatal("the stack installed no disk class")
	}
	e.importHosts("vm-bios", "vm-uefi")
	// On the patch release before OldKubeletVersion: d1 is patch-upgraded
	// in place later, d2's upgrade to a kubelet that never gets healthy
	// rolls back.
	for _, m := range []string{"d1", "d2"} {
		e.anvil("machines", "create", m, "--class", st.DiskClass.Name, "--selector", "anvil.dev/lab="+labName, "--version", patchFrom, "-n", ns)
	}
	machines := map[string]*metalv1.Machine{}
	for _, name := range []string{"d1", "d2"} {
		machines[name] = e.waitPhase(name, 40*time.Minute, metalv1.MachineRunning)
	}
	e.checkInvariants()
	for _, m := range machines {
		h := e.host(m.Status.HostRef.Name)
		in := h.Status.Install
		if in == nil || in.Outcome != metalv1.InstallInstalled || in.ImageSHA256 != st.DiskClass.Spec.Image.SHA256 {
			t.Fatalf("Host %s: install %+v", h.Name, in)
		}
		n := e.node(m.Status.NodeRef.Name)
		if !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://") || !strings.Contains(n.Status.NodeInfo.OSImage, "Debian") {
			t.Fatalf("Node %s runs %q on %q, want containerd on Debian", n.Name, n.Status.NodeInfo.ContainerRuntimeVersion, n.Status.NodeInfo.OSImage)
		}
		e.waitFirstBootDone(h.Name)
		e.logf("Host %s (%s): image on %s (%d bytes), Node %s Ready: %s, %s, %s", h.Name, h.Spec.BootMode, in.Device, in.BytesWritten, n.Name,
			n.Status.NodeInfo.OSImage, n.Status.NodeInfo.ContainerRuntimeVersion, n.Status.NodeInfo.KubeletVersion)
	}

	pods, stopBinder := e.deployWeb(ctx, 2)
	for _, p := range pods {
		e.logf("pod %s on %s answers: %s", p.Name, p.Spec.NodeName, e.httpGet(ctx, fmt.Sprintf("http://%s:%d/", p.Status.HostIP, webPort)))
	}
	// From here d1 and d2 go their own ways at once, each VM on its own
	// core: d1 is patch-upgraded and rebooted; d2's upgrade fails and rolls
	// back, then it is deleted, wiped and installed again as d3. Then the
	// rack (d1 and d3) loses power.
	e.addBrokenKubelets(ctx, st.DiskClass.Name)
	var d3 *metalv1.Machine
	t.Run("hosts", func(t *testing.T) {
		t.Run("d1", func(t *testing.T) {
			t.Parallel()
			e := e.with(t)
			e.patchUpgradeKeepsContainers(ctx, machines["d1"], pods)
			e.rebootFromDisk(ctx, machines["d1"], patchTo)
		})
		t.Run("d2", func(t *testing.T) {
			t.Parallel()
			e := e.with(t)
			boots := e.bootIDs(ctx, []*metalv1.Machine{machines["d2"]})
			e.anvil("machines", "upgrade", "d2", "--version", unhealthVersion, "-n", ns)
			e.checkRolledBack(ctx, "d2", unhealthVersion, "health", patchFrom, boots)
			// The admin takes the bad version back: d2 is a plain Running
			// Machine again (a failed upgrade is not Running).
			e.patchMachine(ctx, "d2", func(m *metalv1.Machine) { m.Spec.Version = patchFrom })
			e.waitPhase("d2", 5*time.Minute, metalv1.MachineRunning)
			d3 = e.deleteWipeReinstall(ctx, machines["d2"], "d3", stopBinder)
		})
	})
	if t.Failed() {
		t.FailNow()
	}
	e.rackPowerLoss(ctx, map[string]*metalv1.Machine{"d1": machines["d1"], "d3": d3})

	// Last, as it leaves the Hosts to an Anvil that cannot reach their
	// BMCs: Anvil itself as a pod on one of the Nodes it made.
	e.inClusterAnvil(ctx, machines["d1"].Status.NodeRef.Name)
}

// rebootFromDisk power-cycles m's Host through its BMC: it boots from its
// disk again as the same Node, the Machine Running throughout, with no
// reinstall, no new bootstrap token, and the kubelet the disk has: version
// (the upgraded one).
func (e *e2e) rebootFromDisk(ctx context.Context, m *metalv1.Machine, version string) {
	e.t.Helper()
	m = e.waitPhase(m.Name, time.Minute, metalv1.MachineRunning)
	h := e.host(m.Status.HostRef.Name)
	n := e.node(m.Status.NodeRef.Name)
	bootBefore, installBoot := n.Status.NodeInfo.BootID, h.Status.Install.BootRequestID
	tokensBefore := e.bootstrapTokens(ctx)
	phases := e.watchPhases(ctx, m.Name)
	drv := e.bmcDriver(h.Name)
	t0 := time.Now()
	if err := drv.SetPower(ctx, bmc.PowerReset); err != nil {
		e.t.Fatalf("power cycle of %s through its BMC: %v", h.Name, err)
	}
	e.waitFor(15*time.Minute, "Node "+n.Name+" Ready again after the power cycle, with a new boot ID", func(ctx context.Context) (bool, string) {
		n := e.node(n.Name)
		return n.Status.NodeInfo.BootID != bootBefore && nodeIsReady(n), "bootID " + n.Status.NodeInfo.BootID
	})
	e.logf("Host %s back from its disk in %s", h.Name, time.Since(t0).Round(time.Second))
	m = e.waitPhase(m.Name, time.Minute, metalv1.MachineRunning)
	if seen := phases(); len(seen) != 1 || seen[0] != metalv1.MachineRunning {
		e.t.Fatalf("Machine %s went through phases %v during the reboot, want Running only", m.Name, seen)
	}
	if m.Status.Reboots != 1 || m.Status.FailureReason != "" {
		e.t.Fatalf("Machine %s after the reboot: reboots %d, %s", m.Name, m.Status.Reboots, describe(m))
	}
	if got := e.host(h.Name).Status.Install.BootRequestID; got != installBoot {
		e.t.Fatalf("Host %s was installed again (boot %s, was %s)", h.Name, got, installBoot)
	}
	if got := e.bootstrapTokens(ctx); got != tokensBefore {
		e.t.Fatalf("the reboot minted bootstrap tokens: %d, was %d", got, tokensBefore)
	}
	// The upgraded kubelet is the disk's: the reboot did not bring back
	// the one the host was installed with.
	if got := e.node(n.Name).Status.NodeInfo.KubeletVersion; got != version {
		e.t.Fatalf("Node %s runs kubelet %s after the reboot, want the upgraded %s", n.Name, got, version)
	}
	e.logf("Node %s still on kubelet %s after the reboot", n.Name, version)
	for _, p := range e.webPods(ctx) {
		if p.Spec.NodeName == n.Name {
			e.waitFor(5*time.Minute, "the web pod on "+n.Name+" serving again", func(ctx context.Context) (bool, string) {
				out, err := e.tryHTTPGet(ctx, fmt.Sprintf("http://%s:%d/", p.Status.HostIP, webPort))
				return err == nil, fmt.Sprint(out, err)
			})
		}
	}
}

// deleteWipeReinstall deletes m: drained, its Host network-boots the
// installer to wipe the disk, and is released; the raw disk, read here,
// has no partition table or filesystem signature left. A new Machine
// (name) installs the same Host again; it is returned Running.
func (e *e2e) deleteWipeReinstall(ctx context.Context, m *metalv1.Machine, name string, stopBinder func()) *metalv1.Machine {
	e.t.Helper()
	// The binder would place m's evicted pod beside the other's, on the
	// same host port: the test is done with the pods.
	stopBinder()
	host := m.Status.HostRef.Name
	if err := e.c.Delete(ctx, m); err != nil {
		e.t.Fatal(err)
	}
	e.waitGone(m.Name, 15*time.Minute)
	e.waitHost(host, 3*time.Minute, metalv1.HostAvailable)
	if sigs := diskSignatures(e.t, e.st.Lab.DiskPath(host)); sigs != "" {
		e.t.Fatalf("the disk of %s after the wipe still has signatures:\n%s", host, sigs)
	}
	e.logf("disk of %s wiped: no partition table or filesystem signature left", host)
	e.anvil("machines", "create", name, "--class", e.st.DiskClass.Name, "--selector", "anvil.dev/lab="+labName, "--version", "v1.37.2", "-n", ns)
	m2 := e.waitPhase(name, 40*time.Minute, metalv1.MachineRunning)
	if m2.Status.HostRef.Name != host {
		e.t.Fatalf("%s claimed %s, want the released %s", name, m2.Status.HostRef.Name, host)
	}
	if in := e.host(host).Status.Install; in == nil || in.BootRequestID != m2.Status.Boot.RequestID || in.Outcome != metalv1.InstallInstalled {
		e.t.Fatalf("Host %s was not installed again for %s: %+v", host, name, in)
	}
	e.checkInvariants()
	return m2
}

// rackPowerLoss kills every lab VM at once, as a tripped PDU does. Anvil
// sees the BMCs report Off while the Hosts should be online and powers them
// on through the BMCs; every Host boots its disk, every Node is Ready again
// and every Machine stays Running, with nothing reinstalled. The time from
// the trip to the last Node Ready is printed.
func (e *e2e) rackPowerLoss(ctx context.Context, machines map[string]*metalv1.Machine) {
	e.t.Helper()
	type before struct{ node, bootID, install string }
	was := map[string]before{}
	watches := map[string]func() []metalv1.MachinePhase{}
	for name := range machines {
		m, err := e.machine(ctx, name)
		if err != nil {
			e.t.Fatal(err)
		}
		n := e.node(m.Status.NodeRef.Name)
		was[name] = before{node: n.Name, bootID: n.Status.NodeInfo.BootID, install: e.host(m.Status.HostRef.Name).Status.Install.BootRequestID}
		watches[name] = e.watchPhases(ctx, name)
	}
	// A host that has just joined syncs its first boot's files a moment
	// after its Node is Ready (hostos.Template): the trip comes after that.
	for _, m := range machines {
		e.waitFirstBootDone(m.Status.HostRef.Name)
	}
	var pids []int
	for _, h := range e.st.Lab.Hosts() {
		if pid := e.st.Lab.PID(h.Name); pid > 0 {
			pids = append(pids, pid)
		}
	}
	t0 := time.Now()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	e.logf("rack power loss: killed %d VMs", len(pids))
	for _, b := range was {
		e.waitFor(25*time.Minute, "Node "+b.node+" Ready after the power loss", func(ctx context.Context) (bool, string) {
			n := e.node(b.node)
			return n.Status.NodeInfo.BootID != b.bootID && nodeIsReady(n), "bootID " + n.Status.NodeInfo.BootID
		})
	}
	e.logf("rack power loss: all %d Nodes Ready again %s after the trip, no admin involved", len(was), time.Since(t0).Round(time.Second))
	for name, b := range was {
		m := e.waitPhase(name, time.Minute, metalv1.MachineRunning)
		if seen := watches[name](); len(seen) != 1 || seen[0] != metalv1.MachineRunning || m.Status.FailureReason != "" {
			e.t.Fatalf("Machine %s during the power loss: phases %v, %s", name, seen, describe(m))
		}
		if got := e.host(m.Status.HostRef.Name).Status.Install.BootRequestID; got != b.install {
			e.t.Fatalf("Host %s was reinstalled after the power loss", m.Status.HostRef.Name)
		}
	}
	e.checkInvariants()
}

// waitFirstBootDone waits for the installed OS's cloud-init to print
// hostos.MarkerKubeletStarted on host's console since its last install:
// the kubelet and the agent started, the first boot's files synced.
func (e *e2e) waitFirstBootDone(host string) {
	e.t.Helper()
	e.waitFor(5*time.Minute, "the first boot of "+host+" done and on its disk", func(context.Context) (bool, string) {
		b, _ := os.ReadFile(e.st.Lab.SerialLog(host))
		i := bytes.LastIndex(b, []byte(image.MarkerInstallWritten))
		if i < 0 {
			return false, "no install on the console"
		}
		b = b[i:]
		if j := bytes.Index(b, []byte(hostos.FailPrefix)); j >= 0 {
			e.t.Fatalf("the serial console of %s: %s", host, b[j:min(len(b), j+300)])
		}
		return bytes.Contains(b, []byte(hostos.MarkerKubeletStarted)), "no " + hostos.MarkerKubeletStarted + " on the console since the install"
	})
}

func (e *e2e) waitGone(name string, timeout time.Duration) {
	e.t.Helper()
	e.waitFor(timeout, "Machine "+name+" gone", func(ctx context.Context) (bool, string) {
		m, err := e.machine(ctx, name)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, describe(m)
	})
}

// diskSignatures lists what blkid and wipefs (util-linux, the tools an
// admin would use) still find on a raw disk image: "" when it is blank.
func diskSignatures(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("wipefs", "--no-act", "--noheadings", path).CombinedOutput()
	if err != nil {
		t.Fatalf("wipefs %s: %v: %s", path, err, out)
	}
	sigs := strings.TrimSpace(string(out))
	// blkid -p probes the whole device; exit 2 means nothing found.
	if out, err := exec.Command("blkid", "-p", "-o", "export", path).CombinedOutput(); err == nil {
		sigs += "\n" + strings.TrimSpace(string(out))
	}
	return strings.TrimSpace(sigs)
}

func (e *e2e) host(name string) *metalv1.Host {
	e.t.Helper()
	h := &metalv1.Host{}
	if err := e.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, h); err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *e2e) node(name string) *corev1.Node {
	e.t.Helper()
	n := &corev1.Node{}
	if err := e.c.Get(context.Background(), types.NamespacedName{Name: name}, n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *e2e) bootstrapTokens(ctx context.Context) int {
	e.t.Helper()
	var l corev1.SecretList
	if err := e.c.List(ctx, &l, client.InNamespace("kube-system")); err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, s := range l.Items {
		if s.Type == corev1.SecretTypeBootstrapToken {
			n++
		}
	}
	return n
}

// watchPhases records every phase Machine name shows from now on (a watch:
// no poll can miss a short-lived phase); the function returns them, in
// order, without repeats.
func (e *e2e) watchPhases(ctx context.Context, name string) func() []metalv1.MachinePhase {
	e.t.Helper()
	wc, err := client.NewWithWatch(e.st.CP.Config, client.Options{Scheme: e.c.Scheme()})
	if err != nil {
		e.t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &metalv1.MachineList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	var mu sync.Mutex
	var seen []metalv1.MachinePhase
	go func() {
		for ev := range w.ResultChan() {
			m, ok := ev.Object.(*metalv1.Machine)
			if !ok || ev.Type == watch.Bookmark {
				continue
			}
			mu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != m.Status.Phase {
				seen = append(seen, m.Status.Phase)
			}
			mu.Unlock()
		}
	}()
	return func() []metalv1.MachinePhase {
		mu.Lock()
		defer mu.Unlock()
		return append([]metalv1.MachinePhase(nil), seen...)
	}
}

// bmcDriver opens Anvil's own BMC driver on a lab Host's BMC.
func (e *e2e) bmcDriver(name string) bmc.Driver {
	e.t.Helper()
	for _, h := range e.st.Lab.Hosts() {
		if h.Name != name {
			continue
		}
		opts := bmc.Options{Address: h.BMCAddress, Credentials: h.Credentials, Timeout: time.Minute,
			Guard: netguard.Guard{AllowLoopback: true}} // the lab's BMC emulators are on loopback
		if h.CertPEM != nil {
			opts.RootCAs = x509.NewCertPool()
			opts.RootCAs.AppendCertsFromPEM(h.CertPEM)
		}
		d, err := bmc.Open(opts)
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { _ = d.Close(context.Background()) })
		return d
	}
	e.t.Fatalf("no lab host %s", name)
	return nil
}

// deployWeb runs the web Deployment (one pod per Node, host network, the
// image preloaded into containerd) behind a PodDisruptionBudget and waits
// for its pods to run. The lab runs no kube-scheduler: the test's binder
// places the pods, one per Node; stopBinder ends it.
func (e *e2e) deployWeb(ctx context.Context, replicas int32) (pods []corev1.Pod, stopBinder func()) {
	e.t.Helper()
	kube, err := kubernetes.NewForConfig(e.st.CP.Config)
	if err != nil {
		e.t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	minAvail := intstr.FromInt32(replicas - 1)
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appsNS}}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvail, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			SchedulerName: binderName,
			HostNetwork:   true,
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname}}}},
			Containers: []corev1.Container{{Name: "web", Image: webImage, ImagePullPolicy: corev1.PullNever,
				Env:   []corev1.EnvVar{{Name: "PORT", Value: fmt.Sprint(webPort)}},
				Ports: []corev1.ContainerPort{{ContainerPort: webPort}},
				// Running is not listening: Ready is.
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 2, ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(webPort)}}}}},
		}},
	}}
	for _, o := range []client.Object{nsObj, pdb, d} {
		if err := e.c.Create(ctx, o); err != nil {
			e.t.Fatal(err)
		}
	}
	stopBinder = e.startBinder(ctx, kube, "")
	e.waitFor(10*time.Minute, fmt.Sprintf("%d web pods running and Ready", replicas), func(ctx context.Context) (bool, string) {
		pods = e.webPods(ctx)
		var b strings.Builder
		running := 0
		for _, p := range pods {
			fmt.Fprintf(&b, "%s@%s=%s ", p.Name, p.Spec.NodeName, p.Status.Phase)
			if p.Status.Phase == corev1.PodRunning && p.Status.HostIP != "" && podReady(&p) {
				running++
			}
		}
		return running == int(replicas), b.String()
	})
	return pods, stopBinder
}

func (e *e2e) webPods(ctx context.Context) []corev1.Pod {
	e.t.Helper()
	var l corev1.PodList
	if err := e.c.List(ctx, &l, client.InNamespace(appsNS), client.MatchingLabels{"app": "web"}); err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

// tryHTTPGet fetches url from inside the lab's namespace (where the Nodes'
// addresses are).
func (e *e2e) tryHTTPGet(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// No -T: Debian 12's busybox wget dies of SIGSEGV with it; ctx bounds it.
	out, err := e.st.Lab.RunInNetns(ctx, "busybox", "wget", "-q", "-O", "-", url).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (e *e2e) httpGet(ctx context.Context, url string) string {
	e.t.Helper()
	out, err := e.tryHTTPGet(ctx, url)
	if err != nil {
		e.t.Fatalf("GET %s from the lab: %v: %s", url, err, out)
	}
	return out
}
