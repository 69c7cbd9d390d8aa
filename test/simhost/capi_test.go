package simhost_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/simhost"
)

// capiCloudConfig is user-data as Cluster API's kubeadm bootstrap provider
// writes it (a jinja template).
const capiCloudConfig = `## template: jinja
#cloud-config
write_files:
- path: /run/kubeadm/kubeadm-join-config.yaml
  owner: root:root
  permissions: '0640'
  content: |
    apiVersion: kubeadm.k8s.io/v1beta4
    kind: JoinConfiguration
    nodeRegistration:
      name: '{{ ds.meta_data.local_hostname }}'
runcmd:
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete
`

// capiIgnition is the kubeadm bootstrap provider's Ignition (spec 2.3,
// for Flatcar).
const capiIgnition = `{"ignition":{"config":{},"security":{"tls":{}},"timeouts":{},"version":"2.3.0"},"networkd":{},"passwd":{},
"storage":{"files":[{"filesystem":"root","path":"/etc/kubeadm.yml","mode":384,"contents":{"source":"data:,join","verification":{}}}]},
"systemd":{"units":[{"contents":"[Service]\nExecStart=/opt/bin/kubeadm join --config /etc/kubeadm.yml\n","enabled":true,"name":"kubeadm.service"}]}}`

// TestSimulatedHostsBootClusterAPIBootstrapData: Machines whose config is
// Cluster API bootstrap data (cloud-config through a cloud-init class,
// Ignition spec 2.3 through a Butane class) with Anvil's agent part boot
// simulated hosts over the real wire: the kubelet registers the Node
// under the host's hostname without a providerID, Anvil sets it, the
// Machines get Ready on the version KubeletVersionFor gives, and the agent
// from Anvil's part upgrades the kubelet in place.
func TestSimulatedHostsBootClusterAPIBootstrapData(t *testing.T) {
	s := newStack(t, 2)
	ctx := context.Background()
	class, err := simhost.Class(simhost.ClassOptions{Name: "sim-ci", Namespace: s.ns, ArtifactDir: s.artifacts, Versions: []string{oldVersion, newVersion}, Format: "cloud-init"})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s.c, class)
	for _, m := range []struct{ name, class, format, value string }{
		{"capi-cc", "sim-ci", "cloud-config", capiCloudConfig},
		{"capi-ign", "sim", "ignition", capiIgnition},
	} {
		mustCreate(t, s.c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: m.name + "-bootstrap", Namespace: s.ns},
			Data: map[string][]byte{metalv1.BootstrapDataValueKey: []byte(m.value), metalv1.BootstrapDataFormatKey: []byte(m.format)}})
		mustCreate(t, s.c, &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: s.ns}, Spec: metalv1.MachineSpec{
			MachineClassRef: metalv1.LocalObjectReference{Name: m.class}, Version: oldVersion,
			Bootstrap: &metalv1.MachineBootstrap{DataSecretName: m.name + "-bootstrap"},
		}})
	}

	bootIDs := map[string]string{}
	s.waitMachines(t, 2, "2 bootstrap-data Machines Ready", func(ctx context.Context, m *metalv1.Machine) (bool, string) {
		if !meta.IsStatusConditionTrue(m.Status.Conditions, metalv1.ConditionReady) {
			return false, describe(m)
		}
		n, err := s.node(ctx, m)
		if err != nil {
			return false, err.Error()
		}
		h, err := s.host(ctx, m.Status.HostRef.Name)
		if err != nil {
			return false, err.Error()
		}
		switch {
		case n.Name != h.Name:
			return false, fmt.Sprintf("Node %s, want the hostname of Host %s", n.Name, h.Name)
		case n.Spec.ProviderID != "anvil://"+string(h.UID):
			return false, fmt.Sprintf("Node %s providerID %q, Host UID %s", n.Name, n.Spec.ProviderID, h.UID)
		case n.Status.NodeInfo.KubeletVersion != oldVersion:
			return false, fmt.Sprintf("Node %s kubelet %s", n.Name, n.Status.NodeInfo.KubeletVersion)
		case h.Status.Agent == nil || h.Status.Agent.BootID == "":
			return false, fmt.Sprintf("Host %s: no agent report", h.Name)
		}
		bootIDs[h.Name] = h.Status.Agent.BootID
		return true, ""
	})
	// The kubelet registered without a providerID: Anvil set it.
	for _, name := range []string{"capi-cc", "capi-ign"} {
		eventually(t, time.Minute, "NodeProviderIDSet on "+name, func(ctx context.Context) (bool, string) {
			var evs corev1.EventList
			if err := s.c.List(ctx, &evs, client.InNamespace(s.ns)); err != nil {
				return false, err.Error()
			}
			for _, e := range evs.Items {
				if e.InvolvedObject.Name == name && e.Reason == "NodeProviderIDSet" {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d events", len(evs.Items))
		})
	}

	// In place, by the agent from Anvil's part.
	for _, name := range []string{"capi-cc", "capi-ign"} {
		m := &metalv1.Machine{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: name}, m); err != nil {
			t.Fatal(err)
		}
		p := client.MergeFrom(m.DeepCopy())
		m.Spec.Version = newVersion
		if err := s.c.Patch(ctx, m, p); err != nil {
			t.Fatal(err)
		}
	}
	s.waitMachines(t, 2, "both upgraded in place, same boot", s.upgradedInPlace(newVersion, bootIDs))
	if st := s.fleet.Stats(); st.Upgrades != 2 || st.BootsFailed != 0 || strings.Contains(st.LastError, "nocloud/") && !strings.Contains(st.LastError, "<credential>") {
		t.Errorf("fleet stats %+v: want 2 upgrades and no failed boot", st)
	}
}
