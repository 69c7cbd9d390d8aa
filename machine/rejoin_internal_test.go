package machine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// TestRejoinIDs: every arming of a Machine's Host has a new ID, also after
// a replacement, and none looks like a provisioning or wipe boot.
func TestRejoinIDs(t *testing.T) {
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "0123abcd-ef45-6789-abcd-ef0123456789"}}
	provision := &metalv1.BootRequest{ID: bootID(m, metalv1.BootPurposeProvision, 1), Purpose: metalv1.BootPurposeProvision}
	first := bootID(m, metalv1.BootPurposeRejoin, nextRejoin(provision))
	if first != "0123abcdef45-j1" {
		t.Fatalf("first rejoin ID %q", first)
	}
	second := bootID(m, metalv1.BootPurposeRejoin, nextRejoin(&metalv1.BootRequest{ID: first, Purpose: metalv1.BootPurposeRejoin}))
	if second != "0123abcdef45-j2" {
		t.Fatalf("second rejoin ID %q", second)
	}
	tenth := bootID(m, metalv1.BootPurposeRejoin, nextRejoin(&metalv1.BootRequest{ID: "0123abcdef45-j9", Purpose: metalv1.BootPurposeRejoin}))
	if tenth != "0123abcdef45-j10" {
		t.Fatalf("tenth rejoin ID %q", tenth)
	}
	m.Status.Replacements = 2
	if got := bootID(m, metalv1.BootPurposeRejoin, 1); got != "0123abcdef45-r2j1" || got == first {
		t.Fatalf("rejoin ID after two replacements %q", got)
	}
}

// TestRearmDue: the armed request gets a new ID only once its credential
// went out and can no longer be used.
func TestRearmDue(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }
	br := &metalv1.BootRequest{ID: "u-j1", Purpose: metalv1.BootPurposeRejoin}
	host := func(ack string, bc *metalv1.BootCredentialStatus) *metalv1.Host {
		return &metalv1.Host{Spec: metalv1.HostSpec{BootRequest: br}, Status: metalv1.HostStatus{BootRequestID: ack, BootCredential: bc}}
	}
	served := func(id string, consumed *metav1.Time, expires time.Duration) *metalv1.BootCredentialStatus {
		return &metalv1.BootCredentialStatus{BootRequestID: id, ScriptServedAt: at(-3 * time.Minute), ExpiresAt: *at(expires), GraceSeconds: 120, ConsumedAt: consumed}
	}
	tests := []struct {
		name string
		h    *metalv1.Host
		due  bool
		wait time.Duration
	}{
		{"not acknowledged yet", host("", nil), false, 0},
		{"armed, never served", host("u-j1", nil), false, 0},
		{"the credential of the provisioning boot", host("u-j1", served("u-p1", at(-time.Hour), time.Hour)), false, 0},
		{"served, not consumed, valid", host("u-j1", served("u-j1", nil, 10*time.Minute)), false, 10*time.Minute + time.Second},
		{"served, not consumed, expired", host("u-j1", served("u-j1", nil, -time.Second)), true, 0},
		{"consumed, in its grace", host("u-j1", served("u-j1", at(-time.Minute), 10*time.Minute)), false, time.Minute + time.Second},
		{"consumed, grace over", host("u-j1", served("u-j1", at(-3*time.Minute), 10*time.Minute)), true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, due := rearmDue(tt.h, br, now)
			if due != tt.due || wait != tt.wait {
				t.Fatalf("rearmDue = %v, %v; want %v, %v", wait, due, tt.wait, tt.due)
			}
		})
	}
}
