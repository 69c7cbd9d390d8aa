package stack

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"anvil.dev/anvil/test/lab/image"
)

// KubeadmControllers are the kube-controller-manager controllers a kubeadm
// cluster runs that `kubeadm join` relies on and the lab's control plane
// leaves out by default (ControllerManagerControllers):
//   - csrapproving approves the client CSRs of kubelets that join with
//     tokens of kubeadm's group (Anvil approves only its own Machines'
//     CSRs; those of Machines with Cluster API bootstrap data are the
//     workload cluster's to approve);
//   - bootstrapsigner signs cluster-info with every signing token, which
//     join's token discovery verifies.
var KubeadmControllers = []string{"certificatesigningrequest-approving-controller", "bootstrap-signer-controller"}

// KubeadmJoinReady prepares the lab's API server for `kubeadm join`, as
// kubeadm init leaves a control plane, with kubeadm's own init phases (the
// binary kubeadm, hack/tools' bin/kubeadm), run inside the lab's namespace
// against the address the VMs use, so that cluster-info names it:
//   - upload-config kubeadm and kubelet: the ClusterConfiguration
//     (kube-system/kubeadm-config) join reads, and the KubeletConfiguration
//     (kube-system/kubelet-config) it gives the kubelet, with their RBAC;
//   - bootstrap-token: cluster-info in kube-public, readable without
//     credentials, and the RBAC that lets tokens of kubeadm's group file
//     CSRs, have them approved and read what join reads.
//
// It creates one bootstrap token of its own, for authentication only and
// expiring in 10 minutes (the phase makes one; Cluster API's kubeadm
// bootstrap provider makes the join tokens). The control plane must run
// KubeadmControllers.
func (s *Stack) KubeadmJoinReady(ctx context.Context, kubeadm string) error {
	tok, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: %s
  ttl: 10m
  description: the lab's kubeadm init phases; not for joins
  usages: [authentication]
  groups: [system:bootstrappers:kubeadm:default-node-token]
# Given, not detected: this machine may have neither.
nodeRegistration: {criSocket: unix:///run/containerd/containerd.sock}
localAPIEndpoint: {advertiseAddress: %s}
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: anvil-lab
# The lab's kube-apiserver is hack/tools' build of the kubelet's release.
kubernetesVersion: %s
controlPlaneEndpoint: %s
networking:
  serviceSubnet: 10.0.0.0/24
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
# The lab's VMs are small: do not evict pods for a full root (as the lab's
# own class, test/lab/hostos).
evictionHard: {memory.available: "50Mi", nodefs.available: "1%%", imagefs.available: "1%%"}
`, tok, s.Lab.BridgeIP(), image.DefaultKubeletVersion, s.Lab.APIServerURL()[len("https://"):])
	path := filepath.Join(s.o.Dir, "kubeadm-init.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, phase := range [][]string{{"upload-config", "kubeadm"}, {"upload-config", "kubelet"}, {"bootstrap-token"}} {
		args := append(append([]string{"init", "phase"}, phase...), "--config", path, "--kubeconfig", s.NetnsKubeconfig)
		if phase[0] == "bootstrap-token" {
			args = append(args, "--skip-token-print")
		}
		var out bytes.Buffer
		cmd := s.Lab.RunInNetns(ctx, kubeadm, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			// kubeadm prints no token with --skip-token-print.
			return fmt.Errorf("stack: kubeadm init phase %v: %v\n%s", phase, err, out.String())
		}
	}
	return nil
}
