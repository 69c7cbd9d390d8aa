package inventory

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
)

// What BMC events do to a Host's poll schedule: relax moves it out once
// (not for a Host never read, nor one an event woke), wake makes it due
// now, soon brings it forward, and a read starts afresh, unless an event
// came while it was under way.
func TestPowerChecksWithEvents(t *testing.T) {
	const interval, long = 10 * time.Minute, time.Hour
	now := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h", UID: "a"}}
	k := hostKey(h)
	within := func(t *testing.T, p *powerChecks, what string, lo, hi time.Duration) {
		t.Helper()
		if d := p.due(h, now, interval).Sub(now); d < lo || d > hi {
			t.Fatalf("%s: due in %s, want within [%s, %s]", what, d, lo, hi)
		}
	}
	// read is a power read with no event during it.
	read := func(p *powerChecks, every time.Duration) {
		p.record(h, now, every, every, metalv1.PowerOff, p.reading(h))
	}
	cases := []struct {
		name   string
		steps  func(p *powerChecks)
		lo, hi time.Duration
		woken  bool
	}{
		{"read", func(p *powerChecks) { read(p, interval) }, 8 * time.Minute, 12 * time.Minute, false},
		{"read, then relaxed", func(p *powerChecks) {
			read(p, interval)
			p.relax(h, long)
		}, 48 * time.Minute, 72 * time.Minute, false},
		{"relaxed twice is once", func(p *powerChecks) {
			read(p, interval)
			p.relax(h, long)
			p.soon(k, now.Add(time.Minute))
			p.relax(h, long)
		}, time.Minute, time.Minute, false},
		{"never read: relax keeps the schedule", func(p *powerChecks) {
			p.due(h, now, interval)
			p.relax(h, long)
		}, 0, interval, false},
		{"woken: due now", func(p *powerChecks) {
			read(p, interval)
			p.relax(h, long)
			p.wake(k, now)
		}, 0, 0, true},
		{"woken is not relaxed", func(p *powerChecks) {
			read(p, interval)
			p.wake(k, now)
			p.relax(h, long)
		}, 0, 0, true},
		{"a read clears woken", func(p *powerChecks) {
			read(p, interval)
			p.wake(k, now)
			read(p, long)
		}, 48 * time.Minute, 72 * time.Minute, false},
		{"an event during a read is not spent by it", func(p *powerChecks) {
			read(p, interval)
			p.wake(k, now)
			seen := p.reading(h) // this read began on the first event
			p.wake(k, now)       // the BMC tells of another change meanwhile
			p.record(h, now, long, long, metalv1.PowerOff, seen)
		}, 0, 0, true},
		{"then the next read spends it", func(p *powerChecks) {
			read(p, interval)
			seen := p.reading(h)
			p.wake(k, now)
			p.record(h, now, long, long, metalv1.PowerOff, seen)
			read(p, long)
		}, 48 * time.Minute, 72 * time.Minute, false},
		{"soon never pushes out", func(p *powerChecks) {
			read(p, interval)
			p.soon(k, now.Add(3*time.Hour))
		}, 8 * time.Minute, 12 * time.Minute, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // jittered: check the bounds several times
				var p powerChecks
				tc.steps(&p)
				within(t, &p, tc.name, tc.lo, tc.hi)
				if got := p.woken(h); got != tc.woken {
					t.Fatalf("woken %t, want %t", got, tc.woken)
				}
			}
		})
	}
}

// One stream per BMC service and credentials: the systems of one service
// share it, other credentials or TLS settings do not, and only Redfish
// BMCs have one.
func TestStreamKey(t *testing.T) {
	creds := bmc.Credentials{Username: "admin", Password: "pw"}
	opts := func(addr string, mutate ...func(*bmc.Options)) bmc.Options {
		o := bmc.Options{Address: addr, Credentials: creds}
		for _, m := range mutate {
			m(&o)
		}
		return o
	}
	a, svcA, sysA, ok := streamKey(opts("redfish+https://10.0.0.1/redfish/v1/Systems/1"))
	if !ok || svcA != "redfish+https://10.0.0.1" || sysA != "/redfish/v1/Systems/1" {
		t.Fatalf("streamKey = %q %q %q %t", a, svcA, sysA, ok)
	}
	b, _, sysB, _ := streamKey(opts("redfish+https://10.0.0.1/redfish/v1/Systems/2"))
	if a != b || sysB != "/redfish/v1/Systems/2" {
		t.Fatalf("two systems of one BMC service: keys %q and %q, system %q", a, b, sysB)
	}
	if _, _, sys, _ := streamKey(opts("redfish+https://10.0.0.1")); sys != "/redfish/v1/Systems" {
		t.Fatalf("no system path: %q, want any system", sys)
	}
	for name, o := range map[string]bmc.Options{
		"other credentials": opts("redfish+https://10.0.0.1/redfish/v1/Systems/1", func(o *bmc.Options) { o.Credentials.Password = "other" }),
		"other port":        opts("redfish+https://10.0.0.1:8443/redfish/v1/Systems/1"),
		"no TLS check":      opts("redfish+https://10.0.0.1/redfish/v1/Systems/1", func(o *bmc.Options) { o.DisableCertificateVerification = true }),
	} {
		if k, _, _, _ := streamKey(o); k == a {
			t.Fatalf("%s shares the stream", name)
		}
	}
	for _, addr := range []string{"ipmi://10.0.0.1", "manual://rack-1", "::not an address"} {
		if _, _, _, ok := streamKey(opts(addr)); ok {
			t.Fatalf("%s has a stream", addr)
		}
	}
}
