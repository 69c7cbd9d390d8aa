package agent

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// Paths of protocol version 1. Every path lives below PathPrefix, so the
// whole API is mounted with one Handle(PathPrefix, server).
const (
	PathPrefix  = "/agent/v1/"
	PathReport  = PathPrefix + "report"
	PathActions = PathPrefix + "actions"
)

// Long poll of GET PathActions: with QueryWaitSeconds=N (1..MaxWaitSeconds)
// a server that supports it holds a request that finds nothing to do until
// there is something (answered at once) or N seconds passed (answered
// "none"), and sets Action.Waited. Absent or 0 answers at once; an old
// server ignores the parameter and never sets Waited.
const (
	QueryWaitSeconds = "waitSeconds"
	MaxWaitSeconds   = 300
)

// ResultPath is the path an action's result is posted to.
func ResultPath(actionID string) string {
	return PathActions + "/" + url.PathEscape(actionID) + "/result"
}

// Limits the server enforces on a request (and the agent respects).
const (
	MaxStringLen  = 256  // any single identifier or descriptive field
	MaxReasonLen  = 2048 // Result.Reason
	MaxListLen    = 256  // Report.Disks, Report.NICs
	MaxActionID   = 128  // action and plan IDs
	MaxBodyBytes  = 1 << 20
	MaxVersionLen = 64
)

// Report is what the agent tells about its host: who it is now (boot),
// what it runs, and the hardware it sees. POST PathReport.
type Report struct {
	// AgentVersion is the anvil-agent build.
	AgentVersion string `json:"agentVersion"`
	// BootID is /proc/sys/kernel/random/boot_id; it changes on every boot.
	BootID string `json:"bootID"`
	// Kernel is the running kernel release (uname -r).
	Kernel string `json:"kernel,omitempty"`
	// Hostname as the kernel knows it.
	Hostname string `json:"hostname,omitempty"`
	// KubeletVersion is the kubelet the host runs ("" when none is installed).
	KubeletVersion string `json:"kubeletVersion,omitempty"`
	CPU            CPU    `json:"cpu"`
	// MemoryMiB is MemTotal from /proc/meminfo.
	MemoryMiB int64  `json:"memoryMiB,omitempty"`
	Disks     []Disk `json:"disks,omitempty"`
	NICs      []NIC  `json:"nics,omitempty"`
}

// CPU summarizes /proc/cpuinfo.
type CPU struct {
	Model string `json:"model,omitempty"`
	// Count is the number of logical CPUs.
	Count int32 `json:"count,omitempty"`
}

// Disk is a whole block device from /sys/block.
type Disk struct {
	Name       string `json:"name"`
	SizeBytes  int64  `json:"sizeBytes"`
	Rotational bool   `json:"rotational,omitempty"`
	Removable  bool   `json:"removable,omitempty"`
	Model      string `json:"model,omitempty"`
	Serial     string `json:"serial,omitempty"`
	// WWN is the World Wide Name (/sys/block/<name>/wwid or device/wwid,
	// e.g. "naa.5000c500a1b2c3d4" or "eui.0025388b71b2c3d4").
	WWN string `json:"wwn,omitempty"`
	// ByPath are the disk's /dev/disk/by-path names (udev's; none where
	// udev does not run, as in the installer's initramfs).
	ByPath []string `json:"byPath,omitempty"`
}

// NIC is a physical network interface from /sys/class/net.
type NIC struct {
	Name string `json:"name"`
	MAC  string `json:"mac"`
	// SpeedMbps is 0 when unknown (link down, virtual NIC).
	SpeedMbps int32 `json:"speedMbps,omitempty"`
}

// ActionType is what the server wants the agent to do.
type ActionType string

const (
	ActionNone    ActionType = "none"
	ActionWipe    ActionType = "wipe"
	ActionUpgrade ActionType = "upgrade"
)

// Action is the answer to GET PathActions.
type Action struct {
	Type ActionType `json:"type"`
	// ID names the action; results are posted to ResultPath(ID). For an
	// upgrade it is the plan ID. Empty for ActionNone.
	ID string `json:"id,omitempty"`
	// Upgrade is set for ActionUpgrade.
	Upgrade *UpgradePlan `json:"upgrade,omitempty"`
	// PollAfterSeconds hints when to ask again.
	PollAfterSeconds int32 `json:"pollAfterSeconds,omitempty"`
	// Waited: the server held this request (QueryWaitSeconds), so the
	// agent may ask again at once instead of after PollAfterSeconds.
	Waited bool `json:"waited,omitempty"`
}

// UpgradePlan says which kubelet to run.
type UpgradePlan struct {
	PlanID  string `json:"planID"`
	Version string `json:"version"`
	// URL of the kubelet binary: absolute http(s), or a reference relative
	// to the agent's endpoint (for example "/artifacts/kubelet/v1.37.2").
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
	// HealthCheckTimeoutSeconds bounds the wait for the new kubelet to be
	// healthy; 0 means the agent's default.
	HealthCheckTimeoutSeconds int64 `json:"healthCheckTimeoutSeconds,omitempty"`
}

// Outcome of an action, or InProgress for a progress update.
type Outcome string

const (
	InProgress Outcome = "inProgress"
	Succeeded  Outcome = "succeeded"
	Failed     Outcome = "failed"
)

// Phase is the step an action is in.
type Phase string

const (
	PhaseDownloading Phase = "downloading"
	PhaseInstalling  Phase = "installing"
	PhaseSwitching   Phase = "switching"
	PhaseRestarting  Phase = "restarting"
	PhaseVerifying   Phase = "verifying"
	PhaseRollingBack Phase = "rollingBack"
	PhaseWiping      Phase = "wiping"
	PhaseDone        Phase = "done"
)

// Result is posted to ResultPath(id): progress (Result InProgress) or the
// final outcome. Posting the same final Result twice is harmless.
type Result struct {
	Type ActionType `json:"type"`
	// PlanID repeats the plan ID for upgrades (must equal the path's id).
	PlanID string  `json:"planID,omitempty"`
	Result Outcome `json:"result"`
	Phase  Phase   `json:"phase,omitempty"`
	// Reason is human-readable: why it failed, or what happened.
	Reason string `json:"reason,omitempty"`
	// KubeletVersion is the kubelet the host runs after an upgrade (the new
	// version on success, the previous one after a rollback).
	KubeletVersion string `json:"kubeletVersion,omitempty"`
}

// ErrorResponse is the body of 400, 404 and 409 answers. 401 has no body.
type ErrorResponse struct {
	Error string `json:"error"`
}

var (
	versionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	sha256RE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	bootIDRE  = regexp.MustCompile(`^[0-9a-fA-F-]{1,64}$`)
)

// ValidVersion reports whether v is a kubelet version as the API allows it
// (vMAJOR.MINOR.PATCH). The agent uses versions as directory names, so
// this is also what keeps a plan from escaping the kubelet directory.
func ValidVersion(v string) bool { return versionRE.MatchString(v) }

// ValidActionID reports whether id can name an action.
func ValidActionID(id string) bool {
	if id == "" || len(id) > MaxActionID {
		return false
	}
	for _, r := range id {
		if r < 0x21 || r > 0x7e || r == '/' || r == '\\' {
			return false
		}
	}
	return true
}

// Validate checks a plan before the agent acts on it.
func (p *UpgradePlan) Validate() error {
	switch {
	case p == nil:
		return errors.New("upgrade action without a plan")
	case !ValidActionID(p.PlanID):
		return errors.New("plan ID is empty, too long or has invalid characters")
	case !ValidVersion(p.Version):
		return fmt.Errorf("plan version %q is not vMAJOR.MINOR.PATCH", truncate(p.Version, MaxVersionLen))
	case !sha256RE.MatchString(p.SHA256):
		return errors.New("plan sha256 is not 64 lower-case hex digits")
	case p.URL == "":
		return errors.New("plan has no URL")
	case p.HealthCheckTimeoutSeconds < 0:
		return errors.New("plan health check timeout is negative")
	}
	return nil
}

// Validate checks an action as the agent receives it.
func (a *Action) Validate() error {
	switch a.Type {
	case ActionNone:
		return nil
	case ActionWipe:
		if !ValidActionID(a.ID) {
			return errors.New("wipe action has an invalid ID")
		}
		return nil
	case ActionUpgrade:
		if err := a.Upgrade.Validate(); err != nil {
			return err
		}
		if a.ID != a.Upgrade.PlanID {
			return errors.New("upgrade action ID differs from its plan ID")
		}
		return nil
	default:
		return fmt.Errorf("unknown action type %q", truncate(string(a.Type), 32))
	}
}

// Validate checks a result as the server receives it.
func (r *Result) Validate() error {
	switch r.Type {
	case ActionWipe, ActionUpgrade:
	default:
		return fmt.Errorf("result type must be %q or %q", ActionWipe, ActionUpgrade)
	}
	switch r.Result {
	case InProgress, Succeeded, Failed:
	default:
		return fmt.Errorf("result must be %q, %q or %q", InProgress, Succeeded, Failed)
	}
	if len(r.Reason) > MaxReasonLen {
		return fmt.Errorf("reason longer than %d bytes", MaxReasonLen)
	}
	if len(r.Phase) > MaxStringLen || len(r.PlanID) > MaxActionID {
		return errors.New("phase or planID too long")
	}
	if r.KubeletVersion != "" && !ValidVersion(r.KubeletVersion) {
		return errors.New("kubeletVersion is not vMAJOR.MINOR.PATCH")
	}
	return nil
}

// Validate checks a report as the server receives it. MACs must parse;
// everything else is bounded in size.
func (r *Report) Validate() error {
	if !bootIDRE.MatchString(r.BootID) {
		return errors.New("bootID must be 1-64 hex digits and dashes")
	}
	for _, s := range []string{r.AgentVersion, r.Kernel, r.Hostname, r.CPU.Model} {
		if len(s) > MaxStringLen {
			return fmt.Errorf("a field is longer than %d bytes", MaxStringLen)
		}
	}
	if r.KubeletVersion != "" && !ValidVersion(r.KubeletVersion) {
		return errors.New("kubeletVersion is not vMAJOR.MINOR.PATCH")
	}
	if r.CPU.Count < 0 || r.MemoryMiB < 0 {
		return errors.New("negative CPU count or memory")
	}
	if len(r.Disks) > MaxListLen || len(r.NICs) > MaxListLen {
		return fmt.Errorf("more than %d disks or NICs", MaxListLen)
	}
	for _, d := range r.Disks {
		if d.Name == "" || len(d.Name) > MaxStringLen || len(d.Model) > MaxStringLen || len(d.Serial) > MaxStringLen || len(d.WWN) > MaxStringLen ||
			d.SizeBytes < 0 || len(d.ByPath) > 8 {
			return errors.New("invalid disk entry")
		}
		for _, p := range d.ByPath {
			if p == "" || len(p) > MaxStringLen {
				return errors.New("invalid disk entry")
			}
		}
	}
	for _, n := range r.NICs {
		if n.Name == "" || len(n.Name) > MaxStringLen {
			return errors.New("invalid NIC entry")
		}
		if _, err := net.ParseMAC(n.MAC); err != nil {
			return fmt.Errorf("NIC %q: invalid MAC", truncate(n.Name, 32))
		}
	}
	return nil
}

// MACs returns the report's distinct 6-byte MACs, normalized to lower
// case with colons, in NIC order.
func (r *Report) MACs() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range r.NICs {
		hw, err := net.ParseMAC(n.MAC)
		if err != nil || len(hw) != 6 {
			continue
		}
		m := strings.ToLower(hw.String())
		if m == "00:00:00:00:00:00" || seen[m] {
			continue
		}
		seen[m] = true
		out = append(out, m)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// String forms used in logs and messages.
func (a ActionType) String() string { return string(a) }
