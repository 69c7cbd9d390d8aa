package redfish_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/test/redfishsim"
)

// A BMC that moved its system (GET) and its Reset action (POST, body kept)
// within itself is followed, with the session re-sent only there.
func TestRedirectWithinTheBMCIsFollowed(t *testing.T) {
	sys := "/redfish/v1/Systems/" + sysID
	reset := sys + "/Actions/ComputerSystem.Reset"
	s := startSim(t, redfishsim.Options{Redirects: []redfishsim.Redirect{
		{From: "/redfish/v1/Systems/old", To: sys},
		{From: reset, To: reset + "/", Status: http.StatusPermanentRedirect},
	}})
	o := options(s)
	o.Address = s.BMCAddress() + "/redfish/v1/Systems/old"
	d := open(t, o)
	ctx := context.Background()
	if st, err := d.PowerState(ctx); err != nil || st != bmc.PowerStateOff {
		t.Fatalf("PowerState through a 307 = %s, %v; want Off", st, err)
	}
	if err := d.SetPower(ctx, bmc.PowerOn); err != nil {
		t.Fatalf("SetPower through a 308: %v", err)
	}
	st := s.Stats()
	if s.PowerState(sysID) != "On" || st.Resets != 1 || st.Redirected < 2 || st.SessionsCreated != 1 {
		t.Fatalf("power %s, stats %+v: want On after one Reset, both redirects followed in one session", s.PowerState(sysID), st)
	}
}

// A redirect to another host is not followed (the credentials would go
// with it); the error names the target so the admin can fix the address.
func TestRedirectToAnotherBMCNamesTheTarget(t *testing.T) {
	other := startSim(t, redfishsim.Options{})
	s := startSim(t, redfishsim.Options{Redirects: []redfishsim.Redirect{{From: "/redfish/v1/Systems", To: other.URL() + "/redfish/v1/Systems"}}})
	o := options(s)
	o.Address = s.BMCAddress() + "/redfish/v1/Systems/" + sysID
	d := open(t, o)
	_, err := d.PowerState(context.Background())
	noSecret(t, err)
	want := other.URL() + "/redfish/v1/Systems/" + sysID
	if err == nil || !errors.Is(err, bmc.ErrInvalidAddress) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "307") {
		t.Fatalf("PowerState = %v; want ErrInvalidAddress naming the 307 to %s", err, want)
	}
	t.Logf("the error: %v", err)
	if n := other.Stats().Requests; n != 0 {
		t.Fatalf("the other BMC got %d requests; a redirect off the BMC must not be followed", n)
	}
	if n := s.Stats().Redirected; n != 1 {
		t.Fatalf("redirected %d times, want 1 (no retries of a configuration error)", n)
	}
}

// A 302 would turn a POST into a GET: reported with its target, not followed.
func TestFoundRedirectIsReportedWithItsTarget(t *testing.T) {
	sys := "/redfish/v1/Systems/" + sysID
	s := startSim(t, redfishsim.Options{Redirects: []redfishsim.Redirect{{From: "/redfish/v1/Systems/old", To: sys, Status: http.StatusFound}}})
	o := options(s)
	o.Address = s.BMCAddress() + "/redfish/v1/Systems/old"
	d := open(t, o)
	_, err := d.PowerState(context.Background())
	if err == nil || !strings.Contains(err.Error(), s.URL()+sys) || !strings.Contains(err.Error(), "302") {
		t.Fatalf("PowerState = %v; want an error naming the 302 to %s", err, s.URL()+sys)
	}
}
