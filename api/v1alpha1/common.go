package v1alpha1

// Condition types. The names follow Cluster API v1beta2 where the concept
// overlaps, so a CAPI adapter can copy them without translation.
const (
	ConditionReady               = "Ready"
	ConditionUpToDate            = "UpToDate"
	ConditionUpdating            = "Updating"
	ConditionInfrastructureReady = "InfrastructureReady"
	ConditionNodeReady           = "NodeReady"

	// Host conditions.
	ConditionValid        = "Valid"        // spec is usable: Secret present, addresses parse, MACs unique
	ConditionBMCReachable = "BMCReachable" // the last BMC call succeeded
	ConditionPowerSynced  = "PowerSynced"  // observed power equals spec.online

	// MachineClass conditions.
	ConditionConfigValid    = "ConfigValid"
	ConditionArtifactsValid = "ArtifactsValid"
)

// Condition reasons shared across kinds.
const (
	ReasonValid              = "Valid"
	ReasonSecretMissing      = "CredentialsSecretMissing"
	ReasonSecretInvalid      = "CredentialsSecretInvalid"
	ReasonInvalidAddress     = "InvalidAddress"
	ReasonDuplicateMAC       = "DuplicateBootMAC"
	ReasonUnreachable        = "Unreachable"
	ReasonAuthFailed         = "AuthFailed"
	ReasonUnsupported        = "Unsupported"
	ReasonWaitingForHardware = "WaitingForHardware"
	ReasonInPlaceUpdating    = "InPlaceUpdating"
	ReasonInPlaceUpdateFail  = "InPlaceUpdateFailed"
)

// Well-known labels and annotations.
const (
	// LabelFailureDomain groups Hosts that fail together (a rack, a room, a
	// power feed). Machines and MachineSets spread across its values.
	LabelFailureDomain = "metal.anvil.dev/failure-domain"
	// LabelRack names the rack a Host sits in.
	LabelRack = "metal.anvil.dev/rack"
	// LabelMachineSet marks Machines owned by a MachineSet.
	LabelMachineSet = "metal.anvil.dev/machineset"

	// FinalizerHost keeps a Host until its power and claim state is settled.
	FinalizerHost = "metal.anvil.dev/host"
	// FinalizerMachine keeps a Machine until its Host is released clean.
	FinalizerMachine = "metal.anvil.dev/machine"

	// CredentialsUsernameKey and CredentialsPasswordKey are the keys read
	// from a BMC credentials Secret.
	CredentialsUsernameKey = "username"
	CredentialsPasswordKey = "password"
)

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}
