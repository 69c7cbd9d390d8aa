package results

import (
	"path/filepath"
	"strings"
	"testing"
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

	if err := Merge(path, &Run{Smoke: true, Storm: &Storm{}}); err == nil || !strings.Contains(err.Error(), "will not merge a smoke run") {
		t.Errorf("merging a smoke run into a full file: err = %v", err)
	}
}
