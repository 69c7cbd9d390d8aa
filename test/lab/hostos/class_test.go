package hostos

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"anvil.dev/anvil/render"
	"anvil.dev/anvil/test/lab/image"
)

// The user-data renders with sample values into cloud-config YAML whose
// files carry the values they must (a broken indent would put the CA or
// the token outside its file, and cloud-init would drop the file).
func TestTemplateRendersToCloudConfig(t *testing.T) {
	vars := render.SampleVars()
	nc, err := render.NewRenderer(render.Options{}).NoCloud(context.Background(), render.NoCloudTemplates{UserData: Template()}, vars)
	if err != nil {
		t.Fatal(err)
	}
	ud, _ := nc.File(render.FileUserData)
	if !strings.HasPrefix(string(ud), "#cloud-config\n") {
		t.Fatalf("user-data does not start with #cloud-config:\n%s", ud)
	}
	var cfg struct {
		Hostname   string `json:"hostname"`
		WriteFiles []struct {
			Path, Content, Permissions string
		} `json:"write_files"`
		Runcmd []any `json:"runcmd"`
	}
	if err := yaml.UnmarshalStrict(ud, &cfg); err != nil {
		t.Fatalf("user-data is not the cloud-config expected: %v\n%s", err, ud)
	}
	files := map[string]string{}
	for _, f := range cfg.WriteFiles {
		files[f.Path] = f.Content
	}
	for path, want := range map[string]string{
		"/etc/kubernetes/pki/ca.crt":             strings.TrimSpace(vars.Join.CACertPEM),
		"/etc/kubernetes/bootstrap-kubelet.conf": "token: " + vars.Join.Token,
		"/etc/anvil/agent.env":                   "ANVIL_CREDENTIAL=" + vars.Agent.Credential,
		"/etc/systemd/system/kubelet.service":    "--provider-id=" + vars.Join.ProviderID + " \\\n  --node-ip=" + vars.Addresses[0] + "\n",
		"/usr/local/sbin/anvil-fetch-kubelet":    vars.Join.KubeletSHA256 + "  /tmp/kubelet",
	} {
		if !strings.Contains(files[path], want) {
			t.Errorf("%s does not contain %q:\n%s", path, want, files[path])
		}
	}
	if cfg.Hostname != vars.Join.NodeName || len(cfg.Runcmd) != 4 {
		t.Fatalf("hostname %q, runcmd %v", cfg.Hostname, cfg.Runcmd)
	}
}

func TestMachineClass(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	mc, err := MachineClass(ClassOptions{Lab: image.ClassOptions{Image: &image.Image{KernelSHA256: sum, InitrdSHA256: sum}, KubeletSHA256: sum}, ImageSHA256: sum})
	if err != nil {
		t.Fatal(err)
	}
	if mc.Name != "lab-debian" || mc.Spec.Image == nil || mc.Spec.Image.URL != DefaultImageURL || mc.Spec.Config.Format != "cloud-init" {
		t.Fatalf("class %+v", mc.Spec)
	}
	if _, err := MachineClass(ClassOptions{Lab: image.ClassOptions{Image: &image.Image{}, KubeletSHA256: sum}}); err == nil || !strings.Contains(err.Error(), "ImageSHA256") {
		t.Fatalf("no image digest: %v", err)
	}
}
