package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineTemplate is the Machine a MachineSet stamps out.
type MachineTemplate struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	Spec        MachineSpec       `json:"spec"`
}

// RolloutStrategy says how version changes roll through a MachineSet.
type RolloutStrategy struct {
	// MaxUnavailable Machines updating at once.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^[1-9][0-9]?%$|^100%$') : self >= 1",message="maxUnavailable must be at least 1 or a percentage from 1% to 100%"
	// +kubebuilder:default=1
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// MaxFailures pauses the rollout after this many failed Machines.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	MaxFailures *int32 `json:"maxFailures,omitempty"`
	// ByFailureDomain finishes one failure domain before the next.
	// +optional
	ByFailureDomain bool `json:"byFailureDomain,omitempty"`
}

// MachineSetSpec keeps replicas of a Machine template.
type MachineSetSpec struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	Strategy RolloutStrategy `json:"strategy,omitempty"`
	// Paused stops the rollout; `anvil machinesets resume` clears it.
	// +optional
	Paused   bool            `json:"paused,omitempty"`
	Template MachineTemplate `json:"template"`
}

// MachineSetStatus counts the Machines.
type MachineSetStatus struct {
	// +optional
	Replicas int32 `json:"replicas"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`
	// +optional
	UpToDateReplicas int32 `json:"upToDateReplicas"`
	// UpdatingReplicas are being upgraded in place now.
	// +optional
	UpdatingReplicas int32 `json:"updatingReplicas"`
	// FailedReplicas are Machines in phase Failed plus those whose last
	// in-place upgrade failed and was not retried (they may still be Ready on
	// the old version).
	// +optional
	FailedReplicas int32 `json:"failedReplicas"`
	// Selector is the label selector of its Machines, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineSet keeps replicas of a Machine and rolls out version changes.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=ms,categories=anvil
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Up-To-Date",type=integer,JSONPath=`.status.upToDateReplicas`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.template.spec.version`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineSetSpec   `json:"spec,omitempty"`
	Status MachineSetStatus `json:"status,omitempty"`
}

// MachineSetList is a list of MachineSets.
// +kubebuilder:object:root=true
type MachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MachineSet{}, &MachineSetList{})
}
