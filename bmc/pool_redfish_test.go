package bmc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/redfish"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
)

// TestPoolCredentialRotation: the pool keeps one Redfish session across calls
// and picks up a rotated password from the next call's options, without a
// restart and without the old driver's auth-failure hold-off getting in the
// way.
func TestPoolCredentialRotation(t *testing.T) {
	const oldPW, newPW = "old-Passw0rd-1", "new-Passw0rd-2"
	s := redfishsim.Start(t, redfishsim.Options{MockupDir: need.RedfishMockup(t), Password: oldPW})
	p := bmc.NewPool(bmc.PoolOptions{Guard: netguard.Guard{AllowLoopback: true}})
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	ctx := context.Background()
	withPW := func(pw string) bmc.Options {
		return bmc.Options{Address: s.BMCAddress(), Credentials: bmc.Credentials{Username: "admin", Password: pw}, Timeout: 30 * time.Second, AllowPlainHTTP: true}
	}
	for range 20 {
		if _, err := p.PowerState(ctx, withPW(oldPW)); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.SessionsCreated != 1 {
		t.Fatalf("20 pooled calls created %d sessions, want 1", st.SessionsCreated)
	}

	// The administrator rotates the BMC password; the old session dies.
	s.SetCredentials("admin", newPW)
	s.ExpireSessions()
	_, err := p.PowerState(ctx, withPW(oldPW))
	if !errors.Is(err, bmc.ErrAuthFailed) || strings.Contains(err.Error(), oldPW) {
		t.Fatalf("stale password: %v, want ErrAuthFailed without the password", err)
	}
	// The Secret is updated: the next call uses a fresh driver.
	for range 5 {
		if err := p.SetPower(ctx, withPW(newPW), bmc.PowerOn); err != nil {
			t.Fatalf("after rotation: %v", err)
		}
	}
	if st := s.Stats(); st.SessionsCreated != 2 || p.Len() != 1 {
		t.Fatalf("sessions %d (want 2), cached drivers %d (want 1)", st.SessionsCreated, p.Len())
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.Sessions(); n != 0 {
		t.Fatalf("%d sessions left after Pool.Close", n)
	}
}
