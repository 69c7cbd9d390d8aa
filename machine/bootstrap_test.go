package machine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/test/clustertest"
)

// bootstrapMachine is a Machine with Cluster API bootstrap data whose Node
// joins the cluster of the kubeconfig Secret workload-kubeconfig, key
// value (as an AnvilMachine makes it), booted as far as the API shows: its
// Host took the network boot and fetched its config.
func (te *targetEnv) bootstrapMachine(t *testing.T) (*metalv1.Machine, *metalv1.Host) {
	t.Helper()
	te.addClass(t, false)
	te.addHost(t, 0, map[string]string{"role": "worker"})
	te.waitHostState(t, "host-0", metalv1.HostAvailable)
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: te.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"},
		HostSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}},
		Version:         kubeletVersion,
		Bootstrap: &metalv1.MachineBootstrap{DataSecretName: "m1-bootstrap",
			KubeconfigSecretRef: &metalv1.KubeconfigSecretReference{Name: "workload-kubeconfig", Key: "value"}},
	}}
	mustCreate(t, te.c, m)
	var h *metalv1.Host
	eventually(t, 30*time.Second, "Host took the boot", func(ctx context.Context) (bool, string) {
		var err error
		if m, err = te.machine(ctx, "m1"); err != nil || m.Status.Boot == nil {
			return false, "no boot yet"
		}
		if h, err = te.host(ctx, "host-0"); err != nil {
			return false, err.Error()
		}
		return h.Status.BootRequestID == m.Status.Boot.RequestID, "took " + h.Status.BootRequestID
	})
	orig := h.DeepCopy()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	h.Status.BootCredential = &metalv1.BootCredentialStatus{Hash: "sha256:test", IssuedAt: now, ExpiresAt: metav1.NewTime(now.Add(5 * time.Minute)),
		ConsumedAt: &now, ConsumedFrom: "10.0.0.50", BootRequestID: m.Status.Boot.RequestID}
	if err := te.c.Status().Patch(context.Background(), h, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	return m, h
}

// workloadSecret writes the target's kubeconfig under key value, as
// Cluster API does, and returns it.
func (te *targetEnv) workloadSecret(t *testing.T) []byte {
	t.Helper()
	kc, err := clustertest.Kubeconfig(te.target.Config)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, te.c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: te.ns, Name: "workload-kubeconfig"}, Data: map[string][]byte{"value": kc}})
	return kc
}

// kubeadmNode registers a Ready Node in the target the way kubeadm's
// kubelet does: named by the hostname, with the given providerID (none by
// default).
func (te *targetEnv) kubeadmNode(t *testing.T, name, providerID string) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if err := te.target.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
	n.Status.NodeInfo.KubeletVersion = kubeletVersion
	if err := te.target.Client.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	return n
}

func nodeReadyCondition(ctx context.Context, te *targetEnv) (*metalv1.Machine, *metav1.Condition, error) {
	m, err := te.machine(ctx, "m1")
	if err != nil {
		return nil, nil, err
	}
	return m, meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionNodeReady), nil
}

// TestBootstrapMachineJoinsItsOwnCluster: a Machine with bootstrap data
// names the cluster its Node joins (spec.bootstrap.kubeconfigSecretRef).
// Before that Secret exists the Machine boots, says which Secret it waits
// for and does not fail; once it appears, the Node kubeadm registered
// under the Host's hostname without a providerID gets the Machine's, and
// the Machine is Running. No Anvil token is minted, and the kubeconfig
// shows nowhere.
func TestBootstrapMachineJoinsItsOwnCluster(t *testing.T) {
	te := newTargetEnv(t)
	ctx := context.Background()
	_, h := te.bootstrapMachine(t)

	eventually(t, 30*time.Second, "NodeReady=False "+metalv1.ReasonTargetUnavailable+" naming the Secret", func(ctx context.Context) (bool, string) {
		m, c, err := nodeReadyCondition(ctx, te)
		if err != nil {
			return false, err.Error()
		}
		if m.Status.FailureReason != "" {
			t.Fatalf("the Machine failed while the Secret is missing: %s", describe(m))
		}
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == metalv1.ReasonTargetUnavailable &&
			strings.Contains(c.Message, "Secret "+te.ns+"/workload-kubeconfig") && strings.Contains(c.Message, `key "value"`) &&
			strings.Contains(c.Message, "spec.bootstrap.kubeconfigSecretRef") && m.Status.Phase == metalv1.MachineJoining, describe(m)
	})

	// kubeadm's kubelet registers by hostname, without --provider-id; then
	// Cluster API writes the kubeconfig Secret.
	n := te.kubeadmNode(t, h.NodeHostname(), "")
	kc := te.workloadSecret(t)

	m := te.waitPhase(t, "m1", metalv1.MachineRunning, 30*time.Second)
	if m.Status.NodeRef == nil || m.Status.NodeRef.Name != n.Name || m.Status.FailureReason != "" {
		t.Fatalf("nodeRef %v, failure %q, want Node %s", m.Status.NodeRef, m.Status.FailureReason, n.Name)
	}
	got := &corev1.Node{}
	if err := te.target.Client.Get(ctx, client.ObjectKeyFromObject(n), got); err != nil {
		t.Fatal(err)
	}
	if want := metalv1.ProviderIDPrefix + string(h.UID); got.Spec.ProviderID != want || m.Status.ProviderID != want {
		t.Fatalf("Node providerID %q, Machine %q, want %q", got.Spec.ProviderID, m.Status.ProviderID, want)
	}
	for where, l := range map[string]func() ([]token.Info, error){
		"management": func() ([]token.Info, error) { return token.List(ctx, te.cs, token.ListOptions{MachineUID: m.UID}) },
		"target":     func() ([]token.Info, error) { return token.List(ctx, te.tcs, token.ListOptions{MachineUID: m.UID}) },
	} {
		if infos, err := l(); err != nil || len(infos) != 0 {
			t.Errorf("bootstrap tokens of the Machine in the %s cluster: %v %v, want none", where, infos, err)
		}
	}
	assertNotShown(t, te, m, kc)
}

// TestBootstrapMachineLeavesForeignNode: a Node named like the Host's
// hostname that carries another providerID is not the Machine's: Anvil
// does not touch it and the Machine's NodeReady says why it waits.
func TestBootstrapMachineLeavesForeignNode(t *testing.T) {
	te := newTargetEnv(t)
	ctx := context.Background()
	kc := te.workloadSecret(t)
	_, h := te.bootstrapMachine(t)
	const foreign = "othercloud://rack-7/slot-3"
	n := te.kubeadmNode(t, h.NodeHostname(), foreign)

	eventually(t, 30*time.Second, "NodeReady=False "+machine.ReasonNodeProviderIDMismatch, func(ctx context.Context) (bool, string) {
		m, c, err := nodeReadyCondition(ctx, te)
		if err != nil {
			return false, err.Error()
		}
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == machine.ReasonNodeProviderIDMismatch &&
			strings.Contains(c.Message, "Node "+n.Name) && strings.Contains(c.Message, foreign) &&
			strings.Contains(c.Message, metalv1.ProviderIDPrefix+string(h.UID)), describe(m)
	})
	m, err := te.machine(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Status.NodeRef != nil || m.Status.Phase != metalv1.MachineJoining || m.Status.FailureReason != "" {
		t.Fatalf("the Machine took the foreign Node or failed: %s nodeRef %v", describe(m), m.Status.NodeRef)
	}
	got := &corev1.Node{}
	if err := te.target.Client.Get(ctx, client.ObjectKeyFromObject(n), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.ProviderID != foreign || got.ResourceVersion != n.ResourceVersion {
		t.Fatalf("the foreign Node was written: providerID %q resourceVersion %s (was %s)", got.Spec.ProviderID, got.ResourceVersion, n.ResourceVersion)
	}
	assertNotShown(t, te, m, kc)
}

// assertNotShown: no part of the kubeconfig (its client key and
// certificate, whole or as a line) is in the Machine's status, its Events
// or the manager's log.
func assertNotShown(t *testing.T, te *targetEnv, m *metalv1.Machine, kubeconfig []byte) {
	t.Helper()
	status, err := json.Marshal(m.Status)
	if err != nil {
		t.Fatal(err)
	}
	var events eventsv1.EventList
	if err := te.c.List(context.Background(), &events, client.InNamespace(te.ns)); err != nil {
		t.Fatal(err)
	}
	var notes strings.Builder
	for _, e := range events.Items {
		notes.WriteString(e.Note + "\n")
	}
	secrets := []string{string(kubeconfig)}
	for _, pem := range [][]byte{te.target.Config.KeyData, te.target.Config.CertData} {
		for _, line := range strings.Split(string(pem), "\n") {
			if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
				secrets = append(secrets, line)
			}
		}
	}
	for _, line := range strings.Split(string(kubeconfig), "\n") {
		if _, v, ok := strings.Cut(line, ": "); ok && len(v) >= 32 {
			secrets = append(secrets, v) // the base64 data fields
		}
	}
	if len(secrets) < 3 {
		t.Fatalf("found only %d pieces of the kubeconfig to look for", len(secrets))
	}
	for where, text := range map[string]string{"status": string(status), "Events": notes.String(), "log": te.logs.String()} {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("the kubeconfig Secret's content appears in the Machine's %s", where)
				break
			}
		}
	}
}
