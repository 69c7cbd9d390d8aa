// Package need lets tests demand the real parts they run against (ipmi_sim,
// the DMTF Redfish mockup, root for network namespaces, ...). Missing parts
// skip a test on a developer's machine and fail it in CI, where .ci/run
// installs everything, so a green CI never hides a skipped test.
package need

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// OrSkip skips the test, or fails it when CI=true.
func OrSkip(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("required in CI (CI=true): %s", msg)
	}
	t.Skip("skipping: " + msg)
}

// RepoRoot walks up from the working directory to the repository root (the
// directory with go.mod and hack/tools).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "hack", "tools")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("repository root not found above the working directory")
		}
		dir = parent
	}
}

// CacheDir is <repo>/bin/cache/<name>, created: where tests keep what
// outlives a run (the Debian kernel download, built lab images), inside the
// clone like the tools in bin/, so that nothing reads outside it.
func CacheDir(t testing.TB, name string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "bin", "cache", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("test cache: %v", err)
	}
	return dir
}

// RedfishMockup returns the directory of DMTF's public-rackmount1 mockup,
// vendored in the repository with its license (test/redfishsim/mockups). It
// is tracked, so its absence is a broken checkout: the test fails.
func RedfishMockup(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "test", "redfishsim", "mockups", "public-rackmount1")
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		t.Fatalf("DMTF Redfish mockup missing from the checkout: %v", err)
	}
	return dir
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
