// Package standalone checks that the repository needs nothing beside it: a
// copy of just its tracked files, in an empty directory, runs the tests that
// use the Redfish emulator's vendored mockup.
package standalone

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"anvil.dev/anvil/test/need"
)

// tracked lists the files git tracks (with what is staged or added since).
func tracked(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v); this test needs one", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// No tracked source, script or Makefile names a path outside the clone.
func TestNothingReadsOutsideTheClone(t *testing.T) {
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Built from parts so this file does not match itself.
	needles := []string{"../" + "shared", `"..", "` + "shared" + `"`}
	for _, f := range tracked(t, root) {
		switch filepath.Ext(f) {
		case ".go", ".sh", ".mk", ".yaml", ".yml":
		default:
			if filepath.Base(f) != "Makefile" && !strings.HasPrefix(f, ".ci/") {
				continue
			}
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				t.Errorf("%s refers to %s (a bare clone has nothing beside it)", f, n)
			}
		}
	}
}

// The emulator's tests pass in a copy of the tracked files with nothing
// beside it (the copy's parent is an empty temporary directory).
func TestEmulatorTestsRunInABareCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the Redfish packages again in the copy")
	}
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "clone")
	for _, f := range tracked(t, root) {
		src := filepath.Join(root, f)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if ents, err := os.ReadDir(filepath.Dir(dst)); err != nil || len(ents) != 1 {
		t.Fatalf("the copy's parent holds more than the copy: %v %v", ents, err)
	}
	cmd := exec.Command("go", "test", "-count=1", "./test/redfishsim/", "./bmc/redfish/")
	cmd.Dir = dst
	cmd.Env = append(os.Environ(), "CI=true") // skips become failures (test/need)
	out, err := cmd.CombinedOutput()
	t.Logf("go test in the bare copy:\n%s", out)
	if err != nil {
		t.Fatalf("the emulator's tests fail in a bare copy: %v", err)
	}
}
