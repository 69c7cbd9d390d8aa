package upgrade

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/internal/atomicfile"
)

// Phase of a plan. Every phase is persisted (with fsync) before its work
// starts, so a restarted agent knows exactly what may be half done.
type Phase string

const (
	// Before the switch: the running kubelet is untouched.
	PhaseDownloading Phase = "downloading"
	PhaseInstalling  Phase = "installing"
	// From here on the symlink may point at the new version.
	PhaseSwitching   Phase = "switching"
	PhaseRestarting  Phase = "restarting"
	PhaseVerifying   Phase = "verifying"
	PhaseRollingBack Phase = "rollingBack"
	// Terminal.
	PhaseSucceeded Phase = "succeeded"
	PhaseFailed    Phase = "failed"
)

// Terminal reports whether p ends a plan.
func (p Phase) Terminal() bool { return p == PhaseSucceeded || p == PhaseFailed }

// protocolPhase maps a Phase to the phase reported to the server.
func (p Phase) protocolPhase() agent.Phase {
	switch p {
	case PhaseDownloading:
		return agent.PhaseDownloading
	case PhaseInstalling:
		return agent.PhaseInstalling
	case PhaseSwitching:
		return agent.PhaseSwitching
	case PhaseRestarting:
		return agent.PhaseRestarting
	case PhaseVerifying:
		return agent.PhaseVerifying
	case PhaseRollingBack:
		return agent.PhaseRollingBack
	}
	return agent.PhaseDone
}

// State is the persisted progress of one plan.
type State struct {
	PlanID  string `json:"planID"`
	Version string `json:"version"`
	URL     string `json:"url"`
	SHA256  string `json:"sha256"`
	// HealthTimeoutSeconds is the plan's health window (0: the default).
	HealthTimeoutSeconds int64 `json:"healthTimeoutSeconds,omitempty"`
	// PreviousVersion is what `current` pointed to when the plan began
	// ("" if there was no kubelet): the rollback target.
	PreviousVersion string `json:"previousVersion"`
	Phase           Phase  `json:"phase"`
	// Reason explains a failure (and a rollback in progress).
	Reason string `json:"reason,omitempty"`
	// Reported: the server acknowledged the terminal result.
	Reported  bool      `json:"reported,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Result is the protocol result for a state.
func (s *State) Result() agent.Result {
	r := agent.Result{Type: agent.ActionUpgrade, PlanID: s.PlanID, Reason: s.Reason, Phase: s.Phase.protocolPhase()}
	switch s.Phase {
	case PhaseSucceeded:
		r.Result, r.KubeletVersion = agent.Succeeded, s.Version
	case PhaseFailed:
		r.Result = agent.Failed
		if s.PreviousVersion != "" {
			r.KubeletVersion = s.PreviousVersion
		}
	default:
		r.Result = agent.InProgress
	}
	return r
}

// stateFile is the on-disk document.
type stateFile struct {
	FormatVersion int `json:"formatVersion"`
	// Current is the plan in progress, or the last one finished.
	Current *State `json:"current,omitempty"`
	// Done remembers finished plans (newest last, bounded) so that none
	// is ever applied twice.
	Done []State `json:"done,omitempty"`
}

const stateFormat = 1

func loadState(p string) (*stateFile, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &stateFile{FormatVersion: stateFormat}, nil
	}
	if err != nil {
		return nil, err
	}
	var f stateFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("state file %s is corrupt: %w", p, err)
	}
	if f.FormatVersion != stateFormat {
		return nil, fmt.Errorf("state file %s has format %d, this agent reads %d", p, f.FormatVersion, stateFormat)
	}
	return &f, nil
}

// saveState writes the file durably: temp file, fsync, rename, fsync dir.
func saveState(p string, f *stateFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return writeFileSync(p, append(b, '\n'), 0o600)
}

func writeFileSync(p string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, data, mode)
}

func syncDir(dir string) error { return atomicfile.SyncDir(dir) }
