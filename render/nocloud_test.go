package render

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestRenderNoCloud(t *testing.T) {
	vars := hostVars(t)
	tmpls := NoCloudTemplates{
		UserData:      mustRead(t, "user-data.tmpl"),
		NetworkConfig: mustRead(t, "network-config.tmpl"),
	}
	nc, err := RenderNoCloud(tmpls, vars, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]string
	if err := yaml.Unmarshal(nc.MetaData, &md); err != nil {
		t.Fatalf("meta-data is not YAML: %v\n%s", err, nc.MetaData)
	}
	if md["instance-id"] != nc.InstanceID || !strings.HasPrefix(nc.InstanceID, "anvil-") {
		t.Errorf("meta-data instance-id %q, InstanceID %q", md["instance-id"], nc.InstanceID)
	}
	if md["local-hostname"] != "node-a1" {
		t.Errorf("local-hostname %q", md["local-hostname"])
	}
	if !strings.HasPrefix(string(nc.UserData), "#cloud-config\n") || !strings.Contains(string(nc.UserData), "token: "+vars.Join.Token) {
		t.Errorf("user-data:\n%s", nc.UserData)
	}
	var ud map[string]any
	if err := yaml.Unmarshal(nc.UserData, &ud); err != nil || ud["hostname"] != "node-a1" {
		t.Errorf("user-data does not parse to the expected mapping: %v %v", err, ud)
	}
	var netcfg struct {
		Version   int
		Ethernets map[string]struct {
			Match struct {
				MACAddress string `yaml:"macaddress"`
			}
		}
	}
	if err := yaml.Unmarshal(nc.NetworkConfig, &netcfg); err != nil {
		t.Fatal(err)
	}
	if netcfg.Version != 2 || netcfg.Ethernets["nic1"].Match.MACAddress != "52:54:00:12:34:57" {
		t.Errorf("network-config:\n%s", nc.NetworkConfig)
	}
	if _, ok := nc.File(FileVendorData); ok {
		t.Error("vendor-data present although no template was given")
	}
	for _, f := range []string{FileMetaData, FileUserData, FileNetworkConfig} {
		if b, ok := nc.File(f); !ok || len(b) == 0 {
			t.Errorf("File(%q) missing", f)
		}
	}
	if _, ok := nc.File("../etc/passwd"); ok {
		t.Error("File accepted an unknown name")
	}
}

func TestNoCloudInstanceID(t *testing.T) {
	base := hostVars(t)
	tmpls := NoCloudTemplates{UserData: mustRead(t, "user-data.tmpl"), NetworkConfig: mustRead(t, "network-config.tmpl")}
	id := func(tm NoCloudTemplates, v Vars) string {
		t.Helper()
		nc, err := RenderNoCloud(tm, v, RenderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return nc.InstanceID
	}
	first := id(tmpls, base)

	otherToken := base
	otherToken.Join.Token = "zzzzzz.zzzzzzzzzzzzzzzz"
	otherTmpl := tmpls
	otherTmpl.UserData += "bootcmd: [[echo, hi]]\n"
	otherNet := base
	otherNet.MACs = []string{"52:54:00:00:00:99"}
	withVendor := tmpls
	withVendor.VendorData = "#cloud-config\n{}\n"
	otherHost := base
	otherHost.Hostname = "node-b2"
	// A var that no template uses does not change the output, so not the ID.
	unused := base
	unused.Extra = map[string]string{"unused": "x"}

	tests := []struct {
		name    string
		tmpls   NoCloudTemplates
		vars    Vars
		changes bool
	}{
		{"same input", tmpls, base, false},
		{"unused var changed", tmpls, unused, false},
		{"token changed (user-data differs)", tmpls, otherToken, true},
		{"user-data template changed", otherTmpl, base, true},
		{"network-config changed", tmpls, otherNet, true},
		{"vendor-data added", withVendor, base, true},
		{"hostname changed", tmpls, otherHost, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := id(tc.tmpls, tc.vars)
			if (got != first) != tc.changes {
				t.Errorf("instance-id %s vs %s; want changed=%v", got, first, tc.changes)
			}
		})
	}
}

func TestNoCloudValidation(t *testing.T) {
	vars := hostVars(t)
	multipart := "Content-Type: multipart/mixed; boundary=\"XX\"\nMIME-Version: 1.0\n\n--XX\nContent-Type: text/cloud-config\n\n#cloud-config\nhostname: x\n--XX--\n"
	tests := []struct {
		name      string
		tmpls     NoCloudTemplates
		wantErr   bool
		wantPart  string
		wantStage Stage
		wantLine  int
	}{
		{name: "cloud-config", tmpls: NoCloudTemplates{UserData: "#cloud-config\nhostname: {{ .Hostname }}\n"}},
		{name: "empty cloud-config", tmpls: NoCloudTemplates{UserData: "#cloud-config\n"}},
		{name: "script", tmpls: NoCloudTemplates{UserData: "#!/bin/sh\necho {{ .Hostname }}\n"}},
		{name: "multipart", tmpls: NoCloudTemplates{UserData: multipart}},
		{name: "network v1 nested", tmpls: NoCloudTemplates{UserData: "#cloud-config\n", NetworkConfig: "network:\n  version: 1\n  config: []\n"}},
		{name: "empty user-data", tmpls: NoCloudTemplates{UserData: " \n"},
			wantErr: true, wantPart: FileUserData, wantStage: StageTemplate},
		{name: "no header", tmpls: NoCloudTemplates{UserData: "hostname: x\n"},
			wantErr: true, wantPart: FileUserData, wantStage: StageCloudInit, wantLine: 1},
		{name: "cloud-config not a mapping", tmpls: NoCloudTemplates{UserData: "#cloud-config\n- a\n"},
			wantErr: true, wantPart: FileUserData, wantStage: StageCloudInit, wantLine: 2},
		{name: "bad YAML after expansion", tmpls: NoCloudTemplates{UserData: "#cloud-config\nwrite_files:\n  - content: |\n{{ .Join.CACertPEM | indent 6 }}\n    path: /x\n   bad: indent\n"},
			wantErr: true, wantPart: FileUserData, wantStage: StageCloudInit, wantLine: 6},
		{name: "missing var in network-config", tmpls: NoCloudTemplates{UserData: "#cloud-config\n", NetworkConfig: "version: 2\n# {{ .Labels.nic }}\n"},
			wantErr: true, wantPart: FileNetworkConfig, wantStage: StageTemplate, wantLine: 2},
		{name: "network-config without version", tmpls: NoCloudTemplates{UserData: "#cloud-config\n", NetworkConfig: "ethernets: {}\n"},
			wantErr: true, wantPart: FileNetworkConfig, wantStage: StageCloudInit},
		{name: "broken multipart", tmpls: NoCloudTemplates{UserData: "Content-Type: multipart/mixed; boundary=\"XX\"\n\nno parts here\n"},
			wantErr: true, wantPart: FileUserData, wantStage: StageCloudInit},
		{name: "bad vendor-data", tmpls: NoCloudTemplates{UserData: "#cloud-config\n", VendorData: "#cloud-config\nx: [\n"},
			wantErr: true, wantPart: FileVendorData, wantStage: StageCloudInit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RenderNoCloud(tc.tmpls, vars, RenderOptions{})
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("got %v, want a *TemplateError", err)
			}
			if te.Part != tc.wantPart || te.Stage != tc.wantStage || (tc.wantLine != 0 && te.Line != tc.wantLine) {
				t.Errorf("got part %q stage %q line %d, want %q %q %d (%v)", te.Part, te.Stage, te.Line, tc.wantPart, tc.wantStage, tc.wantLine, err)
			}
		})
	}
}
