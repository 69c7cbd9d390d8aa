package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// AnvilMachineSpec is what the Anvil Machine behind a CAPI Machine is made
// of. The kubelet version comes from the CAPI Machine's spec.version, the
// failure domain from its spec.failureDomain and the bootstrap data from
// its spec.bootstrap.dataSecretName.
type AnvilMachineSpec struct {
	// ProviderID is anvil://<host-uid>, set by Anvil once the Anvil
	// Machine claimed a Host; it matches the Node's spec.providerID.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// MachineClassRef is the Anvil MachineClass (same namespace): the OS
	// image, kernel and kubelet artifacts. Its config template is not used:
	// the host boots with the CAPI bootstrap data instead.
	MachineClassRef LocalObjectReference `json:"machineClassRef"`

	// HostSelector picks the Hosts (same namespace) the Anvil Machine may
	// claim.
	// +optional
	HostSelector metav1.LabelSelector `json:"hostSelector,omitempty"`
}

// AnvilMachineInitializationStatus is the contract's initialization.
// +kubebuilder:validation:MinProperties=1
type AnvilMachineInitializationStatus struct {
	// Provisioned is true once the Anvil Machine's Host booted with its
	// bootstrap data (the Anvil Machine's InfrastructureReady is True).
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// AnvilMachineStatus mirrors the Anvil Machine's status.
type AnvilMachineStatus struct {
	// Initialization: provisioned is what CAPI waits for.
	// +optional
	Initialization AnvilMachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// MachineRef is the Anvil Machine (metal.anvil.dev, same namespace)
	// this AnvilMachine created and owns.
	// +optional
	MachineRef *LocalObjectReference `json:"machineRef,omitempty"`

	// HostRef is the Host the Anvil Machine holds.
	// +optional
	HostRef *LocalObjectReference `json:"hostRef,omitempty"`

	// Phase is the Anvil Machine's phase.
	// +optional
	Phase metalv1.MachinePhase `json:"phase,omitempty"`

	// Version is the kubelet version the Node reports.
	// +optional
	Version string `json:"version,omitempty"`

	// Addresses of the Node, from the Anvil Machine.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// FailureDomain is the metal.anvil.dev/failure-domain label of the
	// claimed Host.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (mirrored into the CAPI Machine's
	// InfrastructureReady), MachineCreated, Paused, and the Anvil
	// Machine's InfrastructureReady and NodeReady as they are.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AnvilMachine is the Cluster API infrastructure machine of Anvil: one
// Anvil Machine on a bare-metal Host.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=anvilmachines,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.metadata.labels['cluster\.x-k8s\.io/cluster-name']`
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.status.hostRef.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ProviderID",type=string,JSONPath=`.spec.providerID`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AnvilMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AnvilMachineSpec   `json:"spec,omitempty"`
	Status AnvilMachineStatus `json:"status,omitempty"`
}

// AnvilMachineList is a list of AnvilMachines.
// +kubebuilder:object:root=true
type AnvilMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AnvilMachine `json:"items"`
}

// AnvilMachineTemplateResource is what each AnvilMachine made from the
// template starts as.
type AnvilMachineTemplateResource struct {
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	Spec       AnvilMachineSpec     `json:"spec"`
}

// AnvilMachineTemplateSpec holds the template.
type AnvilMachineTemplateSpec struct {
	Template AnvilMachineTemplateResource `json:"template"`
}

// AnvilMachineTemplate is what MachineDeployments and control planes
// stamp AnvilMachines from.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=anvilmachinetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.spec.template.spec.machineClassRef.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AnvilMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AnvilMachineTemplateSpec `json:"spec,omitempty"`
}

// AnvilMachineTemplateList is a list of AnvilMachineTemplates.
// +kubebuilder:object:root=true
type AnvilMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AnvilMachineTemplate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AnvilMachine{}, &AnvilMachineList{}, &AnvilMachineTemplate{}, &AnvilMachineTemplateList{})
}
