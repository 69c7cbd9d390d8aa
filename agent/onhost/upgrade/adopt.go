package upgrade

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"anvil.dev/anvil/internal/atomicfile"
)

var kubeletVersionRE = regexp.MustCompile(`\b(v[0-9]+\.[0-9]+\.[0-9]+)\b`)

// Adopt brings a kubelet installed the plain way (for example a systemd
// unit running /usr/local/bin/kubelet, as first-boot templates often do)
// under the agent's layout, so that flipping `current` changes what the
// unit runs:
//
//   - binPath is a regular file: its version (`binPath --version`) is
//     copied to <version>/kubelet, `current` points there, and binPath is
//     replaced by a symlink to <kubelet dir>/current/kubelet. The running
//     process is not touched (same bytes).
//   - binPath is missing and `current` exists: the symlink is created.
//   - binPath already is that symlink: nothing to do.
//
// binPath is relative to Options.Root. It returns the adopted version
// ("" if nothing was adopted). A plan in progress is left alone.
func (u *Upgrader) Adopt(ctx context.Context, binPath string) (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if f, err := loadState(u.statePath); err == nil && f.Current != nil && !f.Current.Phase.Terminal() {
		return "", errors.New("an upgrade is in progress; not adopting")
	}
	p := filepath.Join(u.opts.Root, binPath)
	target := filepath.Join(u.kdir, currentLink, binaryName)
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if v, err := u.CurrentVersion(); err != nil || v == "" {
			return "", err
		}
		return "", replaceWithSymlink(p, target)
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if t != target {
			return "", fmt.Errorf("%s is a symlink to %s, not to %s; leaving it alone", p, t, target)
		}
		return "", nil
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	version, err := binaryVersion(ctx, p)
	if err != nil {
		return "", err
	}
	sum, err := fileSHA256(p)
	if err != nil {
		return "", err
	}
	dst := u.binaryPath(version)
	if have, err := fileSHA256(dst); err == nil && have != sum {
		return "", fmt.Errorf("%s (%s) differs from the installed %s; leaving both alone", p, version, dst)
	} else if err != nil {
		if err := copyFileSync(p, dst); err != nil {
			return "", fmt.Errorf("copying %s into %s: %w", p, dst, err)
		}
	}
	if err := u.flip(version); err != nil {
		return "", err
	}
	if err := replaceWithSymlink(p, target); err != nil {
		return "", err
	}
	u.log.Info("adopted kubelet", "path", p, "version", version)
	return version, nil
}

// binaryVersion runs `p --version` ("Kubernetes v1.37.2").
func binaryVersion(ctx context.Context, p string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", p, err)
	}
	m := kubeletVersionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s --version printed no vMAJOR.MINOR.PATCH", p)
	}
	return string(m[1]), nil
}

func copyFileSync(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicfile.Copy(dst, in, 0o755)
}

func replaceWithSymlink(p, target string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.Symlink(target, p)
}
