package qemuaccel

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/test/need"
)

// The probe guest really runs: under TCG (which always works) SeaBIOS
// boots it and it exits QEMU with the probe's status.
func TestProbeGuestRunsUnderTCG(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		need.OrSkip(t, "qemu-system-x86_64 missing (apt-get install qemu-system-x86)")
	}
	if err := Probe("qemu-system-x86_64", Choice{Accel: "tcg", CPU: "max"}, time.Minute); err != nil {
		t.Fatalf("probe under TCG: %v", err)
	}
	// And what this machine would choose, for the record.
	t.Log(Choose())
}

func TestChooseForcedAndFallback(t *testing.T) {
	tests := []struct {
		force, qemu, accel, why string
	}{
		{"kvm", "qemu-system-x86_64", "kvm", "ANVIL_QEMU_ACCEL=kvm"},
		{"tcg", "qemu-system-x86_64", "tcg", "ANVIL_QEMU_ACCEL=tcg"},
		{"hvf", "qemu-system-x86_64", "tcg", "neither kvm nor tcg"},
		// A QEMU that cannot run the probe: never KVM on faith.
		{"", "/nonexistent/qemu", "tcg", ""},
	}
	for _, tc := range tests {
		c := choose(tc.force, tc.qemu)
		if c.Accel != tc.accel || !strings.Contains(c.Why, tc.why) {
			t.Errorf("choose(%q, %q) = %+v, want %s (%q)", tc.force, tc.qemu, c, tc.accel, tc.why)
		}
	}
}
