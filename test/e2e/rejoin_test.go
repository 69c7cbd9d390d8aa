package e2e

import (
	"context"
	"fmt"
	"time"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
)

// liveRejoin power-cycles the Host of a Running live (diskless) Machine
// through its BMC: with nothing on its disk it network-boots again, gets a
// fresh one-time credential from the Host's standing Rejoin request, and
// rejoins as the same Node on the kubelet the Machine runs now (after an
// in-place upgrade, not the class's first); the Machine stays Running, the
// Host is armed again for the next reboot, and the rejoin's bootstrap
// token is revoked.
func (e *e2e) liveRejoin(ctx context.Context, a *metalv1.Machine, nodeName string, boots map[string]string) {
	e.t.Helper()
	a = e.waitPhase(a.Name, time.Minute, metalv1.MachineRunning)
	version := a.Status.Version
	h := e.host(a.Status.HostRef.Name)
	armed := h.Spec.BootRequest
	if armed == nil || armed.Purpose != metalv1.BootPurposeRejoin || h.Status.BootRequestID != armed.ID {
		e.t.Fatalf("Host %s of Running Machine %s is not armed for a rejoin: %+v, acked %q", h.Name, a.Name, armed, h.Status.BootRequestID)
	}
	before := e.node(nodeName)
	tokensBefore := e.bootstrapTokens(ctx)
	phases := e.watchPhases(ctx, a.Name)
	t0 := time.Now()
	if err := e.bmcDriver(h.Name).SetPower(ctx, bmc.PowerReset); err != nil {
		e.t.Fatalf("power cycle of %s through its BMC: %v", h.Name, err)
	}
	e.waitFor(15*time.Minute, "Node "+nodeName+" Ready again with a new boot ID", func(ctx context.Context) (bool, string) {
		n := e.node(nodeName)
		return n.Status.NodeInfo.BootID != before.Status.NodeInfo.BootID && nodeIsReady(n), "bootID " + n.Status.NodeInfo.BootID
	})
	e.logf("diskless Host %s network-booted again and rejoined in %s", h.Name, time.Since(t0).Round(time.Second))
	if n := e.node(nodeName); n.UID != before.UID || n.Status.NodeInfo.KubeletVersion != version {
		e.t.Fatalf("after the rejoin: Node uid %s (was %s), kubelet %s, want the same Node on %s", n.UID, before.UID, n.Status.NodeInfo.KubeletVersion, version)
	}
	a = e.waitPhase(a.Name, time.Minute, metalv1.MachineRunning)
	if seen := phases(); len(seen) != 1 || seen[0] != metalv1.MachineRunning {
		e.t.Fatalf("Machine %s went through phases %v during the reboot, want Running only", a.Name, seen)
	}
	if a.Status.Reboots != 1 || a.Status.FailureReason != "" || a.Status.Boot.Purpose != metalv1.BootPurposeProvision {
		e.t.Fatalf("Machine %s after the rejoin: reboots %d, boot %+v, %s", a.Name, a.Status.Reboots, a.Status.Boot, describe(a))
	}
	if bc := e.host(h.Name).Status.BootCredential; bc == nil || bc.BootRequestID != armed.ID || bc.ConsumedAt == nil {
		e.t.Fatalf("the rejoin boot did not use the armed credential: %+v", bc)
	}
	e.waitFor(3*time.Minute, "Host "+h.Name+" armed again with a new rejoin request", func(ctx context.Context) (bool, string) {
		hh := e.host(h.Name)
		br := hh.Spec.BootRequest
		return br != nil && br.Purpose == metalv1.BootPurposeRejoin && br.ID != armed.ID && hh.Status.BootRequestID == br.ID,
			fmt.Sprintf("%+v acked %s", br, hh.Status.BootRequestID)
	})
	e.waitFor(3*time.Minute, "the rejoin's bootstrap token revoked", func(ctx context.Context) (bool, string) {
		n := e.bootstrapTokens(ctx)
		return n <= tokensBefore, fmt.Sprintf("%d tokens, were %d", n, tokensBefore)
	})
	e.logf("Node %s is the same Node on kubelet %s; Machine %s Running throughout, 1 reboot recorded", nodeName, version, a.Name)
	boots[a.Name] = e.node(nodeName).Status.NodeInfo.BootID
}
