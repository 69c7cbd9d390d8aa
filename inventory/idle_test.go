package inventory_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

// redfishHost starts an emulated Redfish BMC with one system that is Off
// and registers a Host on it; it returns once the Host is Available and its
// power is in sync, the state an idle fleet sits in.
func redfishHost(t *testing.T, name, mac string) (*redfishsim.Server, client.ObjectKey) {
	t.Helper()
	requireBMC(t)
	sim := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Username: "admin", Password: testPassword,
		Systems: []redfishsim.SystemOptions{{PowerState: "Off"}}})
	key := hostOn(t, sim, name, mac, nil)
	return sim, key
}

// waitPolls waits until the emulator has answered n more requests: with a
// poll interval of 1 s in these tests, that is several power polls.
func waitPolls(t *testing.T, sim *redfishsim.Server, n int) {
	t.Helper()
	before := sim.Stats().Requests
	waitFor(t, "the controller polled the BMC again", 30*time.Second, func() bool { return sim.Stats().Requests >= before+n })
}

// outOfBand changes the power at the BMC with a client of its own, as
// someone at the BMC's web page would.
func outOfBand(t *testing.T, sim *redfishsim.Server, action bmc.PowerAction) {
	t.Helper()
	d, err := bmc.Open(bmc.Options{Address: sim.BMCAddress(), Credentials: bmc.Credentials{Username: sim.Username(), Password: sim.Password()}, Timeout: 10 * time.Second,
		Guard: testGuard, AllowPlainHTTP: true})
	must(t, err)
	ctx := context.Background()
	defer d.Close(ctx)
	must(t, d.SetPower(ctx, action))
}

// An idle Host costs BMC reads and nothing on the API server: polls that
// find nothing new write no status and read no Secret. A poll that finds a
// new power state writes it (with lastPowerCheck).
func TestUnchangedPollWritesNothing(t *testing.T) {
	ctx := context.Background()
	sim, key := redfishHost(t, "idle-1", "52:54:00:30:00:01")
	secret := client.ObjectKey{Namespace: key.Namespace, Name: "bmc"}
	var h metalv1.Host
	must(t, env.Client.Get(ctx, key, &h))
	rv, last := h.ResourceVersion, h.Status.LastPowerCheck
	if last == nil {
		t.Fatal("lastPowerCheck not written with registration")
	}
	reads := secretReads.reads(secret)

	waitPolls(t, sim, 5)
	must(t, env.Client.Get(ctx, key, &h))
	if h.ResourceVersion != rv {
		t.Fatalf("unchanged polls wrote the Host (resourceVersion %s -> %s): status %+v", rv, h.ResourceVersion, h.Status)
	}
	if n := secretReads.reads(secret) - reads; n != 0 {
		t.Fatalf("unchanged polls read the credentials Secret %d times from the API server, want 0", n)
	}

	// Someone powers the server on at the BMC. Watch from the idle
	// resourceVersion: the poll's write must show power On, then Anvil
	// powers it off again (spec.online is false).
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	must(t, err)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	w, err := wc.Watch(wctx, &metalv1.HostList{}, client.InNamespace(key.Namespace), client.MatchingFields{"metadata.name": key.Name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	must(t, err)
	defer w.Stop()
	outOfBand(t, sim, bmc.PowerOn)
	var sawOn bool
	for ev := range w.ResultChan() {
		got, ok := ev.Object.(*metalv1.Host)
		if ev.Type != watch.Modified || !ok {
			continue
		}
		if got.Status.PowerState == metalv1.PowerOn {
			sawOn = true
			if c := got.Status.LastPowerCheck; c == nil || !c.After(last.Time) {
				t.Fatalf("power On written without a newer lastPowerCheck: %v (was %v)", c, last)
			}
		}
		if sawOn && got.Status.PowerState == metalv1.PowerOff {
			break
		}
	}
	if !sawOn {
		t.Fatalf("the out-of-band power-on was never written to the Host (watch ended: %v)", wctx.Err())
	}
	waitFor(t, "the emulated system powered off again", 30*time.Second, func() bool { return sim.PowerState(sim.SystemIDs()[0]) == "Off" })
}

// The controller reads a credentials Secret once per resourceVersion, not
// before every BMC call. After a rotation (BMC and Secret) the Secret watch
// makes it read the new one, and from then on every BMC call logs in with
// the new password: the next power action succeeds at the first try.
func TestRotatedCredentialsUsedAtNextCall(t *testing.T) {
	ctx := context.Background()
	sim, key := redfishHost(t, "rotate-1", "52:54:00:30:00:02")
	secretKey := client.ObjectKey{Namespace: key.Namespace, Name: "bmc"}
	reads := secretReads.reads(secretKey)

	// Rotate at the BMC (its sessions end, as a password change does on
	// many BMCs), then in the Secret.
	const rotated = "rotated-NoLeak2"
	sim.SetCredentials("admin", rotated)
	sim.ExpireSessions()
	var s corev1.Secret
	must(t, env.Client.Get(ctx, secretKey, &s))
	s.Data["password"] = []byte(rotated)
	must(t, env.Client.Update(ctx, &s))
	// The watch requeues the Host and it reads the new Secret. Reconciles
	// of one Host never overlap, so every BMC call from here on has the
	// new password (earlier polls may have failed with the old one).
	waitFor(t, "the controller read the rotated Secret", 30*time.Second, func() bool { return secretReads.reads(secretKey) > reads })
	failed := sim.Stats().FailedLogins

	patchHost(t, key, func(h *metalv1.Host) { h.Spec.Online = true })
	waitFor(t, "the emulated system powered on", 30*time.Second, func() bool { return sim.PowerState(sim.SystemIDs()[0]) == "On" })
	if n := sim.Stats().FailedLogins - failed; n != 0 {
		t.Fatalf("%d logins with the old password after the controller read the new one", n)
	}
	waitHost(t, key, "shown power On and the BMC reachable", func(h *metalv1.Host) bool {
		return h.Status.PowerState == metalv1.PowerOn && condReason(h, metalv1.ConditionBMCReachable) == inventory.ReasonReachable
	})
	// One read for the new resourceVersion; one more if a poll failed with
	// the old password before (an authentication failure drops the memo).
	if n := secretReads.reads(secretKey) - reads; n < 1 || n > 2 {
		t.Fatalf("%d Secret reads for one rotation, want 1 or 2", n)
	}
	after := secretReads.reads(secretKey)
	waitPolls(t, sim, 5)
	if n := secretReads.reads(secretKey) - after; n != 0 {
		t.Fatalf("polls after the rotation read the Secret %d times, want 0", n)
	}
}
