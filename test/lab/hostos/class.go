// Package hostos is the lab's installed OS: a MachineClass that installs
// the Debian 12 disk image (hack/hostimage) with the lab's installer
// initramfs, and the cloud-init user-data that makes the installed system
// join with containerd, the kubelet under systemd and anvil-agent.
package hostos

import (
	"fmt"
	"strings"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/render"
	"anvil.dev/anvil/test/lab/image"
)

// Console markers the installed OS prints (the tests wait for them).
const (
	MarkerPrefix = "ANVIL-HOST: "
	// MarkerConfigured: cloud-init wrote the join files and verified the kubelet.
	MarkerConfigured = MarkerPrefix + "configured by cloud-init"
	// MarkerKubeletStarted: the kubelet and the agent units were started,
	// and once the kubelet had its kubeconfig, the first boot's files
	// were synced to disk.
	MarkerKubeletStarted = MarkerPrefix + "kubelet and anvil-agent started"
	// FailPrefix starts a failed step's line.
	FailPrefix = "ANVIL-HOST-FAIL: "
)

// DefaultImageURL is where the stack publishes the disk image, relative to
// the artifact directory.
const DefaultImageURL = "lab/debian-12-amd64.raw"

// ClassOptions describe the disk-install class.
type ClassOptions struct {
	// Lab are the options of the lab's live class; its kernel and initrd
	// (the installer) and kubelets are reused. Name defaults to "lab-debian".
	Lab image.ClassOptions
	// ImageURL (default DefaultImageURL) and ImageSHA256 (required) of
	// the raw whole-disk image.
	ImageURL, ImageSHA256 string
}

// MachineClass returns the class whose provisioning boot installs the
// Debian image to disk; the installed system's cloud-init renders Template.
func MachineClass(o ClassOptions) (*metalv1.MachineClass, error) {
	if len(o.ImageSHA256) != 64 {
		return nil, fmt.Errorf("lab disk class: ClassOptions.ImageSHA256 must be the 64 hex digits of the image's SHA-256")
	}
	if o.Lab.Name == "" {
		o.Lab.Name = "lab-debian"
	}
	if o.ImageURL == "" {
		o.ImageURL = DefaultImageURL
	}
	mc, err := image.MachineClass(o.Lab)
	if err != nil {
		return nil, err
	}
	mc.Spec.Image = &metalv1.Artifact{URL: o.ImageURL, SHA256: o.ImageSHA256}
	// A patch release restarts the kubelet under running containers.
	mc.Spec.Upgrade.SkipDrainForPatch = true
	mc.Spec.Config = metalv1.ConfigTemplate{Format: "cloud-init", Template: Template()}
	return mc, nil
}

// Template is the cloud-config (over render.Vars) of an installed lab
// host: the cluster CA, the Node's address (the one Anvil leased; the lab's
// network has no default route for the kubelet to find it by), a bootstrap kubeconfig with Join.Token, the kubelet
// config (systemd cgroups, containerd), the Machine's kubelet from
// Join.KubeletURL checked against Join.KubeletSHA256 (the image's own may be
// another version), the kubelet and anvil-agent units. The agent adopts
// /usr/local/bin/kubelet into its versioned layout, so an in-place upgrade
// lands on the disk and outlives reboots.
func Template() string {
	return `#cloud-config
hostname: {{ .Join.NodeName }}
write_files:
  - path: /etc/kubernetes/pki/ca.crt
    permissions: "0644"
    content: |
{{ .Join.CACertPEM | indent 6 }}
  - path: /etc/kubernetes/bootstrap-kubelet.conf
    permissions: "0600"
    content: |
` + image.BootstrapKubeconfig(6) + `  - path: /etc/kubernetes/kubelet-config.yaml
    permissions: "0644"
    content: |
      apiVersion: kubelet.config.k8s.io/v1beta1
      kind: KubeletConfiguration
      authentication:
        anonymous: {enabled: false}
        webhook: {enabled: true}
        x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
      authorization: {mode: Webhook}
      cgroupDriver: systemd
      containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
      rotateCertificates: true
      failSwapOn: false
      # The lab's VMs are small: do not evict the web pods for a full root.
      evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%"}
  - path: /etc/anvil/agent.env
    permissions: "0600"
    content: |
      ANVIL_ENDPOINT={{ .Agent.Endpoint }}
      ANVIL_CREDENTIAL={{ .Agent.Credential }}
      ANVIL_NODE_NAME={{ .Join.NodeName }}
      ANVIL_KUBELET_MANAGER=systemd
      ANVIL_KUBELET_BIN=/usr/local/bin/kubelet
      ANVIL_KUBECONFIG=/etc/kubernetes/kubelet.conf
  - path: /etc/systemd/system/kubelet.service
    permissions: "0644"
    content: |
      [Unit]
      Description=kubelet (Anvil lab)
      Wants=containerd.service
      After=network-online.target containerd.service anvil-import-images.service
      [Service]
      ExecStart=/usr/local/bin/kubelet \
        --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
        --kubeconfig=/etc/kubernetes/kubelet.conf \
        --config=/etc/kubernetes/kubelet-config.yaml \
        --cert-dir=/var/lib/kubelet/pki \
        --hostname-override={{ .Join.NodeName }} \
        --provider-id={{ .Join.ProviderID }}{{ with .Addresses }} \
        --node-ip={{ index . 0 }}{{ end }}
      Restart=always
      RestartSec=5
      [Install]
      WantedBy=multi-user.target
  - path: ` + render.AgentUnitPath + `
    permissions: "0644"
    content: |
` + indent(6, render.AgentUnit("/usr/local/bin/anvil-agent")) + `  - path: /usr/local/sbin/anvil-fetch-kubelet
    permissions: "0755"
    content: |
      #!/bin/sh
      # The Machine's kubelet, verified; a digest mismatch stops the join.
      set -eu
      python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' '{{ .Join.KubeletURL }}' /tmp/kubelet
      echo "{{ .Join.KubeletSHA256 }}  /tmp/kubelet" | sha256sum -c -
      install -m 0755 /tmp/kubelet /usr/local/bin/kubelet.new
      # On disk before the rename: ext4 allocates a new file's blocks late,
      # and a power loss in the next half minute would leave it empty.
      sync /usr/local/bin/kubelet.new
      mv -f /usr/local/bin/kubelet.new /usr/local/bin/kubelet
      sync /usr/local/bin
      rm -f /tmp/kubelet
runcmd:
  - [sh, -c, 'if /usr/local/sbin/anvil-fetch-kubelet; then echo "` + MarkerConfigured + `" >/dev/ttyS0; else echo "` + FailPrefix + `kubelet {{ .Join.KubeletVersion }} download or digest" >/dev/ttyS0; exit 1; fi']
  - [systemctl, daemon-reload]
  - [systemctl, enable, --now, containerd, kubelet, anvil-agent]
  # The first boot's files (these units' links, cloud-init's state, the
  # kubelet's client certificate and kubeconfig once its CSR is approved)
  # on disk: the kubelet writes its certificate without fsync, and after
  # a power loss without it, the bootstrap token it would fall back to is
  # spent. At most 5 minutes; the marker says it happened.
  - [sh, -c, 'i=0; while [ ! -s /etc/kubernetes/kubelet.conf ] && [ $i -lt 300 ]; do sleep 1; i=$((i+1)); done; sync; echo "` + MarkerKubeletStarted + `" >/dev/ttyS0']
`
}

// indent prefixes every line of s with n spaces.
func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
}
