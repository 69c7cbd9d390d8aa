package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Run(m, &env) }

// Each enum field: the API server accepts every constant Anvil writes and
// refuses a value outside the set, naming the field.
func TestStatusEnumsAreEnforced(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"},
		Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "c"}, Version: "v1.37.2"}}
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h"},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://rack1"}, BootMACs: []string{"52:54:00:00:00:01"}}}
	for _, o := range []client.Object{m, h} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	now := metav1.Now()
	machineStatus := func(set func(*metalv1.MachineStatus)) func() error {
		return func() error {
			got := &metalv1.Machine{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), got); err != nil {
				return err
			}
			set(&got.Status)
			return env.Client.Status().Update(ctx, got)
		}
	}
	hostStatus := func(set func(*metalv1.HostStatus)) func() error {
		return func() error {
			got := &metalv1.Host{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
				return err
			}
			set(&got.Status)
			return env.Client.Status().Update(ctx, got)
		}
	}
	hostSpec := func(set func(*metalv1.HostSpec)) func() error {
		return func() error {
			got := &metalv1.Host{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
				return err
			}
			set(&got.Spec)
			return env.Client.Update(ctx, got)
		}
	}
	for _, tc := range []struct {
		field  string
		values []string
		write  func(v string) func() error
	}{
		{"status.upgrade.state", strs(metalv1.UpgradeDraining, metalv1.UpgradeApplying, metalv1.UpgradeSucceeded, metalv1.UpgradeVerified, metalv1.UpgradeFailed, metalv1.UpgradeRejected),
			func(v string) func() error {
				return machineStatus(func(s *metalv1.MachineStatus) {
					s.Upgrade = &metalv1.UpgradeStatus{PlanID: "p", Version: "v1.37.2", State: metalv1.UpgradeState(v)}
				})
			}},
		{"status.hardwareRequest.state", strs(metalv1.HardwareRequestPending, metalv1.HardwareRequestFailed, metalv1.HardwareRequestFiled, metalv1.HardwareRequestRejected, metalv1.HardwareRequestFulfilled, metalv1.HardwareRequestCancelled),
			func(v string) func() error {
				return machineStatus(func(s *metalv1.MachineStatus) {
					s.HardwareRequest = &metalv1.HardwareRequest{State: metalv1.HardwareRequestState(v)}
				})
			}},
		{"status.replacement.reason", strs(metalv1.ReplaceClassChanged, metalv1.ReplaceHostMismatch, metalv1.ReplaceRequested),
			func(v string) func() error {
				return machineStatus(func(s *metalv1.MachineStatus) {
					s.Replacement = &metalv1.MachineReplacement{Reason: metalv1.ReplacementReason(v), Message: "m", StartedAt: now}
				})
			}},
		{"status.boot.purpose", strs(metalv1.BootPurposeProvision, metalv1.BootPurposeWipe, metalv1.BootPurposeRejoin),
			func(v string) func() error {
				return machineStatus(func(s *metalv1.MachineStatus) {
					s.Boot = &metalv1.MachineBoot{RequestID: "r", Purpose: metalv1.BootPurpose(v), Attempt: 1, StartedAt: now}
				})
			}},
		{"status.phase", strs(metalv1.MachinePending, metalv1.MachineWaitingForHardware, metalv1.MachineProvisioning, metalv1.MachineJoining, metalv1.MachineRunning, metalv1.MachineUpdating, metalv1.MachineDeleting, metalv1.MachineFailed),
			func(v string) func() error {
				return machineStatus(func(s *metalv1.MachineStatus) { s.Phase = metalv1.MachinePhase(v) })
			}},
		{"status.failureReason", []string{metalv1.ReasonBootTimeout, metalv1.ReasonJoinTimeout, metalv1.ReasonConfigRenderFailed, metalv1.ReasonInstallFailed, metalv1.ReasonHostLost},
			func(v string) func() error {
				return machineStatus(func(s *metalv1.MachineStatus) { s.FailureReason = v })
			}},
		{"spec.bootRequest.purpose", strs(metalv1.BootPurposeProvision, metalv1.BootPurposeWipe, metalv1.BootPurposeRejoin),
			func(v string) func() error {
				return hostSpec(func(s *metalv1.HostSpec) {
					s.BootRequest = &metalv1.BootRequest{ID: "b", Purpose: metalv1.BootPurpose(v)}
				})
			}},
		{"spec.bootMethod", strs(metalv1.BootMethodPXE, metalv1.BootMethodHTTPBoot, metalv1.BootMethodVirtualMedia),
			func(v string) func() error {
				return hostSpec(func(s *metalv1.HostSpec) { s.BootMethod = metalv1.BootMethod(v) })
			}},
		// The power actions and boot devices inventory copies from bmc.
		{"status.pendingPowerAction.action", strs(bmc.PowerOn, bmc.PowerOff, bmc.PowerGracefulOff, bmc.PowerReset),
			func(v string) func() error {
				return hostStatus(func(s *metalv1.HostStatus) {
					s.PendingPowerAction = &metalv1.PendingPowerAction{Action: metalv1.PowerAction(v), RequestedAt: now}
				})
			}},
		{"status.issuedPowerAction.bootDevice", strs(bmc.BootPXE, bmc.BootDisk, bmc.BootCD, bmc.BootHTTP),
			func(v string) func() error {
				return hostStatus(func(s *metalv1.HostStatus) {
					s.IssuedPowerAction = &metalv1.IssuedPowerAction{Action: metalv1.PowerActionOn, BootDevice: metalv1.BootDevice(v),
						Target: metalv1.PowerOn, IssuedAt: now, Deadline: now, Attempts: 1}
				})
			}},
		{"status.install.outcome", strs(metalv1.InstallInstalled, metalv1.InstallFailed),
			func(v string) func() error {
				return hostStatus(func(s *metalv1.HostStatus) {
					s.Install = &metalv1.HostInstall{BootRequestID: "b", Outcome: metalv1.InstallOutcome(v), FinishedAt: now}
				})
			}},
		{"status.install.reason", strs(metalv1.InstallNoRootDevice, metalv1.InstallDownloadFailed, metalv1.InstallChecksumMismatch, metalv1.InstallWriteFailed, metalv1.InstallSeedFailed),
			func(v string) func() error {
				return hostStatus(func(s *metalv1.HostStatus) {
					s.Install = &metalv1.HostInstall{BootRequestID: "b", Outcome: metalv1.InstallFailed, Reason: metalv1.InstallFailureReason(v), FinishedAt: now}
				})
			}},
		{"status.state", strs(metalv1.HostRegistering, metalv1.HostDiscovered, metalv1.HostAvailable, metalv1.HostClaimed, metalv1.HostProvisioning, metalv1.HostProvisioned, metalv1.HostDeprovisioning, metalv1.HostError),
			func(v string) func() error {
				return hostStatus(func(s *metalv1.HostStatus) { s.State = metalv1.HostState(v) })
			}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			for _, v := range tc.values {
				if err := tc.write(v)(); err != nil {
					t.Errorf("%s=%s refused: %v", tc.field, v, err)
				}
			}
			err := tc.write("Bogus")()
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), `Unsupported value: "Bogus"`) {
				t.Fatalf("%s=Bogus: %v, want Invalid naming the field", tc.field, err)
			}
		})
	}
}

// A Host created without spec.bootMethod boots by PXE, as every Host did
// before the field existed.
func TestBootMethodDefaultsToPXE(t *testing.T) {
	ctx := context.Background()
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "h"},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://rack1"}, BootMACs: []string{"52:54:00:00:00:01"}}}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	got := &metalv1.Host{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.BootMethod != metalv1.BootMethodPXE {
		t.Fatalf("spec.bootMethod = %q, want the default %q", got.Spec.BootMethod, metalv1.BootMethodPXE)
	}
}

func strs[S ~string](vs ...S) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
