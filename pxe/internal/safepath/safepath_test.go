package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"undionly.kpxe", "undionly.kpxe", true},
		{"efi/snponly.efi", "efi/snponly.efi", true},
		{"./a//b/", "a/b", true},
		{"", "", false},
		{"/etc/passwd", "", false},
		{"../etc/passwd", "", false},
		{"a/../../etc/passwd", "", false},
		{"a/../b", "", false},
		{"..", "", false},
		{".", "", false},
		{"a\x00b", "", false},
		{"a\nb", "", false},
		{"a\\..\\b", "", false},
		{strings.Repeat("a", MaxLen+1), "", false},
	}
	for _, tt := range tests {
		got, err := Clean(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Clean(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("Clean(%q) error %v does not wrap ErrInvalid", tt.in, err)
		}
	}
}

func TestOpen(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "file"), []byte("data"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(t, os.Symlink("file", filepath.Join(dir, "inside-link")))
	must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "abs-escape")))
	must(t, os.Symlink("../"+filepath.Base(outside)+"/secret", filepath.Join(dir, "rel-escape")))
	must(t, os.Symlink(outside, filepath.Join(dir, "dir-escape")))

	root, err := os.OpenRoot(dir)
	must(t, err)
	defer root.Close()

	tests := []struct {
		name string
		ok   bool
	}{
		{"file", true},
		{"inside-link", true},
		{"sub", false},
		{"abs-escape", false},
		{"rel-escape", false},
		{"dir-escape/secret", false},
		{"missing", false},
		{"../" + filepath.Base(dir) + "/file", false},
	}
	for _, tt := range tests {
		f, fi, _, err := Open(root, tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("Open(%q): err = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if f != nil {
			if fi.Size() != 4 {
				t.Errorf("Open(%q): size %d", tt.name, fi.Size())
			}
			f.Close()
		}
	}
}

// FuzzClean checks Clean's contract on arbitrary input: it never panics, and
// whatever it accepts is a relative, "..-free", NUL-free path that stays
// inside any root it is joined to.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"undionly.kpxe", "../etc/passwd", "/abs", "a/./b", "a\x00b", "..\\..", "a//b/", "...", ".../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		clean, err := Clean(name)
		if err != nil {
			return
		}
		if clean == "" || strings.HasPrefix(clean, "/") || strings.ContainsAny(clean, "\x00\\") {
			t.Fatalf("Clean(%q) = %q", name, clean)
		}
		for _, el := range strings.Split(clean, "/") {
			if el == ".." || el == "." || el == "" {
				t.Fatalf("Clean(%q) = %q has element %q", name, clean, el)
			}
		}
		if !filepath.IsLocal(clean) {
			t.Fatalf("Clean(%q) = %q is not local", name, clean)
		}
		joined := filepath.Join("/srv/root", clean)
		if !strings.HasPrefix(joined, "/srv/root/") {
			t.Fatalf("Clean(%q) = %q escapes: %q", name, clean, joined)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
