// Package atomicfile replaces files so that a reader, or the machine after
// a crash, sees the old content or the new one, never a mix: write a
// temporary file in the same directory, fsync it, rename it over the
// target, fsync the directory (which makes the rename itself durable).
// Standard library only: anvil-agent links it.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// WriteFile replaces p with data, mode perm. The directory must exist.
func WriteFile(p string, data []byte, perm os.FileMode) error {
	return write(p, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// Copy replaces p with what r yields, mode perm.
func Copy(p string, r io.Reader, perm os.FileMode) error {
	return write(p, perm, func(f *os.File) error {
		_, err := io.Copy(f, r)
		return err
	})
}

func write(p string, perm os.FileMode, fill func(*os.File) error) error {
	dir := filepath.Dir(p)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(p)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	// Chmod, not the umask-filtered mode of a create: perm is what the
	// caller gets.
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return err
	}
	return SyncDir(dir)
}

// Symlink points p at target, replacing whatever p was.
func Symlink(target, p string) error {
	dir := filepath.Dir(p)
	tmp := filepath.Join(dir, "."+filepath.Base(p)+".tmp")
	_ = os.Remove(tmp) // left by a crash
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, making renames and removals in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
