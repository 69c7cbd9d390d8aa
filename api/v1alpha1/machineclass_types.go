package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Artifact is a file a host downloads while booting. Anvil verifies the
// sha256 before it ever serves the file.
type Artifact struct {
	// URL is an http(s) URL to fetch and cache, or a path relative to the
	// artifact directory of `anvil serve`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	SHA256 string `json:"sha256"`
}

// KubeletArtifact is a kubelet binary for one version.
type KubeletArtifact struct {
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+\.[0-9]+$`
	Version  string `json:"version"`
	Artifact `json:",inline"`
}

// ConfigTemplate renders the host's first-boot configuration.
// +kubebuilder:validation:XValidation:rule="self.format != 'butane' || has(self.variant)",message="variant is required for butane templates"
type ConfigTemplate struct {
	// +kubebuilder:validation:Enum=butane;cloud-init
	Format string `json:"format"`
	// Variant of Butane: fcos or flatcar.
	// +kubebuilder:validation:Enum=fcos;flatcar
	// +optional
	Variant string `json:"variant,omitempty"`
	// Template is a Go text/template of the Butane config or the cloud-init
	// user-data; per-host variables are documented in docs and render.Vars.
	// +kubebuilder:validation:MinLength=1
	Template string `json:"template"`
	// +optional
	VendorData string `json:"vendorData,omitempty"`
	// +optional
	NetworkConfig string `json:"networkConfig,omitempty"`
}

// JoinSpec says which cluster the nodes join and how.
type JoinSpec struct {
	// APIServerEndpoint the kubelet talks to, for example https://10.0.0.1:6443.
	// Defaults to the endpoint `anvil serve` was configured with.
	// +optional
	APIServerEndpoint string `json:"apiServerEndpoint,omitempty"`
	// KubeconfigSecretRef names a Secret (key "kubeconfig") for a target
	// cluster other than the management cluster.
	// +optional
	KubeconfigSecretRef *LocalObjectReference `json:"kubeconfigSecretRef,omitempty"`
	// TokenTTL of the bootstrap token; refreshed while the host is joining.
	// +kubebuilder:default="15m"
	// +optional
	TokenTTL *metav1.Duration `json:"tokenTTL,omitempty"`
}

// UpgradePolicy tunes in-place kubelet upgrades.
type UpgradePolicy struct {
	// DrainTimeout bounds the drain before an upgrade.
	// +kubebuilder:default="10m"
	// +optional
	DrainTimeout *metav1.Duration `json:"drainTimeout,omitempty"`
	// SkipDrainForPatch skips the drain when only the patch version changes.
	// +optional
	SkipDrainForPatch bool `json:"skipDrainForPatch,omitempty"`
	// HealthCheckTimeout bounds the agent's wait for the new kubelet.
	// +kubebuilder:default="5m"
	// +optional
	HealthCheckTimeout *metav1.Duration `json:"healthCheckTimeout,omitempty"`
}

// MachineClassSpec describes how a machine is built.
type MachineClassSpec struct {
	Kernel Artifact `json:"kernel"`
	// +kubebuilder:validation:MinItems=1
	Initrds []Artifact `json:"initrds"`
	// Image is the OS image written to disk, when the boot installs one.
	// +optional
	Image *Artifact `json:"image,omitempty"`
	// KernelArgs are appended to the kernel command line.
	// +optional
	KernelArgs []string `json:"kernelArgs,omitempty"`

	Config ConfigTemplate `json:"config"`

	// Kubelets lists the kubelet binaries Machines of this class may run.
	// +listType=map
	// +listMapKey=version
	// +optional
	Kubelets []KubeletArtifact `json:"kubelets,omitempty"`

	// +optional
	Join JoinSpec `json:"join,omitempty"`

	// Wipe erases partition tables and signatures when a Machine is deleted.
	// +kubebuilder:default=true
	// +optional
	Wipe *bool `json:"wipe,omitempty"`

	// +optional
	Upgrade UpgradePolicy `json:"upgrade,omitempty"`
}

// MachineClassStatus reports whether the class can be used.
type MachineClassStatus struct {
	// ConfigHash is the content hash of the validated template.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineClass is how machines are built.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mcl,categories=anvil
// +kubebuilder:printcolumn:name="Format",type=string,JSONPath=`.spec.config.format`
// +kubebuilder:printcolumn:name="Variant",type=string,JSONPath=`.spec.config.variant`
// +kubebuilder:printcolumn:name="Config",type=string,JSONPath=`.status.conditions[?(@.type=="ConfigValid")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MachineClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineClassSpec   `json:"spec,omitempty"`
	Status MachineClassStatus `json:"status,omitempty"`
}

// MachineClassList is a list of MachineClasses.
// +kubebuilder:object:root=true
type MachineClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineClass `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MachineClass{}, &MachineClassList{})
}
