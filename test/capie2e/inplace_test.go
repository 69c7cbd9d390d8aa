package capie2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/test/simhost"
)

// Versions: the API server (the workload cluster's control plane) runs
// v1.37.2; the workers start two patches and one minor behind it.
const (
	cpVersion   = "v1.37.2"
	oldVersion  = "v1.36.1"
	newVersion  = "v1.36.3" // in place, a patch release
	failVersion = "v1.37.2" // in place, the next minor; fails on the host first
	failReason  = "simulated: kubelet v1.37.2 did not become healthy within 60s; rolled back to v1.36.3"
)

// TestClusterAPIUpgradesAnvilMachinesInPlace runs Anvil under the real
// Cluster API (core manager and kubeadm bootstrap provider v1.14, with the
// InPlaceUpdates and RuntimeSDK gates) and simulated bare-metal hosts, and
// checks that a MachineDeployment's version bump upgrades the kubelet of
// Anvil's Hosts in place through Anvil's Runtime SDK extension, that a
// failed upgrade is rolled back on the host and reported to Cluster API
// instead of replacing hardware, and that a change Anvil cannot make in
// place replaces the Machines, Anvil wiping and reusing the Hosts.
//
// The control plane is one stand-alone control-plane Machine (Cluster
// without controlPlaneRef) with a KubeadmConfig for kubeadm init, on an
// AnvilMachine like the workers. Cluster API marks the control plane
// initialized once that Machine has a nodeRef, the Node its simulated host
// registered, which is all the kubeadm bootstrap provider waits for before
// it writes the workers' join data; and the bootstrap provider generates
// the cluster's certificates (<cluster>-ca, whose hash the join data
// pins) as for any first control-plane Machine. KubeadmControlPlane was
// not used: it manages the control plane through the workload cluster's
// etcd and static pods, which a test API server does not have (its
// Machines would never be healthy, and its preflight checks would hold
// the MachineSets), and Anvil leaves control-plane Machines to replacement
// anyway (capi/inplace claims only workers). The workload cluster is the
// test's API server itself (see createCluster).
func TestClusterAPIUpgradesAnvilMachinesInPlace(t *testing.T) {
	start := time.Now()
	s := newStack(t, 3, []string{oldVersion, newVersion, failVersion}, "sim-ci", "sim-ci-b")
	ctx := context.Background()
	t.Logf("Cluster API %s, anvil serve and 3 simulated hosts up in %s", s.capi.Version, since(start))

	// 1. The control plane.
	step := time.Now()
	s.createCluster(t)
	s.createControlPlaneMachine(t, "sim-ci", cpVersion)
	s.eventually(t, 4*time.Minute, "the Cluster's control plane initialized (its control-plane Machine has a Node)", func(ctx context.Context) (bool, string) {
		cl := &clusterv1.Cluster{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: clusterName}, cl); err != nil {
			return false, err.Error()
		}
		m := &clusterv1.Machine{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: cpName}, m); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1.ClusterControlPlaneInitializedCondition), s.describeCluster(ctx, cl) + "; " + describe(m)
	})
	t.Logf("control plane initialized in %s", since(step))

	// 2. Two workers from a MachineDeployment land on Anvil Hosts.
	step = time.Now()
	s.createAnvilMachineTemplate(t, "workers-a", "sim-ci")
	s.createWorkers(t, 2, oldVersion, "workers-a")
	before := s.waitWorkers(t, 4*time.Minute, 2, oldVersion, "2 workers Running on "+oldVersion, nil)
	cpHost := s.controlPlaneHost(t)
	for _, w := range before {
		if w.host.Name == cpHost {
			t.Fatalf("worker %s is on the control plane's Host %s", w.machine.Name, cpHost)
		}
	}
	s.collectSecrets(t)
	t.Logf("workers %s and %s Running on %s in %s", before[0].machine.Name, before[1].machine.Name, oldVersion, since(step))

	// Nothing below may create a Machine until the replacement (step 6).
	known := map[types.UID]bool{}
	var l clusterv1.MachineList
	if err := s.c.List(ctx, &l, client.InNamespace(s.ns)); err != nil {
		t.Fatal(err)
	}
	for _, m := range l.Items {
		known[m.UID] = true
	}
	mw := s.watchNewMachines(t, known)

	// 3. A patch release in place: same Machines, Hosts and boots.
	step = time.Now()
	firstMS := s.owningMachineSet(t, before[0].machine)
	s.patchMD(t, func(spec *clusterv1.MachineSpec) { spec.Version = newVersion })
	upgraded := s.waitWorkers(t, 4*time.Minute, 2, newVersion, "both workers upgraded in place to "+newVersion, sameAs(before))
	for _, w := range upgraded {
		if ms := s.owningMachineSet(t, w.machine); ms == firstMS {
			t.Errorf("Machine %s still belongs to MachineSet %s: Cluster API did not move it to the new one", w.machine.Name, ms)
		}
		if up := w.anvil.Status.Upgrade; up == nil || up.State != metalv1.UpgradeVerified || up.FromVersion != oldVersion || up.Version != newVersion {
			t.Errorf("Anvil Machine %s status.upgrade %+v, want Verified %s -> %s", w.anvil.Name, up, oldVersion, newVersion)
		}
	}
	t.Logf("MachineDeployment %s -> %s in place on both workers in %s", oldVersion, newVersion, since(step))

	// 4. The next minor, whose kubelet fails on the host: rolled back, and
	// reported to Cluster API, which keeps the Machine.
	step = time.Now()
	s.setFailure(failVersion, failReason)
	s.patchMD(t, func(spec *clusterv1.MachineSpec) { spec.Version = failVersion })
	var failed, untouched *worker
	s.eventually(t, 3*time.Minute, "Cluster API to report the failed in-place update", func(ctx context.Context) (bool, string) {
		ws, err := s.workers(ctx)
		if err != nil {
			return false, err.Error()
		}
		failed, untouched = nil, nil
		for _, w := range ws {
			if c := meta.FindStatusCondition(w.machine.Status.Conditions, clusterv1.MachineUpdatingCondition); c != nil &&
				c.Status == metav1.ConditionTrue && c.Reason == clusterv1.MachineInPlaceUpdateFailedReason {
				failed = w
			} else {
				untouched = w
			}
		}
		if len(ws) != 2 || failed == nil || untouched == nil {
			var d []string
			for _, w := range ws {
				d = append(d, describe(w.machine))
			}
			return false, strings.Join(d, "; ")
		}
		up := failed.anvil.Status.Upgrade
		if up == nil || up.State != metalv1.UpgradeFailed || up.Version != failVersion {
			return false, fmt.Sprintf("Anvil Machine %s status.upgrade %+v", failed.anvil.Name, up)
		}
		return true, ""
	})
	checkFailed(t, failed, untouched, sameAs(before))
	// Cluster API keeps asking and gets the agent's reason each time: seen
	// twice for the Machine in its core manager's log.
	var logged []string
	s.eventually(t, 2*time.Minute, "Cluster API to ask again and get the failure again", func(context.Context) (bool, string) {
		logged = nil
		for _, line := range strings.Split(s.coreLog(t), "\n") {
			if strings.Contains(line, "got failure response") && strings.Contains(line, failed.anvil.Name) && strings.Contains(line, failReason) {
				logged = append(logged, line)
			}
		}
		return len(logged) >= 2, fmt.Sprintf("%d failure responses with the agent's reason in the core manager's log", len(logged))
	})
	t.Logf("Cluster API's core manager logs the extension's answer:\n%s", logged[0])
	ws, err := s.workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.machine.UID == failed.machine.UID {
			checkFailed(t, w, nil, sameAs(before))
		}
	}
	t.Logf("failed in-place update to %s reported to Cluster API in %s: %s", failVersion, since(step), describe(failed.machine))

	// 5. The admin retries the plan on the Anvil Machine, as the answer
	// says; this time the kubelet is healthy and the rollout completes.
	step = time.Now()
	s.setFailure("", "")
	retry := client.MergeFrom(failed.anvil.DeepCopy())
	metav1.SetMetaDataAnnotation(&failed.anvil.ObjectMeta, machine.AnnotationRetryUpgrade, failed.anvil.Status.Upgrade.PlanID)
	if err := s.c.Patch(ctx, failed.anvil, retry); err != nil {
		t.Fatal(err)
	}
	s.waitWorkers(t, 4*time.Minute, 2, failVersion, "both workers upgraded in place to "+failVersion+" after the retry", sameAs(before))
	t.Logf("retried: MachineDeployment on %s in place in %s", failVersion, since(step))

	added, errs := mw.newMachines()
	if len(added) > 0 {
		t.Errorf("Cluster API created Machines %v during the in-place updates", added)
	}
	if len(errs) > 0 {
		t.Logf("the Machine watch was resumed after: %v", errs)
	}

	// 6. Another class is no in-place change: Cluster API replaces the
	// Machines one at a time, and Anvil wipes and reuses their Hosts.
	step = time.Now()
	oldHosts := map[string]bool{}
	for _, w := range before {
		oldHosts[w.host.Name] = true
	}
	s.createAnvilMachineTemplate(t, "workers-b", "sim-ci-b")
	s.patchMD(t, func(spec *clusterv1.MachineSpec) { spec.InfrastructureRef.Name = "workers-b" })
	replaced := s.waitWorkers(t, 5*time.Minute, 2, failVersion, "both workers replaced onto class sim-ci-b", func(w *worker) string {
		switch {
		case known[w.machine.UID]:
			return "Machine " + w.machine.Name + " not replaced yet"
		case w.anvil.Spec.MachineClassRef.Name != "sim-ci-b":
			return "Anvil Machine " + w.anvil.Name + " of class " + w.anvil.Spec.MachineClassRef.Name
		case !oldHosts[w.host.Name]:
			return fmt.Sprintf("Machine %s on Host %s, not one of the old workers' %v", w.machine.Name, w.host.Name, oldHosts)
		}
		return ""
	})
	wiped := map[string]bool{}
	for _, e := range s.eventsOf(simhost.EventWiped) {
		wiped[e.Host.Name] = true
	}
	for _, w := range replaced {
		if !wiped[w.host.Name] {
			t.Errorf("Host %s runs %s but was never wiped", w.host.Name, w.machine.Name)
		}
	}
	t.Logf("both workers replaced onto class sim-ci-b, their Hosts wiped and reused, in %s; whole test %s", since(step), since(start))

	// The cluster's private keys and the bootstrap tokens went through
	// Anvil (the bootstrap data it delivered) and never into its logs.
	s.collectSecrets(t)
	s.noSecretsInLogs(t)
}

// sameAs checks a worker is one of before's Machines on the same Host,
// not rebooted (the agent's and the Node's boot IDs unchanged).
func sameAs(before []*worker) func(*worker) string {
	return func(w *worker) string {
		for _, b := range before {
			if b.machine.UID != w.machine.UID {
				continue
			}
			switch {
			case w.host.Name != b.host.Name:
				return fmt.Sprintf("Machine %s moved from Host %s to %s", w.machine.Name, b.host.Name, w.host.Name)
			case w.agentBootID != b.agentBootID || w.node.Status.NodeInfo.BootID != b.node.Status.NodeInfo.BootID:
				return fmt.Sprintf("Host %s rebooted (agent boot %s -> %s, Node boot %s -> %s)", w.host.Name, b.agentBootID, w.agentBootID,
					b.node.Status.NodeInfo.BootID, w.node.Status.NodeInfo.BootID)
			}
			return ""
		}
		return "Machine " + w.machine.Name + " (" + string(w.machine.UID) + ") is not one of the first workers"
	}
}

// checkFailed checks what a failed in-place update left: the kubelet
// rolled back on the same, not rebooted Host; Anvil's record of it with
// the agent's reason; and Cluster API's Machine on the new version,
// updating, not up to date. untouched (if not nil) was not started.
func checkFailed(t *testing.T, failed, untouched *worker, same func(*worker) string) {
	t.Helper()
	m := failed.machine
	if why := same(failed); why != "" {
		t.Error(why)
	}
	if up := failed.anvil.Status.Upgrade; up == nil || !strings.Contains(up.Message, failReason) || up.FromVersion != newVersion {
		t.Errorf("Anvil Machine %s status.upgrade %+v: want Failed from %s with the agent's reason %q", failed.anvil.Name, up, newVersion, failReason)
	}
	if c := meta.FindStatusCondition(failed.anvil.Status.Conditions, metalv1.ConditionUpdating); c == nil || c.Status != metav1.ConditionTrue ||
		c.Reason != metalv1.ReasonInPlaceUpdateFail || !strings.Contains(c.Message, failReason) {
		t.Errorf("Anvil Machine %s Updating %+v: want True, %s, with the agent's reason", failed.anvil.Name, c, metalv1.ReasonInPlaceUpdateFail)
	}
	if v := failed.node.Status.NodeInfo.KubeletVersion; v != newVersion || failed.anvil.Status.Version != newVersion {
		t.Errorf("Node %s runs kubelet %s, Anvil Machine status.version %s: want both rolled back to %s", failed.node.Name, v, failed.anvil.Status.Version, newVersion)
	}
	if !failed.node.Spec.Unschedulable {
		t.Errorf("Node %s is schedulable after the failed upgrade: Anvil keeps it cordoned until an admin acts", failed.node.Name)
	}
	if m.Spec.Version != failVersion {
		t.Errorf("CAPI Machine %s spec.version %s, want %s (set by Cluster API for the in-place update)", m.Name, m.Spec.Version, failVersion)
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineUpToDateCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1.MachineUpToDateUpdatingReason {
		t.Errorf("CAPI Machine %s UpToDate %+v, want False with reason %s", m.Name, c, clusterv1.MachineUpToDateUpdatingReason)
	}
	if _, ok := m.Annotations[clusterv1.UpdateInProgressAnnotation]; !ok {
		t.Errorf("CAPI Machine %s lost its %s annotation", m.Name, clusterv1.UpdateInProgressAnnotation)
	}
	if untouched != nil {
		u := untouched.machine
		if why := same(untouched); why != "" {
			t.Error(why)
		}
		if u.Spec.Version != newVersion || untouched.node.Status.NodeInfo.KubeletVersion != newVersion || !isFalse(u, clusterv1.MachineUpdatingCondition) {
			t.Errorf("the other worker was touched while the first failed: %s, Node kubelet %s", describe(u), untouched.node.Status.NodeInfo.KubeletVersion)
		}
	}
}

// controlPlaneHost is the Host of the control-plane Machine.
func (s *stack) controlPlaneHost(t *testing.T) string {
	t.Helper()
	m := &metalv1.Machine{}
	if err := s.c.Get(context.Background(), types.NamespacedName{Namespace: s.ns, Name: cpName}, m); err != nil {
		t.Fatal(err)
	}
	if m.Status.HostRef == nil {
		t.Fatalf("the control-plane Anvil Machine %s has no Host", cpName)
	}
	return m.Status.HostRef.Name
}

// owningMachineSet is the name of the MachineSet that controls m.
func (s *stack) owningMachineSet(t *testing.T, m *clusterv1.Machine) string {
	t.Helper()
	if o := metav1.GetControllerOf(m); o != nil && o.Kind == "MachineSet" {
		return o.Name
	}
	t.Fatalf("Machine %s has no MachineSet controller: %v", m.Name, m.OwnerReferences)
	return ""
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
