package simhost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// DefaultVersion is the kubelet version simulated hosts install unless a
// class lists others: the envtest API server's own.
const DefaultVersion = "v1.37.2"

// ClassOptions describe the MachineClass simulated hosts boot.
type ClassOptions struct {
	// Name (default "sim") and Namespace (required).
	Name, Namespace string
	// Versions are the kubelets the class lists (default DefaultVersion).
	Versions []string
	// ArtifactDir is the --artifact-dir of the `anvil serve` with the
	// HTTP boot server: Class writes small stand-in kernel, initrd and
	// kubelet files below ArtifactDir/<Name>/ so the class's sha256s are
	// real. Required.
	ArtifactDir string
	// Wipe: deleted Machines wipe their Host (default true).
	Wipe *bool
	// DrainTimeout of in-place upgrades (default: the controller's).
	DrainTimeout *metav1.Duration
	// Format of the config: "butane" (default: Template) or "cloud-init"
	// (CloudInitTemplate; a host then fetches its NoCloud seed). Machines
	// with Cluster API bootstrap data of format cloud-config need a
	// cloud-init class, those of format ignition a Butane one.
	Format string
}

// Class returns a Butane (fcos) or cloud-init MachineClass whose config
// carries what a simulated host reads (AgentEnvPath, KubeletEnvPath)
// besides what a real class writes (hostname, the bootstrap kubeconfig
// with its token), and writes its artifacts. Rendering it costs what a
// small real class costs.
func Class(o ClassOptions) (*metalv1.MachineClass, error) {
	if o.Namespace == "" || o.ArtifactDir == "" {
		return nil, errors.New("simhost: ClassOptions need Namespace and ArtifactDir")
	}
	if o.Name == "" {
		o.Name = "sim"
	}
	if len(o.Versions) == 0 {
		o.Versions = []string{DefaultVersion}
	}
	art := func(name string, size int) (metalv1.Artifact, error) {
		dir := filepath.Join(o.ArtifactDir, o.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return metalv1.Artifact{}, err
		}
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(i*31 + len(name))
		}
		copy(b, name)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return metalv1.Artifact{}, fmt.Errorf("simhost: writing artifact %s: %w", name, err)
		}
		sum := sha256.Sum256(b)
		return metalv1.Artifact{URL: o.Name + "/" + name, SHA256: hex.EncodeToString(sum[:])}, nil
	}
	kernel, err := art("vmlinuz", 64<<10)
	if err != nil {
		return nil, err
	}
	initrd, err := art("initrd.img", 64<<10)
	if err != nil {
		return nil, err
	}
	wipe := true
	if o.Wipe != nil {
		wipe = *o.Wipe
	}
	config := metalv1.ConfigTemplate{Format: "butane", Variant: "fcos", Template: Template}
	switch o.Format {
	case "", "butane":
	case "cloud-init":
		config = metalv1.ConfigTemplate{Format: "cloud-init", Template: CloudInitTemplate}
	default:
		return nil, fmt.Errorf("simhost: ClassOptions.Format %q: want butane or cloud-init", o.Format)
	}
	mc := &metalv1.MachineClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: metalv1.GroupVersion.String(), Kind: "MachineClass"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
		Spec: metalv1.MachineClassSpec{
			Kernel:     kernel,
			Initrds:    []metalv1.Artifact{initrd},
			KernelArgs: []string{"console=ttyS0,115200n8"},
			Config:     config,
			Wipe:       &wipe,
		},
	}
	mc.Spec.Upgrade.DrainTimeout = o.DrainTimeout
	for _, v := range o.Versions {
		a, err := art("kubelet-"+v, 32<<10)
		if err != nil {
			return nil, err
		}
		mc.Spec.Kubelets = append(mc.Spec.Kubelets, metalv1.KubeletArtifact{Version: v, Artifact: a})
	}
	return mc, nil
}

// Template is the simulated class's Butane template (see Class).
const Template = `variant: fcos
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
          apiVersion: v1
          kind: Config
          clusters:
            - name: default
              cluster:
                server: {{ .Join.APIServerEndpoint }}
                certificate-authority: /etc/kubernetes/pki/ca.crt
          users:
            - name: kubelet-bootstrap
              user:
                token: {{ .Join.Token }}
          contexts:
            - name: default
              context:
                cluster: default
                user: kubelet-bootstrap
          current-context: default
    - path: /opt/anvil/kubelet/{{ .Join.KubeletVersion }}/kubelet
      mode: 0755
      contents:
        source: {{ .Join.KubeletURL }}
        verification:
          hash: sha256-{{ .Join.KubeletSHA256 }}
    - path: ` + AgentEnvPath + `
      mode: 0600
      contents:
        inline: |
          ANVIL_ENDPOINT={{ .Agent.Endpoint }}
          ANVIL_CREDENTIAL={{ .Agent.Credential }}
          ANVIL_NODE_NAME={{ .Join.NodeName }}
    - path: ` + KubeletEnvPath + `
      mode: 0644
      contents:
        inline: |
          NODE_NAME={{ .Join.NodeName }}
          PROVIDER_ID={{ .Join.ProviderID }}
          KUBELET_VERSION={{ .Join.KubeletVersion }}
`

// CloudInitTemplate is the cloud-init form of Template (see Class).
const CloudInitTemplate = `#cloud-config
hostname: {{ .Hostname }}
write_files:
  - path: /etc/kubernetes/pki/ca.crt
    permissions: "0644"
    content: |
{{ .Join.CACertPEM | indent 6 }}
  - path: /etc/kubernetes/bootstrap-kubelet.conf
    permissions: "0600"
    content: |
      apiVersion: v1
      kind: Config
      clusters:
        - name: default
          cluster:
            server: {{ .Join.APIServerEndpoint }}
            certificate-authority: /etc/kubernetes/pki/ca.crt
      users:
        - name: kubelet-bootstrap
          user:
            token: {{ .Join.Token }}
      contexts:
        - name: default
          context:
            cluster: default
            user: kubelet-bootstrap
      current-context: default
  - path: ` + AgentEnvPath + `
    permissions: "0600"
    content: |
      ANVIL_ENDPOINT={{ .Agent.Endpoint }}
      ANVIL_CREDENTIAL={{ .Agent.Credential }}
      ANVIL_NODE_NAME={{ .Join.NodeName }}
  - path: ` + KubeletEnvPath + `
    permissions: "0644"
    content: |
      NODE_NAME={{ .Join.NodeName }}
      PROVIDER_ID={{ .Join.ProviderID }}
      KUBELET_VERSION={{ .Join.KubeletVersion }}
runcmd:
  - [sh, -c, 'curl -fsSLo /opt/anvil/kubelet/{{ .Join.KubeletVersion }}/kubelet --create-dirs {{ .Join.KubeletURL }} && echo "{{ .Join.KubeletSHA256 }}  /opt/anvil/kubelet/{{ .Join.KubeletVersion }}/kubelet" | sha256sum -c -']
`

// HostsOptions describe a batch of Host objects for a fleet.
type HostsOptions struct {
	Namespace string
	// Prefix of the names (default "sim-"): <Prefix><i>.
	Prefix string
	// Count Hosts, numbered from First.
	First, Count int
	// BMCAddress of Host i (e.g. a redfishsim system path). Required.
	BMCAddress func(i int) string
	// CredentialsName is the BMC Secret (default "bmc").
	CredentialsName string
	// Labels of Host i (optional).
	Labels func(i int) map[string]string
}

// Hosts returns the Host objects (not created).
func Hosts(o HostsOptions) []*metalv1.Host {
	if o.Prefix == "" {
		o.Prefix = "sim-"
	}
	if o.CredentialsName == "" {
		o.CredentialsName = "bmc"
	}
	out := make([]*metalv1.Host, 0, o.Count)
	for i := o.First; i < o.First+o.Count; i++ {
		addr := o.BMCAddress(i)
		h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%d", o.Prefix, i), Namespace: o.Namespace},
			Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: addr, CredentialsName: o.CredentialsName,
				// Simulated BMCs on loopback may serve plain HTTP.
				AllowPlainHTTP: strings.HasPrefix(addr, "redfish+http://")}, BootMACs: []string{MAC(i)}}}
		if o.Labels != nil {
			h.Labels = o.Labels(i)
		}
		out = append(out, h)
	}
	return out
}

// MAC is the boot MAC of simulated host i (locally administered).
func MAC(i int) string {
	return fmt.Sprintf("02:a0:%02x:%02x:%02x:%02x", byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
}
