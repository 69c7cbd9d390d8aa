package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// AnvilClusterSpec is the infrastructure of one CAPI Cluster on Anvil's
// Hosts.
type AnvilClusterSpec struct {
	// ControlPlaneEndpoint is where the workload cluster's API server is
	// reached (a VIP or load balancer in front of the control plane Hosts).
	// Anvil provides none: the AnvilCluster is provisioned once both host
	// and port are set.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// HostSelector picks the Hosts (in the AnvilCluster's namespace) whose
	// metal.anvil.dev/failure-domain labels become status.failureDomains.
	// Empty: every Host of the namespace.
	// +optional
	HostSelector metav1.LabelSelector `json:"hostSelector,omitempty"`
}

// AnvilClusterInitializationStatus is the contract's initialization.
// +kubebuilder:validation:MinProperties=1
type AnvilClusterInitializationStatus struct {
	// Provisioned is true once spec.controlPlaneEndpoint is set.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// AnvilClusterStatus is what the AnvilCluster controller observed.
type AnvilClusterStatus struct {
	// Initialization: provisioned is what CAPI waits for.
	// +optional
	Initialization AnvilClusterInitializationStatus `json:"initialization,omitempty,omitzero"`

	// FailureDomains are the distinct metal.anvil.dev/failure-domain
	// values of the Hosts spec.hostSelector allows, each usable for the
	// control plane; attribute hosts counts its Hosts.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (mirrored into the CAPI Cluster's
	// InfrastructureReady), FailureDomainsReady, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AnvilCluster is the Cluster API infrastructure cluster of Anvil.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=anvilclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.metadata.labels['cluster\.x-k8s\.io/cluster-name']`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.spec.controlPlaneEndpoint.host`
// +kubebuilder:printcolumn:name="Provisioned",type=boolean,JSONPath=`.status.initialization.provisioned`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AnvilCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AnvilClusterSpec   `json:"spec,omitempty"`
	Status AnvilClusterStatus `json:"status,omitempty"`
}

// AnvilClusterList is a list of AnvilClusters.
// +kubebuilder:object:root=true
type AnvilClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AnvilCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AnvilCluster{}, &AnvilClusterList{})
}
