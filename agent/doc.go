// Package agent defines the agent API, version 1, between anvil-agent (on
// each provisioned host) and Anvil: the wire types, paths and credentials
// both sides share. The server side is agent/server (Server, behind a
// Backend; agent/server/kube is the Kubernetes one), linked into anvil; the
// on-host side is agent/onhost/..., linked only into anvil-agent.
//
// # Transport and authentication
//
// JSON over HTTP(S) below /agent/v1/. The agent only makes outbound
// requests. Every request carries the host's agent credential:
//
//	Authorization: Bearer <hostUID>.<secret>
//
// The credential is minted per Host (NewCredential: 32 random bytes,
// base64url), delivered once in the host's rendered config, and never
// stored: Host.status.agent.credentialHash holds CredentialHash(credential),
// the hex SHA-256 of the whole string. The server takes the UID from the
// credential, finds that one Host in an informer-cache index (no listing),
// and compares hashes in constant time. Issuing a new credential replaces
// the hash, which revokes the old one. Every refusal (malformed, unknown
// host, wrong or revoked secret) is a bare 401 with WWW-Authenticate;
// failures are counted per client address and an address with too many
// gets 429 before its credential is even looked at. Credentials never
// appear in logs, errors or responses.
//
// # Endpoints
//
//	POST /agent/v1/report              Report          -> 204
//	GET  /agent/v1/actions                             -> 200 Action
//	POST /agent/v1/actions/{id}/result Result          -> 204
//
// Report: boot ID, kernel, hostname, CPU model and count, memory, disks,
// NICs with MACs, agent and running kubelet version. The server merges it
// into Host.status.agent (version, bootID, lastSeen, kubeletVersion; never
// the credential hash) and Host.status.hardware (cpuModel, cpuCount,
// memoryMiB, macs; BMC facts stay).
//
// Action: {"type": "none"}, {"type": "wipe", "id": "wipe-<generation>"}
// while the Host is Deprovisioning, or
//
//	{"type": "upgrade", "id": "<planID>", "upgrade": {"planID": "...",
//	 "version": "v1.37.2", "url": "...", "sha256": "...",
//	 "healthCheckTimeoutSeconds": 300}}
//
// while the Host's Machine has status.upgrade.state "Applying"; url and
// sha256 come from the MachineClass's spec.kubelets entry for the version
// (a path relative to the artifact directory becomes "/artifacts/<path>",
// which the agent resolves against its endpoint). Every answer carries
// "pollAfterSeconds". GET actions?waitSeconds=N (1 to 300) is a long poll:
// a request that finds nothing to do is held until there is something (it
// is answered at once) or N seconds pass, and the answer has "waited":
// true, so the agent asks again at once. An idle fleet then costs one
// request per host per N seconds, and an action reaches its agent as soon
// as it is set. Servers without it ignore the parameter (no "waited"), and
// the agent falls back to pollAfterSeconds.
//
// Reports: a report that changes nothing but lastSeen is not written
// while the stored lastSeen is under an hour old, so status.agent.lastSeen
// is refreshed hourly on an unchanged host.
//
// Result: {"type": "upgrade"|"wipe", "planID": "...", "result":
// "inProgress"|"succeeded"|"failed", "phase": "downloading"|"installing"|
// "switching"|"restarting"|"verifying"|"rollingBack"|"wiping"|"done",
// "reason": "...", "kubeletVersion": "..."}. An upgrade result is recorded
// in Machine.status.upgrade.agentResult; a progress phase (inProgress)
// stays there (readers show it as "agent: <phase>", UpgradeStatus.Progress),
// and from an outcome the Machine controller sets state Succeeded or
// Failed, message (the reason) and finishedAt. A wipe outcome sets the Host condition Wiped (True/Wiped or
// False/WipeFailed, message = reason). A phase is written at most once per
// 5 s per Machine: one that comes sooner is answered 204 at once, held (a
// newer phase replaces it) and written when the 5 s end; an outcome is
// written at once and discards a held phase. Repeating an outcome is a no-op;
// once the Machine has left Applying (or moved to another plan) a result
// for the old plan gets 409, which tells the agent to stop reporting it.
//
// Errors: 400/404/409/413 carry {"error": "..."}; 503 (with Retry-After)
// means the backend is unavailable. All calls are idempotent; the agent
// retries network errors, 429 and 5xx with exponential backoff and jitter,
// a bounded number of times (package client).
package agent
