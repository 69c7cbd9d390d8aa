// Package disktest builds small whole-disk images the way a host image is
// laid out (GPT: anvil-bios, anvil-esp, anvil-root ext4) with the real
// tools (sgdisk from gdisk, mkfs.ext4 and debugfs from e2fsprogs), and
// reads and writes files in the ext4 partition of such an image file
// without mounting it. For tests only.
package disktest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/test/need"
)

// Tools returns the commands the images need, skipping (failing in CI)
// without them.
func Tools(t testing.TB) {
	t.Helper()
	for cmd, pkg := range map[string]string{"sgdisk": "gdisk", "mkfs.ext4": "e2fsprogs", "debugfs": "e2fsprogs"} {
		if _, err := exec.LookPath(cmd); err != nil {
			need.OrSkip(t, "%s not found (Debian package %s)", cmd, pkg)
		}
	}
}

// Image is a built disk image.
type Image struct {
	Path string
	// Root is the anvil-root partition: number and byte range.
	RootNumber           int
	RootOffset, RootSize int64
	// Marker is a file written into the root filesystem at build time
	// (etc/anvil-image-id) with MarkerContent, so readers can tell the
	// filesystem is the one built here.
	MarkerContent string
}

const sector = 512

// Build writes a size-byte GPT disk image (size a multiple of 1 MiB, at
// least 16 MiB) into dir: partition 1 anvil-bios (1 MiB, BIOS boot), 2
// anvil-esp (2 MiB, EFI system, left blank), 3 anvil-root (the rest, ext4
// with etc/cloud/cloud.cfg.d and the marker file). rootName overrides the
// third partition's name ("" = anvil-root).
func Build(t testing.TB, dir string, size int64, rootName string) *Image {
	t.Helper()
	Tools(t)
	if rootName == "" {
		rootName = "anvil-root"
	}
	if size < 16<<20 || size%(1<<20) != 0 {
		t.Fatalf("disktest: image size %d: want a multiple of 1 MiB, at least 16 MiB", size)
	}
	img := &Image{Path: filepath.Join(dir, "disk.img"), RootNumber: 3, MarkerContent: "anvil disktest " + strconv.FormatInt(time.Now().UnixNano(), 36) + "\n"}
	if err := os.WriteFile(img.Path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img.Path, size); err != nil {
		t.Fatal(err)
	}
	run(t, "sgdisk", "-n", "1:2048:+1M", "-c", "1:anvil-bios", "-t", "1:ef02",
		"-n", "2:0:+2M", "-c", "2:anvil-esp", "-t", "2:ef00",
		"-n", "3:0:0", "-c", "3:"+rootName, "-t", "3:8304", img.Path)
	// The root partition's range as sgdisk laid it out.
	out := run(t, "sgdisk", "-i", "3", img.Path)
	first, last := field(t, out, "First sector:"), field(t, out, "Last sector:")
	img.RootOffset, img.RootSize = first*sector, (last-first+1)*sector

	tree := filepath.Join(dir, "rootfs")
	for _, d := range []string{"etc/cloud/cloud.cfg.d"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tree, "etc/anvil-image-id"), []byte(img.MarkerContent), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := filepath.Join(dir, "root.ext4")
	run(t, "mkfs.ext4", "-q", "-F", "-L", "root", "-d", tree, fs, strconv.FormatInt(img.RootSize/1024, 10)+"k")
	b, err := os.ReadFile(fs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(img.Path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, img.RootOffset); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(fs)
	// The table must still verify: the filesystem stayed inside its partition.
	run(t, "sgdisk", "-v", img.Path)
	return img
}

// ReadFile reads rel from the ext4 filesystem at byte offset of the disk
// image (debugfs "cat"); ok is false when it does not exist.
func ReadFile(t testing.TB, disk string, offset int64, rel string) (content []byte, ok bool) {
	t.Helper()
	spec := fmt.Sprintf("%s?offset=%d", disk, offset)
	// debugfs exits 0 on a missing file; "stat" says so on stderr.
	cmd := exec.Command("debugfs", "-R", "stat "+rel, spec)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		t.Fatalf("debugfs stat %s: %v\n%s", rel, err, stderr.String())
	}
	if strings.Contains(stderr.String(), "File not found") {
		return nil, false
	}
	cmd = exec.Command("debugfs", "-R", "cat "+rel, spec)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("debugfs cat %s: %v\n%s", rel, err, stderr.String())
	}
	return out, true
}

// Mode is rel's permission bits in the ext4 filesystem at offset.
func Mode(t testing.TB, disk string, offset int64, rel string) os.FileMode {
	t.Helper()
	out := run(t, "debugfs", "-R", "stat "+rel, fmt.Sprintf("%s?offset=%d", disk, offset))
	i := strings.Index(out, "Mode:")
	if i < 0 {
		t.Fatalf("debugfs stat %s: no Mode in\n%s", rel, out)
	}
	m, err := strconv.ParseUint(strings.Fields(out[i+len("Mode:"):])[0], 8, 32)
	if err != nil {
		t.Fatalf("debugfs stat %s: mode: %v", rel, err)
	}
	return os.FileMode(m)
}

// WriteFile writes content to rel (mode 0600, parents created) in the
// ext4 filesystem at offset of disk with debugfs -w, and reads it back.
// It is what an installer's mount-and-write does, for an image file.
func WriteFile(ctx context.Context, disk string, offset int64, rel string, content []byte) error {
	tmp, err := os.CreateTemp("", "disktest-seed-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	var script strings.Builder
	// mkdir of an existing directory only complains: debugfs goes on.
	var parents []string
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		parents = append([]string{d}, parents...)
	}
	for _, d := range parents {
		fmt.Fprintf(&script, "mkdir %s\n", d)
	}
	fmt.Fprintf(&script, "rm %s\nwrite %s %s\nsif %s mode 0100600\n", rel, tmp.Name(), rel, rel)
	spec := fmt.Sprintf("%s?offset=%d", disk, offset)
	cmd := exec.CommandContext(ctx, "debugfs", "-w", "-f", "-", spec)
	cmd.Stdin = strings.NewReader(script.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("debugfs -w: %v\n%s", err, out)
	}
	// debugfs exits 0 when a command fails: read the file back.
	got, err := exec.CommandContext(ctx, "debugfs", "-R", "cat "+rel, spec).Output()
	if err != nil || !bytes.Equal(got, content) {
		return fmt.Errorf("debugfs: %s reads back as %d bytes (%v), wrote %d", rel, len(got), err, len(content))
	}
	return nil
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// field parses "First sector: 20480 (at 10.0 MiB)" style lines of sgdisk -i.
func field(t testing.TB, out, label string) int64 {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), label); ok {
			v, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			if err != nil {
				t.Fatalf("sgdisk -i: %q: %v", l, err)
			}
			return v
		}
	}
	t.Fatalf("sgdisk -i printed no %q:\n%s", label, out)
	return 0
}
