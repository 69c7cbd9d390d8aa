package render

import (
	"strings"
	"testing"
)

func TestAgentEnvFile(t *testing.T) {
	got := AgentEnv{Endpoint: "http://e", Credential: "u.s", KubeletBin: "/usr/bin/kubelet"}.File()
	if got != "ANVIL_ENDPOINT=http://e\nANVIL_CREDENTIAL=u.s\nANVIL_KUBELET_BIN=/usr/bin/kubelet\n" {
		t.Fatalf("%q", got)
	}
	if u := AgentUnit("/opt/bin/anvil-agent"); !strings.Contains(u, "\nExecStart=/opt/bin/anvil-agent --log-format text\n") || !strings.Contains(u, "EnvironmentFile="+AgentEnvPath+"\n") {
		t.Fatal(u)
	}
}
