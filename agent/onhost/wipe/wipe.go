// Package wipe erases partition tables and filesystem signatures of whole
// disks, like `wipefs -a` plus zeroing the first and last MiB: the MBR,
// both GPT headers and entry arrays, and the superblocks of ext2/3/4, xfs,
// vfat, swap, LVM, md, LUKS, ZFS labels and btrfs (primary and backups).
// The same is done for every partition the kernel or the on-disk table
// knows, so a partition table recreated later does not bring a filesystem
// back. Data beyond those regions is not overwritten: this makes disks
// blank for the next provisioning, it is not a secure erase.
//
// Disks are opened with O_EXCL, so a disk with a mounted partition (or
// otherwise claimed, e.g. by device-mapper) fails instead of being wiped,
// and the disk under the running root filesystem is never selected unless
// Options.AllowRootDisk.
package wipe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"unsafe"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

const mib = 1 << 20

// Options configure Disks and Wipe.
type Options struct {
	// SysRoot prefixes /sys and /proc (default "/").
	SysRoot string
	// DevRoot prefixes /dev (default "/").
	DevRoot string
	// Devices restricts the wipe to these disks ("sda" or "/dev/sda");
	// default: every disk Disks finds.
	Devices []string
	// AllowRootDisk permits wiping the disk of the running root filesystem.
	AllowRootDisk bool
	Logger        logr.Logger
}

func (o *Options) defaults() {
	if o.SysRoot == "" {
		o.SysRoot = "/"
	}
	if o.DevRoot == "" {
		o.DevRoot = "/"
	}
}

// Result is what happened to one disk.
type Result struct {
	Disk string
	// Zeroed is the number of bytes overwritten.
	Zeroed int64
	// Partitions is how many partition ranges were wiped.
	Partitions int
	Err        error
}

// Wipe erases every disk Disks(opts) returns. It returns one Result per
// disk and an error joining the failures (nil when all succeeded). No disk
// found is not an error.
func Wipe(ctx context.Context, opts Options) ([]Result, error) {
	opts.defaults()
	disks, err := Disks(opts)
	if err != nil {
		return nil, err
	}
	var results []Result
	var errs []error
	for _, d := range disks {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		res := Device(ctx, d.Path, d.Partitions)
		res.Disk = d.Name
		if res.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Name, res.Err))
			opts.Logger.Error(res.Err, "wiping disk failed", "disk", d.Name)
		} else {
			opts.Logger.Info("wiped disk", "disk", d.Name, "zeroedBytes", res.Zeroed, "partitions", res.Partitions)
		}
		results = append(results, res)
	}
	return results, errors.Join(errs...)
}

// Device wipes one whole-disk device node (or a regular image file). known
// adds partition ranges to the ones read from the on-disk tables.
func Device(ctx context.Context, path string, known []Partition) Result {
	var res Result
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EBUSY) {
			res.Err = fmt.Errorf("in use (mounted, or held by another device): %w", err)
		} else {
			res.Err = err
		}
		return res
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil || size <= 0 {
		res.Err = fmt.Errorf("reading the size: %v", err)
		return res
	}
	ss := int64(512)
	if v, err := unix.IoctlGetInt(int(f.Fd()), unix.BLKSSZGET); err == nil && v > 0 {
		ss = int64(v)
	}
	parts := append(tablePartitions(f, size, ss), known...)
	var regions []region
	regions = append(regions, rangeRegions(0, size, size)...)
	for _, p := range parts {
		regions = append(regions, rangeRegions(p.Start, p.Size, size)...)
	}
	regions = merge(regions)
	zero := make([]byte, mib)
	for _, r := range regions {
		for off := r.start; off < r.end; {
			if err := ctx.Err(); err != nil {
				res.Err = err
				return res
			}
			n := min(int64(len(zero)), r.end-off)
			if _, err := f.WriteAt(zero[:n], off); err != nil {
				res.Err = fmt.Errorf("writing zeros at %d: %w", off, err)
				return res
			}
			off += n
			res.Zeroed += n
		}
	}
	if err := f.Sync(); err != nil {
		res.Err = fmt.Errorf("flushing: %w", err)
		return res
	}
	res.Partitions = len(parts)
	fd := int(f.Fd())
	// Drop cached pages and make the kernel forget the partitions, as
	// wipefs does. Neither applies to image files or devices without
	// partition support, so failures here are not errors.
	_ = unix.IoctlSetInt(fd, unix.BLKFLSBUF, 0)
	_ = unix.IoctlSetInt(fd, unix.BLKRRPART, 0)
	// A kernel without the table's parser (or one that still lists
	// partitions added with BLKPG) needs them deleted one by one.
	for _, p := range known {
		if p.Number > 0 {
			_ = deletePartition(fd, p.Number)
		}
	}
	return res
}

type region struct{ start, end int64 }

// rangeRegions returns the regions of a range [start, start+length) that
// hold signatures: its first and last MiB, and the btrfs backup
// superblocks at 64 MiB and 256 GiB (4 KiB each).
func rangeRegions(start, length, devSize int64) []region {
	end := min(start+length, devSize)
	if start < 0 || start >= end {
		return nil
	}
	out := []region{{start, min(start+mib, end)}, {max(end-mib, start), end}}
	for _, off := range []int64{64 * mib, 256 << 30} {
		if start+off+4096 <= end {
			out = append(out, region{start + off, start + off + 4096})
		}
	}
	return out
}

func merge(rs []region) []region {
	sort.Slice(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
	var out []region
	for _, r := range rs {
		if n := len(out); n > 0 && r.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, r.end)
			continue
		}
		out = append(out, r)
	}
	return out
}

// deletePartition removes partition number pno from the kernel's view of
// the disk (BLKPG_DEL_PARTITION, what `partx -d` does).
func deletePartition(fd, pno int) error {
	part := unix.BlkpgPartition{Pno: int32(pno)}
	arg := unix.BlkpgIoctlArg{
		Op:      unix.BLKPG_DEL_PARTITION,
		Datalen: int32(unsafe.Sizeof(part)),
		Data:    (*byte)(unsafe.Pointer(&part)),
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKPG, uintptr(unsafe.Pointer(&arg)))
	if errno != 0 {
		return errno
	}
	return nil
}
