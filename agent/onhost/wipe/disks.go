package wipe

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"anvil.dev/anvil/agent/onhost/facts"
)

// Disk is a whole block device to wipe.
type Disk struct {
	// Name in /sys/block, e.g. "sda", "nvme0n1", "loop3".
	Name string
	// Path of the device node, e.g. /dev/sda (below Options.DevRoot).
	Path string
	// Partitions the kernel knows (from sysfs); the on-disk tables are read
	// again when wiping.
	Partitions []Partition
}

// Disks lists what Wipe would erase: Options.Devices, or every disk in
// /sys/block that is not virtual (loop, dm, md, ram, ...), removable or
// read-only. Disks under the running root filesystem are left out unless
// AllowRootDisk; naming one in Devices is then an error.
func Disks(opts Options) ([]Disk, error) {
	opts.defaults()
	rootDisks, err := RootDisks(opts)
	if err != nil && !opts.AllowRootDisk {
		// Without knowing where / lives, nothing is safe to wipe.
		return nil, fmt.Errorf("finding the disk of the root filesystem: %w", err)
	}
	var names []string
	if len(opts.Devices) > 0 {
		for _, d := range opts.Devices {
			n, err := opts.sysName(d)
			if err != nil {
				return nil, err
			}
			if rootDisks[n] && !opts.AllowRootDisk {
				return nil, fmt.Errorf("refusing to wipe %s: it holds the running root filesystem", n)
			}
			names = append(names, n)
		}
	} else {
		ents, err := os.ReadDir(filepath.Join(opts.SysRoot, "sys/block"))
		if err != nil {
			return nil, fmt.Errorf("listing block devices: %w", err)
		}
		for _, e := range ents {
			n := e.Name()
			dir := filepath.Join(opts.SysRoot, "sys/block", n)
			if facts.VirtualDisk(n) || readInt(filepath.Join(dir, "removable")) == 1 ||
				readInt(filepath.Join(dir, "ro")) == 1 || readInt(filepath.Join(dir, "size")) <= 0 {
				continue
			}
			if rootDisks[n] && !opts.AllowRootDisk {
				opts.Logger.Info("not wiping the disk of the running root filesystem", "disk", n)
				continue
			}
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]Disk, 0, len(names))
	for _, n := range names {
		out = append(out, Disk{Name: n, Path: filepath.Join(opts.DevRoot, "dev", n), Partitions: sysPartitions(opts.SysRoot, n)})
	}
	return out, nil
}

// RootDisks returns the whole disks that hold the running root
// filesystem, following device-mapper and md layers to the disks below.
// Empty for a root on tmpfs or overlay on tmpfs (a ramdisk).
func RootDisks(opts Options) (map[string]bool, error) {
	opts.defaults()
	f, err := os.Open(filepath.Join(opts.SysRoot, "proc/self/mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var devNum, source string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if !ok || len(fields) < 5 || fields[4] != "/" {
			continue
		}
		devNum = fields[2] // the last mount on / wins: it is the visible one
		if pf := strings.Fields(post); len(pf) >= 2 {
			source = pf[1]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if devNum == "" {
		return nil, errors.New("no mount on / in mountinfo")
	}
	var start string
	if !strings.HasPrefix(devNum, "0:") {
		// Block devices have a sysfs entry by number.
		link := filepath.Join(opts.SysRoot, "sys/dev/block", devNum)
		if real, err := filepath.EvalSymlinks(link); err == nil {
			start = filepath.Base(real)
		}
	}
	if start == "" && strings.HasPrefix(source, "/dev/") {
		// btrfs and others report an anonymous device number; the source
		// names the device (possibly through /dev/mapper symlinks).
		p := filepath.Join(opts.DevRoot, source)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		start = filepath.Base(p)
		if _, err := os.Stat(filepath.Join(opts.SysRoot, "sys/class/block", start)); err != nil {
			// The node may be named differently from the kernel name.
			if n, err := opts.sysName(source); err == nil {
				start = n
			} else {
				start = ""
			}
		}
	}
	out := map[string]bool{}
	if start == "" {
		return out, nil // tmpfs, overlay, nfs: no local disk holds /
	}
	collectDisks(opts.SysRoot, start, out, 0)
	return out, nil
}

// collectDisks adds the whole disk of block device name, and of every
// device below it (slaves of dm and md devices).
func collectDisks(sysRoot, name string, out map[string]bool, depth int) {
	if depth > 16 {
		return
	}
	real, err := filepath.EvalSymlinks(filepath.Join(sysRoot, "sys/class/block", name))
	if err != nil {
		out[name] = true
		return
	}
	disk := real
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		disk = filepath.Dir(real)
	}
	dn := filepath.Base(disk)
	out[dn] = true
	slaves, _ := os.ReadDir(filepath.Join(disk, "slaves"))
	for _, s := range slaves {
		collectDisks(sysRoot, s.Name(), out, depth+1)
	}
	if disk != real {
		pslaves, _ := os.ReadDir(filepath.Join(real, "slaves"))
		for _, s := range pslaves {
			collectDisks(sysRoot, s.Name(), out, depth+1)
		}
	}
}

// sysName maps "sda", "/dev/sda" or any device node path to its name in
// /sys/block. Partitions are refused: Wipe works on whole disks.
func (o *Options) sysName(dev string) (string, error) {
	name := dev
	if strings.Contains(dev, "/") {
		p := dev
		if o.DevRoot != "/" && strings.HasPrefix(dev, "/dev/") {
			p = filepath.Join(o.DevRoot, dev)
		}
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			return "", fmt.Errorf("device %s: %w", dev, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFBLK {
			return "", fmt.Errorf("device %s is not a block device", dev)
		}
		link := filepath.Join(o.SysRoot, "sys/dev/block", fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)))
		real, err := filepath.EvalSymlinks(link)
		if err != nil {
			return "", fmt.Errorf("device %s: no sysfs entry: %w", dev, err)
		}
		name = filepath.Base(real)
	}
	if _, err := os.Stat(filepath.Join(o.SysRoot, "sys/block", name)); err != nil {
		return "", fmt.Errorf("device %s is not a whole disk in /sys/block", dev)
	}
	return name, nil
}

// sysPartitions lists the partitions the kernel knows for disk.
func sysPartitions(sysRoot, disk string) []Partition {
	dir := filepath.Join(sysRoot, "sys/block", disk)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Partition
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		num := readInt(filepath.Join(p, "partition"))
		if num <= 0 {
			continue
		}
		out = append(out, Partition{
			Number: int(num),
			Start:  readInt(filepath.Join(p, "start")) * 512, // sysfs counts 512-byte sectors
			Size:   readInt(filepath.Join(p, "size")) * 512,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

func readInt(p string) int64 {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
