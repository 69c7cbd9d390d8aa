// Package infra is Anvil's Cluster API infrastructure provider: the
// AnvilMachine and AnvilCluster controllers (api/infrastructure/v1beta1).
//
// It is a thin front end on Anvil's core. An AnvilMachine creates and owns
// one Anvil Machine (metal.anvil.dev) with the CAPI Machine's version,
// failure domain and bootstrap data Secret, and the workload cluster's
// kubeconfig Secret (<cluster>-kubeconfig, key value) as the cluster its
// Node joins, and mirrors its status; the Machine controller claims,
// powers, boots, drains, wipes and releases the Host as it does for any
// Machine, and sets spec.providerID on the Node kubeadm registered under
// the Host's hostname. An AnvilCluster reports the failure
// domains of its Hosts and is provisioned once its control plane endpoint
// is set.
//
// anvil serve runs both behind --capi (the CAPI core CRDs must be
// installed).
package infra

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Field owner of every write here.
const fieldOwner = "anvil-capi"

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=anvilmachines;anvilclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=anvilmachines/status;anvilclusters/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;clusters,verbs=get;list;watch

// paused reports whether CAPI paused reconciling the object: the Cluster's
// spec.paused or the cluster.x-k8s.io/paused annotation on any of objs.
func paused(cluster *clusterv1.Cluster, objs ...interface{ GetAnnotations() map[string]string }) bool {
	if cluster != nil && cluster.Spec.Paused != nil && *cluster.Spec.Paused {
		return true
	}
	for _, o := range objs {
		if _, ok := o.GetAnnotations()[clusterv1.PausedAnnotation]; ok {
			return true
		}
	}
	return false
}
