package simhost

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"testing"
)

func TestConfigURLs(t *testing.T) {
	tests := []struct {
		name, script, ign, seed string
	}{
		{"provisioning script", "#!ipxe\nkernel http://a/k initrd=initrd0 console=ttyS0 ignition.config.url=http://a/config/02:a0:00:00:00:01/ignition?cred=abc ignition.platform.id=metal\ninitrd --name initrd0 http://a/i\nboot\n",
			"http://a/config/02:a0:00:00:00:01/ignition?cred=abc", ""},
		{"cloud-init script", "#!ipxe\nkernel http://a/k initrd=initrd0 console=ttyS0 ds=nocloud-net;s=http://a/config/02:a0:00:00:00:01/nocloud/abc/\nboot\n",
			"", "http://a/config/02:a0:00:00:00:01/nocloud/abc/"},
		{"withheld credential", "#!ipxe\necho Anvil: no boot credential in this script (second_request), the OS will get no config\nkernel http://a/k ignition.platform.id=metal\nboot\n", "", ""},
		{"exit", "#!ipxe\necho Anvil: not network booting this host now, booting from local disk\nexit 1\n", "", ""},
		{"url on another line is not a kernel argument", "#!ipxe\necho ignition.config.url=http://x ds=nocloud-net;s=http://y/\nkernel http://a/k\n", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if ign, seed := configURLs([]byte(tc.script)); ign != tc.ign || seed != tc.seed {
				t.Fatalf("configURLs = %q, %q; want %q, %q", ign, seed, tc.ign, tc.seed)
			}
		})
	}
}

func TestIgnitionFiles(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("NODE_NAME=m-1\nPROVIDER_ID=anvil://u\nKUBELET_VERSION=v1.37.2\n"))
	_ = zw.Close()
	str := func(s string) *string { return &s }
	type contents struct {
		Source      *string `json:"source,omitempty"`
		Compression *string `json:"compression,omitempty"`
	}
	type file struct {
		Path     string   `json:"path"`
		Contents contents `json:"contents"`
	}
	doc := map[string]any{"ignition": map[string]string{"version": "3.4.0"}, "storage": map[string]any{"files": []file{
		{Path: AgentEnvPath, Contents: contents{Source: str("data:," + url.PathEscape("ANVIL_ENDPOINT=http://127.0.0.1:8080\nANVIL_CREDENTIAL=uid.secret\n"))}},
		{Path: KubeletEnvPath, Contents: contents{Source: str("data:;base64," + base64.StdEncoding.EncodeToString(gz.Bytes())), Compression: str("gzip")}},
		{Path: "/opt/anvil/kubelet/v1.37.2/kubelet", Contents: contents{Source: str("http://127.0.0.1:8080/artifacts/k")}},
	}}}
	b, _ := json.Marshal(doc)
	files, err := ignitionFiles(b)
	if err != nil {
		t.Fatal(err)
	}
	a, k := parseEnv(files[AgentEnvPath]), parseEnv(files[KubeletEnvPath])
	if a["ANVIL_ENDPOINT"] != "http://127.0.0.1:8080" || a["ANVIL_CREDENTIAL"] != "uid.secret" {
		t.Errorf("agent.env parsed as %v", a)
	}
	if k["NODE_NAME"] != "m-1" || k["PROVIDER_ID"] != "anvil://u" || k["KUBELET_VERSION"] != "v1.37.2" {
		t.Errorf("kubelet.env parsed as %v", k)
	}
	if _, ok := files["/opt/anvil/kubelet/v1.37.2/kubelet"]; ok {
		t.Error("a remote file was taken for an inline one")
	}
	for _, bad := range []string{`{}`, `not json`, `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/x","contents":{"source":"data:nocomma"}}]}}`} {
		if _, err := ignitionFiles([]byte(bad)); err == nil {
			t.Errorf("ignitionFiles(%s) accepted", bad)
		}
	}
}

func TestScrubKeepsCredentialsOut(t *testing.T) {
	s := &simHost{f: &Fleet{hc: newHTTPClient(), sem: make(chan struct{}, 1)}}
	for _, u := range []string{
		"http://127.0.0.1:1/config/02:a0:00:00:00:01/ignition?cred=supersecret",
		"http://127.0.0.1:1/config/02:a0:00:00:00:01/nocloud/supersecret/user-data",
	} {
		_, err := s.get(t.Context(), u, "config")
		if err == nil {
			t.Fatal("GET of a closed port succeeded")
		}
		if bytes.Contains([]byte(err.Error()), []byte("supersecret")) {
			t.Fatalf("error carries the credential: %v", err)
		}
	}
	if got := redactPath("/config/m/nocloud/supersecret/meta-data"); got != "/config/m/nocloud/<credential>/meta-data" {
		t.Fatal(got)
	}
}
