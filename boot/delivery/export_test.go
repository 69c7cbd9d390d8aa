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
)

// RecordInstall lets an external test hand recordInstall a Host as a stale
// cache would (TestInstallFlow).
func (c *Configs) RecordInstall(ctx context.Context, h *metalv1.Host, res agent.InstallResult) error {
	return c.recordInstall(ctx, h, res)
}
