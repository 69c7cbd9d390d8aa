package v1beta1

// Condition types. Ready is the one Cluster API mirrors (into the CAPI
// Machine's and Cluster's InfrastructureReady); Paused is the contract's.
const (
	ConditionReady  = "Ready"
	ConditionPaused = "Paused"
	// ConditionMachineCreated tells whether the AnvilMachine's Anvil
	// Machine exists.
	ConditionMachineCreated = "MachineCreated"
	// ConditionFailureDomainsReady tells whether an AnvilCluster found
	// Hosts to report failure domains from.
	ConditionFailureDomainsReady = "FailureDomainsReady"
)

// Condition reasons.
const (
	ReasonPaused                    = "Paused"                    // the CAPI Cluster or the object is paused
	ReasonNotPaused                 = "NotPaused"                 // reconciling
	ReasonWaitingForOwner           = "WaitingForOwner"           // no CAPI Machine owns the AnvilMachine yet
	ReasonWaitingForBootstrapData   = "WaitingForBootstrapData"   // the CAPI Machine has no spec.bootstrap.dataSecretName yet
	ReasonMachineCreated            = "MachineCreated"            // the Anvil Machine exists
	ReasonInvalidVersion            = "InvalidVersion"            // the CAPI Machine's spec.version is not vX.Y.Z
	ReasonCreateFailed              = "CreateFailed"              // the API server refused the Anvil Machine (the message says why)
	ReasonMachineNotFound           = "MachineNotFound"           // status.machineRef names a Machine that is gone
	ReasonMachineNotOwned           = "MachineNotOwned"           // a Machine with the derived name exists and is not ours
	ReasonDeleting                  = "Deleting"                  // waiting for the Anvil Machine to be deleted
	ReasonControlPlaneEndpointUnset = "ControlPlaneEndpointUnset" // spec.controlPlaneEndpoint has no host or port
	ReasonProvisioned               = "Provisioned"               // an AnvilCluster is ready
	ReasonNoHosts                   = "NoHosts"                   // no Host matches spec.hostSelector
	ReasonFailureDomainsFound       = "FailureDomainsFound"       // failure domains listed from Hosts
	ReasonInvalidHostSelector       = "InvalidHostSelector"       // spec.hostSelector does not parse
)

// Well-known labels.
const (
	// LabelAnvilMachine is on the Anvil Machine an AnvilMachine created:
	// the AnvilMachine's name.
	LabelAnvilMachine = "infrastructure.cluster.x-k8s.io/anvilmachine"
	// FinalizerAnvilMachine keeps an AnvilMachine until its Anvil Machine
	// is gone (its Host drained, wiped and released).
	FinalizerAnvilMachine = "infrastructure.cluster.x-k8s.io/anvilmachine"
)

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}
