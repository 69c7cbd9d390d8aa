package simhost

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"testing"

	"anvil.dev/anvil/render"
)

// userDataFiles finds Anvil's agent part in the user-data layouts the
// config endpoint serves and cloud-init reads (boot/delivery: Cluster API
// bootstrap data as the first part, Anvil's cloud-config second), and the
// files of plain, gzipped and nested user-data.
func TestUserDataFiles(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write([]byte(s))
		_ = zw.Close()
		return b.Bytes()
	}
	ours := `#cloud-config
{"runcmd":[["systemctl","daemon-reload"]],"write_files":[{"path":"/etc/anvil/agent.env","permissions":"0600","content":"ANVIL_ENDPOINT=http://e\nANVIL_CREDENTIAL=u.s\n"}]}`
	jinja := "## template: jinja\n#cloud-config\nwrite_files:\n- path: /run/kubeadm/join.yaml\n  content: {{ ds.meta_data.local_hostname }}\n"
	bootstrap, err := render.MultipartUserData([]render.UserDataPart{
		{ContentType: "text/plain; charset=utf-8", Base64: true, Body: []byte(jinja)},
		{ContentType: "text/cloud-config", MergeType: "list(append)+dict(no_replace,recurse_list)+str()", Body: []byte(ours)},
	})
	if err != nil {
		t.Fatal(err)
	}
	nested, err := render.MultipartUserData([]render.UserDataPart{
		{Entity: true, Body: []byte("Content-Type: multipart/mixed; boundary=\"in\"\r\nMIME-Version: 1.0\r\n\r\n--in\r\nContent-Type: text/cloud-config\r\n\r\n#cloud-config\r\nwrite_files:\r\n- {path: /etc/nested, content: nest}\r\n--in--\r\n")},
		{ContentType: "application/x-gzip", Base64: true, Body: gz("#cloud-config\nwrite_files:\n- {path: /etc/gzpart, content: g}\n")},
		{ContentType: "text/x-shellscript", Body: []byte("#!/bin/sh\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ud   []byte
		want map[string]string
	}{
		{"bootstrap data with the agent part", bootstrap, map[string]string{AgentEnvPath: "ANVIL_ENDPOINT=http://e\nANVIL_CREDENTIAL=u.s\n"}},
		{"Anvil's cloud-init class", []byte("#cloud-config\nwrite_files:\n- path: /etc/anvil/kubelet.env\n  content: |\n    NODE_NAME=n\n- path: /b64\n  encoding: b64\n  content: " + base64.StdEncoding.EncodeToString([]byte("decoded")) + "\n"),
			map[string]string{KubeletEnvPath: "NODE_NAME=n\n", "/b64": "decoded"}},
		{"nested, gzip part, script", nested, map[string]string{"/etc/nested": "nest", "/etc/gzpart": "g"}},
		{"gzipped MIME", gz(string(bootstrap)), map[string]string{AgentEnvPath: "ANVIL_ENDPOINT=http://e\nANVIL_CREDENTIAL=u.s\n"}},
		{"a script", []byte("#!/bin/sh\necho\n"), map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := userDataFiles(tc.ud)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Errorf("files %v, want %v", got, tc.want)
			}
			for p, c := range tc.want {
				if got[p] != c {
					t.Errorf("%s = %q, want %q", p, got[p], c)
				}
			}
		})
	}
	if _, err := userDataFiles([]byte("#cloud-config\nwrite_files: {not: a list}\n")); err == nil {
		t.Error("a bad cloud-config was accepted")
	}
}
