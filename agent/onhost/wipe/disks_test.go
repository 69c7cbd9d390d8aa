package wipe

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type fakeDev struct {
	name, parent, class, devnum string // parent: whole disk of a partition
	attrs                       map[string]string
	slaves                      []string
}

// fakeSys builds a sysfs-shaped tree: devices under sys/devices, with
// sys/block, sys/class/block and sys/dev/block symlinks as the kernel
// makes them.
func fakeSys(t *testing.T, mountinfo string) string {
	t.Helper()
	root := t.TempDir()
	devs := []fakeDev{
		{name: "sda", class: "pci", devnum: "8:0", attrs: map[string]string{"size": "2000000", "removable": "0", "ro": "0"}},
		{name: "sda1", parent: "sda", devnum: "8:1", attrs: map[string]string{"partition": "1", "start": "2048", "size": "1000"}},
		{name: "sda2", parent: "sda", devnum: "8:2", attrs: map[string]string{"partition": "2", "start": "4096", "size": "1000"}},
		{name: "sdb", class: "pci", devnum: "8:16", attrs: map[string]string{"size": "2000000"}},
		{name: "sdc", class: "usb", devnum: "8:32", attrs: map[string]string{"size": "2000000", "removable": "1"}},
		{name: "nvme0n1", class: "pci", devnum: "259:0", attrs: map[string]string{"size": "4000000"}},
		{name: "nvme0n1p1", parent: "nvme0n1", devnum: "259:1", attrs: map[string]string{"partition": "1", "start": "2048", "size": "3000000"}},
		{name: "sr0", class: "pci", devnum: "11:0", attrs: map[string]string{"size": "1000"}},
		{name: "loop0", class: "virtual", devnum: "7:0", attrs: map[string]string{"size": "1000"}},
		{name: "dm-0", class: "virtual", devnum: "254:0", attrs: map[string]string{"size": "3000000"}, slaves: []string{"nvme0n1p1"}},
		{name: "sdd", class: "pci", devnum: "8:48", attrs: map[string]string{"size": "0"}}, // no medium
	}
	paths := map[string]string{}
	for _, d := range devs {
		var p string
		if d.parent != "" {
			p = filepath.Join(paths[d.parent], d.name)
		} else {
			p = filepath.Join(root, "sys/devices", d.class, "block", d.name)
		}
		paths[d.name] = p
		mustMkdir(t, p)
		for k, v := range d.attrs {
			mustWrite(t, filepath.Join(p, k), v)
		}
		for _, s := range d.slaves {
			mustMkdir(t, filepath.Join(p, "slaves", s))
		}
		rel := func(from string) string {
			r, err := filepath.Rel(from, p)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if d.parent == "" {
			mustLink(t, rel(filepath.Join(root, "sys/block")), filepath.Join(root, "sys/block", d.name))
		}
		mustLink(t, rel(filepath.Join(root, "sys/class/block")), filepath.Join(root, "sys/class/block", d.name))
		mustLink(t, rel(filepath.Join(root, "sys/dev/block")), filepath.Join(root, "sys/dev/block", d.devnum))
	}
	mustWrite(t, filepath.Join(root, "dev/sdb"), "")
	if mountinfo != "" {
		mustWrite(t, filepath.Join(root, "proc/self/mountinfo"), mountinfo)
	}
	return root
}

func mustMkdir(t *testing.T, p string) {
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, s string) {
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(s+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, p string) {
	mustMkdir(t, filepath.Dir(p))
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func mountinfo(rootLine string) string {
	return "22 1 0:21 / /proc rw - proc proc rw\n" + rootLine + "\n25 24 0:23 / /sys rw - sysfs sysfs rw\n"
}

func TestDisks(t *testing.T) {
	tests := []struct {
		name      string
		mountinfo string
		opts      Options
		want      []string
		wantRoot  []string
		wantErr   string
	}{
		{name: "root on a partition of sda",
			mountinfo: mountinfo("24 1 8:2 / / rw - ext4 /dev/sda2 rw"),
			want:      []string{"nvme0n1", "sdb"}, wantRoot: []string{"sda"}},
		{name: "root on LVM over nvme",
			mountinfo: mountinfo("24 1 254:0 / / rw - xfs /dev/mapper/vg-root rw"),
			want:      []string{"sda", "sdb"}, wantRoot: []string{"dm-0", "nvme0n1"}},
		{name: "root on a ramdisk",
			mountinfo: mountinfo("24 1 0:30 / / rw - tmpfs rootfs rw"),
			want:      []string{"nvme0n1", "sda", "sdb"}, wantRoot: []string{}},
		{name: "btrfs root with an anonymous device number",
			mountinfo: mountinfo("24 1 0:33 / / rw - btrfs /dev/sdb rw"),
			want:      []string{"nvme0n1", "sda"}, wantRoot: []string{"sdb"}},
		{name: "the last mount on / wins",
			mountinfo: mountinfo("24 1 0:30 / / rw - tmpfs rootfs rw\n30 24 8:16 / / rw - ext4 /dev/sdb rw"),
			want:      []string{"nvme0n1", "sda"}, wantRoot: []string{"sdb"}},
		{name: "root disk allowed",
			mountinfo: mountinfo("24 1 8:2 / / rw - ext4 /dev/sda2 rw"),
			opts:      Options{AllowRootDisk: true},
			want:      []string{"nvme0n1", "sda", "sdb"}, wantRoot: []string{"sda"}},
		{name: "explicit devices",
			mountinfo: mountinfo("24 1 8:2 / / rw - ext4 /dev/sda2 rw"),
			opts:      Options{Devices: []string{"sdb", "loop0"}},
			want:      []string{"loop0", "sdb"}, wantRoot: []string{"sda"}},
		{name: "explicit root disk refused",
			mountinfo: mountinfo("24 1 8:2 / / rw - ext4 /dev/sda2 rw"),
			opts:      Options{Devices: []string{"sdb", "sda"}},
			wantErr:   "refusing to wipe sda", wantRoot: []string{"sda"}},
		{name: "explicit partition refused",
			mountinfo: mountinfo("24 1 8:2 / / rw - ext4 /dev/sda2 rw"),
			opts:      Options{Devices: []string{"sda1"}},
			wantErr:   "not a whole disk", wantRoot: []string{"sda"}},
		{name: "unknown root means no wipe",
			mountinfo: "",
			wantErr:   "finding the disk of the root filesystem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeSys(t, tt.mountinfo)
			opts := tt.opts
			opts.SysRoot, opts.DevRoot = root, root
			if tt.wantRoot != nil {
				rd, err := RootDisks(opts)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for d := range rd {
					got = append(got, d)
				}
				if !sameSet(got, tt.wantRoot) {
					t.Errorf("RootDisks = %v, want %v", got, tt.wantRoot)
				}
			}
			disks, err := Disks(opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Disks error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range disks {
				names = append(names, d.Name)
				if d.Path != filepath.Join(root, "dev", d.Name) {
					t.Errorf("path %s", d.Path)
				}
			}
			if !reflect.DeepEqual(names, tt.want) {
				t.Errorf("Disks = %v, want %v", names, tt.want)
			}
			for _, d := range disks {
				if d.Name == "nvme0n1" && (len(d.Partitions) != 1 || d.Partitions[0].Start != 2048*512 || d.Partitions[0].Size != 3000000*512) {
					t.Errorf("nvme0n1 partitions %+v", d.Partitions)
				}
			}
		})
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return len(a) == len(b)
}
