package csr

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/token"
)

// AnnotationNodeName on a Machine overrides the name of its Node. Without it
// the Node is named like the Machine.
const AnnotationNodeName = "metal.anvil.dev/node-name"

// IndexMachineNodeName indexes Machines by NodeNameFor. SetupWithManager
// registers it; other controllers may query it with client.MatchingFields.
const IndexMachineNodeName = "anvil.nodeName"

// NodeNameFor is the name the Machine's Node must have, and therefore the
// only common name ("system:node:<name>") Anvil approves for it. It is the
// Machine's name, unless the Machine carries AnnotationNodeName with a valid
// DNS subdomain (a Node name's syntax), for sites that name nodes by another
// scheme. The Host is deliberately not consulted: a Host outlives the
// Machines that use it, and a node name tied to hardware would let a new
// Machine on the same Host inherit the old Node. The same value must be
// passed to the kubelet (render.Vars.Join.NodeName, --hostname-override).
func NodeNameFor(m *metalv1.Machine) string {
	if m == nil {
		return ""
	}
	if n := m.Annotations[AnnotationNodeName]; n != "" && len(validation.IsDNS1123Subdomain(n)) == 0 {
		return n
	}
	return m.Name
}

// IndexMachineNodeNameFunc is the indexer function for IndexMachineNodeName.
func IndexMachineNodeNameFunc(o client.Object) []string {
	m, ok := o.(*metalv1.Machine)
	if !ok {
		return nil
	}
	return []string{NodeNameFor(m)}
}

// BootstrapClusterRoleBindingName is the binding BootstrapClusterRoleBinding returns.
const BootstrapClusterRoleBindingName = "anvil:node-bootstrapper"

// BootstrapClusterRoleBinding lets Anvil's bootstrap tokens (group
// token.AnvilGroup) create and read CSRs, through upstream's
// system:node-bootstrapper ClusterRole; kubeadm's equivalent is
// kubeadm:kubelet-bootstrap. Without it a kubelet cannot even ask for a
// certificate. It deliberately grants nothing that makes
// kube-controller-manager's own approver act on these CSRs (no
// certificatesigningrequests/nodeclient): only Anvil approves them, after
// matching the node name to the token's Machine.
func BootstrapClusterRoleBinding() *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: BootstrapClusterRoleBindingName, Labels: map[string]string{token.LabelManagedBy: token.ManagedByValue}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: token.AnvilGroup}},
	}
}

// ApplyBootstrapClusterRoleBinding creates or updates
// BootstrapClusterRoleBinding with server-side apply (field owner "anvil").
func ApplyBootstrapClusterRoleBinding(ctx context.Context, c client.Client) error {
	b := BootstrapClusterRoleBinding()
	ac := rbacv1ac.ClusterRoleBinding(b.Name).WithLabels(b.Labels).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(b.RoleRef.APIGroup).WithKind(b.RoleRef.Kind).WithName(b.RoleRef.Name))
	for _, s := range b.Subjects {
		ac.WithSubjects(rbacv1ac.Subject().WithAPIGroup(s.APIGroup).WithKind(s.Kind).WithName(s.Name))
	}
	return c.Apply(ctx, ac, client.FieldOwner("anvil"), client.ForceOwnership)
}
