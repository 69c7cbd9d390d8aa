package wipe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"anvil.dev/anvil/test/agentenv"
)

var imageTools = map[string]string{
	"sgdisk": "gdisk", "sfdisk": "fdisk", "mkfs.ext4": "e2fsprogs", "mkfs.vfat": "dosfstools",
	"blkid": "util-linux", "wipefs": "util-linux",
}

func run(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// signatures returns what blkid finds at offset of dev ("" if nothing).
// blkid exits 2 when it finds nothing.
func signatures(t *testing.T, dev string, offset int64) string {
	t.Helper()
	out, err := exec.Command("blkid", "-p", "-O", fmt.Sprint(offset), dev).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return ""
	}
	if err != nil {
		t.Fatalf("blkid %s at %d: %v\n%s", dev, offset, err, out)
	}
	return strings.TrimSpace(string(out))
}

// wipefsSees lists what wipefs would erase (empty: nothing left).
func wipefsSees(t *testing.T, dev string) string {
	t.Helper()
	return strings.TrimSpace(run(t, "", "wipefs", "--noheadings", dev))
}

type layout struct {
	name string
	// build writes the layout into img (a 64 MiB file) and returns the byte
	// offsets that carry a signature.
	build func(t *testing.T, img string) []int64
}

const sector = 512

var layouts = []layout{
	{"gpt-ext4-vfat", func(t *testing.T, img string) []int64 {
		run(t, "", "sgdisk", "-n1:2048:+20M", "-n2:0:0", img)
		run(t, "", "mkfs.ext4", "-F", "-q", "-E", fmt.Sprintf("offset=%d", 2048*sector), img, "20M")
		run(t, "", "mkfs.vfat", "--offset", "43008", img, "40000")
		return []int64{0, 2048 * sector, 43008 * sector}
	}},
	{"mbr-ext4-logical-vfat", func(t *testing.T, img string) []int64 {
		run(t, "label: dos\nstart=2048, size=20480, type=83\nstart=22528, size=100000, type=5\nstart=24576, size=20480, type=83\n", "sfdisk", "-q", img)
		run(t, "", "mkfs.ext4", "-F", "-q", "-E", fmt.Sprintf("offset=%d", 2048*sector), img, "10M")
		run(t, "", "mkfs.vfat", "--offset", "24576", img, "20480")
		return []int64{0, 2048 * sector, 24576 * sector}
	}},
	{"whole-disk-ext4", func(t *testing.T, img string) []int64 {
		run(t, "", "mkfs.ext4", "-F", "-q", img)
		return []int64{0}
	}},
	{"whole-disk-vfat", func(t *testing.T, img string) []int64 {
		run(t, "", "mkfs.vfat", img)
		return []int64{0}
	}},
	{"gpt-backup-only", func(t *testing.T, img string) []int64 {
		// A damaged primary GPT: the partition must still be found through
		// the backup header at the end of the disk.
		run(t, "", "sgdisk", "-n1:4096:+30M", img)
		run(t, "", "mkfs.ext4", "-F", "-q", "-E", fmt.Sprintf("offset=%d", 4096*sector), img, "30M")
		f, err := os.OpenFile(img, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(make([]byte, 1024), 0); err != nil { // PMBR and primary header
			t.Fatal(err)
		}
		f.Close()
		return []int64{4096 * sector}
	}},
}

func newImage(t *testing.T, l layout) (string, []int64) {
	t.Helper()
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	offs := l.build(t, img)
	for _, off := range offs {
		if signatures(t, img, off) == "" {
			t.Fatalf("setup: no signature at %d before the wipe", off)
		}
	}
	return img, offs
}

func assertBlank(t *testing.T, dev string, offs []int64) {
	t.Helper()
	if s := wipefsSees(t, dev); s != "" {
		t.Errorf("wipefs still sees on %s:\n%s", dev, s)
	}
	for _, off := range append([]int64{0}, offs...) {
		if s := signatures(t, dev, off); s != "" {
			t.Errorf("blkid still finds at offset %d: %s", off, s)
		}
	}
}

// TestDeviceImageFiles wipes image files (no root needed): every layout
// ends with nothing for blkid or wipefs, at the disk start and at every
// former partition.
func TestDeviceImageFiles(t *testing.T) {
	testenv.RequireCommands(t, imageTools)
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			img, offs := newImage(t, l)
			res := Device(context.Background(), img, nil)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			assertBlank(t, img, offs)
		})
	}
}

// TestDeviceKeepsData checks the wipe is limited to signature regions:
// bytes in the middle of a large partition survive.
func TestDeviceKeepsData(t *testing.T) {
	testenv.RequireCommands(t, imageTools)
	img := filepath.Join(t.TempDir(), "disk.img")
	data := bytes.Repeat([]byte{0xA5}, 64<<20)
	if err := os.WriteFile(img, data, 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, "", "sgdisk", "-n1:2048:0", img)
	res := Device(context.Background(), img, nil)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	got, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[4<<20:8<<20], data[4<<20:8<<20]) {
		t.Error("the middle of the disk was overwritten")
	}
	if !bytes.Equal(got[:1<<20], make([]byte, 1<<20)) || !bytes.Equal(got[len(got)-1<<20:], make([]byte, 1<<20)) {
		t.Error("first or last MiB not zeroed")
	}
	if res.Zeroed >= int64(len(data)) {
		t.Errorf("zeroed %d bytes of %d", res.Zeroed, len(data))
	}
}

// loop attaches img as a loop device with partition scanning.
func loop(t *testing.T, img string) string {
	t.Helper()
	dev := strings.TrimSpace(run(t, "", "losetup", "--find", "--show", "--partscan", img))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	return dev
}

func kernelPartitions(t *testing.T, dev string) []string {
	t.Helper()
	name := filepath.Base(dev)
	ents, err := os.ReadDir(filepath.Join("/sys/block", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), name+"p") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestWipeLoopDevices wipes real block devices, with the partitions known
// to the kernel (partx -a) and without (kernels without the table's
// parser, or a table the kernel has not read).
func TestWipeLoopDevices(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommands(t, imageTools)
	testenv.RequireCommands(t, map[string]string{"losetup": "util-linux", "partx": "util-linux"})
	for _, l := range layouts {
		for _, addParts := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/kernel-partitions=%v", l.name, addParts), func(t *testing.T) {
				img, offs := newImage(t, l)
				dev := loop(t, img)
				if addParts {
					_ = exec.Command("partx", "-a", dev).Run() // fails harmlessly if the kernel already added them
					if len(offs) > 1 && len(kernelPartitions(t, dev)) == 0 {
						t.Fatal("setup: the kernel lists no partitions after partx -a")
					}
				}
				res, err := Wipe(context.Background(), Options{Devices: []string{dev}})
				if err != nil {
					t.Fatal(err)
				}
				if len(res) != 1 || res[0].Disk != filepath.Base(dev) {
					t.Fatalf("results %+v", res)
				}
				assertBlank(t, dev, offs)
				if p := kernelPartitions(t, dev); len(p) != 0 {
					t.Errorf("kernel still lists partitions %v", p)
				}
			})
		}
	}
}

// TestWipeRefusesMountedDisk: a disk with a mounted partition fails and
// keeps its table and filesystem.
func TestWipeRefusesMountedDisk(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireCommands(t, imageTools)
	testenv.RequireCommands(t, map[string]string{"losetup": "util-linux", "partx": "util-linux", "mount": "mount"})
	img, offs := newImage(t, layouts[0])
	dev := loop(t, img)
	_ = exec.Command("partx", "-a", dev).Run()
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "ext4", dev+"p1", mnt).CombinedOutput(); err != nil {
		testenv.Require(t, false, fmt.Sprintf("cannot mount here: %v %s", err, out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	res, err := Wipe(context.Background(), Options{Devices: []string{dev}})
	if err == nil || len(res) != 1 || res[0].Err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("wipe of a disk with a mounted partition: results %+v, err %v", res, err)
	}
	for _, off := range offs {
		if signatures(t, dev, off) == "" {
			t.Errorf("signature at %d was erased although the wipe failed", off)
		}
	}
}
