package simhost_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/simhost"
)

const (
	oldVersion = "v1.36.4"
	newVersion = "v1.37.2" // the envtest API server's version
)

var env *envtest.Env

func TestMain(m *testing.M) {
	if _, err := os.Stat("../../bin/kube-apiserver"); err != nil {
		// Let the test itself skip (or fail under CI) with the reason.
		os.Exit(m.Run())
	}
	envtest.Run(m, &env)
}

// stack is one test's API namespace, BMC emulator, both anvil processes
// and the fleet simulating the Hosts.
type stack struct {
	ns        string
	c         client.Client
	fleet     *simhost.Fleet
	anvil     *simhost.Anvil
	artifacts string // the HTTP boot server's artifact directory

	mu       sync.Mutex
	failHost string // Host whose next upgrade the agent fails
	events   []simhost.Event
}

func newStack(t *testing.T, hosts int) *stack {
	t.Helper()
	if env == nil {
		need.OrSkip(t, "bin/kube-apiserver missing: run `make tools`")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &stack{ns: env.Namespace(t), c: env.Client}
	tb := simhost.NewTestbed(t, ctx, simhost.TestbedOptions{Client: s.c, Namespace: s.ns, WriteKubeconfig: env.WriteKubeconfig, Hosts: hosts, KeepLogsEnv: "SIMHOST_KEEP_LOGS"})
	s.artifacts = tb.Artifacts
	class, err := simhost.Class(simhost.ClassOptions{Namespace: s.ns, ArtifactDir: tb.Artifacts, Versions: []string{oldVersion, newVersion}})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s.c, class)
	s.anvil = tb.StartAnvil(t, ctx, "--bmc-call-timeout", "10s", "--machine-boot-timeout", "3m", "--machine-join-timeout", "3m")

	s.fleet, err = simhost.New(simhost.Options{Config: env.Config, Namespace: s.ns, BootURL: s.anvil.BootURL,
		POSTDelay: 300 * time.Millisecond, KernelBootDelay: time.Second, KubeletStartDelay: 200 * time.Millisecond, PollInterval: time.Second, IgnorePollHint: true,
		ApplyDelay: 500 * time.Millisecond, WipeDelay: 200 * time.Millisecond, Seed: 1,
		FailUpgrade: func(h types.NamespacedName, _ string) string {
			s.mu.Lock()
			defer s.mu.Unlock()
			if h.Name == s.failHost {
				return "simulated: the new kubelet failed its health check; rolled back"
			}
			return ""
		},
		// A host booted with bootstrap data runs its Machine's version.
		KubeletVersionFor: simhost.MachineVersion(s.c),
		OnEvent: func(e simhost.Event) {
			s.mu.Lock()
			s.events = append(s.events, e)
			s.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.fleet.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fleet: %v", err)
		}
		if t.Failed() {
			t.Logf("fleet stats: %+v", s.fleet.Stats())
		}
	})
	for _, h := range simhost.Hosts(simhost.HostsOptions{Namespace: s.ns, Count: hosts, BMCAddress: func(i int) string {
		return tb.BMCAddress(i)
	}}) {
		mustCreate(t, s.c, h)
	}
	return s
}

func mustCreate(t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), o); err != nil {
		t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

// eventually is need.Eventually.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	need.Eventually(t, timeout, what, cond)
}

func (s *stack) machines(ctx context.Context) ([]metalv1.Machine, error) {
	var l metalv1.MachineList
	err := s.c.List(ctx, &l, client.InNamespace(s.ns))
	return l.Items, err
}

func (s *stack) node(ctx context.Context, m *metalv1.Machine) (*corev1.Node, error) {
	n := &corev1.Node{}
	if m.Status.NodeRef == nil {
		return nil, fmt.Errorf("Machine %s has no nodeRef", m.Name)
	}
	return n, s.c.Get(ctx, types.NamespacedName{Name: m.Status.NodeRef.Name}, n)
}

func (s *stack) host(ctx context.Context, name string) (*metalv1.Host, error) {
	h := &metalv1.Host{}
	return h, s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: name}, h)
}

func describe(m *metalv1.Machine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s phase=%s", m.Name, m.Status.Phase)
	for _, c := range m.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			fmt.Fprintf(&b, " %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return b.String()
}

// upgradedInPlace holds for a Machine whose Node and agent run version,
// Ready to schedule, on the boot bootIDs recorded for its Host.
func (s *stack) upgradedInPlace(version string, bootIDs map[string]string) func(ctx context.Context, m *metalv1.Machine) (bool, string) {
	return func(ctx context.Context, m *metalv1.Machine) (bool, string) {
		n, err := s.node(ctx, m)
		if err != nil {
			return false, err.Error()
		}
		h, err := s.host(ctx, m.Status.HostRef.Name)
		if err != nil {
			return false, err.Error()
		}
		switch {
		case !meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionUpToDate) || m.Status.Version != version:
			return false, describe(m)
		case n.Status.NodeInfo.KubeletVersion != version || n.Spec.Unschedulable:
			return false, fmt.Sprintf("Node %s kubelet %s unschedulable %v", n.Name, n.Status.NodeInfo.KubeletVersion, n.Spec.Unschedulable)
		case h.Status.Agent == nil || h.Status.Agent.BootID != bootIDs[h.Name]:
			return false, fmt.Sprintf("Host %s rebooted during the upgrade (boot ID changed)", h.Name)
		case h.Status.Agent.KubeletVersion != version:
			return false, fmt.Sprintf("Host %s agent reports kubelet %s", h.Name, h.Status.Agent.KubeletVersion)
		}
		return true, ""
	}
}

// waitMachines waits until the namespace has want Machines and every one
// satisfies ok.
func (s *stack) waitMachines(t *testing.T, want int, what string, ok func(ctx context.Context, m *metalv1.Machine) (bool, string)) []metalv1.Machine {
	t.Helper()
	var ms []metalv1.Machine
	eventually(t, 4*time.Minute, what, func(ctx context.Context) (bool, string) {
		var err error
		if ms, err = s.machines(ctx); err != nil {
			return false, err.Error()
		}
		if len(ms) != want {
			return false, fmt.Sprintf("%d Machines", len(ms))
		}
		for i := range ms {
			if good, why := ok(ctx, &ms[i]); !good {
				return false, why
			}
		}
		return true, ""
	})
	return ms
}

// TestSimulatedHostsJoinUpgradeAndWipe drives a MachineSet through `anvil
// serve` with simulated hosts only: three Machines Ready from a real
// network boot (script, credential, config, agent report, Node), an
// in-place upgrade whose first Machine fails (rolled back, cordoned, the
// rollout paused with the others untouched), its retry and the rest of
// the rollout, then a scale-down with the wipe reported
// by the agent and the Host released.
func TestSimulatedHostsJoinUpgradeAndWipe(t *testing.T) {
	s := newStack(t, 4)
	ctx := context.Background()
	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms", Namespace: s.ns}, Spec: metalv1.MachineSetSpec{
		Replicas: ptr.To[int32](3),
		Strategy: metalv1.RolloutStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxFailures: ptr.To[int32](1)},
		Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "sim"}, Version: oldVersion}},
	}}
	mustCreate(t, s.c, ms)

	bootIDs := map[string]string{} // Host -> agent boot ID once Ready
	ready := s.waitMachines(t, 3, "3 Machines Ready", func(ctx context.Context, m *metalv1.Machine) (bool, string) {
		if !meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady) {
			return false, describe(m)
		}
		n, err := s.node(ctx, m)
		if err != nil {
			return false, err.Error()
		}
		h, err := s.host(ctx, m.Status.HostRef.Name)
		if err != nil {
			return false, err.Error()
		}
		switch {
		case n.Spec.ProviderID != "anvil://"+string(h.UID):
			return false, fmt.Sprintf("Node %s providerID %q, Host UID %s", n.Name, n.Spec.ProviderID, h.UID)
		case n.Status.NodeInfo.KubeletVersion != oldVersion:
			return false, fmt.Sprintf("Node %s kubelet %s", n.Name, n.Status.NodeInfo.KubeletVersion)
		case h.Status.BootCredential == nil || h.Status.BootCredential.ConsumedAt == nil || h.Status.BootCredential.BootRequestID != m.Status.Boot.RequestID:
			return false, fmt.Sprintf("Host %s: config not fetched with this boot's credential", h.Name)
		case h.Status.Agent == nil || h.Status.Agent.BootID == "":
			return false, fmt.Sprintf("Host %s: no agent report", h.Name)
		}
		bootIDs[h.Name] = h.Status.Agent.BootID
		return true, ""
	})

	// The first Machine in rollout order (by name) fails its upgrade once:
	// the set pauses with the others still on the old version.
	last := ready[0]
	for _, m := range ready {
		if m.Name < last.Name {
			last = m
		}
	}
	s.mu.Lock()
	s.failHost = last.Status.HostRef.Name
	s.mu.Unlock()
	patch := client.MergeFrom(ms.DeepCopy())
	ms.Spec.Template.Spec.Version = newVersion
	if err := s.c.Patch(ctx, ms, patch); err != nil {
		t.Fatal(err)
	}
	var planID string
	s.waitMachines(t, 3, "rollout: "+last.Name+" failed its upgrade, rolled back; the others wait", func(ctx context.Context, m *metalv1.Machine) (bool, string) {
		n, err := s.node(ctx, m)
		if err != nil {
			return false, err.Error()
		}
		if m.Name == last.Name {
			c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionUpdating)
			if c == nil || c.Reason != metalv1.ReasonInPlaceUpdateFail || !strings.Contains(c.Message, "failed its health check") {
				return false, describe(m)
			}
			if n.Status.NodeInfo.KubeletVersion != oldVersion || !n.Spec.Unschedulable {
				return false, fmt.Sprintf("failed Node %s: kubelet %s, unschedulable %v (want rolled back and cordoned)", n.Name, n.Status.NodeInfo.KubeletVersion, n.Spec.Unschedulable)
			}
			planID = m.Status.Upgrade.PlanID
			return true, ""
		}
		if m.Spec.Version != oldVersion || m.Status.Upgrade != nil || n.Status.NodeInfo.KubeletVersion != oldVersion || n.Spec.Unschedulable {
			return false, fmt.Sprintf("%s touched while the rollout should be paused: spec %s, node kubelet %s, unschedulable %v", m.Name, m.Spec.Version, n.Status.NodeInfo.KubeletVersion, n.Spec.Unschedulable)
		}
		return true, ""
	})
	eventually(t, time.Minute, "MachineSet rollout paused", func(ctx context.Context) (bool, string) {
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(ms), ms); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(ms.Status.Conditions, machine.ConditionRolloutPaused)
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, last.Name), fmt.Sprintf("%+v", ms.Status.Conditions)
	})

	// Retry the failed plan: this time the agent succeeds.
	s.mu.Lock()
	s.failHost = ""
	s.mu.Unlock()
	m := &metalv1.Machine{}
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: last.Name}, m); err != nil {
		t.Fatal(err)
	}
	mp := client.MergeFrom(m.DeepCopy())
	metav1.SetMetaDataAnnotation(&m.ObjectMeta, machine.AnnotationRetryUpgrade, planID)
	if err := s.c.Patch(ctx, m, mp); err != nil {
		t.Fatal(err)
	}
	s.waitMachines(t, 3, "all upgraded in place, same boot", s.upgradedInPlace(newVersion, bootIDs))
	if st := s.fleet.Stats(); st.Upgrades != 3 || st.UpgradesFailed != 1 {
		t.Errorf("fleet applied %d upgrades and failed %d; want 3 and 1", st.Upgrades, st.UpgradesFailed)
	}

	// Scale down: the deleted Machine's Host is wiped by its agent and released.
	patch = client.MergeFrom(ms.DeepCopy())
	ms.Spec.Replicas = ptr.To[int32](2)
	if err := s.c.Patch(ctx, ms, patch); err != nil {
		t.Fatal(err)
	}
	var released string
	eventually(t, 4*time.Minute, "a Host wiped by its agent and Available again", func(ctx context.Context) (bool, string) {
		var hl metalv1.HostList
		if err := s.c.List(ctx, &hl, client.InNamespace(s.ns)); err != nil {
			return false, err.Error()
		}
		var states []string
		for _, h := range hl.Items {
			states = append(states, h.Name+"="+string(h.Status.State))
			c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionWiped)
			if h.Status.State == metalv1.HostAvailable && c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "simulated") {
				released = h.Name
				return true, ""
			}
		}
		return false, strings.Join(states, " ")
	})
	if st := s.fleet.Stats(); st.Wipes != 1 {
		t.Errorf("fleet wiped %d times, want 1", st.Wipes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var wiped bool
	for _, e := range s.events {
		if e.Kind == simhost.EventWiped && e.Host.Name == released {
			wiped = true
		}
	}
	if !wiped {
		t.Errorf("no Wiped event for %s", released)
	}
}
