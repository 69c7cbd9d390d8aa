package v1alpha1

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostState is where a Host is in its life. The Host controller owns it.
// +kubebuilder:validation:Enum=Registering;Discovered;Available;Claimed;Provisioning;Provisioned;Deprovisioning;Error
type HostState string

const (
	HostRegistering    HostState = "Registering"    // validating spec and BMC
	HostDiscovered     HostState = "Discovered"     // seen on the network, awaiting an admin's BMC details
	HostAvailable      HostState = "Available"      // valid, free to claim
	HostClaimed        HostState = "Claimed"        // held by a Machine, not yet booting
	HostProvisioning   HostState = "Provisioning"   // booting the OS for its Machine
	HostProvisioned    HostState = "Provisioned"    // running its Machine's node
	HostDeprovisioning HostState = "Deprovisioning" // powering off and wiping before release
	HostError          HostState = "Error"          // needs an admin; conditions say why
)

// PowerState is the power observed through the BMC.
// +kubebuilder:validation:Enum=On;Off;Unknown
type PowerState string

const (
	PowerOn      PowerState = "On"
	PowerOff     PowerState = "Off"
	PowerUnknown PowerState = "Unknown"
)

// PowerAction is a power operation Anvil sends to a BMC (or asks a person
// to carry out, for manual:// BMCs). The values are bmc.PowerAction's.
// +kubebuilder:validation:Enum=On;Off;GracefulOff;Reset
type PowerAction string

const (
	PowerActionOn          PowerAction = "On"          // power on; a server that is on stays on
	PowerActionOff         PowerAction = "Off"         // power off at once, no OS shutdown
	PowerActionGracefulOff PowerAction = "GracefulOff" // ask the OS to shut down
	PowerActionReset       PowerAction = "Reset"       // power-cycle so it boots again
)

// BootDevice is a one-time boot override set before a power action. The
// values are bmc.BootDevice's.
// +kubebuilder:validation:Enum=PXE;Disk;CD;HTTP
type BootDevice string

const (
	BootDevicePXE  BootDevice = "PXE"
	BootDeviceDisk BootDevice = "Disk"
	BootDeviceCD   BootDevice = "CD" // the BMC's virtual CD (spec.bootMethod VirtualMedia)
	// BootDeviceHTTP is UEFI HTTP boot (spec.bootMethod HTTPBoot with a
	// Redfish or manual:// BMC): Redfish's BootSourceOverrideTarget UefiHttp.
	BootDeviceHTTP BootDevice = "HTTP"
)

// BootMethod is how a Host's boot image (installer, wipe, live OS) reaches
// it. See HostSpec.BootMethod.
// +kubebuilder:validation:Enum=PXE;HTTPBoot;VirtualMedia
type BootMethod string

const (
	// BootMethodPXE network-boots from a boot MAC: DHCP (Anvil's or a relay
	// to it) on the boot NIC's L2 segment hands out TFTP/iPXE. The default.
	BootMethodPXE BootMethod = "PXE"
	// BootMethodHTTPBoot has the UEFI firmware fetch the boot image by
	// HTTP(S) from a URL the BMC sets, so no PXE/TFTP is needed.
	BootMethodHTTPBoot BootMethod = "HTTPBoot"
	// BootMethodVirtualMedia has the BMC attach a small per-boot ISO that
	// Anvil serves over HTTP(S) as a virtual CD (Redfish VirtualMedia), and
	// boot once from it: no DHCP or L2 adjacency to Anvil is needed.
	BootMethodVirtualMedia BootMethod = "VirtualMedia"
)

// BootPurpose is what a network boot of a Host is for.
// +kubebuilder:validation:Enum=Provision;Wipe;Rejoin
type BootPurpose string

const (
	BootPurposeProvision BootPurpose = "Provision" // install the Machine's OS
	BootPurposeWipe      BootPurpose = "Wipe"      // erase the disks before the Host is released
	// BootPurposeRejoin arms the next network boot of a provisioned
	// diskless (live) Host: it is acknowledged without any power action,
	// and whenever the host next network-boots (a reboot, a power cycle)
	// it gets a fresh credential and rejoins as the same Node.
	BootPurposeRejoin BootPurpose = "Rejoin"
)

// BMC says how to reach a Host's baseboard management controller.
// +kubebuilder:validation:XValidation:rule="!has(self.address) || self.address.startsWith('manual://') || (has(self.credentialsName) && size(self.credentialsName) > 0)",message="credentialsName is required unless the address is manual://"
type BMC struct {
	// Address of the BMC: redfish+https://host[:port][/redfish/v1/Systems/ID],
	// redfish+http://..., ipmi://host[:port] or manual://[note]. Empty for
	// a Host found by PXE discovery until an admin adds its BMC.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^(redfish[+]https|redfish[+]http|ipmi|manual)://')",message="address must start with redfish+https://, redfish+http://, ipmi:// or manual://"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-z+]+://[^/]*@')",message="address must not carry credentials; put them in the Secret named by credentialsName"
	Address string `json:"address,omitempty"`

	// CredentialsName is a Secret in the Host's namespace with keys
	// "username" and "password".
	// +optional
	CredentialsName string `json:"credentialsName,omitempty"`

	// DisableCertificateVerification skips TLS verification of a Redfish BMC.
	// Opt in per Host; many BMCs ship self-signed certificates.
	// +optional
	DisableCertificateVerification bool `json:"disableCertificateVerification,omitempty"`

	// AllowPlainHTTP lets a redfish+http:// BMC receive the credentials
	// unencrypted (basic auth or session login in clear). Without it such a
	// Host is not Valid (PlainHTTPNotAllowed) and no request is sent. Opt in
	// per Host, on a trusted BMC network only; prefer redfish+https://.
	// +optional
	AllowPlainHTTP bool `json:"allowPlainHTTP,omitempty"`
}

// RootDeviceHints select the disk the OS is installed on, among the whole
// disks the agent reported (status.hardware.disks). A disk matches when it
// meets every hint that is set; removable disks match only when
// deviceName, serialNumber, wwn or byPath names them. Of the matching
// disks the smallest is picked, by name on a tie; without hints that is
// the smallest non-removable disk (Metal3's hints are the model).
// No matching disk means no install (Pick returns false). Pick implements it.
type RootDeviceHints struct {
	// DeviceName is the kernel name of the disk, as in
	// status.hardware.disks[].name: sda, vda, nvme0n1 (no /dev/).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_-]*$`
	DeviceName string `json:"deviceName,omitempty"`
	// SerialNumber is the disk's serial, as in status.hardware.disks[].serial
	// (compared exactly).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	SerialNumber string `json:"serialNumber,omitempty"`
	// MinSizeGigabytes is the smallest size a disk may have, in GiB (2^30
	// bytes, as Metal3 counts it).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinSizeGigabytes int32 `json:"minSizeGigabytes,omitempty"`
	// WWN is the disk's World Wide Name, as in status.hardware.disks[].wwn
	// (compared exactly, e.g. naa.5000c500a1b2c3d4).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	WWN string `json:"wwn,omitempty"`
	// ByPath is one of the disk's /dev/disk/by-path names, without the
	// directory (e.g. pci-0000:00:17.0-ata-1): the slot, not the drive.
	// Only OSes running udev report them, which Anvil's installer does not:
	// prefer deviceName, serialNumber or wwn for installs.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="!self.contains('/')",message="byPath is the link's name, without /dev/disk/by-path/"
	ByPath string `json:"byPath,omitempty"`
	// Model is a substring of the disk's model, as in
	// status.hardware.disks[].model.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Model string `json:"model,omitempty"`
	// Rotational: true picks spinning disks only, false solid-state only.
	// +optional
	Rotational *bool `json:"rotational,omitempty"`
}

// Pick returns the disk the hints select (see RootDeviceHints); h may be nil.
func (h *RootDeviceHints) Pick(disks []Disk) (Disk, bool) {
	var hints RootDeviceHints
	if h != nil {
		hints = *h
	}
	var best *Disk
	for i := range disks {
		d := &disks[i]
		named := (hints.DeviceName != "" && d.Name == hints.DeviceName) || (hints.SerialNumber != "" && d.Serial == hints.SerialNumber) ||
			(hints.WWN != "" && d.WWN == hints.WWN) || (hints.ByPath != "" && slices.Contains(d.ByPath, hints.ByPath))
		switch {
		case hints.DeviceName != "" && d.Name != hints.DeviceName,
			hints.SerialNumber != "" && d.Serial != hints.SerialNumber,
			hints.WWN != "" && d.WWN != hints.WWN,
			hints.ByPath != "" && !slices.Contains(d.ByPath, hints.ByPath),
			hints.Model != "" && !strings.Contains(d.Model, hints.Model),
			hints.Rotational != nil && d.Rotational != *hints.Rotational,
			d.SizeBytes < int64(hints.MinSizeGigabytes)<<30,
			d.Removable && !named:
			continue
		}
		if best == nil || d.SizeBytes < best.SizeBytes || d.SizeBytes == best.SizeBytes && d.Name < best.Name {
			best = d
		}
	}
	if best == nil {
		return Disk{}, false
	}
	return *best, true
}

// HostNetwork is a static address plan for the boot interface. Without it,
// DHCP hands out an address from its configured range.
type HostNetwork struct {
	// Address in CIDR notation, for example 10.0.0.21/24.
	// +optional
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 4",message="address must be an IPv4 CIDR such as 10.0.0.21/24"
	Address string `json:"address,omitempty"`
	// Address6 is an IPv6 address in CIDR notation, for example
	// fd00:a11:0:1::50/64: a reservation. Anvil's DHCPv6 server hands it
	// to the boot MAC (not one of --dhcp6-range), and the Host's IPv6
	// boots are bound to it.
	// +optional
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 6",message="address6 must be an IPv6 CIDR such as fd00::21/64"
	Address6 string `json:"address6,omitempty"`
	// +optional
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="gateway must be an IP address"
	Gateway string `json:"gateway,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=4
	DNS []string `json:"dns,omitempty"`
	// Hostname handed out over DHCP; defaults to the Host name.
	// +optional
	Hostname string `json:"hostname,omitempty"`
}

// BootRequest asks the Host controller to network-boot the Host once. It acts
// on each distinct ID exactly once: set one-time PXE boot, then power on (or
// cycle if already on). A Rejoin request is only acknowledged: the host is
// up, the request allows its next network boot.
type BootRequest struct {
	// ID changes for every boot the machine side wants.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ID string `json:"id"`
	// Purpose is what the network boot is for.
	// +kubebuilder:default=Provision
	Purpose BootPurpose `json:"purpose,omitempty"`
}

// HostSpec is what an admin registers about a server.
type HostSpec struct {
	BMC BMC `json:"bmc"`

	// BootMACs are the MAC addresses the Host may network-boot from.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=set
	// +kubebuilder:validation:items:Pattern=`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`
	BootMACs []string `json:"bootMACs"`

	// +kubebuilder:validation:Enum=x86_64;aarch64
	// +kubebuilder:default=x86_64
	// +optional
	Architecture string `json:"architecture,omitempty"`

	// +kubebuilder:validation:Enum=UEFI;Legacy
	// +kubebuilder:default=UEFI
	// +optional
	BootMode string `json:"bootMode,omitempty"`

	// Online is the desired power state. Machines set it; admins may too.
	// +optional
	Online bool `json:"online,omitempty"`

	// +optional
	Network *HostNetwork `json:"network,omitempty"`

	// +optional
	RootDeviceHints *RootDeviceHints `json:"rootDeviceHints,omitempty"`

	// BootMethod is how the Host boots Anvil's images: PXE (default; DHCP
	// on the boot NIC's L2 segment reaches Anvil), HTTPBoot (UEFI fetches
	// the image over HTTP(S)) or VirtualMedia (a Redfish BMC inserts a
	// per-boot ISO Anvil serves, no DHCP for the boot; other BMCs make the
	// Host not Valid). HTTPBoot: Anvil's DHCP answers the firmware's HTTP
	// boot client with the iPXE EFI binary's URL (IPv4); a Redfish BMC is
	// asked for a one-time UefiHttp boot, a manual:// one's person for an
	// HTTP boot, an IPMI BMC (no HTTP boot selector) for PXE. VirtualMedia needs
	// spec.network.address: the boot server builds a per-boot ISO (iPXE
	// with the static network and the PXE path's script) at a one-time
	// URL, which the Host controller has the BMC insert and boot once.
	// +kubebuilder:default=PXE
	// +optional
	BootMethod BootMethod `json:"bootMethod,omitempty"`

	// ConsumerRef is the Machine that holds this Host. It is set with an
	// optimistic-concurrency update, so two Machines can never hold one Host.
	// While it is set the API server refuses to delete the Host
	// (deploy/policy/host-delete.yaml); deleting the Machine releases it.
	// +optional
	ConsumerRef *corev1.ObjectReference `json:"consumerRef,omitempty"`

	// BootRequest asks for one network boot; see BootRequest.
	// +optional
	BootRequest *BootRequest `json:"bootRequest,omitempty"`
}

// Disk is one whole block device of a Host.
type Disk struct {
	Name      string `json:"name"`
	SizeBytes int64  `json:"sizeBytes"`
	// +optional
	Rotational bool `json:"rotational,omitempty"`
	// +optional
	Removable bool `json:"removable,omitempty"`
	// +optional
	Model string `json:"model,omitempty"`
	// +optional
	Serial string `json:"serial,omitempty"`
	// +optional
	WWN string `json:"wwn,omitempty"`
	// ByPath are the disk's /dev/disk/by-path names (where udev runs).
	// +optional
	ByPath []string `json:"byPath,omitempty"`
}

// NIC is one network interface of a Host.
type NIC struct {
	Name string `json:"name"`
	MAC  string `json:"mac"`
	// SpeedMbps is 0 when unknown.
	// +optional
	SpeedMbps int32 `json:"speedMbps,omitempty"`
}

// HardwareDetails are facts from the BMC and the agent.
type HardwareDetails struct {
	Manufacturer string `json:"manufacturer,omitempty"`
	Model        string `json:"model,omitempty"`
	SerialNumber string `json:"serialNumber,omitempty"`
	UUID         string `json:"uuid,omitempty"`
	CPUModel     string `json:"cpuModel,omitempty"`
	CPUCount     int32  `json:"cpuCount,omitempty"`
	MemoryMiB    int64  `json:"memoryMiB,omitempty"`
	// +listType=set
	MACs []string `json:"macs,omitempty"`
	// Kernel is the running kernel release, as the agent reported it.
	// +optional
	Kernel string `json:"kernel,omitempty"`
	// Disks are the whole block devices the agent saw (/sys/block).
	// +optional
	Disks []Disk `json:"disks,omitempty"`
	// NICs are the network interfaces the agent saw (/sys/class/net).
	// +optional
	NICs []NIC `json:"nics,omitempty"`
}

// PendingPowerAction is a power action waiting for a person (manual:// BMCs).
type PendingPowerAction struct {
	Action PowerAction `json:"action"`
	// +optional
	BootDevice  BootDevice  `json:"bootDevice,omitempty"`
	RequestedAt metav1.Time `json:"requestedAt"`
}

// IssuedPowerAction is a power action the BMC accepted and has not yet been
// seen to carry out. BMCs change the power seconds after they accept a
// request, and restart the change when asked again, so the controller reads
// the power back on a short backoff until it shows Target, and never sends
// the same action again before Deadline.
type IssuedPowerAction struct {
	// Action sent: On, Off, GracefulOff or Reset.
	Action PowerAction `json:"action"`
	// BootDevice set for the next boot (only) before the action.
	// +optional
	BootDevice BootDevice `json:"bootDevice,omitempty"`
	// Target is the power state that confirms the action.
	Target PowerState `json:"target"`
	// IssuedAt is when the BMC accepted the action (its latest attempt).
	IssuedAt metav1.Time `json:"issuedAt"`
	// Deadline: not confirmed by then, the action counts as timed out
	// (condition PowerSynced, reason PowerActionTimedOut) and is sent once
	// more with a longer deadline.
	Deadline metav1.Time `json:"deadline"`
	// Attempts counts how often the action was sent.
	Attempts int32 `json:"attempts"`
}

// DHCPLease is an address Anvil's DHCP server handed to one of the Host's
// boot MACs. Kept in the API so a restart never hands it to another MAC.
type DHCPLease struct {
	MAC       string      `json:"mac"`
	IP        string      `json:"ip"`
	ExpiresAt metav1.Time `json:"expiresAt"`
}

// DHCPv6Lease is an IPv6 address Anvil's DHCPv6 server handed to one of
// the Host's boot MACs, kept in the API so a restart of the network
// services gives the host the same address again.
type DHCPv6Lease struct {
	MAC string `json:"mac"`
	IP  string `json:"ip"`
	// DUID is the client's DUID of the Reply (hex), e.g. the firmware's
	// DUID-LLT or iPXE's DUID-UUID: the lease is the MAC's, whichever asks.
	// +optional
	DUID      string      `json:"duid,omitempty"`
	ExpiresAt metav1.Time `json:"expiresAt"`
}

// BootCredentialStatus is the per-boot credential that unlocks the Host's
// config. Only its SHA-256 is stored; the plaintext travels once, in the
// iPXE script of that boot.
type BootCredentialStatus struct {
	Hash         string      `json:"hash"`
	IssuedAt     metav1.Time `json:"issuedAt"`
	ExpiresAt    metav1.Time `json:"expiresAt"`
	GraceSeconds int64       `json:"graceSeconds,omitempty"`
	// +optional
	ConsumedAt *metav1.Time `json:"consumedAt,omitempty"`
	// ConsumedFrom is the address that used it.
	// +optional
	ConsumedFrom string `json:"consumedFrom,omitempty"`
	// ScriptServedAt is when the iPXE script carrying it was handed out; a
	// second script request in the same boot gets no credential.
	// +optional
	ScriptServedAt *metav1.Time `json:"scriptServedAt,omitempty"`
	// ScriptServedTo is the address that script went to; the config is
	// served only there.
	// +optional
	ScriptServedTo string `json:"scriptServedTo,omitempty"`
	// BootRequestID is the status.bootRequestID of the boot whose iPXE
	// script carried the credential: a script request of that boot gets
	// no other credential, one of a later boot gets a new one.
	// +optional
	BootRequestID string `json:"bootRequestID,omitempty"`
}

// HostVirtualMedia is one virtual media boot. The ISO's URL holds a
// one-time token that is never stored or shown: only its hash. The boot
// server serves the ISO while this names the Host's current boot request
// and the boot credential of that boot is unused; after that the URL
// answers 403.
type HostVirtualMedia struct {
	// TokenHash is the hex SHA-256 of the URL's token.
	TokenHash string `json:"tokenHash"`
	// BootRequestID is the status.bootRequestID the ISO boots.
	BootRequestID string `json:"bootRequestID"`
	// InsertedAt is when the BMC took the ISO.
	// +optional
	InsertedAt *metav1.Time `json:"insertedAt,omitempty"`
	// EjectedAt is when the BMC ejected it, after the boot.
	// +optional
	EjectedAt *metav1.Time `json:"ejectedAt,omitempty"`
}

// AgentStatus is what the host's anvil-agent reported.
type AgentStatus struct {
	// CredentialHash is the SHA-256 of the agent's credential.
	// +optional
	CredentialHash string `json:"credentialHash,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// BootID is the kernel's boot_id; it changes on every reboot.
	// +optional
	BootID string `json:"bootID,omitempty"`
	// +optional
	LastSeen *metav1.Time `json:"lastSeen,omitempty"`
	// KubeletVersion the agent runs.
	// +optional
	KubeletVersion string `json:"kubeletVersion,omitempty"`
}

// HostStatus is what Anvil observed.
type HostStatus struct {
	// +optional
	State HostState `json:"state,omitempty"`
	// +optional
	PowerState PowerState `json:"powerState,omitempty"`
	// LastPowerCheck is when the BMC was last asked for the power state, as
	// of the last time this status was written for another reason (a change
	// of state, power state, condition or error). Polls that find nothing new
	// write nothing, so it can be much older than the poll interval on an idle
	// Host; the controller keeps the time of its latest poll in memory.
	// +optional
	LastPowerCheck *metav1.Time `json:"lastPowerCheck,omitempty"`
	// +optional
	Hardware *HardwareDetails `json:"hardware,omitempty"`
	// BootRequestID is the last BootRequest.ID acted on.
	// +optional
	BootRequestID string `json:"bootRequestID,omitempty"`
	// PendingPowerAction is set for manual:// Hosts until an admin
	// acknowledges it (anvil hosts ack-power).
	// +optional
	PendingPowerAction *PendingPowerAction `json:"pendingPowerAction,omitempty"`
	// IssuedPowerAction is the power action sent to the BMC that it has not
	// yet been seen to carry out.
	// +optional
	IssuedPowerAction *IssuedPowerAction `json:"issuedPowerAction,omitempty"`
	// PowerCycleID is the last metal.anvil.dev/power-cycle request the Host
	// controller handled: it sent one power reset for it (or, for a
	// manual:// Host, a person acknowledged one), or it found the power off
	// and had nothing to cycle. A request whose ID differs is still to do.
	// +optional
	PowerCycleID string `json:"powerCycleID,omitempty"`
	// Leases are the DHCP addresses handed to the boot MACs.
	// +optional
	// +listType=map
	// +listMapKey=mac
	Leases []DHCPLease `json:"leases,omitempty"`
	// Leases6 are the DHCPv6 addresses handed to the boot MACs.
	// +optional
	// +listType=map
	// +listMapKey=mac
	Leases6 []DHCPv6Lease `json:"leases6,omitempty"`
	// +optional
	BootCredential *BootCredentialStatus `json:"bootCredential,omitempty"`
	// VirtualMedia is the ISO of a spec.bootMethod VirtualMedia boot the
	// Host controller had the BMC insert.
	// +optional
	VirtualMedia *HostVirtualMedia `json:"virtualMedia,omitempty"`
	// +optional
	Agent *AgentStatus `json:"agent,omitempty"`
	// Install is the last install of an OS image onto the Host's disk.
	// +optional
	Install *HostInstall `json:"install,omitempty"`
	// ErrorCount counts consecutive BMC failures; it drives the backoff.
	// +optional
	ErrorCount int32 `json:"errorCount,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Host is one physical server.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=hst,categories=anvil
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Power",type=string,JSONPath=`.status.powerState`
// +kubebuilder:printcolumn:name="Machine",type=string,JSONPath=`.spec.consumerRef.name`
// +kubebuilder:printcolumn:name="BMC",type=string,JSONPath=`.spec.bmc.address`,priority=1
// +kubebuilder:printcolumn:name="MAC",type=string,JSONPath=`.spec.bootMACs[0]`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.status=="False")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Host struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HostSpec   `json:"spec,omitempty"`
	Status HostStatus `json:"status,omitempty"`
}

// HostList is a list of Hosts.
// +kubebuilder:object:root=true
type HostList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Host `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Host{}, &HostList{})
}

// NodeHostname is the hostname the Host is given (DHCP, the NoCloud
// meta-data's local-hostname): spec.network.hostname, else its name.
func (h *Host) NodeHostname() string {
	if n := h.Spec.Network; n != nil && n.Hostname != "" {
		return n.Hostname
	}
	return h.Name
}
