package inventory

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
)

// applyStatus writes the Host controller's fields of after's status with
// server-side apply (statusapply.HostController): the fields the other
// writers own (leases, boot and agent credentials, agent reports, their
// conditions) are neither sent nor touched. An acknowledged wipe failure
// (Wiped) goes out as a second apply under its own manager.
func applyStatus(ctx context.Context, c client.Client, before, after *metalv1.Host) error {
	w := statusapply.HostController
	st := metalv1.HostStatus{
		State: after.Status.State, PowerState: after.Status.PowerState, LastPowerCheck: after.Status.LastPowerCheck,
		BootRequestID: after.Status.BootRequestID, PendingPowerAction: after.Status.PendingPowerAction,
		IssuedPowerAction: after.Status.IssuedPowerAction, PowerCycleID: after.Status.PowerCycleID, ErrorCount: after.Status.ErrorCount,
		ObservedGeneration: after.Status.ObservedGeneration,
		Hardware:           controllerHardware(before, after),
		VirtualMedia:       after.Status.VirtualMedia,
	}
	for _, t := range []string{metalv1.ConditionValid, metalv1.ConditionBMCReachable, metalv1.ConditionPowerSynced, metalv1.ConditionVirtualMedia} {
		if c := meta.FindStatusCondition(after.Status.Conditions, t); c != nil {
			st.Conditions = append(st.Conditions, *c)
		}
	}
	if _, err := w.Apply(ctx, c, statusapply.Request{Live: before, GVK: statusapply.HostGVK, Status: asMap(st)}); err != nil {
		return err
	}
	wiped := meta.FindStatusCondition(after.Status.Conditions, metalv1.ConditionWiped)
	if wiped == nil || equality.Semantic.DeepEqual(wiped, meta.FindStatusCondition(before.Status.Conditions, metalv1.ConditionWiped)) {
		return nil
	}
	_, err := statusapply.HostWipeAck.Apply(ctx, c, statusapply.Request{
		Live: before, GVK: statusapply.HostGVK, Status: map[string]any{"conditions": []metav1.Condition{*wiped}},
	})
	return err
}

// controllerHardware is the part of status.hardware the controller sends:
// the BMC's identity facts always, and the facts the agent reports too
// (CPU, memory, MACs) only when this reconcile changed them or the
// controller still owns them, so that a stale copy never takes back what
// the agent wrote since.
func controllerHardware(before, after *metalv1.Host) *metalv1.HardwareDetails {
	a := after.Status.Hardware
	if a == nil {
		return nil
	}
	var b metalv1.HardwareDetails
	if before.Status.Hardware != nil {
		b = *before.Status.Hardware
	}
	hw := &metalv1.HardwareDetails{Manufacturer: a.Manufacturer, Model: a.Model, SerialNumber: a.SerialNumber, UUID: a.UUID}
	send := func(name string, changed bool) bool {
		return changed || statusapply.OwnedBy(before, statusapply.HostController.Manager, statusapply.Path("hardware", name))
	}
	if send("cpuModel", a.CPUModel != b.CPUModel) {
		hw.CPUModel = a.CPUModel
	}
	if send("cpuCount", a.CPUCount != b.CPUCount) {
		hw.CPUCount = a.CPUCount
	}
	if send("memoryMiB", a.MemoryMiB != b.MemoryMiB) {
		hw.MemoryMiB = a.MemoryMiB
	}
	if send("macs", !equality.Semantic.DeepEqual(a.MACs, b.MACs)) {
		hw.MACs = a.MACs
	}
	if equality.Semantic.DeepEqual(*hw, metalv1.HardwareDetails{}) {
		return nil
	}
	return hw
}

// asMap is v as the JSON object it marshals to.
func asMap(v any) map[string]any {
	m, err := statusapply.ToMap(v)
	if err != nil {
		panic(err) // API types always marshal
	}
	return m
}
