package delivery

// For the external tests of the agent part (bootstrapagent.go).
var (
	WithAgentCloudConfig = withAgentCloudConfig
	WithAgentIgnition    = withAgentIgnition
)
