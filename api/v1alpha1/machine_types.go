package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachinePhase is a one-word summary of where a Machine is.
// +kubebuilder:validation:Enum=Pending;WaitingForHardware;Provisioning;Joining;Running;Updating;Deleting;Failed
type MachinePhase string

const (
	MachinePending            MachinePhase = "Pending"
	MachineWaitingForHardware MachinePhase = "WaitingForHardware"
	MachineProvisioning       MachinePhase = "Provisioning"
	MachineJoining            MachinePhase = "Joining"
	MachineRunning            MachinePhase = "Running"
	MachineUpdating           MachinePhase = "Updating"
	MachineDeleting           MachinePhase = "Deleting"
	MachineFailed             MachinePhase = "Failed"
)

// HardwareRequestState is where a Machine's hardware request (ticket) is.
// A request only moves forward (Pending, Failed, Filed, Rejected, then
// Fulfilled or Cancelled), so a late answer cannot undo a later state.
// +kubebuilder:validation:Enum=Pending;Failed;Filed;Rejected;Fulfilled;Cancelled
type HardwareRequestState string

const (
	HardwareRequestPending   HardwareRequestState = "Pending"   // filed in the outbox, not yet accepted by a receiver
	HardwareRequestFailed    HardwareRequestState = "Failed"    // every receiver refused it so far (lastError says how)
	HardwareRequestFiled     HardwareRequestState = "Filed"     // a receiver accepted it (id and url if it answered them)
	HardwareRequestRejected  HardwareRequestState = "Rejected"  // a person rejected it through a callback (lastError: the reason)
	HardwareRequestFulfilled HardwareRequestState = "Fulfilled" // the Machine got a Host
	HardwareRequestCancelled HardwareRequestState = "Cancelled" // the request was withdrawn
)

// UpgradeState is where an in-place kubelet upgrade is. The Machine
// controller writes it; it moves Applying to Succeeded or Failed when the
// agent API records the plan's outcome in agentResult.
// +kubebuilder:validation:Enum=Draining;Applying;Succeeded;Verified;Failed;Rejected
type UpgradeState string

const (
	UpgradeDraining  UpgradeState = "Draining"  // cordoned, evicting pods
	UpgradeApplying  UpgradeState = "Applying"  // the agent has the plan
	UpgradeSucceeded UpgradeState = "Succeeded" // the agent says so; not yet verified
	UpgradeVerified  UpgradeState = "Verified"  // the Node runs the version, Ready and uncordoned
	UpgradeFailed    UpgradeState = "Failed"    // rolled back or not applied; message says why
	UpgradeRejected  UpgradeState = "Rejected"  // validation refused it; nothing was touched
)

// ReplacementReason is why a Machine is replaced rather than updated in place.
// +kubebuilder:validation:Enum=ClassChanged;HostMismatch;ReplaceRequested
type ReplacementReason string

const (
	ReplaceClassChanged ReplacementReason = "ClassChanged"     // spec.machineClassRef changed
	ReplaceHostMismatch ReplacementReason = "HostMismatch"     // its Host no longer matches hostSelector or failureDomain
	ReplaceRequested    ReplacementReason = "ReplaceRequested" // the metal.anvil.dev/replace annotation
)

// ProviderIDPrefix starts every providerID Anvil gives a Machine and its
// Node: anvil://<host-uid>.
const ProviderIDPrefix = "anvil://"

// MachineSpec asks for one node.
type MachineSpec struct {
	// MachineClassRef is the OS and config. Changing it on a provisioned
	// Machine replaces it: the Host is drained, wiped, released and a Host is
	// installed again from the new class (status.replacement says so).
	MachineClassRef LocalObjectReference `json:"machineClassRef"`

	// HostSelector picks the Hosts this Machine may claim.
	// +optional
	HostSelector metav1.LabelSelector `json:"hostSelector,omitempty"`

	// FailureDomain restricts the claim to Hosts labelled with it.
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`

	// Version of the kubelet. Changing it upgrades the kubelet in place.
	// +kubebuilder:validation:Pattern=`^v[0-9]+\.[0-9]+\.[0-9]+$`
	Version string `json:"version"`

	// AllowDowngrade permits a lower version than the one running.
	// +optional
	AllowDowngrade bool `json:"allowDowngrade,omitempty"`

	// UncordonOnFailure uncordons the node after a failed in-place update.
	// +optional
	UncordonOnFailure bool `json:"uncordonOnFailure,omitempty"`

	// Bootstrap, when set, replaces the MachineClass's config template:
	// the Host's config endpoint serves the data of a Secret written by a
	// Cluster API bootstrap provider, behind the same one-time boot
	// credential, and Anvil mints no bootstrap token for the Machine (the
	// data carries its own join credentials).
	// +optional
	Bootstrap *MachineBootstrap `json:"bootstrap,omitempty"`
}

// MachineBootstrap names the bootstrap data a Host boots with instead of
// its class's rendered config.
type MachineBootstrap struct {
	// DataSecretName is a Secret in the Machine's namespace with the keys
	// value (the config) and format: cloud-config (the default) for
	// cloud-init classes, ignition for Butane classes.
	//
	// For cloud-init classes the NoCloud meta-data has instance-id,
	// local-hostname (the Host's spec.network.hostname, else its name: the
	// Node name to use) and provider-id (anvil://<host-uid>, the Machine's
	// status.providerID). A cloud-config that starts with
	// "## template: jinja" can pass them to the kubelet, for example
	// kubeletExtraArgs provider-id: '{{ ds.meta_data.provider_id }}' and
	// name: '{{ ds.meta_data.local_hostname }}'. If the Node registers
	// without a providerID, Anvil sets it (see kubeconfigSecretRef).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName string `json:"dataSecretName"`
	// KubeconfigSecretRef names a Secret in the Machine's namespace whose
	// key (default "kubeconfig") holds the kubeconfig of the cluster the
	// Node joins, instead of the MachineClass's spec.join.kubeconfigSecretRef
	// (Cluster API: <cluster>-kubeconfig, key value). Anvil looks for the
	// Node there: by providerID, or, while its spec.providerID is empty,
	// by the Host's hostname, and then sets its spec.providerID. Until the
	// Secret exists the Machine says so (TargetClusterUnavailable) and
	// looks again with backoff; boot and join timeouts still apply.
	// +optional
	KubeconfigSecretRef *KubeconfigSecretReference `json:"kubeconfigSecretRef,omitempty"`
}

// KubeconfigSecretReference is the key of a Secret in the referrer's
// namespace that holds a kubeconfig.
type KubeconfigSecretReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key of the Secret's data; default "kubeconfig".
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]*$`
	// +optional
	Key string `json:"key,omitempty"`
}

// BootstrapDataFormat is the format key of a bootstrap data Secret (what
// Cluster API's bootstrap providers write).
type BootstrapDataFormat string

const (
	BootstrapFormatCloudConfig BootstrapDataFormat = "cloud-config"
	BootstrapFormatIgnition    BootstrapDataFormat = "ignition"
)

// Keys of a bootstrap data Secret.
const (
	BootstrapDataValueKey  = "value"
	BootstrapDataFormatKey = "format"
)

// MachineAddress is an address of the node.
type MachineAddress struct {
	Type    corev1.NodeAddressType `json:"type"`
	Address string                 `json:"address"`
}

// HardwareRequest is the ticket filed when no free Host matched.
type HardwareRequest struct {
	// +optional
	ID string `json:"id,omitempty"`
	// +optional
	URL string `json:"url,omitempty"`
	// +optional
	FiledAt *metav1.Time `json:"filedAt,omitempty"`
	// +optional
	State HardwareRequestState `json:"state,omitempty"`
	// +optional
	LastError string `json:"lastError,omitempty"`
}

// UpgradeStatus is the state of an in-place kubelet upgrade.
type UpgradeStatus struct {
	PlanID      string `json:"planID"`
	FromVersion string `json:"fromVersion,omitempty"`
	Version     string `json:"version"`
	// State of the plan: Draining, Applying (the agent has the plan),
	// Succeeded (the agent says so, not yet verified), Verified (the Node runs
	// the version, Ready and uncordoned), Failed (rolled back or not applied;
	// Message says why) or Rejected (validation refused it; nothing touched).
	State UpgradeState `json:"state"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	PodsLeft int32 `json:"podsLeft,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// AgentResult is what the agent last reported about a plan, written by
	// the agent API alone (field manager anvil-agent-upgrade). The Machine
	// controller turns an outcome into state, message and finishedAt when
	// its planID is this plan's; one of another plan is ignored. A progress
	// phase (InProgress) stays here only: see Progress.
	// +optional
	AgentResult *AgentUpgradeResult `json:"agentResult,omitempty"`
}

// Progress is the plan's message as readers show it: while Applying, the
// agent's latest report for this plan ("agent: <phase>", or its outcome
// until the controller takes it), else Message. The controller does not
// copy each phase into Message: at thousands of Machines that was a status
// write and a reconcile per phase.
func (u *UpgradeStatus) Progress() string {
	if u == nil {
		return ""
	}
	ar := u.AgentResult
	if u.State != UpgradeApplying || ar == nil || ar.PlanID != u.PlanID {
		return u.Message
	}
	with := func(s string) string {
		if ar.Message != "" {
			return s + ": " + ar.Message
		}
		return s
	}
	switch ar.Outcome {
	case AgentUpgradeInProgress:
		if ar.Message != "" {
			return "agent: " + ar.Message
		}
	case AgentUpgradeSucceeded:
		return with("agent: succeeded")
	case AgentUpgradeFailed:
		return with("agent: failed")
	}
	return u.Message
}

// AgentUpgradeOutcome is how far the agent got with a plan.
// +kubebuilder:validation:Enum=InProgress;Succeeded;Failed
type AgentUpgradeOutcome string

const (
	AgentUpgradeInProgress AgentUpgradeOutcome = "InProgress" // message is the phase
	AgentUpgradeSucceeded  AgentUpgradeOutcome = "Succeeded"  // installed and healthy
	AgentUpgradeFailed     AgentUpgradeOutcome = "Failed"     // rolled back or not applied; message says why
)

// AgentUpgradeResult is the agent's report on one upgrade plan.
type AgentUpgradeResult struct {
	// PlanID is the plan reported on (status.upgrade.planID when reported).
	PlanID  string              `json:"planID"`
	Outcome AgentUpgradeOutcome `json:"outcome"`
	// Message is the phase while InProgress, else the agent's reason
	// (may be empty).
	// +optional
	Message string `json:"message,omitempty"`
	// ReportedAt is when the agent API recorded this report.
	ReportedAt metav1.Time `json:"reportedAt"`
}

// MachineBoot is the network boot Anvil asked of the Machine's Host.
type MachineBoot struct {
	// RequestID is the Host's spec.bootRequest.id for this boot.
	RequestID string `json:"requestID"`
	// Purpose is the Host's spec.bootRequest.purpose: Provision or Wipe
	// (a Rejoin request is not recorded here: it is no boot Anvil waits for).
	Purpose BootPurpose `json:"purpose"`
	// Attempt counts boots of this purpose (a timed-out boot is retried once).
	Attempt int32 `json:"attempt"`
	// StartedAt is when the boot was requested; timeouts count from here.
	StartedAt metav1.Time `json:"startedAt"`
	// BootedAt is when the host fetched its config with this boot's
	// credential (or when its Node was first seen); the join timeout
	// counts from here.
	// +optional
	BootedAt *metav1.Time `json:"bootedAt,omitempty"`
}

// MachineReplacement is why and since when a Machine is being replaced.
type MachineReplacement struct {
	// Reason: ClassChanged, HostMismatch or ReplaceRequested.
	Reason ReplacementReason `json:"reason"`
	// Message says what changed and what happens.
	Message   string      `json:"message"`
	StartedAt metav1.Time `json:"startedAt"`
	// Host is the Host being given back.
	// +optional
	Host string `json:"host,omitempty"`
}

// MachineStatus is what Anvil observed.
type MachineStatus struct {
	// +optional
	Phase MachinePhase `json:"phase,omitempty"`
	// HostRef is the Host this Machine holds.
	// +optional
	HostRef *LocalObjectReference `json:"hostRef,omitempty"`
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`
	// ProviderID is set by Anvil when it claims a Host: anvil://<host-uid>.
	// The Host's kubelet registers its Node with it.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// +optional
	Addresses []MachineAddress `json:"addresses,omitempty"`
	// Version is the kubelet version the Node reports. During an in-place
	// upgrade (upgrade.state Draining, Applying or Succeeded) it stays the
	// version before it, and changes when the upgrade is Verified.
	// +optional
	Version string `json:"version,omitempty"`
	// NodeBootID is the boot ID the Node last reported
	// (status.nodeInfo.bootID); a new one is a reboot of the Host.
	// +optional
	NodeBootID string `json:"nodeBootID,omitempty"`
	// Reboots counts the reboots seen since the Node joined (boot ID
	// changes, each also an Event "Rebooted").
	// +optional
	Reboots int32 `json:"reboots,omitempty"`
	// +optional
	HardwareRequest *HardwareRequest `json:"hardwareRequest,omitempty"`
	// Boot is the current (or last) network boot of the Host for this Machine.
	// +optional
	Boot *MachineBoot `json:"boot,omitempty"`
	// +optional
	Upgrade *UpgradeStatus `json:"upgrade,omitempty"`
	// InstalledClass is the MachineClass the Host was installed from.
	// +optional
	InstalledClass string `json:"installedClass,omitempty"`
	// Replacement is set while the Machine is being replaced: a spec change
	// an in-place upgrade cannot do (another class, a Host that no longer
	// matches), or the replace annotation. Its Host is drained, wiped and
	// released, then a Host is claimed and installed again.
	// +optional
	Replacement *MachineReplacement `json:"replacement,omitempty"`
	// Replacements counts the replacements done.
	// +optional
	Replacements int32 `json:"replacements,omitempty"`
	// FailureReason is set when provisioning gave up: the Ready reason
	// (ReasonBootTimeout, ReasonJoinTimeout, ReasonConfigRenderFailed,
	// ReasonInstallFailed or ReasonHostLost). The Machine keeps its Host
	// until it is deleted.
	// +optional
	// +kubebuilder:validation:Enum=BootTimeout;JoinTimeout;ConfigRenderFailed;InstallFailed;HostLost
	FailureReason string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage string `json:"failureMessage,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Machine asks for one node on a free Host.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mach,categories=anvil
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.status.hostRef.name`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.nodeRef.name`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Running",type=string,JSONPath=`.status.version`,priority=1
// +kubebuilder:printcolumn:name="Ticket",type=string,JSONPath=`.status.hardwareRequest.id`,priority=1
// +kubebuilder:printcolumn:name="Ticket-URL",type=string,JSONPath=`.status.hardwareRequest.url`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineSpec   `json:"spec,omitempty"`
	Status MachineStatus `json:"status,omitempty"`
}

// MachineList is a list of Machines.
// +kubebuilder:object:root=true
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Machine `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Machine{}, &MachineList{})
}
