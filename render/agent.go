package render

import "strings"

// Where anvil-agent finds its configuration, and the unit that runs it.
// Anvil's own configs and the part it adds to Cluster API bootstrap data
// (boot/delivery) install the same files, so that every host's agent is
// set up alike.
const (
	AgentEnvPath  = "/etc/anvil/agent.env"
	AgentUnitName = "anvil-agent.service"
	AgentUnitPath = "/etc/systemd/system/" + AgentUnitName
)

// AgentUnit is anvil-agent's systemd unit, running the agent binary at
// binary (/usr/local/bin/anvil-agent on Debian-like hosts, /opt/bin on
// Flatcar and Fedora CoreOS, whose /usr is read-only). The lab's host class
// (test/lab/hostos) installs this unit too.
func AgentUnit(binary string) string {
	return `[Unit]
Description=Anvil agent (reports to Anvil, upgrades the kubelet in place)
Wants=network-online.target
After=network-online.target
[Service]
EnvironmentFile=` + AgentEnvPath + `
ExecStart=` + binary + ` --log-format text
Restart=always
RestartSec=5
[Install]
WantedBy=multi-user.target
`
}

// AgentEnv are the keys of AgentEnvPath (see cmd/anvil-agent's config):
// an EnvironmentFile of KEY=VALUE lines. Credential is secret.
type AgentEnv struct {
	Endpoint   string // ANVIL_ENDPOINT
	Credential string // ANVIL_CREDENTIAL
	NodeName   string // ANVIL_NODE_NAME
	// Optional: empty values are left out (the agent's defaults apply).
	KubeletManager string // ANVIL_KUBELET_MANAGER
	KubeletBin     string // ANVIL_KUBELET_BIN
	Kubeconfig     string // ANVIL_KUBECONFIG
}

// File is the env-file's content, one key a line in a fixed order.
// (Not String: a %v of the value must not print the credential.)
func (e AgentEnv) File() string {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"ANVIL_ENDPOINT", e.Endpoint}, {"ANVIL_CREDENTIAL", e.Credential}, {"ANVIL_NODE_NAME", e.NodeName},
		{"ANVIL_KUBELET_MANAGER", e.KubeletManager}, {"ANVIL_KUBELET_BIN", e.KubeletBin}, {"ANVIL_KUBECONFIG", e.Kubeconfig},
	} {
		if kv[1] != "" || kv[0] == "ANVIL_ENDPOINT" || kv[0] == "ANVIL_CREDENTIAL" {
			b.WriteString(kv[0] + "=" + kv[1] + "\n")
		}
	}
	return b.String()
}
