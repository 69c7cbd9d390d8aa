package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/lab/stack"
	"anvil.dev/anvil/test/need"
)

// Versions of the upgrade test. v1.36.4 and v1.36.5 are not kubelets: the
// class lists the first with a wrong sha256 and the second as a program
// that never becomes healthy.
const (
	oldVersion      = stack.OldKubeletVersion
	newVersion      = "v1.37.2"
	badSumVersion   = "v1.36.4"
	unhealthVersion = "v1.36.5"
	appsNS          = "apps"
	binderName      = "e2e-binder"
)

// TestLabInPlaceUpgrade: a MachineSet of three lab hosts runs the real
// kubelet v1.36.3. One Machine is patched to v1.37.2 in place: its pods
// (two replicas behind a PodDisruptionBudget) are evicted one at a time,
// the Node reports v1.37.2, Ready and schedulable, and the host never
// rebooted (same boot ID). A plan with a wrong sha256 and a kubelet that
// never becomes healthy both roll back to v1.36.3 with InPlaceUpdateFailed.
// A is then power-cycled through its BMC: diskless, it network-boots again
// with a fresh credential and rejoins as the same Node on v1.37.2.
// Then the MachineSet rolls v1.37.2 out with maxUnavailable=1, never with
// more than one Node cordoned at a time (from watch events).
func TestLabInPlaceUpgrade(t *testing.T) {
	if os.Getenv("ANVIL_E2E") == "1" {
		root, err := need.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(root, "bin", "kubelet-"+oldVersion)); err != nil {
			need.OrSkip(t, "bin/kubelet-%s missing: run make tools", oldVersion)
		}
	}
	e := startLab(t, []lab.HostOptions{
		{Name: "up-a", BMC: lab.IPMI},
		{Name: "up-b", BMC: lab.Redfish},
		{Name: "up-c", BMC: lab.IPMI},
	}, []string{"--machine-boot-timeout", "8m", "--machine-join-timeout", "10m"})
	ctx := context.Background()
	kube, err := kubernetes.NewForConfig(e.st.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	e.addBrokenKubelets(ctx, "lab")

	e.importHosts() // the MachineSet below waits for them
	ms := &metalv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool"},
		Spec: metalv1.MachineSetSpec{
			Replicas: ptr.To[int32](3),
			Strategy: metalv1.RolloutStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{
				MachineClassRef: metalv1.LocalObjectReference{Name: "lab"}, Version: oldVersion,
				HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"anvil.dev/lab": labName}},
			}},
		},
	}
	if err := e.c.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	machines := e.waitSetRunning(ms.Name, oldVersion, 15*time.Minute)
	boots := e.bootIDs(ctx, machines)
	e.logf("3 Machines Running on kubelet %s; boot IDs %v", oldVersion, boots)

	// Hand-made upgrades first, with the set's rollout paused.
	e.patchSet(ctx, ms.Name, func(ms *metalv1.MachineSet) { ms.Spec.Paused = true })
	a, b, c := machines[0], machines[1], machines[2]
	nodeA := a.Status.NodeRef.Name

	// Two web pods on A's Node, behind a PDB that allows one down.
	stopBinder := e.startBinder(ctx, kube, nodeA)
	defer stopBinder()
	pods := e.watchPods(ctx, kube)
	e.startWeb(ctx)
	e.waitFor(5*time.Minute, "two web pods Ready on "+nodeA, func(ctx context.Context) (bool, string) {
		n, desc := e.readyWeb(ctx, nodeA)
		return n == 2, desc
	})

	// A: v1.36.3 -> v1.37.2 in place, followed live by the CLI.
	out := e.anvilTimeout(12*time.Minute, "machines", "upgrade", a.Name, "--version", newVersion, "--watch", "--timeout", "10m", "-n", ns)
	e.logf("anvil machines upgrade %s --version %s --watch:\n%s", a.Name, newVersion, out)
	e.checkUpgraded(ctx, a.Name, newVersion, boots)
	if p := pods.problems(); len(p) > 0 {
		t.Errorf("the PodDisruptionBudget was not respected: %s", strings.Join(p, "; "))
	}
	if n, desc := e.readyWeb(ctx, nodeA); n != 0 || !pods.sawArmed() {
		t.Errorf("the drain did not evict the web pods from %s, or they were never both Ready: %s", nodeA, desc)
	}
	e.logf("web pods during the drain:\n%s", strings.Join(pods.history(), "\n"))
	// The PDB has been shown; the rest drains empty Nodes (faster here).
	if err := e.c.Delete(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "web"}}); err != nil {
		t.Fatal(err)
	}

	e.liveRejoin(ctx, a, nodeA, boots)

	// B: a wrong sha256; C: a kubelet that never gets healthy. Both roll
	// back to v1.36.3 and stay cordoned until the admin (the test) looks.
	for _, bad := range []struct {
		m       *metalv1.Machine
		version string
		want    string
	}{{b, badSumVersion, "sha256"}, {c, unhealthVersion, "health"}} {
		e.patchMachine(ctx, bad.m.Name, func(m *metalv1.Machine) { m.Spec.Version = bad.version })
		e.checkRolledBack(ctx, bad.m.Name, bad.version, bad.want, oldVersion, boots)
	}

	// The MachineSet rolls v1.37.2 out: B and C, one at a time.
	cordons := e.watchCordons(ctx, kube)
	e.patchSet(ctx, ms.Name, func(ms *metalv1.MachineSet) {
		ms.Spec.Paused = false
		ms.Spec.Template.Spec.Version = newVersion
	})
	e.waitSetRunning(ms.Name, newVersion, 20*time.Minute)
	for _, m := range []*metalv1.Machine{b, c} {
		e.checkUpgraded(ctx, m.Name, newVersion, boots)
	}
	most, hist := cordons.stop()
	e.logf("cordons during the rollout:\n%s", strings.Join(hist, "\n"))
	if most > 1 {
		t.Errorf("%d Nodes were cordoned at once during a rollout with maxUnavailable=1", most)
	}
	if most == 0 {
		t.Error("no Node was cordoned during the rollout: nothing was drained")
	}
	e.logf("anvil machines list:\n%s", e.anvil("machines", "list", "-n", ns, "-o", "wide"))
}

// addBrokenKubelets publishes the two kubelets that must fail and lists
// them in a lab class, with a short health window.
func (e *e2e) addBrokenKubelets(ctx context.Context, class string) {
	e.t.Helper()
	dir := filepath.Join(e.st.ArtifactDir(), "lab")
	broken := []byte("#!/bin/sh\necho 'this kubelet never becomes healthy' >&2\nexit 1\n")
	if err := os.WriteFile(filepath.Join(dir, "kubelet-"+badSumVersion), broken, 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubelet-"+unhealthVersion), broken, 0o644); err != nil {
		e.t.Fatal(err)
	}
	good := sha256.Sum256(broken)
	wrong := sha256.Sum256([]byte("not the file"))
	mc := &metalv1.MachineClass{}
	if err := e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: class}, mc); err != nil {
		e.t.Fatal(err)
	}
	orig := mc.DeepCopy()
	mc.Spec.Kubelets = append(mc.Spec.Kubelets,
		metalv1.KubeletArtifact{Version: badSumVersion, Artifact: metalv1.Artifact{URL: "lab/kubelet-" + badSumVersion, SHA256: hex.EncodeToString(wrong[:])}},
		metalv1.KubeletArtifact{Version: unhealthVersion, Artifact: metalv1.Artifact{URL: "lab/kubelet-" + unhealthVersion, SHA256: hex.EncodeToString(good[:])}})
	mc.Spec.Upgrade.HealthCheckTimeout = &metav1.Duration{Duration: 90 * time.Second}
	mc.Spec.Upgrade.DrainTimeout = &metav1.Duration{Duration: 8 * time.Minute}
	if err := e.c.Patch(ctx, mc, client.MergeFrom(orig)); err != nil {
		e.t.Fatal(err)
	}
}

// waitSetRunning waits until the set has 3 Machines, all Running on version
// with a Ready Node that reports it, and returns them sorted by name.
func (e *e2e) waitSetRunning(set, version string, timeout time.Duration) []*metalv1.Machine {
	e.t.Helper()
	var out []*metalv1.Machine
	e.waitFor(timeout, fmt.Sprintf("MachineSet %s: 3 Machines Running kubelet %s", set, version), func(ctx context.Context) (bool, string) {
		out = out[:0]
		var l metalv1.MachineList
		if err := e.c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var why []string
		for i := range l.Items {
			m := &l.Items[i]
			if !ownedBy(m, set) {
				continue
			}
			if m.Status.Phase == metalv1.MachineFailed {
				e.t.Fatalf("Machine %s failed: %s", m.Name, describe(m))
			}
			if m.Status.Phase != metalv1.MachineRunning || m.Status.Version != version || m.Status.NodeRef == nil {
				why = append(why, m.Name+": "+describe(m))
				continue
			}
			out = append(out, m)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return len(out) == 3, strings.Join(why, "; ")
	})
	return out
}

func ownedBy(m *metalv1.Machine, set string) bool {
	for _, o := range m.OwnerReferences {
		if o.Kind == "MachineSet" && o.Name == set {
			return true
		}
	}
	return false
}

// bootIDs are the kernel boot IDs the Nodes report, by Machine.
func (e *e2e) bootIDs(ctx context.Context, ms []*metalv1.Machine) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, m := range ms {
		n := &corev1.Node{}
		if err := e.c.Get(ctx, types.NamespacedName{Name: m.Status.NodeRef.Name}, n); err != nil {
			e.t.Fatal(err)
		}
		if n.Status.NodeInfo.BootID == "" {
			e.t.Fatalf("Node %s reports no boot ID", n.Name)
		}
		out[m.Name] = n.Status.NodeInfo.BootID
	}
	return out
}

func (e *e2e) patchSet(ctx context.Context, name string, f func(*metalv1.MachineSet)) {
	e.t.Helper()
	ms := &metalv1.MachineSet{}
	if err := e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ms); err != nil {
		e.t.Fatal(err)
	}
	orig := ms.DeepCopy()
	f(ms)
	if err := e.c.Patch(ctx, ms, client.MergeFrom(orig)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *e2e) patchMachine(ctx context.Context, name string, f func(*metalv1.Machine)) {
	e.t.Helper()
	m, err := e.machine(ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	orig := m.DeepCopy()
	f(m)
	if err := e.c.Patch(ctx, m, client.MergeFrom(orig)); err != nil {
		e.t.Fatal(err)
	}
}

// checkUpgraded: the Machine is up to date on version, its Node reports
// it, Ready and schedulable, and the host did not reboot.
func (e *e2e) checkUpgraded(ctx context.Context, name, version string, boots map[string]string) {
	e.t.Helper()
	var n *corev1.Node
	e.waitFor(3*time.Minute, fmt.Sprintf("Machine %s up to date on %s", name, version), func(ctx context.Context) (bool, string) {
		m, err := e.machine(ctx, name)
		if err != nil {
			return false, err.Error()
		}
		up := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpToDate)
		if m.Status.Version != version || up == nil || up.Status != metav1.ConditionTrue || m.Status.NodeRef == nil {
			return false, describe(m)
		}
		n = &corev1.Node{}
		if err := e.c.Get(ctx, types.NamespacedName{Name: m.Status.NodeRef.Name}, n); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if got := n.Status.NodeInfo.KubeletVersion; got != version {
		e.t.Errorf("Node %s reports kubelet %s, want %s", n.Name, got, version)
	}
	if n.Spec.Unschedulable {
		e.t.Errorf("Node %s is still cordoned after a successful upgrade", n.Name)
	}
	if !nodeIsReady(n) {
		e.t.Errorf("Node %s is not Ready after the upgrade", n.Name)
	}
	if n.Status.NodeInfo.BootID != boots[name] {
		e.t.Errorf("Node %s booted again during the upgrade: boot ID %s, was %s", n.Name, n.Status.NodeInfo.BootID, boots[name])
	}
	e.logf("Node %s: kubelet %s, Ready, schedulable, same boot ID %s", n.Name, n.Status.NodeInfo.KubeletVersion, n.Status.NodeInfo.BootID)
}

// checkRolledBack: the upgrade to version failed with a reason naming
// want, the Node is back on the old kubelet and Ready, on the same boot,
// and cordoned; the admin then uncordons it.
func (e *e2e) checkRolledBack(ctx context.Context, name, version, want, back string, boots map[string]string) {
	e.t.Helper()
	var m *metalv1.Machine
	e.waitFor(10*time.Minute, fmt.Sprintf("Machine %s: upgrade to %s failed", name, version), func(ctx context.Context) (bool, string) {
		var err error
		if m, err = e.machine(ctx, name); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpdating)
		return c != nil && c.Reason == metalv1.ReasonInPlaceUpdateFail, describe(m)
	})
	c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpdating)
	e.logf("%s: %s", name, c.Message)
	if !strings.Contains(strings.ToLower(c.Message), want) {
		e.t.Errorf("Machine %s failed without naming the %s problem: %s", name, want, c.Message)
	}
	n := &corev1.Node{}
	e.waitFor(3*time.Minute, fmt.Sprintf("Node %s back on %s and Ready", m.Status.NodeRef.Name, back), func(ctx context.Context) (bool, string) {
		if err := e.c.Get(ctx, types.NamespacedName{Name: m.Status.NodeRef.Name}, n); err != nil {
			return false, err.Error()
		}
		return n.Status.NodeInfo.KubeletVersion == back && nodeIsReady(n), fmt.Sprintf("kubelet %s ready %v", n.Status.NodeInfo.KubeletVersion, nodeIsReady(n))
	})
	if n.Status.NodeInfo.BootID != boots[name] {
		e.t.Errorf("Node %s booted again during the failed upgrade", n.Name)
	}
	if !n.Spec.Unschedulable {
		e.t.Errorf("Node %s was uncordoned after a failed upgrade without spec.uncordonOnFailure", n.Name)
	}
	orig := n.DeepCopy()
	n.Spec.Unschedulable = false
	if err := e.c.Patch(ctx, n, client.MergeFrom(orig)); err != nil {
		e.t.Fatal(err)
	}
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// startWeb creates the web ReplicaSet (two pods, bound by the test's
// binder) and a PDB that allows one of them down.
func (e *e2e) startWeb(ctx context.Context) {
	e.t.Helper()
	labels := map[string]string{"app": "web"}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appsNS}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "web"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: appsNS, Name: "web"},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
					SchedulerName:                 binderName,
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					AutomountServiceAccountToken:  ptr.To(false),
					// The lab's runtime is a fake CRI: nothing is pulled.
					Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:1"}},
				}}}},
	} {
		if err := e.c.Create(ctx, o); err != nil {
			e.t.Fatal(err)
		}
	}
}

// readyWeb counts the web pods Running and Ready on node.
func (e *e2e) readyWeb(ctx context.Context, node string) (int, string) {
	var l corev1.PodList
	if err := e.c.List(ctx, &l, client.InNamespace(appsNS)); err != nil {
		return 0, err.Error()
	}
	n := 0
	var desc []string
	for _, p := range l.Items {
		desc = append(desc, fmt.Sprintf("%s on %q %s ready=%v", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p)))
		if p.Spec.NodeName == node && podReady(&p) {
			n++
		}
	}
	return n, strings.Join(desc, "; ")
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// startBinder plays the scheduler for the web pods (the lab runs no
// kube-scheduler): it binds each pending pod to the preferred Node while
// that is schedulable and Ready, else to another one that is.
func (e *e2e) startBinder(ctx context.Context, kube kubernetes.Interface, preferred string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			pods, err := kube.CoreV1().Pods(appsNS).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName="})
			if err != nil || len(pods.Items) == 0 {
				continue
			}
			nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			var usable []string
			for _, n := range nodes.Items {
				if !n.Spec.Unschedulable && nodeIsReady(&n) {
					usable = append(usable, n.Name)
				}
			}
			sort.Strings(usable)
			for i, p := range pods.Items {
				if len(usable) == 0 || p.Spec.SchedulerName != binderName || p.DeletionTimestamp != nil {
					continue
				}
				target := usable[i%len(usable)]
				for _, u := range usable {
					if u == preferred {
						target = u
					}
				}
				_ = kube.CoreV1().Pods(appsNS).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
					Target: corev1.ObjectReference{Kind: "Node", Name: target}}, metav1.CreateOptions{})
			}
		}
	}()
	return func() { cancel(); <-done }
}

// podWatch follows the web pods (a poll every 200 ms: the windows that
// matter last seconds): once two were Ready, at least one must stay Ready
// at every moment (the PDB allows one down).
type podWatch struct {
	mu     sync.Mutex
	armed  bool
	lines  []string
	issues []string
}

func (e *e2e) watchPods(ctx context.Context, kube kubernetes.Interface) *podWatch {
	e.t.Helper()
	pw := &podWatch{}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	e.t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		last := ""
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			l, err := kube.CoreV1().Pods(appsNS).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			var desc []string
			ready := 0
			for i := range l.Items {
				p := &l.Items[i]
				r := podReady(p)
				if r {
					ready++
				}
				state := string(p.Status.Phase)
				if p.DeletionTimestamp != nil {
					state = "Terminating"
				}
				desc = append(desc, fmt.Sprintf("%s@%s:%s,ready=%v", p.Name, p.Spec.NodeName, state, r))
			}
			sort.Strings(desc)
			now := strings.Join(desc, " ")
			if now == last {
				continue
			}
			last = now
			pw.mu.Lock()
			pw.lines = append(pw.lines, fmt.Sprintf("%s ready=%d %s", time.Now().UTC().Format("15:04:05.0"), ready, now))
			if ready >= 2 {
				pw.armed = true
			}
			if pw.armed && ready == 0 {
				pw.issues = append(pw.issues, "no web pod was Ready at "+time.Now().UTC().Format("15:04:05.0"))
			}
			pw.mu.Unlock()
		}
	}()
	return pw
}

func (pw *podWatch) problems() []string {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return append([]string(nil), pw.issues...)
}

func (pw *podWatch) sawArmed() bool {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.armed
}

func (pw *podWatch) history() []string {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return append([]string(nil), pw.lines...)
}

// cordonWatch records how many Nodes were cordoned at once.
type cordonWatch struct {
	w     watch.Interface
	done  chan struct{}
	mu    sync.Mutex
	most  int
	lines []string
}

func (e *e2e) watchCordons(ctx context.Context, kube kubernetes.Interface) *cordonWatch {
	e.t.Helper()
	w, err := kube.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	cw := &cordonWatch{w: w, done: make(chan struct{})}
	go func() {
		defer close(cw.done)
		cordoned := map[string]bool{}
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			on := n.Spec.Unschedulable && ev.Type != watch.Deleted
			if cordoned[n.Name] == on {
				continue
			}
			cordoned[n.Name] = on
			var now []string
			for k, v := range cordoned {
				if v {
					now = append(now, k)
				}
			}
			sort.Strings(now)
			cw.mu.Lock()
			cw.most = max(cw.most, len(now))
			cw.lines = append(cw.lines, fmt.Sprintf("%s %s cordoned=%v; cordoned now: %v", time.Now().UTC().Format("15:04:05.0"), n.Name, on, now))
			cw.mu.Unlock()
		}
	}()
	return cw
}

func (cw *cordonWatch) stop() (int, []string) {
	cw.w.Stop()
	<-cw.done
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.most, cw.lines
}
