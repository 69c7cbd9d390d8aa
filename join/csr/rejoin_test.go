package csr_test

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/join/token"
)

// TestRejoiningKubeletGetsItsNodeBack: a diskless host that rebooted has
// lost its kubelet certificate. Its Machine is Running with its Node still
// registered, the first boot's token was revoked at the join, and the
// rejoin config carries a token minted for the same Machine and Host: that
// kubelet's bootstrap CSR is approved for the same node name, and its new
// certificate may update the existing Node.
func TestRejoiningKubeletGetsItsNodeBack(t *testing.T) {
	needControlPlane(t)
	ctx := context.Background()
	f := newFixture(t, uniq("rejoin"))
	node := csr.NodeNameFor(f.machine)

	// The first boot joins and registers its Node.
	k1 := newKey(t)
	name, uid := request(t, clientset(t, bearerConfig(t, f.tok.Value())), k1, certRequest{subject: nodeSubject(node), signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages})
	first := clientset(t, certConfig(t, waitSigned(t, kube, name, uid), k1))
	if _, err := first.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("first boot registering its Node: %v", err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	must(t, token.Revoke(ctx, kube, f.tok.ID))
	m := f.machine.DeepCopy()
	must(t, admin.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, m))
	m.Status.Phase = metalv1.MachineRunning
	m.Status.NodeRef = &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node}
	must(t, admin.Status().Update(ctx, m))

	// The reboot: a new key, the rejoin config's new token.
	tok2, err := token.Mint(ctx, kube, token.MintOptions{Owner: token.Owner{
		Host:    token.ObjectRef{Namespace: f.ns, Name: f.host.Name, UID: f.host.UID},
		Machine: token.ObjectRef{Namespace: f.ns, Name: m.Name, UID: m.UID},
	}})
	must(t, err)
	t.Cleanup(func() { checkNoLeak(t, tok2.Value()) })
	k2 := newKey(t)
	name, uid = request(t, clientset(t, bearerConfig(t, tok2.Value())), k2, certRequest{subject: nodeSubject(node), signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages})
	again := clientset(t, certConfig(t, waitSigned(t, kube, name, uid), k2))
	n, err := again.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	must(t, err)
	n.Status.NodeInfo.BootID = "boot-2"
	if _, err := again.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the rejoined kubelet updating its existing Node: %v", err)
	}
}
