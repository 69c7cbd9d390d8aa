package results

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMerge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	base := &Run{Command: "anvil-bench run", DHCP: &DHCP{Reservations: 10000}, Storm: &Storm{Setup: "old"}}
	// A missing file is written whole.
	if err := Merge(path, base); err != nil {
		t.Fatal(err)
	}
	add := &Run{Command: "anvil-bench run --only storm", Storm: &Storm{Setup: "new"}, Errors: []string{"storm: something"}}
	if err := Merge(path, add); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.DHCP == nil || got.DHCP.Reservations != 10000 {
		t.Errorf("DHCP part lost: %+v", got.DHCP)
	}
	if got.Storm == nil || got.Storm.Setup != "new" {
		t.Errorf("storm part not replaced: %+v", got.Storm)
	}
	if got.Command != "anvil-bench run" {
		t.Errorf("header changed: %q", got.Command)
	}
	if len(got.Errors) != 1 || !strings.HasPrefix(got.Errors[0], "[storm] ") {
		t.Errorf("errors %q", got.Errors)
	}

	// A merged part that does not say when it was measured gets the
	// header of the run it comes from; one that does keeps its own.
	t0 := time.Date(2026, 11, 30, 14, 41, 0, 0, time.UTC)
	own := &Measured{Started: t0.Add(-time.Hour), Command: "own"}
	later := &Run{Started: t0, Finished: t0.Add(8 * time.Minute), Command: "anvil-bench run --only dhcp,tftp", LoadStart: [3]float64{0.7, 1, 1},
		DHCP: &DHCP{Reservations: 5}, TFTP: &TFTP{Measured: own}}
	if err := Merge(path, later); err != nil {
		t.Fatal(err)
	}
	if got, err = Read(path); err != nil {
		t.Fatal(err)
	}
	if m := got.DHCP.Measured; m == nil || !m.Started.Equal(t0) || !m.Finished.Equal(t0.Add(8*time.Minute)) || m.Command != later.Command || m.LoadStart[0] != 0.7 {
		t.Errorf("merged DHCP part's Measured = %+v, want the later run's header", m)
	}
	if m := got.TFTP.Measured; m == nil || m.Command != "own" {
		t.Errorf("merged TFTP part's own Measured replaced: %+v", m)
	}
	if got.Command != "anvil-bench run" || got.Storm.Setup != "new" {
		t.Errorf("header or storm changed by the second merge: %q %+v", got.Command, got.Storm)
	}

	if err := Merge(path, &Run{Smoke: true, Storm: &Storm{}}); err == nil || !strings.Contains(err.Error(), "will not merge a smoke run") {
		t.Errorf("merging a smoke run into a full file: err = %v", err)
	}
}
