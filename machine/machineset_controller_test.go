package machine_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func (e *machineEnv) setMachines(ctx context.Context, set string) ([]metalv1.Machine, error) {
	var list metalv1.MachineList
	err := e.c.List(ctx, &list, client.InNamespace(e.ns), client.MatchingLabels{metalv1.LabelMachineSet: set})
	var out []metalv1.Machine
	for _, m := range list.Items {
		if m.DeletionTimestamp.IsZero() {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// TestMachineSetSpreadsAndScalesDownTheLeastFarAlong: replicas are spread
// over the failure domains of the selected Hosts; scaling down removes the
// Machines still waiting for hardware before the ones that run.
func TestMachineSetSpreadsAndScalesDownTheLeastFarAlong(t *testing.T) {
	e := newMachineEnv(t, 2, fastOptions())
	ctx := context.Background()
	e.addClass(t, false)
	e.addHost(t, 0, map[string]string{"pool": "w", metalv1.LabelFailureDomain: "fd-a"})
	e.addHost(t, 1, map[string]string{"pool": "w", metalv1.LabelFailureDomain: "fd-b"})
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.waitHostState(t, "host-1", metalv1.HostAvailable)
	replicas := int32(4)
	ms := &metalv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: e.ns}, Spec: metalv1.MachineSetSpec{
		Replicas: &replicas,
		Template: metalv1.MachineTemplate{Spec: metalv1.MachineSpec{
			MachineClassRef: metalv1.LocalObjectReference{Name: "flatcar-worker"},
			HostSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "w"}},
			Version:         kubeletVersion,
		}},
	}}
	mustCreate(t, e.c, ms)
	eventually(t, 60*time.Second, "4 Machines, 2 per failure domain, 2 provisioning and 2 waiting", func(ctx context.Context) (bool, string) {
		ms, err := e.setMachines(ctx, "workers")
		if err != nil {
			return false, err.Error()
		}
		perFD, perPhase := map[string]int{}, map[metalv1.MachinePhase]int{}
		for _, m := range ms {
			perFD[m.Spec.FailureDomain]++
			perPhase[m.Status.Phase]++
		}
		return len(ms) == 4 && perFD["fd-a"] == 2 && perFD["fd-b"] == 2 && perPhase[metalv1.MachineProvisioning] == 2 && perPhase[metalv1.MachineWaitingForHardware] == 2,
			fmt.Sprintf("%d machines %v %v", len(ms), perFD, perPhase)
	})
	got := &metalv1.MachineSet{}
	eventually(t, 30*time.Second, "MachineSet status counts 4 replicas, 0 ready", func(ctx context.Context) (bool, string) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(ms), got); err != nil {
			return false, err.Error()
		}
		return got.Status.Replicas == 4 && got.Status.ReadyReplicas == 0 && got.Status.Selector != "", fmt.Sprintf("%+v", got.Status)
	})

	// Scale to 2: the two waiting Machines go, the provisioning ones stay.
	patch := client.MergeFrom(got.DeepCopy())
	two := int32(2)
	got.Spec.Replicas = &two
	if err := e.c.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "2 Machines left, both holding Hosts", func(ctx context.Context) (bool, string) {
		ms, err := e.setMachines(ctx, "workers")
		if err != nil {
			return false, err.Error()
		}
		held := 0
		names := []string{}
		for _, m := range ms {
			names = append(names, m.Name+":"+string(m.Status.Phase))
			if m.Status.HostRef != nil {
				held++
			}
		}
		return len(ms) == 2 && held == 2, fmt.Sprint(names)
	})
}
