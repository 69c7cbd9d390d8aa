package machine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/token"
)

const kubeletVersion = "v1.37.2"

// addClass creates the Flatcar example class in the namespace.
func (e *machineEnv) addClass(t *testing.T, wipe bool) *metalv1.MachineClass {
	t.Helper()
	mc := loadExample(t, "machineclass-flatcar.yaml")
	mc.Namespace = e.ns
	mc.Spec.Wipe = &wipe
	mustCreate(t, e.c, mc)
	waitConfigValid(t, e.c, client.ObjectKeyFromObject(mc), metav1.ConditionTrue)
	return mc
}

// addHost registers a Host behind system i of the BMC emulator.
func (e *machineEnv) addHost(t *testing.T, i int, labels map[string]string) *metalv1.Host {
	t.Helper()
	id := fmt.Sprintf("node-%d", i)
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("host-%d", i), Namespace: e.ns, Labels: labels},
		Spec: metalv1.HostSpec{
			BMC:      metalv1.BMC{Address: "redfish+" + e.sim.URL() + e.sim.SystemPath(id), CredentialsName: "bmc", AllowPlainHTTP: true}, // the emulator serves plain HTTP
			BootMACs: []string{fmt.Sprintf("52:54:00:aa:%02x:%02x", len(e.ns)%256, i)},
		}}
	mustCreate(t, e.c, h)
	return h
}

func (e *machineEnv) addMachine(t *testing.T, name string, selector map[string]string) *metalv1.Machine {
	t.Helper()
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"},
		HostSelector:    metav1.LabelSelector{MatchLabels: selector},
		Version:         kubeletVersion,
	}}
	mustCreate(t, e.c, m)
	return m
}

func (e *machineEnv) machine(ctx context.Context, name string) (*metalv1.Machine, error) {
	m := &metalv1.Machine{}
	return m, e.c.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: name}, m)
}

func (e *machineEnv) host(ctx context.Context, name string) (*metalv1.Host, error) {
	h := &metalv1.Host{}
	return h, e.c.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: name}, h)
}

func describe(m *metalv1.Machine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", m.Status.Phase)
	for _, c := range m.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

// waitPhase waits for the Machine's phase and returns it.
func (e *machineEnv) waitPhase(t *testing.T, name string, phase metalv1.MachinePhase, timeout time.Duration) *metalv1.Machine {
	t.Helper()
	var m *metalv1.Machine
	eventually(t, timeout, "Machine "+name+" in phase "+string(phase), func(ctx context.Context) (bool, string) {
		var err error
		if m, err = e.machine(ctx, name); err != nil {
			return false, err.Error()
		}
		return m.Status.Phase == phase, describe(m)
	})
	return m
}

func (e *machineEnv) waitHostState(t *testing.T, name string, state metalv1.HostState) *metalv1.Host {
	t.Helper()
	var h *metalv1.Host
	eventually(t, 60*time.Second, "Host "+name+" in state "+string(state), func(ctx context.Context) (bool, string) {
		var err error
		if h, err = e.host(ctx, name); err != nil {
			return false, err.Error()
		}
		return h.Status.State == state, fmt.Sprintf("state=%s power=%s conditions=%v", h.Status.State, h.Status.PowerState, h.Status.Conditions)
	})
	return h
}

// playHostBoot does what a booted host does, seen from the API: its config
// is fetched with this boot's credential (the config server records that
// in Host status) and its kubelet mints nothing itself: we mint the token
// the config would carry.
func (e *machineEnv) playHostBoot(t *testing.T, m *metalv1.Machine) {
	t.Helper()
	ctx := context.Background()
	var h *metalv1.Host
	// The Host controller acts on the boot request through the BMC first.
	eventually(t, 30*time.Second, "Host "+m.Status.HostRef.Name+" took boot "+m.Status.Boot.RequestID, func(ctx context.Context) (bool, string) {
		var err error
		if h, err = e.host(ctx, m.Status.HostRef.Name); err != nil {
			return false, err.Error()
		}
		return h.Status.BootRequestID == m.Status.Boot.RequestID, "took " + h.Status.BootRequestID
	})
	orig := h.DeepCopy()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	exp := metav1.NewTime(now.Add(5 * time.Minute))
	h.Status.BootCredential = &metalv1.BootCredentialStatus{Hash: "sha256:test", IssuedAt: now, ExpiresAt: exp, ConsumedAt: &now,
		ConsumedFrom: "10.0.0.50", BootRequestID: m.Status.Boot.RequestID}
	if err := e.c.Status().Patch(ctx, h, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	if _, err := token.Mint(ctx, e.cs, token.MintOptions{Owner: token.Owner{
		Host:    token.ObjectRef{Namespace: h.Namespace, Name: h.Name, UID: h.UID},
		Machine: token.ObjectRef{Namespace: m.Namespace, Name: m.Name, UID: m.UID},
	}, TTL: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
}

// playKubelet registers the Node the way a kubelet started with
// --provider-id does, Ready or not.
func (e *machineEnv) playKubelet(t *testing.T, m *metalv1.Machine, ready bool) *corev1.Node {
	return e.playKubeletVersion(t, m, ready, kubeletVersion)
}

func (e *machineEnv) playKubeletVersion(t *testing.T, m *metalv1.Machine, ready bool, version string) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: m.Name + "-" + e.ns}, Spec: corev1.NodeSpec{ProviderID: m.Status.ProviderID}}
	mustCreate(t, e.c, n)
	t.Cleanup(func() { _ = e.c.Delete(context.Background(), n) })
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.50"}, {Type: corev1.NodeHostName, Address: m.Name}}
	n.Status.NodeInfo.KubeletVersion = version
	if err := e.c.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	return n
}

// playWipe reports the agent's wipe result for the Host's current
// deprovisioning, as agent/server/kube records it.
func (e *machineEnv) playWipe(t *testing.T, hostName string, ok bool, msg string) {
	t.Helper()
	ctx := context.Background()
	// The agent reports once it booted for the wipe: the Host asks for a
	// wipe boot (a Host can be Deprovisioning a moment before that request,
	// whose spec change a report made earlier would be older than).
	var h *metalv1.Host
	eventually(t, 60*time.Second, "Host "+hostName+" Deprovisioning with a wipe boot", func(ctx context.Context) (bool, string) {
		var err error
		if h, err = e.host(ctx, hostName); err != nil {
			return false, err.Error()
		}
		br := h.Spec.BootRequest
		return h.Status.State == metalv1.HostDeprovisioning && br != nil && br.Purpose == metalv1.BootPurposeWipe && h.Status.BootRequestID == br.ID,
			fmt.Sprintf("state=%s bootRequest=%+v acked=%s", h.Status.State, br, h.Status.BootRequestID)
	})
	orig := h.DeepCopy()
	c := metav1.Condition{Type: metalv1.ConditionWiped, Status: metav1.ConditionTrue, Reason: "Wiped", Message: msg, ObservedGeneration: h.Generation}
	if !ok {
		c.Status, c.Reason = metav1.ConditionFalse, metalv1.ReasonWipeFailed
	}
	meta.SetStatusCondition(&h.Status.Conditions, c)
	if err := e.c.Status().Patch(ctx, h, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
}

// TestProvisionJoinDeleteAndReclaim is the whole life of a Machine: claim,
// one-time PXE boot through the BMC, boot report, Node, Ready, token
// revoked; then delete: drain, Node gone, wipe boot, release, power off;
// and a second Machine claims the Host again.
func TestProvisionJoinDeleteAndReclaim(t *testing.T) {
	e := newMachineEnv(t, 1, fastOptions())
	ctx := context.Background()
	e.addClass(t, true)
	e.addHost(t, 0, map[string]string{"role": "worker", metalv1.LabelFailureDomain: "rack-a"})
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.addMachine(t, "m1", map[string]string{"role": "worker"})

	m := e.waitPhase(t, "m1", metalv1.MachineProvisioning, 30*time.Second)
	if m.Status.HostRef == nil || m.Status.HostRef.Name != "host-0" || m.Status.Boot == nil {
		t.Fatalf("Machine did not record its Host and boot: %s", describe(m))
	}
	h := e.waitHostState(t, "host-0", metalv1.HostProvisioning)
	if h.Spec.ConsumerRef == nil || h.Spec.ConsumerRef.UID != m.UID || h.Labels[metalv1.LabelConsumerUID] != string(m.UID) {
		t.Fatalf("Host claim: consumerRef=%v labels=%v", h.Spec.ConsumerRef, h.Labels)
	}
	if want := "anvil://" + string(h.UID); m.Status.ProviderID != want {
		t.Fatalf("providerID %q, want %q", m.Status.ProviderID, want)
	}
	// The BMC really got a one-time PXE boot and power on.
	eventually(t, 30*time.Second, "BMC powered on with a one-time PXE override", func(context.Context) (bool, string) {
		evs := e.sim.Events()
		for _, ev := range evs {
			if ev.SystemID == "node-0" && ev.On && ev.BootTarget == "Pxe" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("power events: %+v", evs)
	})
	eventually(t, 30*time.Second, "Machine says the network boot is under way", func(ctx context.Context) (bool, string) {
		m, _ = e.machine(ctx, "m1")
		c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionInfrastructureReady)
		return c != nil && c.Reason == metalv1.ReasonNetworkBooting, describe(m)
	})

	e.playHostBoot(t, m)
	m = e.waitPhase(t, "m1", metalv1.MachineJoining, 30*time.Second)
	if c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionNodeReady); c == nil || c.Reason != metalv1.ReasonWaitingForNode {
		t.Fatalf("joining Machine should wait for its Node: %s", describe(m))
	}
	n := e.playKubelet(t, m, true)
	m = e.waitPhase(t, "m1", metalv1.MachineRunning, 30*time.Second)
	if !meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady) || m.Status.NodeRef == nil || m.Status.NodeRef.Name != n.Name ||
		m.Status.Version != kubeletVersion || len(m.Status.Addresses) != 2 {
		t.Fatalf("running Machine: %s nodeRef=%v version=%s addresses=%v", describe(m), m.Status.NodeRef, m.Status.Version, m.Status.Addresses)
	}
	e.waitHostState(t, "host-0", metalv1.HostProvisioned)
	eventually(t, 30*time.Second, "bootstrap tokens revoked once the Node joined", func(ctx context.Context) (bool, string) {
		infos, err := token.List(ctx, e.cs, token.ListOptions{MachineUID: m.UID})
		return err == nil && len(infos) == 0, fmt.Sprintf("%d tokens, err %v", len(infos), err)
	})

	// Delete: the Node is cordoned and deleted, the Host wipe-boots.
	if err := e.c.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Node deleted", func(ctx context.Context) (bool, string) {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(n), &corev1.Node{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	e.playWipe(t, "host-0", true, "erased 1 disk")
	eventually(t, 30*time.Second, "Machine gone", func(ctx context.Context) (bool, string) {
		_, err := e.machine(ctx, "m1")
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	h = e.waitHostState(t, "host-0", metalv1.HostAvailable)
	if h.Spec.ConsumerRef != nil || h.Spec.BootRequest != nil || h.Spec.Online || h.Labels[metalv1.LabelConsumerUID] != "" {
		t.Fatalf("released Host still carries the claim: %+v labels=%v", h.Spec, h.Labels)
	}
	eventually(t, 30*time.Second, "released Host powered off", func(context.Context) (bool, string) {
		return e.sim.PowerState("node-0") == "Off", e.sim.PowerState("node-0")
	})

	// The Host serves the next Machine.
	e.addMachine(t, "m2", map[string]string{"role": "worker"})
	m2 := e.waitPhase(t, "m2", metalv1.MachineProvisioning, 30*time.Second)
	if m2.Status.HostRef == nil || m2.Status.HostRef.Name != "host-0" {
		t.Fatalf("second Machine: %s", describe(m2))
	}
}

// TestWaitingForHardwareIsWokenByANewHost: no matching Host, a readable
// reason; registering one makes the Machine go on without polling.
func TestWaitingForHardwareIsWokenByANewHost(t *testing.T) {
	e := newMachineEnv(t, 2, fastOptions())
	e.addClass(t, true)
	e.addHost(t, 0, map[string]string{"role": "storage"})
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.addMachine(t, "m1", map[string]string{"role": "worker"})
	m := e.waitPhase(t, "m1", metalv1.MachineWaitingForHardware, 30*time.Second)
	c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionInfrastructureReady)
	if c == nil || c.Reason != metalv1.ReasonWaitingForHardware || !strings.Contains(c.Message, "role=worker") {
		t.Fatalf("waiting Machine should say what it asked for: %s", describe(m))
	}
	e.addHost(t, 1, map[string]string{"role": "worker"})
	m = e.waitPhase(t, "m1", metalv1.MachineProvisioning, 60*time.Second)
	if m.Status.HostRef.Name != "host-1" {
		t.Fatalf("claimed %s, want host-1", m.Status.HostRef.Name)
	}
}

// TestNoDoubleClaimWithRacingControllers: two managers (two "anvil serve"
// replicas without leader election) and more Machines than Hosts: every
// Host has one Machine, no Machine has two Hosts.
func TestNoDoubleClaimWithRacingControllers(t *testing.T) {
	e := newMachineEnv(t, 3, fastOptions())
	stop2 := e.startManager(t)
	defer stop2()
	e.addClass(t, true)
	for i := range 3 {
		e.addHost(t, i, map[string]string{"pool": "a"})
	}
	for i := range 3 {
		e.waitHostState(t, fmt.Sprintf("host-%d", i), metalv1.HostAvailable)
	}
	var wg sync.WaitGroup
	for i := range 7 {
		wg.Go(func() { e.addMachine(t, fmt.Sprintf("m%d", i), map[string]string{"pool": "a"}) })
	}
	wg.Wait()
	eventually(t, 60*time.Second, "3 Machines provisioning, 4 waiting", func(ctx context.Context) (bool, string) {
		var list metalv1.MachineList
		if err := e.c.List(ctx, &list, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		count := map[metalv1.MachinePhase]int{}
		for _, m := range list.Items {
			count[m.Status.Phase]++
			if m.Status.Phase == metalv1.MachinePending || m.Status.Phase == "" {
				count[metalv1.MachinePhase("pending:"+m.Name)]++
			}
		}
		return count[metalv1.MachineProvisioning] == 3 && count[metalv1.MachineWaitingForHardware] == 4, fmt.Sprint(count)
	})
	// Let both managers keep racing a little, then check the invariants.
	time.Sleep(2 * time.Second)
	var hosts metalv1.HostList
	if err := e.c.List(context.Background(), &hosts, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	owners := map[types.UID]string{}
	for _, h := range hosts.Items {
		if h.Spec.ConsumerRef == nil {
			t.Fatalf("Host %s is not claimed", h.Name)
		}
		if prev, dup := owners[h.Spec.ConsumerRef.UID]; dup {
			t.Fatalf("Machine %s holds Hosts %s and %s", h.Spec.ConsumerRef.Name, prev, h.Name)
		}
		owners[h.Spec.ConsumerRef.UID] = h.Name
	}
	var list metalv1.MachineList
	if err := e.c.List(context.Background(), &list, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	for _, m := range list.Items {
		host, holds := owners[m.UID]
		switch {
		case holds && (m.Status.HostRef == nil || m.Status.HostRef.Name != host):
			t.Errorf("Machine %s holds %s but its status says %v", m.Name, host, m.Status.HostRef)
		case !holds && m.Status.HostRef != nil:
			t.Errorf("Machine %s claims %s in status without holding it", m.Name, m.Status.HostRef.Name)
		}
	}
}

// TestBootTimeoutRebootsOnceThenFails: a host that never boots is
// rebooted once (a new boot request, so a new PXE boot), then the Machine
// fails with the reason and keeps its Host for inspection.
func TestBootTimeoutRebootsOnceThenFails(t *testing.T) {
	opts := fastOptions()
	opts.BootTimeout = 3 * time.Second
	e := newMachineEnv(t, 1, opts)
	e.addClass(t, true)
	e.addHost(t, 0, nil)
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.addMachine(t, "m1", nil)
	m := e.waitPhase(t, "m1", metalv1.MachineProvisioning, 30*time.Second)
	first := m.Status.Boot.RequestID
	m = e.waitPhase(t, "m1", metalv1.MachineFailed, 60*time.Second)
	if m.Status.FailureReason != metalv1.ReasonBootTimeout || m.Status.Boot.Attempt != 2 || m.Status.Boot.RequestID == first {
		t.Fatalf("failed Machine: reason=%s attempt=%d boot=%s (first %s) %s", m.Status.FailureReason, m.Status.Boot.Attempt, m.Status.Boot.RequestID, first, describe(m))
	}
	if !strings.Contains(m.Status.FailureMessage, "host-0") {
		t.Fatalf("failure message should name the Host: %q", m.Status.FailureMessage)
	}
	h, _ := e.host(context.Background(), "host-0")
	if h.Status.BootRequestID != m.Status.Boot.RequestID {
		t.Fatalf("the retry did not reach the BMC: Host took %q, want %q", h.Status.BootRequestID, m.Status.Boot.RequestID)
	}
}

// TestFailedWipeSendsTheHostToError: the Machine goes, but its Host does
// not come back as Available until an admin acknowledges the failure.
func TestFailedWipeSendsTheHostToError(t *testing.T) {
	e := newMachineEnv(t, 1, fastOptions())
	ctx := context.Background()
	e.addClass(t, true)
	e.addHost(t, 0, nil)
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	m := e.addMachine(t, "m1", nil)
	e.waitPhase(t, "m1", metalv1.MachineProvisioning, 30*time.Second)
	if err := e.c.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	e.playWipe(t, "host-0", false, "sda: write failed: input/output error")
	eventually(t, 30*time.Second, "Machine gone", func(ctx context.Context) (bool, string) {
		_, err := e.machine(ctx, "m1")
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	h := e.waitHostState(t, "host-0", metalv1.HostError)
	c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionValid)
	if c == nil || c.Reason != metalv1.ReasonWipeFailed || !strings.Contains(c.Message, "input/output error") || !strings.Contains(c.Message, metalv1.AnnotationAckWipe) {
		t.Fatalf("Host in Error should say why and how to recover: %+v", c)
	}
	wiped := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionWiped)
	patch := client.MergeFrom(h.DeepCopy())
	h.Annotations = map[string]string{metalv1.AnnotationAckWipe: wiped.LastTransitionTime.UTC().Format(time.RFC3339)}
	if err := e.c.Patch(ctx, h, patch); err != nil {
		t.Fatal(err)
	}
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
}

// TestRestartMidFlowLosesNothing stops the controllers right after the
// claim and at the join, and starts new ones: the Machine ends Running on
// the same Host, with one claim.
func TestRestartMidFlowLosesNothing(t *testing.T) {
	e := newMachineEnv(t, 2, fastOptions())
	e.addClass(t, true)
	e.addHost(t, 0, nil)
	e.addHost(t, 1, nil)
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.waitHostState(t, "host-1", metalv1.HostAvailable)
	e.addMachine(t, "m1", nil)
	m := e.waitPhase(t, "m1", metalv1.MachineProvisioning, 30*time.Second)
	host := m.Status.HostRef.Name
	e.stop()
	e.stop = e.startManager(t)
	eventually(t, 30*time.Second, "boot taken after restart", func(ctx context.Context) (bool, string) {
		h, err := e.host(ctx, host)
		return err == nil && h.Status.BootRequestID == m.Status.Boot.RequestID, fmt.Sprint(err)
	})
	e.playHostBoot(t, m)
	m = e.waitPhase(t, "m1", metalv1.MachineJoining, 30*time.Second)
	e.stop()
	e.playKubelet(t, m, true)
	e.stop = e.startManager(t)
	m = e.waitPhase(t, "m1", metalv1.MachineRunning, 30*time.Second)
	if m.Status.HostRef.Name != host {
		t.Fatalf("Machine moved from %s to %s across restarts", host, m.Status.HostRef.Name)
	}
	var hosts metalv1.HostList
	if err := e.c.List(context.Background(), &hosts, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	claimed := 0
	for _, h := range hosts.Items {
		if h.Spec.ConsumerRef != nil {
			claimed++
		}
	}
	if claimed != 1 {
		t.Fatalf("%d Hosts claimed, want 1", claimed)
	}
}

// A class whose artifact URLs the request-forgery guard refuses claims no
// Host (its Hosts would get only 503s); fixed, the Machine goes on.
func TestRefusedArtifactURLsClaimNoHost(t *testing.T) {
	e := newMachineEnv(t, 1, fastOptions())
	mc := e.addClass(t, true)
	ctx := context.Background()
	key := client.ObjectKeyFromObject(mc)
	if err := e.c.Get(ctx, key, mc); err != nil {
		t.Fatal(err)
	}
	goodURL := mc.Spec.Kernel.URL
	mc.Spec.Kernel.URL = "http://169.254.169.254/latest/kernel"
	if err := e.c.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the class refuses its kernel URL", func(ctx context.Context) (bool, string) {
		got := &metalv1.MachineClass{}
		if err := e.c.Get(ctx, key, got); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionArtifactURLsAllowed)
		return c != nil && c.Status == metav1.ConditionFalse && c.ObservedGeneration == got.Generation, fmt.Sprintf("%+v", c)
	})
	e.addHost(t, 0, nil)
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.addMachine(t, "m1", nil)
	eventually(t, 30*time.Second, "the Machine waits for its class", func(ctx context.Context) (bool, string) {
		m, err := e.machine(ctx, "m1")
		if err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionInfrastructureReady)
		return c != nil && c.Reason == metalv1.ReasonClassNotReady && strings.Contains(c.Message, "spec.kernel.url") && m.Status.HostRef == nil, describe(m)
	})
	if h, err := e.host(ctx, "host-0"); err != nil || h.Spec.ConsumerRef != nil {
		t.Fatalf("host-0 claimed for a refused class: %v %+v", err, h.Spec.ConsumerRef)
	}
	if err := e.c.Get(ctx, key, mc); err != nil {
		t.Fatal(err)
	}
	mc.Spec.Kernel.URL = goodURL
	if err := e.c.Update(ctx, mc); err != nil {
		t.Fatal(err)
	}
	e.waitPhase(t, "m1", metalv1.MachineProvisioning, 60*time.Second)
}
