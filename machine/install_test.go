package machine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/boot/delivery"
)

// TestInstallFailureFailsTheMachine: an installer that finds no disk the
// Host's rootDeviceHints accept fails the Machine at once (InstallFailed,
// naming the hint), instead of rebooting into the same disks or waiting
// for the boot timeout.
func TestInstallFailureFailsTheMachine(t *testing.T) {
	e := newMachineEnv(t, 1, fastOptions())
	ctx := context.Background()
	mc := loadExample(t, "machineclass-cloudinit.yaml")
	mc.Namespace, mc.Name = e.ns, "disk"
	wipe := false
	mc.Spec.Wipe = &wipe
	mustCreate(t, e.c, mc)
	waitConfigValid(t, e.c, client.ObjectKeyFromObject(mc), metav1.ConditionTrue)
	h := e.addHost(t, 0, map[string]string{"role": "worker"})
	// The Host controller is registering it meanwhile: a patch of the
	// one field, not an update of a copy it may have changed since.
	p := client.MergeFrom(h.DeepCopy())
	h.Spec.RootDeviceHints = &metalv1.RootDeviceHints{SerialNumber: "WD-123"}
	if err := e.c.Patch(ctx, h, p); err != nil {
		t.Fatal(err)
	}
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: e.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "disk"},
		HostSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}},
		Version:         kubeletVersion,
	}}
	mustCreate(t, e.c, m)
	eventually(t, 60*time.Second, "the Host is provisioning the Machine's boot", func(ctx context.Context) (bool, string) {
		m, err := e.machine(ctx, "m1")
		if err != nil || m.Status.Boot == nil {
			return false, "no boot yet"
		}
		h, err = e.host(ctx, "host-0")
		if err != nil {
			return false, err.Error()
		}
		return h.Status.BootRequestID == m.Status.Boot.RequestID && h.Status.State == metalv1.HostProvisioning, string(h.Status.State)
	})

	mgmt := apiServer(t)
	configs, err := delivery.NewConfigs(delivery.ConfigsOptions{Client: e.c, Writer: e.c, Clientset: e.cs,
		CACertPEM: mgmt.Config.CAData, APIServerEndpoint: mgmt.Config.Host, BaseURL: "http://192.0.2.1:8080"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = configs.InstallPlan(ctx, hostKey(h), h.Spec.BootMACs[0], strings.Repeat("A", 43),
		agent.InstallRequest{BootID: "b", Disks: []agent.Disk{{Name: "vda", SizeBytes: 20 << 30, Serial: "QM0001"}}})
	var refusal *configserver.InstallRefusal
	if !errors.As(err, &refusal) || refusal.Reason != agent.InstallNoRootDevice {
		t.Fatalf("plan: %v, want a NoRootDevice refusal", err)
	}
	eventually(t, 30*time.Second, "the Machine fails with InstallFailed", func(ctx context.Context) (bool, string) {
		m, err := e.machine(ctx, "m1")
		if err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionInfrastructureReady)
		ok := m.Status.Phase == metalv1.MachineFailed && m.Status.FailureReason == metalv1.ReasonInstallFailed &&
			strings.Contains(m.Status.FailureMessage, "serialNumber=WD-123") && strings.Contains(m.Status.FailureMessage, "vda 20.0 GiB serial QM0001") &&
			c != nil && c.Reason == metalv1.ReasonInstallFailed
		return ok, describe(m)
	})
	// No second boot: the same disks would be seen again.
	m, err = e.machine(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Status.Boot.Attempt != 1 {
		t.Fatalf("boot attempt %d after a NoRootDevice failure, want 1", m.Status.Boot.Attempt)
	}
}

// TestRebootIsRecorded: a Running Machine whose Node comes back with a new
// boot ID (a power cycle) stays Running, counts the reboot and says so in
// an Event; the first boot ID is no reboot.
func TestRebootIsRecorded(t *testing.T) {
	e := newMachineEnv(t, 1, fastOptions())
	ctx := context.Background()
	e.addClass(t, true)
	e.addHost(t, 0, map[string]string{"role": "worker"})
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	mustCreate(t, e.c, &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: e.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"}, Version: kubeletVersion,
		HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}},
	}})
	_, n := e.runMachine(t, "m1")
	for i, id := range []string{"boot-1", "boot-2", "boot-3"} {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
			t.Fatal(err)
		}
		n.Status.NodeInfo.BootID = id
		if err := e.c.Status().Update(ctx, n); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the Machine records boot ID "+id, func(ctx context.Context) (bool, string) {
			m, err := e.machine(ctx, "m1")
			if err != nil {
				return false, err.Error()
			}
			return m.Status.NodeBootID == id && m.Status.Reboots == int32(i), describe(m)
		})
	}
	m, err := e.machine(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Status.Phase != metalv1.MachineRunning {
		t.Fatalf("after reboots: %s", describe(m))
	}
	eventually(t, 30*time.Second, "two Rebooted events", func(ctx context.Context) (bool, string) {
		var l eventsv1.EventList
		if err := e.c.List(ctx, &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		var got []string
		for _, ev := range l.Items {
			if ev.Regarding.Kind == "Machine" && ev.Regarding.Name == "m1" && ev.Reason == "Rebooted" {
				got = append(got, ev.Note)
			}
		}
		return len(got) == 2 && strings.Contains(strings.Join(got, "|"), "boot ID boot-3 (was boot-2)"), strings.Join(got, " | ")
	})
}
