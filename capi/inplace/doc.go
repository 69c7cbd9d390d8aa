// Package inplace is Anvil's Cluster API in-place update extension: an
// HTTPS server speaking Cluster API's Runtime SDK (hooks
// hooks.runtime.cluster.x-k8s.io/v1alpha1, Cluster API v1.14 with the
// InPlaceUpdates and RuntimeSDK feature gates) that lets Cluster API
// upgrade the kubelet of an Anvil-provisioned Machine in place instead of
// replacing the Machine.
//
//   - CanUpdateMachineSet (handler can-update-machineset, called by the
//     MachineDeployment controller) and CanUpdateMachine
//     (can-update-machine, called by KubeadmControlPlane) claim what Anvil
//     does in place: a change of the kubelet version to the same or the
//     next minor, on worker Machines. Everything else is left to a
//     replacement (claim.go says why control planes are not claimed).
//   - UpdateMachine (update-machine) reads the live CAPI Machine the
//     request names, checks Cluster API is updating it in place, and sets
//     the version on the Anvil Machine its AnvilMachine controls, whose
//     Machine controller runs the upgrade (cordon, drain, the agent's
//     sha256-checked kubelet swap, health check, rollback). It answers in
//     progress, done or failed from that Machine's status.upgrade.
//
// Nothing in a request body is trusted beyond the name of the Machine, and
// no body is logged: requests carry bootstrap configs. anvil serve runs it
// with --capi-extension-bind-address and either --capi-extension-cert-dir
// (the admin writes the ExtensionConfig) or --capi-extension-cert-secret
// (CertSecret keeps a CA and certificate in a Secret, Registration applies
// the ExtensionConfig "anvil" with Cluster API's CA injection from it;
// README, "With Cluster API").
package inplace

// FieldOwner is the field manager of the extension's only write, an
// Anvil Machine's spec.version.
const FieldOwner = "anvil-capi-inplace"

// Handler names, as served in discovery. Cluster API calls them as
// <name>.<ExtensionConfig name>, at
// /hooks.runtime.cluster.x-k8s.io/v1alpha1/<lowercased hook>/<name>.
const (
	HandlerCanUpdateMachine    = "can-update-machine"
	HandlerCanUpdateMachineSet = "can-update-machineset"
	HandlerUpdateMachine       = "update-machine"
)

// UpdateMachine reads CAPI Machines and AnvilMachines and patches the
// Anvil Machine's spec.version.
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=anvilmachines,verbs=get
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machines,verbs=get;patch
//
// Registration applies its own ExtensionConfig (create on the first apply;
// the name cannot restrict create). The certificate Secret's grants are
// namespaced: capi/clusterctl/extension.yaml.
// +kubebuilder:rbac:groups=runtime.cluster.x-k8s.io,resources=extensionconfigs,verbs=create
// +kubebuilder:rbac:groups=runtime.cluster.x-k8s.io,resources=extensionconfigs,verbs=get;patch,resourceNames=anvil
