package statusapply

import (
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// The writers of Host status that use server-side apply, one field manager
// each; api/v1alpha1/STATUS.md is the table of who owns what. The lease
// store (anvil-dhcp) and the credential stores (anvil-bootcred) write
// their fields with compare-and-swap JSON patches instead (CASPatch).
var (
	// HostController is the Host controller (inventory).
	HostController = Writer{Manager: "anvil-inventory", Owns: []Field{
		Path("state"), Path("powerState"), Path("lastPowerCheck"), Path("bootRequestID"),
		Path("pendingPowerAction"), Path("issuedPowerAction"), Path("powerCycleID"), Path("errorCount"), Path("observedGeneration"),
		Path("hardware", "manufacturer"), Path("hardware", "model"), Path("hardware", "serialNumber"), Path("hardware", "uuid"),
		Path("hardware", "cpuModel"), Path("hardware", "cpuCount"), Path("hardware", "memoryMiB"), Path("hardware", "macs"),
		Condition(metalv1.ConditionValid), Condition(metalv1.ConditionBMCReachable), Condition(metalv1.ConditionPowerSynced),
		Path("virtualMedia"), Condition(metalv1.ConditionVirtualMedia),
	}}
	// HostWipeAck is the Host controller turning an acknowledged failed
	// wipe into Wiped=True.
	HostWipeAck = Writer{Manager: "anvil-inventory-wipe", Owns: []Field{Condition(metalv1.ConditionWiped)}}
	// MachineWipe is the Machine controller recording a wipe that cannot
	// happen (machine/delete.go).
	MachineWipe = Writer{Manager: "anvil-machine-wipe", Owns: []Field{Condition(metalv1.ConditionWiped)}}
	// AgentWipe is the agent API recording the agent's wipe result.
	AgentWipe = Writer{Manager: "anvil-agent-wipe", Owns: []Field{Condition(metalv1.ConditionWiped)}}
	// AgentReport is the agent API's report (agent/server/kube).
	AgentReport = Writer{Manager: "anvil-agent", Owns: []Field{
		Path("agent", "version"), Path("agent", "bootID"), Path("agent", "lastSeen"), Path("agent", "kubeletVersion"),
		Path("hardware", "cpuModel"), Path("hardware", "cpuCount"), Path("hardware", "memoryMiB"), Path("hardware", "macs"),
		Path("hardware", "kernel"), Path("hardware", "disks"), Path("hardware", "nics"),
	}}
	// ConfigRendered is the config endpoint (boot/delivery).
	ConfigRendered = Writer{Manager: "anvil-config", Owns: []Field{Condition(metalv1.ConditionConfigRendered)}}
	// Install is the config endpoint recording the installer's result
	// (boot/delivery).
	Install = Writer{Manager: "anvil-install", Owns: []Field{Path("install"), Condition(metalv1.ConditionInstalled)}}
)

// HostWriters are all the apply writers of Host status (for TakeOver).
var HostWriters = []Writer{HostController, HostWipeAck, MachineWipe, AgentWipe, AgentReport, ConfigRendered, Install}

// The writers of MachineClass status.
var (
	// MachineClassController validates the template (machine).
	MachineClassController = Writer{Manager: "anvil-machineclass", Owns: []Field{
		Path("configHash"), Path("observedGeneration"),
		Condition(metalv1.ConditionConfigValid), Condition("ArtifactURLsAllowed"),
	}}
	// ArtifactsValid is the network services' check of the boot
	// artifacts (pxe/netboot).
	ArtifactsValid = Writer{Manager: "anvil-artifacts", Owns: []Field{Condition(metalv1.ConditionArtifactsValid)}}
)

// TicketOutbox records the hardware request's ticket on the Machine
// (ticket); a compare-and-swap on the resourceVersion.
var TicketOutbox = Writer{Manager: "anvil-ticket", Owns: []Field{Path("hardwareRequest")}}

// AgentUpgrade is the agent API recording what the agent reports about an
// upgrade plan (agent/server/kube); the Machine controller alone turns it
// into status.upgrade.state.
var AgentUpgrade = Writer{Manager: "anvil-agent-upgrade", Owns: []Field{Path("upgrade", "agentResult")}}

// MachineClassGVK is the MachineClass's kind.
var MachineClassGVK = metalv1.GroupVersion.WithKind("MachineClass")

// HostGVK is the Host's kind.
var HostGVK = metalv1.GroupVersion.WithKind("Host")

// MachineGVK is the Machine's kind.
var MachineGVK = metalv1.GroupVersion.WithKind("Machine")
