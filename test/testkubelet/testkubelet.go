// Package testkubelet builds the fake kubelet (testdata/fakekubelet) that
// the agent's upgrade tests install, run and upgrade. Test support only.
package testkubelet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"anvil.dev/anvil/test/need"
)

// Binary is one build of the fake kubelet.
type Binary struct {
	Version string
	Healthy bool
	Path    string
	Bytes   []byte
	SHA256  string
}

// Build compiles the fake kubelet with version and health baked in into
// dir. It needs the go command on PATH (go test puts its own there).
func Build(dir, version string, healthy bool) (*Binary, error) {
	// From the repository root, not runtime.Caller: under -trimpath (make
	// test sets it) that is a module path, not a directory.
	root, err := need.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("cannot locate the testkubelet sources: %w", err)
	}
	src := filepath.Join(root, "test", "testkubelet", "testdata", "fakekubelet")
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("building the fake kubelet: %w", err)
	}
	out := filepath.Join(dir, fmt.Sprintf("kubelet-%s-%v", version, healthy))
	cmd := exec.Command(goBin, "build", "-o", out,
		"-ldflags", fmt.Sprintf("-X main.version=%s -X main.healthy=%v", version, healthy), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the fake kubelet: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return &Binary{Version: version, Healthy: healthy, Path: out, Bytes: b, SHA256: hex.EncodeToString(sum[:])}, nil
}
