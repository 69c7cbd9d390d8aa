package delivery

import (
	"context"

	"anvil.dev/anvil/agent"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// For the external tests of the agent part (bootstrapagent.go).
var (
	WithAgentCloudConfig = withAgentCloudConfig
	WithAgentIgnition    = withAgentIgnition
	KubeletBootcmd       = kubeletBootcmd
)

// HostKubelet is a kubelet a config installs (machineKubelet).
type HostKubelet = hostKubelet

func NewHostKubelet(version, url, sha256 string) HostKubelet {
	return hostKubelet{version: version, url: url, sha256: sha256}
}

// RecordInstall lets an external test hand recordInstall a Host as a stale
// cache would (TestInstallFlow).
func (c *Configs) RecordInstall(ctx context.Context, h *metalv1.Host, res agent.InstallResult) error {
	return c.recordInstall(ctx, h, res)
}
