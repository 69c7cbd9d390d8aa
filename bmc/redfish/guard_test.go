package redfish_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

func creds() bmc.Credentials { return bmc.Credentials{Username: "admin", Password: secret} }

// refusedByGuard checks err is the guard's refusal, naming the flag that
// opens it, without the password.
func refusedByGuard(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, bmc.ErrInvalidAddress) || !errors.Is(err, netguard.ErrDenied) {
		t.Fatalf("%s: err = %v, want the guard's ErrInvalidAddress", what, err)
	}
	if !strings.Contains(err.Error(), bmc.AllowFlag) {
		t.Fatalf("%s: %v does not name %s", what, err, bmc.AllowFlag)
	}
	noSecret(t, err)
}

func noRequests(t *testing.T, r *bmctest.Recorder, what string) {
	t.Helper()
	if reqs := r.Requests(); len(reqs) != 0 || r.Conns() != 0 {
		t.Fatalf("%s: the listener got %d connections and requests %v, want none", what, r.Conns(), reqs)
	}
}

// A BMC address on a metadata or loopback IP is refused before anything is
// dialled, by Open and by the Pool, under the default (strict) guard.
func TestGuardRefusesAddressLiterals(t *testing.T) {
	rec := bmctest.StartRecorder(t, "127.0.0.1:0")
	pool := bmc.NewPool(bmc.PoolOptions{})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	for _, addr := range []string{
		"redfish+https://169.254.169.254/redfish/v1/Systems/1",
		"redfish+http://169.254.169.254/",
		"redfish+https://[fd00:ec2::254]/",
		"redfish+https://" + rec.HostPort(),
		"redfish+http://" + rec.HostPort(),
		"redfish+https://localhost:" + rec.PortString(),
		"redfish+https://[::ffff:127.0.0.1]:" + rec.PortString(),
	} {
		opts := bmc.Options{Address: addr, Credentials: creds(), Timeout: 10 * time.Second, AllowPlainHTTP: true}
		_, err := bmc.Open(opts)
		refusedByGuard(t, err, "Open "+addr)
		_, err = pool.PowerState(context.Background(), opts)
		refusedByGuard(t, err, "Pool "+addr)
	}
	noRequests(t, rec, "literal addresses")
}

// A name that resolves to loopback passes the check of the address as
// written, and is refused when dialled: no connection, no request, no
// credentials reach the listener. The same name under a guard that allows
// loopback does reach it, so the refusal is the guard's.
func TestGuardRefusesNameResolvingToLoopback(t *testing.T) {
	name, ip := need.LoopbackName(t)
	rec := bmctest.StartRecorder(t, ip+":0")
	for _, scheme := range []string{"redfish+https", "redfish+http"} {
		addr := scheme + "://" + name + ":" + rec.PortString()
		d, err := bmc.Open(bmc.Options{Address: addr, Credentials: creds(), Timeout: 10 * time.Second, MaxRetries: -1, AllowPlainHTTP: true})
		if err != nil {
			t.Fatalf("Open %s: %v (a name is checked when dialled)", addr, err)
		}
		_, err = d.PowerState(context.Background())
		_ = d.Close(context.Background())
		refusedByGuard(t, err, addr)
	}
	// The same through a Pool, as the Host controller calls it.
	pool := bmc.NewPool(bmc.PoolOptions{})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	_, err := pool.PowerState(context.Background(), bmc.Options{Address: "redfish+https://" + name + ":" + rec.PortString(), Credentials: creds(),
		Timeout: 10 * time.Second, MaxRetries: -1, Guard: netguard.Guard{AllowLoopback: true}}) // the pool's guard wins
	refusedByGuard(t, err, "pool")
	noRequests(t, rec, "a name resolving to loopback")

	d, err := bmc.Open(bmc.Options{Address: "redfish+http://" + name + ":" + rec.PortString(), Credentials: creds(), Timeout: 10 * time.Second,
		MaxRetries: -1, AllowPlainHTTP: true, Guard: netguard.Guard{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	_, _ = d.PowerState(context.Background()) // the recorder is no BMC: only that it was reached matters
	if reqs := rec.Requests(); len(reqs) == 0 || reqs[0].Path != "/redfish/v1/" {
		t.Fatalf("with loopback allowed the name did not reach the listener: %+v", reqs)
	}
}

// redfish+http:// with credentials needs the explicit opt-in: without it
// Open refuses, naming the Host field, and nothing is sent.
func TestPlainHTTPNeedsOptIn(t *testing.T) {
	rec := bmctest.StartRecorder(t, "127.0.0.1:0")
	_, err := bmc.Open(bmc.Options{Address: "redfish+http://" + rec.HostPort(), Credentials: creds(), Guard: lab})
	if !errors.Is(err, bmc.ErrInvalidAddress) || !strings.Contains(err.Error(), "spec.bmc.allowPlainHTTP") {
		t.Fatalf("plain HTTP without opt-in: err = %v, want ErrInvalidAddress naming spec.bmc.allowPlainHTTP", err)
	}
	noSecret(t, err)
	noRequests(t, rec, "plain HTTP without opt-in")

	s := startSim(t, redfishsim.Options{})
	o := options(s)
	o.AllowPlainHTTP = false
	if _, err := bmc.Open(o); !errors.Is(err, bmc.ErrInvalidAddress) {
		t.Fatalf("simulator over plain HTTP without opt-in: %v", err)
	}
	if st := s.Stats(); st.Requests != 0 {
		t.Fatalf("the simulator got %d requests", st.Requests)
	}
	o.AllowPlainHTTP = true
	if st, err := open(t, o).PowerState(context.Background()); err != nil || st != bmc.PowerStateOff {
		t.Fatalf("with the opt-in: %s, %v", st, err)
	}
	// https needs no opt-in.
	s2 := startSim(t, redfishsim.Options{TLS: true})
	o2 := options(s2)
	o2.AllowPlainHTTP = false
	if _, err := open(t, o2).PowerState(context.Background()); err != nil {
		t.Fatalf("https: %v", err)
	}
}
