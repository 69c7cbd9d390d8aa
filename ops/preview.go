package ops

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UpgradeMode is how Anvil would carry out a version change of a Machine.
type UpgradeMode string

const (
	ModeInPlace     UpgradeMode = "InPlace"     // only spec.version changes: drain, the agent swaps the kubelet
	ModeReplacement UpgradeMode = "Replacement" // the Machine would be or is being replaced instead (Why says why)
	ModeNoChange    UpgradeMode = "NoChange"    // it already asks for that version
	ModeRefused     UpgradeMode = "Refused"     // the upgrade would be rejected (Why says why)
	ModeWaiting     UpgradeMode = "Waiting"     // accepted, but starts once the Machine is Running (or its set resumes)
)

// MachinePreview says what an upgrade of one Machine would do, without
// doing it.
type MachinePreview struct {
	Machine, Namespace string
	Running            string // kubelet the Node runs now (status.version), "" if none
	Target             string
	Mode               UpgradeMode
	Why                string // one line: why this mode
	SkewOK             bool
	Skew               string // the skew check's verdict in one line, or why it fails
}

// PreviewMachineUpgrade says what UpgradeMachine would do. apiVersion is
// the API server's git version (discovery's ServerVersion().GitVersion).
func PreviewMachineUpgrade(ctx context.Context, c client.Client, apiVersion string, key types.NamespacedName, version string) (MachinePreview, error) {
	return MachinePreview{}, errors.New("ops.PreviewMachineUpgrade: not implemented yet")
}

// PreviewMachineSetUpgrade says what UpgradeMachineSet would do to each of
// the set's Machines, sorted by name.
func PreviewMachineSetUpgrade(ctx context.Context, c client.Client, apiVersion string, key types.NamespacedName, version string) ([]MachinePreview, error) {
	return nil, errors.New("ops.PreviewMachineSetUpgrade: not implemented yet")
}
