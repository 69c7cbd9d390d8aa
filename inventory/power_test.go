package inventory_test

import (
	"anvil.dev/anvil/test/need"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/redfishsim"
)

func requireBMC(t *testing.T) {
	t.Helper()
	if sharedBMC == nil {
		need.OrSkip(t, "ipmi_sim not installed")
	}
}

// reconciledAgain applies mutate (if any) together with a spec change that
// means nothing to an unprovisioned Host (a root device hint), and waits
// until the controller has written status for that generation: a reconcile
// that saw the change has run to its end, so whatever it would have done
// (a BMC call, a status change) has happened.
func reconciledAgain(t *testing.T, key client.ObjectKey, mutate func(*metalv1.Host)) *metalv1.Host {
	t.Helper()
	patchHost(t, key, func(h *metalv1.Host) {
		if mutate != nil {
			mutate(h)
		}
		if h.Spec.RootDeviceHints == nil {
			h.Spec.RootDeviceHints = &metalv1.RootDeviceHints{}
		}
		h.Spec.RootDeviceHints.MinSizeGigabytes++
	})
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), key, h))
	gen := h.Generation
	return waitHost(t, key, fmt.Sprintf("reconciled generation %d", gen), func(h *metalv1.Host) bool { return h.Status.ObservedGeneration >= gen })
}

func patchHost(t *testing.T, key client.ObjectKey, mutate func(*metalv1.Host)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		h := &metalv1.Host{}
		if err := env.Client.Get(ctx, key, h); err != nil {
			return false, err
		}
		mutate(h)
		if err := env.Client.Update(ctx, h); err != nil {
			return false, nil // conflict with the controller: read again
		}
		return true, nil
	})
	must(t, err)
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

func condReason(h *metalv1.Host, typ string) string {
	if c := meta.FindStatusCondition(h.Status.Conditions, typ); c != nil {
		return c.Reason
	}
	return ""
}

// IPMI against a real ipmi_sim: power on, network boot, power off, observed
// through ipmi_sim's chassis_control hook, not through our own driver.
func TestIPMIPowerAndNetworkBoot(t *testing.T) {
	requireBMC(t)
	ctx := context.Background()
	sim := bmctest.StartIPMISim(t, bmctest.IPMISimOptions{Username: "admin", Password: testPassword})
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	h := newHost(ns, "ipmi-1", "52:54:00:10:00:01", "bmc")
	h.Spec.BMC.Address = sim.Address()
	h.Spec.BootMode = "Legacy"
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: "ipmi-1"}
	got := waitHost(t, key, "became Available with power Off", func(h *metalv1.Host) bool {
		return h.Status.State == metalv1.HostAvailable && h.Status.PowerState == metalv1.PowerOff
	})
	if got.Status.Hardware == nil || got.Status.Hardware.UUID == "" {
		t.Fatalf("no facts read from the BMC: %+v", got.Status.Hardware)
	}

	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = true })
	waitFor(t, "ipmi_sim powered on", 20*time.Second, func() bool { on, _ := sim.PowerOn(); return on })

	must(t, sim.ResetCalls())
	patchHost(t, key, func(h *metalv1.Host) { h.Spec.BootRequest = &metalv1.BootRequest{ID: "boot-1", Purpose: "Provision"} })
	waitHost(t, key, "acknowledged boot-1", func(h *metalv1.Host) bool { return h.Status.BootRequestID == "boot-1" })
	// A host that is on gets a power cycle: ipmi_sim's hook sees the boot
	// device set to PXE, then the power go off and on again.
	var calls []bmctest.Call
	waitFor(t, "ipmi_sim saw boot pxe, then power off and on", 20*time.Second, func() bool {
		calls, _ = sim.SetCalls()
		step := 0
		for _, c := range calls {
			switch {
			case step == 0 && c.Param == "boot" && c.Value == "pxe":
				step = 1
			case step == 1 && (c.Param == "reset" || (c.Param == "power" && c.Value == "0")):
				step = 2
			case step == 2 && c.Param == "power" && c.Value == "1":
				step = 3
			}
		}
		return step == 3 || (step == 2 && calls[len(calls)-1].Param == "reset")
	})
	// Exactly once per boot request: no more boot sets after a reconcile
	// that saw the acknowledged request again.
	must(t, sim.ResetCalls())
	reconciledAgain(t, key, nil)
	calls, _ = sim.SetCalls()
	for _, c := range calls {
		if c.Param == "boot" {
			t.Fatalf("boot device set again for the same request: %v", calls)
		}
	}

	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = false })
	waitFor(t, "ipmi_sim powered off", 20*time.Second, func() bool { on, _ := sim.PowerOn(); return !on })

	// Out-of-band change: someone powers it on at the BMC; the poll sees it
	// and Anvil puts it back to spec.online=false.
	must(t, sim.SetPowerOn(true))
	waitFor(t, "out-of-band power-on undone", 20*time.Second, func() bool { on, _ := sim.PowerOn(); return !on })
}

func TestIPMIWrongPasswordIsAuthFailed(t *testing.T) {
	requireBMC(t)
	ctx := context.Background()
	sim := bmctest.StartIPMISim(t, bmctest.IPMISimOptions{Username: "admin", Password: "right-password"})
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc"))) // holds testPassword: wrong here
	h := newHost(ns, "ipmi-bad", "52:54:00:10:00:02", "bmc")
	h.Spec.BMC.Address = sim.Address()
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: "ipmi-bad"}
	got := waitHost(t, key, "reported AuthFailed", func(h *metalv1.Host) bool {
		return condReason(h, metalv1.ConditionBMCReachable) == metalv1.ReasonAuthFailed
	})
	if got.Status.State != metalv1.HostRegistering {
		t.Fatalf("state = %s, want Registering until the credentials work", got.Status.State)
	}
	// Fixing the Secret is picked up at once (the Secret is watched and
	// read at call time), long before the auth backoff would retry.
	var s corev1.Secret
	must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bmc"}, &s))
	s.Data["password"] = []byte("right-password")
	must(t, env.Client.Update(ctx, &s))
	waitHost(t, key, "became Available with the rotated password", state(metalv1.HostAvailable))
}

// Redfish against the emulator: power, network boot, one session for many
// polls, and recovery from a BMC that answers 503 to 30% of requests.
func TestRedfishPowerSessionsAndFlakiness(t *testing.T) {
	requireBMC(t)
	ctx := context.Background()
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), TLS: true, Username: "admin", Password: testPassword,
		ErrorRate: 0.3, Seed: 7, Latency: 20 * time.Millisecond, Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	h := newHost(ns, "rf-1", "52:54:00:10:00:03", "bmc")
	h.Spec.BMC.Address = sim.BMCAddress()
	h.Spec.BMC.DisableCertificateVerification = true
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: "rf-1"}
	waitHost(t, key, "became Available", state(metalv1.HostAvailable))

	patchHost(t, key, func(h *metalv1.Host) {
		h.Spec.Online = true
		h.Spec.BootRequest = &metalv1.BootRequest{ID: "b1"}
	})
	id := sim.SystemIDs()[0]
	waitFor(t, "the emulated system powered on", 30*time.Second, func() bool { return sim.PowerState(id) == "On" })
	var sawPXE bool
	for _, ev := range sim.Events() {
		sawPXE = sawPXE || (ev.On && ev.BootTarget == "Pxe")
	}
	if !sawPXE {
		t.Fatalf("the power-on did not boot from PXE: %+v", sim.Events())
	}
	// Let the controller poll a few more times (poll interval 1s in tests).
	before := sim.Stats().Requests
	waitFor(t, "several more polls", 30*time.Second, func() bool { return sim.Stats().Requests >= before+8 })
	// The event stream's own driver logged in once to learn this BMC has
	// no stream, and gave up for an hour.
	waitFor(t, "the event stream probe found no stream", 30*time.Second, func() bool {
		return logLine("the BMC pushes no events", sim.URL())
	})
	if st := sim.Stats(); st.SessionsCreated != 2 || st.InjectedErrors == 0 {
		t.Fatalf("sessions created = %d (want 1 for all calls and 1 for the event stream probe), injected errors = %d (want > 0)", st.SessionsCreated, st.InjectedErrors)
	}
}

func TestManualHostWaitsForAck(t *testing.T) {
	requireBMC(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	h := newHost(ns, "by-hand", "52:54:00:10:00:04", "")
	h.Spec.BMC = metalv1.BMC{Address: "manual://row-3"}
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: "by-hand"}
	waitHost(t, key, "became Available", state(metalv1.HostAvailable))
	patchHost(t, key, func(h *metalv1.Host) { h.Spec.BootRequest = &metalv1.BootRequest{ID: "m1"} })
	got := waitHost(t, key, "asked a person", func(h *metalv1.Host) bool { return h.Status.PendingPowerAction != nil })
	if p := got.Status.PendingPowerAction; p.Action != "On" || p.BootDevice != "PXE" || condReason(got, metalv1.ConditionPowerSynced) != inventory.ReasonManualActionRequired {
		t.Fatalf("pending action = %+v, conditions %+v", p, got.Status.Conditions)
	}
	// A wrong acknowledgement does nothing, seen by a reconcile of the
	// Host that carries it.
	got = reconciledAgain(t, key, func(h *metalv1.Host) {
		metav1.SetMetaDataAnnotation(&h.ObjectMeta, inventory.AnnotationAckPower, "yesterday")
	})
	if got.Status.PendingPowerAction == nil || got.Status.BootRequestID == "m1" {
		t.Fatal("a mismatched acknowledgement completed the action")
	}
	id := inventory.PendingActionID(got.Status.PendingPowerAction)
	patchHost(t, key, func(h *metalv1.Host) { metav1.SetMetaDataAnnotation(&h.ObjectMeta, inventory.AnnotationAckPower, id) })
	waitHost(t, key, "completed the acknowledged action", func(h *metalv1.Host) bool {
		return h.Status.PendingPowerAction == nil && h.Status.BootRequestID == "m1" && h.Status.PowerState == metalv1.PowerOn
	})
}

// blackhole accepts TCP connections and never answers: a BMC that hangs.
func blackhole(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// 50 Hosts whose BMCs answer every request after 2 s, and one whose BMC
// never answers: all 50 reach the requested power, the dead one shows
// Unreachable with a growing backoff, and it never holds up the others.
func TestSlowBMCsAndADeadOne(t *testing.T) {
	requireBMC(t)
	if testing.Short() {
		t.Skip("slow: about a minute")
	}
	ctx := context.Background()
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	dir := need.RedfishMockup(t)
	const n = 50
	sims := make([]*redfishsim.Server, n)
	start := time.Now()
	for i := range n {
		sims[i] = redfishsim.Start(t, redfishsim.Options{MockupDir: dir, Username: "admin", Password: testPassword,
			Latency: 2 * time.Second, Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
		h := newHost(ns, "slow-"+string(rune('a'+i/26))+string(rune('a'+i%26)), "52:54:00:20:00:"+hex2(i), "bmc")
		h.Spec.BMC.Address = sims[i].BMCAddress()
		h.Spec.Online = true
		must(t, env.Client.Create(ctx, h))
	}
	dead := newHost(ns, "dead", "52:54:00:20:01:00", "bmc")
	dead.Spec.BMC.Address = "redfish+http://" + blackhole(t)
	dead.Spec.Online = true
	must(t, env.Client.Create(ctx, dead))

	waitFor(t, "all 50 slow BMCs powered on", 5*time.Minute, func() bool {
		for _, s := range sims {
			if s.PowerState(s.SystemIDs()[0]) != "On" {
				return false
			}
		}
		return true
	})
	elapsed := time.Since(start)
	got := waitHost(t, client.ObjectKey{Namespace: ns, Name: "dead"}, "shown Unreachable", func(h *metalv1.Host) bool {
		return condReason(h, metalv1.ConditionBMCReachable) == metalv1.ReasonUnreachable
	})
	c := meta.FindStatusCondition(got.Status.Conditions, metalv1.ConditionBMCReachable)
	if !strings.Contains(c.Message, "next try in") || got.Status.ErrorCount < 1 {
		t.Fatalf("dead BMC condition = %+v, errorCount %d", c, got.Status.ErrorCount)
	}
	t.Logf("50 Hosts behind 2 s BMCs plus one dead BMC: all 50 powered on %.1fs after creation (64 workers, call timeout %s); dead BMC errorCount=%d",
		elapsed.Seconds(), testPower.CallTimeout, got.Status.ErrorCount)
}

func hex2(i int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[i/16%16], digits[i%16]})
}

// No password in any log line, Event or Host status of the whole package run.
// Named to run last in this file's order; it checks what all tests left.
func TestZZNoPasswordAnywhere(t *testing.T) {
	ctx := context.Background()
	var hosts metalv1.HostList
	must(t, env.Client.List(ctx, &hosts))
	var evs eventsv1.EventList
	must(t, env.Client.List(ctx, &evs))
	var removed []string // Hosts of earlier tests, deleted with their namespaces
	for _, b := range env.Removed() {
		removed = append(removed, string(b))
	}
	if len(hosts.Items)+len(removed) == 0 || len(evs.Items) == 0 {
		t.Fatal("nothing to check")
	}
	for _, o := range []any{hosts, evs, removed} {
		b, _ := yaml.Marshal(o)
		for _, pw := range []string{testPassword, "right-password"} {
			if strings.Contains(string(b), pw) {
				t.Fatalf("a password is in %T", o)
			}
		}
	}
	logs := managerLogs.String()
	for _, pw := range []string{testPassword, "right-password"} {
		if strings.Contains(logs, pw) {
			t.Fatal("a password is in the manager's logs")
		}
	}
}
