package redfishsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

func TestCommandHook(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	script := filepath.Join(dir, "hook.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$*\" >> '"+out+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startSim(t, Options{Systems: []SystemOptions{{PowerState: "Off"}}, OnPower: CommandHook(logr.Discard(), script, "vm1")})
	c := newClient(t, s)
	c.basic = true
	c.do("PATCH", sysPath, map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}}, nil)
	c.do("POST", sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if strings.TrimSpace(string(b)) == "vm1 on 437XR1138R2 Pxe UEFI" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("hook output %q", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChaosDistribution checks the injected latency stays within
// [Latency, Latency+Jitter) and that a seed makes it repeatable (no clocks
// involved: it calls the decision function directly).
func TestChaosDistribution(t *testing.T) {
	draw := func(seed int64) []time.Duration {
		s := startSim(t, Options{Latency: 10 * time.Millisecond, Jitter: 40 * time.Millisecond, Seed: seed})
		var out []time.Duration
		for range 200 {
			d, fail := s.chaos()
			if fail {
				t.Fatal("failure injected with ErrorRate 0")
			}
			if d < 10*time.Millisecond || d >= 50*time.Millisecond {
				t.Fatalf("latency %s outside [10ms, 50ms)", d)
			}
			out = append(out, d)
		}
		return out
	}
	a, b := draw(3), draw(3)
	distinct := map[time.Duration]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different latencies")
		}
		distinct[a[i]] = true
	}
	if len(distinct) < 100 {
		t.Fatalf("only %d distinct latencies in 200: no jitter", len(distinct))
	}
}
