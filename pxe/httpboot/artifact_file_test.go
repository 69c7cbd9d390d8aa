package httpboot

import (
	"bytes"
	"testing"
)

// Artifact.File maps a request path to another file under ArtifactDir,
// with the same confinement and digest check as a plain request path.
func TestArtifactFileMapping(t *testing.T) {
	e := newArtifactEnv(t, ArtifactMap{
		"ns/class-b/kernel/vmlinuz": {SHA256: sum([]byte("another kernel")), File: "os/vmlinuz"},
		"ns/class-c/escape":         {SHA256: sum([]byte(secretContent)), File: "escape"},
		"ns/class-d/parent":         {SHA256: sum([]byte(secretContent)), File: "../secret"},
		"ns/class-e/missing":        {SHA256: sum([]byte("x")), File: "os/nothing"},
	})
	// The kernel is random per env, so its entry is added afterwards.
	e.srv.opts.Artifacts.(ArtifactMap)["ns/class-a/kernel/vmlinuz"] = Artifact{SHA256: sum(e.kernel), File: "os/vmlinuz"}

	tests := []struct {
		name     string
		path     string
		code     int
		wantBody []byte
	}{
		{"mapped file with its digest", "ns/class-a/kernel/vmlinuz", 200, e.kernel},
		{"same file, other class expects another digest", "ns/class-b/kernel/vmlinuz", 500, nil},
		{"symlink out of the root", "ns/class-c/escape", 403, nil},
		{"parent reference in File", "ns/class-d/parent", 500, nil},
		{"mapped file missing", "ns/class-e/missing", 404, nil},
		{"the mapped-to path itself is still its own entry", "os/vmlinuz", 200, e.kernel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, "GET", e.ts.URL+"/artifacts/"+tt.path, nil)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tt.code, body)
			}
			if tt.wantBody != nil && !bytes.Equal(body, tt.wantBody) {
				t.Fatalf("body differs (%d bytes, want %d)", len(body), len(tt.wantBody))
			}
			if bytes.Contains(body, []byte(secretContent)) {
				t.Fatal("served a file outside the artifact directory")
			}
		})
	}
}
