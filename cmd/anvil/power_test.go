package main

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/ops"
)

// host creates a Host and writes the power the Host controller would have
// observed (no controller runs here).
func (f *machinesFixture) host(name, address string, online bool, power metalv1.PowerState) {
	f.t.Helper()
	ctx := context.Background()
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: address, CredentialsName: "bmc"}, BootMACs: []string{"52:54:00:77:00:01"}, Online: online}}
	if strings.HasPrefix(address, "manual:") {
		h.Spec.BMC.CredentialsName = ""
	}
	if err := f.c.Create(ctx, h); err != nil {
		f.t.Fatal(err)
	}
	f.hostStatus(name, func(s *metalv1.HostStatus) { s.State, s.PowerState = metalv1.HostAvailable, power })
}

func (f *machinesFixture) hostStatus(name string, change func(*metalv1.HostStatus)) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := f.getHost(name)
		change(&h.Status)
		return f.c.Status().Update(context.Background(), h)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *machinesFixture) getHost(name string) *metalv1.Host {
	f.t.Helper()
	h := &metalv1.Host{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, h); err != nil {
		f.t.Fatal(err)
	}
	return h
}

func TestHostsPower(t *testing.T) {
	f := newMachinesFixture(t)
	f.host("h1", "redfish+https://192.0.2.10", false, metalv1.PowerOff)

	out, err := f.run("hosts", "power", "h1", "on")
	if err != nil || !strings.Contains(out, "host/h1: spec.online set to true") || !f.getHost("h1").Spec.Online {
		t.Fatalf("power on: %v\n%s", err, out)
	}
	if out, err := f.run("hosts", "power", "h1", "on"); err != nil || !strings.Contains(out, "spec.online is already true") {
		t.Fatalf("power on again: %v\n%s", err, out)
	}
	// Still Off as observed: nothing to cycle, and nothing is written.
	if out, err := f.run("hosts", "power", "h1", "cycle"); err == nil || !strings.Contains(err.Error(), "host h1: "+inventory.MessagePowerIsOff) {
		t.Fatalf("cycle of a Host that is off: %v\n%s", err, out)
	}
	if _, ok := f.getHost("h1").Annotations[inventory.AnnotationPowerCycle]; ok {
		t.Fatal("a refused cycle annotated the Host")
	}

	f.hostStatus("h1", func(s *metalv1.HostStatus) { s.PowerState = metalv1.PowerOn })
	out, err = f.run("hosts", "power", "h1", "cycle")
	id := f.getHost("h1").Annotations[inventory.AnnotationPowerCycle]
	if err != nil || id == "" || !strings.Contains(out, "host/h1: power cycle requested ("+inventory.AnnotationPowerCycle+"="+id+")") {
		t.Fatalf("cycle: %v, annotation %q\n%s", err, id, out)
	}
	// Not handled yet: asking again adds no second request.
	if out, err := f.run("hosts", "power", "h1", "cycle"); err != nil || !strings.Contains(out, "already requested") || f.getHost("h1").Annotations[inventory.AnnotationPowerCycle] != id {
		t.Fatalf("second cycle before the first was handled: %v\n%s", err, out)
	}
	// Handled (as the controller records it): a new request gets a new ID.
	f.hostStatus("h1", func(s *metalv1.HostStatus) { s.PowerCycleID = id })
	if out, err := f.run("hosts", "power", "h1", "cycle"); err != nil || f.getHost("h1").Annotations[inventory.AnnotationPowerCycle] == id {
		t.Fatalf("cycle after the first was handled: %v\n%s", err, out)
	}

	if out, err := f.run("hosts", "power", "h1", "off"); err != nil || f.getHost("h1").Spec.Online {
		t.Fatalf("power off: %v\n%s", err, out)
	}
	if _, err := f.run("hosts", "power", "h1", "reboot"); err == nil || !strings.Contains(err.Error(), `unknown power action "reboot": use on, off or cycle`) {
		t.Fatalf("unknown action: %v", err)
	}
	_, err = f.run("hosts", "power", "ghost", "on")
	if err == nil || !strings.Contains(err.Error(), "host ghost not found in namespace "+f.ns) {
		t.Fatalf("missing Host: %v", err)
	}
	// The library wraps the API's error: callers can tell what it was.
	if _, err := ops.SetOnline(context.Background(), f.c, client.ObjectKey{Namespace: f.ns, Name: "ghost"}, true); !apierrors.IsNotFound(err) {
		t.Fatalf("ops.SetOnline of a missing Host: %v, want a NotFound error", err)
	}
}

func TestMachinesRetryUpgrade(t *testing.T) {
	f := newMachinesFixture(t)
	f.running("m1", "v1.36.4", nil)
	if _, err := f.run("machines", "retry-upgrade", "m1"); err == nil || !strings.Contains(err.Error(), "machine m1 has no upgrade to retry") {
		t.Fatalf("retry without an upgrade: %v", err)
	}
	f.specVersion("m1", "v1.37.2")
	up := metalv1.UpgradeStatus{PlanID: "abc-v1.37.2-1", FromVersion: "v1.36.4", Version: "v1.37.2", State: metalv1.UpgradeDraining}
	f.status("m1", upgradeStep(up, nil))
	if _, err := f.run("machines", "retry-upgrade", "m1"); err == nil || !strings.Contains(err.Error(), "is Draining, not Failed") {
		t.Fatalf("retry of an upgrade in progress: %v", err)
	}
	up.State, up.Message = metalv1.UpgradeFailed, "kubelet did not become healthy"
	f.status("m1", upgradeStep(up, nil))
	out, err := f.run("machines", "retry-upgrade", "m1")
	if err != nil {
		t.Fatalf("retry: %v\n%s", err, out)
	}
	wantInOrder(t, out, "machine/m1: retrying the failed upgrade v1.36.4 -> v1.37.2 (plan abc-v1.37.2-1: kubelet did not become healthy)",
		"follow it with: anvil machines upgrade m1 --version v1.37.2 --watch -n "+f.ns)
	if m, _ := f.get("m1"); m.Annotations[machine.AnnotationRetryUpgrade] != "abc-v1.37.2-1" {
		t.Fatalf("annotation %s = %q, want the failed plan", machine.AnnotationRetryUpgrade, m.Annotations[machine.AnnotationRetryUpgrade])
	}
	if out, err := f.run("machines", "retry-upgrade", "m1"); err != nil || !strings.Contains(out, "a retry of plan abc-v1.37.2-1 is already requested") {
		t.Fatalf("second retry: %v\n%s", err, out)
	}
}
