package image

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// Paths on a lab host. The kubelet layout is the agent's (agent/README.md).
const (
	KubeletDir        = "/opt/anvil/kubelet"
	AgentConfigPath   = "/etc/anvil/agent.json"
	KubeletFlagsPath  = "/etc/anvil/kubelet.flags"
	KubeletLogPath    = "/var/log/kubelet.log"
	KubeletConfigPath = "/etc/kubernetes/kubelet-config.yaml"
	// FakeCRISocket is where the image's fake-cri serves the CRI.
	FakeCRISocket = "/run/fake-cri/fake-cri.sock"
)

// DefaultKubeletVersion is the version hack/tools builds into bin/kubelet.
const DefaultKubeletVersion = "v1.37.2"

// ClassOptions describe the lab MachineClass.
type ClassOptions struct {
	// Name and Namespace of the class (default "lab", "default").
	Name, Namespace string
	// Image is the built host image; its digests go into the class.
	Image *Image
	// KernelURL, InitrdURL and KubeletURL are artifact paths relative to
	// the artifact directory of `anvil serve` (or http(s) URLs). Defaults:
	// "lab/vmlinuz", "lab/initramfs.cpio.gz", "lab/kubelet-<version>".
	KernelURL, InitrdURL, KubeletURL string
	// KubeletSHA256 is the hex SHA-256 of the kubelet binary (FileSHA256
	// of bin/kubelet). Required.
	KubeletSHA256 string
	// KubeletVersion (default DefaultKubeletVersion).
	KubeletVersion string
	// OtherKubelets are further versions Machines of the class may run
	// (an older one to upgrade from in place).
	OtherKubelets []metalv1.KubeletArtifact
	// APIServerEndpoint, if set, becomes spec.join.apiServerEndpoint.
	APIServerEndpoint string
	// ExtraKernelArgs are appended to KernelArgs().
	ExtraKernelArgs []string
}

// MachineClass returns the lab MachineClass: the image's kernel and initrd,
// one kubelet, and a Butane (fcos) config that makes the image join as a
// Node under anvil-agent (see Template).
func MachineClass(o ClassOptions) (*metalv1.MachineClass, error) {
	if o.Image == nil {
		return nil, fmt.Errorf("lab MachineClass: ClassOptions.Image is required (image.Build)")
	}
	if len(o.KubeletSHA256) != 64 {
		return nil, fmt.Errorf("lab MachineClass: ClassOptions.KubeletSHA256 must be the 64 hex digits of bin/kubelet's SHA-256")
	}
	o.defaults()
	wipe := true
	mc := &metalv1.MachineClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: metalv1.GroupVersion.String(), Kind: "MachineClass"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
		Spec: metalv1.MachineClassSpec{
			Kernel:     metalv1.Artifact{URL: o.KernelURL, SHA256: o.Image.KernelSHA256},
			Initrds:    []metalv1.Artifact{{URL: o.InitrdURL, SHA256: o.Image.InitrdSHA256}},
			KernelArgs: append(KernelArgs(), o.ExtraKernelArgs...),
			Config:     metalv1.ConfigTemplate{Format: "butane", Variant: "fcos", Template: Template()},
			Kubelets: append([]metalv1.KubeletArtifact{{
				Version:  o.KubeletVersion,
				Artifact: metalv1.Artifact{URL: o.KubeletURL, SHA256: o.KubeletSHA256},
			}}, o.OtherKubelets...),
			Join: metalv1.JoinSpec{APIServerEndpoint: o.APIServerEndpoint},
			Wipe: &wipe,
		},
	}
	return mc, nil
}

// defaults fills in what ClassOptions documents.
func (o *ClassOptions) defaults() {
	if o.Name == "" {
		o.Name = "lab"
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.KubeletVersion == "" {
		o.KubeletVersion = DefaultKubeletVersion
	}
	if o.KernelURL == "" {
		o.KernelURL = "lab/vmlinuz"
	}
	if o.InitrdURL == "" {
		o.InitrdURL = "lab/initramfs.cpio.gz"
	}
	if o.KubeletURL == "" {
		o.KubeletURL = "lab/kubelet-" + o.KubeletVersion
	}
}

// PublishArtifacts puts the image's kernel and initrd and the kubelet where
// the class's relative artifact URLs point below dir (the artifact directory
// of `anvil serve`): hard links where possible, copies otherwise.
func PublishArtifacts(dir string, o ClassOptions, kubeletBin string) error {
	if o.Image == nil {
		return fmt.Errorf("lab artifacts: ClassOptions.Image is required")
	}
	o.defaults()
	for rel, src := range map[string]string{o.KernelURL: o.Image.Kernel, o.InitrdURL: o.Image.Initrd, o.KubeletURL: kubeletBin} {
		if strings.Contains(rel, "://") {
			continue // served from elsewhere
		}
		dst := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+rel)))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp := dst + ".tmp"
		os.Remove(tmp)
		if err := os.Link(src, tmp); err != nil {
			if err := copyFile(src, tmp); err != nil {
				return fmt.Errorf("lab artifacts: %s: %w", rel, err)
			}
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
	}
	return nil
}

// KernelArgs are the arguments every lab boot needs: the serial console the
// tests read, and a reboot instead of a hang on panic. Anvil's iPXE script
// adds ignition.config.url and ignition.platform.id on provisioning boots.
func KernelArgs() []string {
	return []string{"console=ttyS0,115200n8", "panic=-1", "loglevel=4"}
}

// BootstrapKubeconfig is the template text (over render.Vars) of the
// kubelet's bootstrap kubeconfig, every line indented by indent spaces:
// the API server, the CA the config writes to /etc/kubernetes/pki/ca.crt,
// and Join.Token. The lab's Butane and cloud-init templates embed it.
func BootstrapKubeconfig(indent int) string {
	lines := []string{
		"apiVersion: v1",
		"kind: Config",
		"clusters:",
		"  - name: default",
		"    cluster:",
		"      server: {{ .Join.APIServerEndpoint }}",
		"      certificate-authority: /etc/kubernetes/pki/ca.crt",
		"users:",
		"  - name: kubelet-bootstrap",
		"    user:",
		"      token: {{ .Join.Token }}",
		"contexts:",
		"  - name: default",
		"    context: {cluster: default, user: kubelet-bootstrap}",
		"current-context: default",
	}
	pad := strings.Repeat(" ", indent)
	return pad + strings.Join(lines, "\n"+pad) + "\n"
}

// kubeletArg is one kubelet flag whose value is a literal or a field of
// render.Vars.
type kubeletArg struct{ flag, literal, field string }

// kubeletArgs are the kubelet's command line on a lab host: the agent's
// supervisor runs it with these (agent.json), and the init's fallback (no
// agent credential) reads them from KubeletFlagsPath.
var kubeletArgs = []kubeletArg{
	{flag: "--bootstrap-kubeconfig", literal: "/etc/kubernetes/bootstrap-kubelet.conf"},
	{flag: "--kubeconfig", literal: "/etc/kubernetes/kubelet.conf"},
	{flag: "--config", literal: KubeletConfigPath},
	{flag: "--cert-dir", literal: "/var/lib/kubelet/pki"},
	{flag: "--hostname-override", field: ".Join.NodeName"},
	{flag: "--provider-id", field: ".Join.ProviderID"},
}

// plain is the argument as template text for a shell word.
func (a kubeletArg) plain() string {
	if a.field != "" {
		return a.flag + "={{ " + a.field + " }}"
	}
	return a.flag + "=" + a.literal
}

// jsonString is the argument as template text for a JSON string.
func (a kubeletArg) jsonString() string {
	if a.field != "" {
		return `{{ printf "` + a.flag + `=%s" ` + a.field + ` | quote }}`
	}
	b, _ := json.Marshal(a.flag + "=" + a.literal)
	return string(b)
}

// Template is the lab class's Butane (fcos 1.5.0) template over
// render.Vars. It writes the hostname, the cluster CA, a bootstrap
// kubeconfig with Join.Token, the kubelet config (cgroupfs, the image's
// fake CRI, no QoS cgroups, swap allowed), the kubelet from Join.KubeletURL
// verified against Join.KubeletSHA256 into /opt/anvil/kubelet/<version>/
// with the `current` link, and agent.json (Agent.Endpoint,
// Agent.Credential, Join.NodeName, the kubelet under the agent's
// supervisor). The image's init starts what it finds.
func Template() string {
	var b strings.Builder
	w := func(s string) { b.WriteString(s) }
	w(`variant: fcos
version: 1.5.0
storage:
  files:
    - path: /etc/hostname
      mode: 0644
      overwrite: true
      contents:
        inline: {{ .Hostname }}
    - path: /etc/kubernetes/pki/ca.crt
      mode: 0644
      contents:
        inline: |
{{ .Join.CACertPEM | indent 10 }}
    - path: /etc/kubernetes/bootstrap-kubelet.conf
      mode: 0600
      contents:
        inline: |
` + BootstrapKubeconfig(10) + `    - path: ` + KubeletConfigPath + `
      mode: 0644
      contents:
        inline: |
          apiVersion: kubelet.config.k8s.io/v1beta1
          kind: KubeletConfiguration
          authentication:
            anonymous: {enabled: false}
            webhook: {enabled: true}
            x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
          authorization: {mode: Webhook}
          # The lab image has no systemd and no container runtime: the
          # kubelet manages no cgroups of its own and talks to fake-cri.
          cgroupDriver: cgroupfs
          cgroupsPerQOS: false
          enforceNodeAllocatable: []
          containerRuntimeEndpoint: unix://` + FakeCRISocket + `
          failSwapOn: false
          providerID: {{ .Join.ProviderID }}
          rotateCertificates: true
          serverTLSBootstrap: false
          resolvConf: /etc/resolv.conf
    - path: ` + KubeletDir + `/{{ .Join.KubeletVersion }}/kubelet
      mode: 0755
      contents:
        source: {{ .Join.KubeletURL }}
        verification:
          hash: sha256-{{ .Join.KubeletSHA256 }}
    - path: ` + KubeletFlagsPath + `
      mode: 0644
      contents:
        inline: |
`)
	for _, a := range kubeletArgs {
		w("          " + a.plain() + "\n")
	}
	w(`    - path: ` + AgentConfigPath + `
      mode: 0600
      contents:
        inline: |
          {
            "endpoint": {{ .Agent.Endpoint | quote }},
            "credential": {{ .Agent.Credential | quote }},
            "nodeName": {{ .Join.NodeName | quote }},
            "kubelet": {
              "manager": "supervisor",
              "logFile": "` + KubeletLogPath + `",
              "args": [
`)
	for i, a := range kubeletArgs {
		sep := ","
		if i == len(kubeletArgs)-1 {
			sep = ""
		}
		w("                " + a.jsonString() + sep + "\n")
	}
	w(`              ]
            }
          }
  links:
    - path: ` + KubeletDir + `/current
      target: {{ .Join.KubeletVersion }}
`)
	return b.String()
}

// FileSHA256 returns the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
