package agent

import (
	"strings"
	"testing"
)

func TestInstallPlanValidate(t *testing.T) {
	const sum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	good := func() *InstallPlan {
		return &InstallPlan{Device: "nvme0n1", Image: InstallImage{URL: "https://images.example/debian-12.raw", SHA256: sum}, SeedURL: "http://10.0.0.1/nocloud/c2VjcmV0/"}
	}
	tests := []struct {
		name    string
		edit    func(p *InstallPlan)
		nilPlan bool
		wantErr string // "" = valid
	}{
		{name: "valid", edit: func(*InstallPlan) {}},
		{name: "valid with an http image and a port", edit: func(p *InstallPlan) { p.Image.URL = "http://10.0.0.1:8080/images/x.raw?v=2" }},
		{name: "nil plan", nilPlan: true, wantErr: "no install plan"},
		{name: "no device", edit: func(p *InstallPlan) { p.Device = "" }, wantErr: "device"},
		{name: "device as a path", edit: func(p *InstallPlan) { p.Device = "/dev/sda" }, wantErr: "not a kernel disk name"},
		{name: "device climbing out of /dev", edit: func(p *InstallPlan) { p.Device = ".." }, wantErr: "not a kernel disk name"},
		{name: "device with a backslash", edit: func(p *InstallPlan) { p.Device = `sd\a` }, wantErr: "not a kernel disk name"},
		{name: "device too long", edit: func(p *InstallPlan) { p.Device = strings.Repeat("s", MaxStringLen+1) }, wantErr: "not a kernel disk name"},
		{name: "device at the length limit", edit: func(p *InstallPlan) { p.Device = strings.Repeat("s", MaxStringLen) }},
		{name: "upper-case checksum", edit: func(p *InstallPlan) { p.Image.SHA256 = strings.ToUpper(sum) }, wantErr: "image.sha256"},
		{name: "short checksum", edit: func(p *InstallPlan) { p.Image.SHA256 = sum[:63] }, wantErr: "image.sha256"},
		{name: "no checksum", edit: func(p *InstallPlan) { p.Image.SHA256 = "" }, wantErr: "image.sha256"},
		{name: "relative image URL", edit: func(p *InstallPlan) { p.Image.URL = "/images/x.raw" }, wantErr: "image.url is not an absolute http(s) URL"},
		{name: "image URL without host", edit: func(p *InstallPlan) { p.Image.URL = "http:///x.raw" }, wantErr: "image.url"},
		{name: "file image URL", edit: func(p *InstallPlan) { p.Image.URL = "file:///x.raw" }, wantErr: "image.url"},
		{name: "image URL with a control character", edit: func(p *InstallPlan) { p.Image.URL = "http://h/x\n.raw" }, wantErr: "image.url"},
		{name: "seed URL without the trailing slash", edit: func(p *InstallPlan) { p.SeedURL = "http://10.0.0.1/nocloud/c2VjcmV0" }, wantErr: "seedURL must end in /"},
		{name: "seed URL not http", edit: func(p *InstallPlan) { p.SeedURL = "file:///var/lib/cloud/seed/" }, wantErr: "seedURL is not an absolute http(s) URL"},
		{name: "seed URL with a newline (YAML injection)", edit: func(p *InstallPlan) { p.SeedURL = "http://h/a\nruncmd: [x]/" }, wantErr: "seedURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good()
			if tt.nilPlan {
				p = nil
			} else {
				tt.edit(p)
			}
			err := p.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("valid plan refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want %q", err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "c2VjcmV0"):
				t.Errorf("the error shows the seed URL: %v", err)
			}
		})
	}
}

func TestInstallResultURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://10.0.0.1/config/52-54-00-aa-bb-01/install?cred=abc":  "http://10.0.0.1/config/52-54-00-aa-bb-01/install/result?cred=abc",
		"http://10.0.0.1/config/52-54-00-aa-bb-01/install/?cred=abc": "http://10.0.0.1/config/52-54-00-aa-bb-01/install/result?cred=abc",
	} {
		if got, err := InstallResultURL(in); err != nil || got != want {
			t.Errorf("InstallResultURL(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}
