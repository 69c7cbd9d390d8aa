package install

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// SeedConfig is the cloud-init config the installer writes to
// agent.InstallSeedFile: NoCloud reads its meta-data and user-data from
// seedURL over the network.
//
// The datasource list is NoCloud alone, not "[ NoCloud, None ]": cloud-init
// 23.4 to 24.2 run a datasource without detecting it only when the list is
// exactly [NoCloud] (23.2 and 23.3 also accepted [NoCloud, None]), and
// their NoCloudNet detects an http seed only from the kernel command line
// or DMI, never from datasource.NoCloud.seedfrom; 24.3.x crashes in that
// check. With [NoCloud] every version from 22.4 (no detection step: a ds_cfg
// seedfrom starting with http:// is fetched by DataSourceNoCloudNet) to
// the current one fetches the seed. ds-identify uses a single listed
// datasource without checking it, and parses only the one-line form.
func SeedConfig(seedURL string) []byte {
	// A JSON string is a YAML double-quoted scalar (url.Parse, in
	// InstallPlan.Validate, already refused control characters).
	var q bytes.Buffer
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(seedURL)
	return []byte("# Written by anvil-agent install: cloud-init's NoCloud seed, fetched over the network.\n" +
		"datasource_list: [ NoCloud ]\n" +
		"datasource:\n" +
		"  NoCloud:\n" +
		"    seedfrom: " + q.String()) // Encode ends it with a newline
}

// Partition is the installed image's root partition.
type Partition struct {
	// Disk is the whole-disk device (or image file) the image was written to.
	Disk string
	// Path is the partition's device node; "" when Disk is a regular file.
	Path string
	GPTPartition
}

// SeedWriter writes content to rel (slash-separated, relative to the
// filesystem root) in the ext4 filesystem on p, mode 0600, creating parent
// directories, durably.
type SeedWriter func(ctx context.Context, p Partition, rel string, content []byte) error

// MountSeedWriter mounts p.Path (ext4) on dir, writes the file and
// unmounts: the production SeedWriter.
func MountSeedWriter(dir string) SeedWriter {
	return func(ctx context.Context, p Partition, rel string, content []byte) (err error) {
		if p.Path == "" {
			return fmt.Errorf("%s is not a block device: no partition to mount", p.Disk)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := unix.Mount(p.Path, dir, "ext4", unix.MS_NOATIME|unix.MS_NODEV|unix.MS_NOSUID, ""); err != nil {
			return fmt.Errorf("mounting %s (ext4) on %s: %w", p.Path, dir, err)
		}
		defer func() {
			if uerr := unix.Unmount(dir, 0); uerr != nil {
				err = errors.Join(err, fmt.Errorf("unmounting %s: %w", dir, uerr))
			}
			unix.Sync()
		}()
		return writeFileDurably(filepath.Join(dir, filepath.FromSlash(rel)), content)
	}
}

// writeFileDurably writes path (0600) through a temporary file renamed
// into place, syncing the file and its directory.
func writeFileDurably(path string, content []byte) error {
	d := filepath.Dir(path)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	// The umask cannot widen 0600, but an existing file keeps its mode.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	df, err := os.Open(d)
	if err != nil {
		return err
	}
	defer df.Close()
	return df.Sync()
}

// partitionName is the kernel's name of partition n of disk: a "p"
// between them when the disk's name ends in a digit (nvme0n1p3, mmcblk0p3,
// loop0p3), none otherwise (vda3, sda3).
func partitionName(disk string, n int) string {
	if c := disk[len(disk)-1]; c >= '0' && c <= '9' {
		return fmt.Sprintf("%sp%d", disk, n)
	}
	return fmt.Sprintf("%s%d", disk, n)
}
