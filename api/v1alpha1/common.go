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
	// ConditionConfigRendered is False when the config a Host fetched could
	// not be rendered for it (per-host values, the join target); written by
	// the config endpoint for the boot in Host generation observedGeneration.
	ConditionConfigRendered = "ConfigRendered"

	// MachineClass conditions.
	ConditionConfigValid    = "ConfigValid" // reasons Valid, TemplateError, UnsupportedFormat
	ConditionArtifactsValid = "ArtifactsValid"
	// ConditionArtifactURLsAllowed is False (reason AddressRefused) when an
	// artifact URL names an address Anvil refuses to fetch from.
	ConditionArtifactURLsAllowed = "ArtifactURLsAllowed"

	// ConditionWiped is set on a Host by its agent's wipe report (or by
	// Anvil when a wipe cannot run); False keeps the Host in Error.
	ConditionWiped = "Wiped"
	// ConditionDeleting tells where a Machine's deletion is.
	ConditionDeleting = "Deleting"
	// ConditionReplacing tells where a Machine's replacement is (the same
	// steps as a deletion: drain, wipe, release).
	ConditionReplacing = "Replacing"
)

// Reasons of a Valid=False Host whose BMC address would carry the
// credentials somewhere unsafe.
const (
	// ReasonAddressNotAllowed: spec.bmc.address is loopback, link-local or
	// a cloud metadata address (anvil serve --bmc-allow-cidrs opens it).
	ReasonAddressNotAllowed = "AddressNotAllowed"
	// ReasonPlainHTTPNotAllowed: redfish+http:// without
	// spec.bmc.allowPlainHTTP.
	ReasonPlainHTTPNotAllowed = "PlainHTTPNotAllowed"
)

// ReasonBootMethodUnsupported: a Valid=False Host whose spec.bootMethod its
// kind of BMC cannot do (VirtualMedia with an ipmi:// or manual:// BMC), or
// that lacks what the method needs (VirtualMedia without
// spec.network.address).
const ReasonBootMethodUnsupported = "BootMethodUnsupported"

// ConditionVirtualMedia is False on a spec.bootMethod VirtualMedia Host
// whose boot could not use virtual media: reason NoVirtualMedia (the BMC
// has none) or MediaError (insert or eject failed). Written by the Host
// controller.
const (
	ConditionVirtualMedia = "VirtualMedia"
	ReasonNoVirtualMedia  = "NoVirtualMedia"
	ReasonMediaError      = "MediaError"
	ReasonMediaInserted   = "Inserted"
	ReasonMediaEjected    = "Ejected"
)

// Reasons of a MachineClass's ConfigValid=False.
const (
	// ReasonTemplateError: the config template does not parse or render
	// with example values.
	ReasonTemplateError = "TemplateError"
	// ReasonUnsupportedFormat: a format or variant the CRD should have
	// refused (its enum) reached the controller anyway.
	ReasonUnsupportedFormat = "UnsupportedFormat"
)

// ReasonAddressRefused: a URL (a MachineClass artifact) leads to an address
// the address guard refuses (loopback, link-local, metadata, or outside the
// allowed ranges).
const ReasonAddressRefused = "AddressRefused"

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

	// Machine provisioning (InfrastructureReady, NodeReady, Ready).
	ReasonClassNotReady      = "ClassNotReady"            // MachineClass missing, invalid, or without the kubelet version
	ReasonPoweringOn         = "PoweringOn"               // Host claimed, waiting for its BMC to take the PXE boot
	ReasonConfigRenderFailed = "ConfigRenderFailed"       // the Host fetched its config and it could not be rendered
	ReasonConfigRendered     = "ConfigRendered"           // the Host's config rendered (after a failure)
	ReasonTargetUnavailable  = "TargetClusterUnavailable" // the cluster the class joins (spec.join.kubeconfigSecretRef) cannot be used
	ReasonNetworkBooting     = "NetworkBooting"           // power sent, waiting for the host to fetch its config
	ReasonBooted             = "Booted"                   // the host fetched its config in this boot (or its Node or provisioned mark is there)
	ReasonBootTimeout        = "BootTimeout"              // the host fetched no config within the boot timeout
	ReasonWaitingForNode     = "WaitingForNode"           // booted, waiting for the kubelet to register
	ReasonJoinTimeout        = "JoinTimeout"              // no Ready Node in time
	ReasonNodeReady          = "NodeReady"                // the Node is Ready
	ReasonNodeNotReady       = "NodeNotReady"             // the Node exists but is not Ready
	ReasonNodeMissing        = "NodeMissing"              // the Node was deleted under a running Machine
	ReasonHostLost           = "HostLost"                 // the claimed Host was deleted or taken
	ReasonDraining           = "Draining"                 // deleting: cordon and drain the Node
	ReasonWiping             = "Wiping"                   // deleting: the Host network-boots to wipe its disks
	ReasonWipeFailed         = "WipeFailed"               // deleting: the wipe failed; the Host goes to Error
	ReasonReleasing          = "Releasing"                // deleting: powering off and freeing the Host
	ReasonReplacing          = "Replacing"                // a spec change needs a new install: the Host is given back first
	ReasonWipeAcknowledged   = "WipeAcknowledged"         // an admin declared a failed wipe's disks clean
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

	// LabelConsumerUID is on a claimed Host: the UID of the Machine holding
	// it. A live list by this label is how a Machine finds its Host even
	// when the cache lags behind its own claim.
	LabelConsumerUID = "metal.anvil.dev/consumer-uid"
	// AnnotationProvisioned on a Host names the boot request whose Node
	// joined: the Host is Provisioned, not Provisioning.
	AnnotationProvisioned = "metal.anvil.dev/provisioned"
	// AnnotationAssignedHost on a Machine restricts its claim to one Host
	// (set by an admin or a ticket callback).
	AnnotationAssignedHost = "metal.anvil.dev/assigned-host"
	// AnnotationAckWipe on a Host whose wipe failed, set to the Wiped
	// condition's lastTransitionTime (RFC 3339), tells Anvil an admin made
	// the disks clean: the Host returns to service.
	AnnotationAckWipe = "metal.anvil.dev/ack-wipe"
	// AnnotationReplace on a Machine (any value) replaces it once: drain,
	// wipe and release its Host, then claim and install one again (a way
	// out of a failed in-place upgrade). Anvil removes it when it starts.
	AnnotationReplace = "metal.anvil.dev/replace"

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
