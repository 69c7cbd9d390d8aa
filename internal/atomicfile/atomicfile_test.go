package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for _, tc := range []struct {
		data string
		perm os.FileMode
	}{{"first\n", 0o600}, {"second, longer than the first\n", 0o644}, {"3\n", 0o600}} {
		if err := WriteFile(p, []byte(tc.data), tc.perm); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != tc.data {
			t.Fatalf("after writing %q: read %q, %v", tc.data, b, err)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != tc.perm {
			t.Errorf("mode %v, want %v", fi.Mode().Perm(), tc.perm)
		}
	}
	assertOnly(t, dir, "state.json")
}

func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "kubelet")
	if err := WriteFile(p, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk gone")
	r := &failAfter{r: strings.NewReader("partial"), err: boom}
	if err := Copy(p, r, 0o755); !errors.Is(err, boom) {
		t.Fatalf("Copy error = %v, want %v", err, boom)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("content after a failed copy = %q, want the old one", b)
	}
	assertOnly(t, dir, "kubelet")
}

func TestWriteFileNeedsTheDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "f")
	if err := WriteFile(p, nil, 0o600); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error = %v, want not-exist", err)
	}
}

func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "current")
	for _, target := range []string{"v1.31.0", "v1.32.1"} {
		if err := Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		if got, err := os.Readlink(p); err != nil || got != target {
			t.Fatalf("link = %q, %v; want %q", got, err, target)
		}
	}
	// A regular file in the way is replaced too.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Symlink("v1.33.0", p); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(p); got != "v1.33.0" {
		t.Errorf("link = %q after replacing a file", got)
	}
	assertOnly(t, dir, "current")
}

type failAfter struct {
	r   *strings.Reader
	err error
}

func (f *failAfter) Read(b []byte) (int, error) {
	if f.r.Len() == 0 {
		return 0, f.err
	}
	return f.r.Read(b)
}

// assertOnly fails when a temporary file was left behind.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("directory holds %v, want %v", got, names)
	}
}
