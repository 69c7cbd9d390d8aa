// Package facts reads boot and hardware facts from /proc and /sys for the
// agent's report. Everything is read below Options.Root, so tests can point
// it at a prepared tree.
package facts

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"anvil.dev/anvil/agent"
)

// Options configure Collect.
type Options struct {
	// Root prefixes /proc and /sys (default "/").
	Root string
	// AgentVersion and KubeletVersion are copied into the report.
	AgentVersion   string
	KubeletVersion string
}

// Collect reads the facts. Only the boot ID is required; a missing
// optional source (no /sys/block on a container, say) leaves its fields
// empty.
func Collect(opts Options) (agent.Report, error) {
	root := opts.Root
	if root == "" {
		root = "/"
	}
	r := agent.Report{AgentVersion: opts.AgentVersion, KubeletVersion: opts.KubeletVersion}
	bootID, err := readTrim(filepath.Join(root, "proc/sys/kernel/random/boot_id"))
	if err != nil {
		return agent.Report{}, fmt.Errorf("reading boot_id: %w", err)
	}
	r.BootID = bootID
	r.Kernel, _ = readTrim(filepath.Join(root, "proc/sys/kernel/osrelease"))
	r.Hostname, _ = readTrim(filepath.Join(root, "proc/sys/kernel/hostname"))
	if b, err := os.ReadFile(filepath.Join(root, "proc/cpuinfo")); err == nil {
		r.CPU = parseCPUInfo(b)
	}
	if b, err := os.ReadFile(filepath.Join(root, "proc/meminfo")); err == nil {
		r.MemoryMiB = parseMemTotalMiB(b)
	}
	r.Disks = disks(filepath.Join(root, "sys/block"), filepath.Join(root, "dev/disk/by-path"))
	r.NICs = nics(filepath.Join(root, "sys/class/net"))
	return r, nil
}

// parseCPUInfo counts "processor" entries and takes the first model name.
// x86 has "model name"; arm64 kernels often have none, then the
// implementer/part pair is the best there is.
func parseCPUInfo(b []byte) agent.CPU {
	var c agent.CPU
	var implementer, part string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			c.Count++
		case "model name", "Model Name", "cpu model":
			if c.Model == "" {
				c.Model = v
			}
		case "CPU implementer":
			if implementer == "" {
				implementer = v
			}
		case "CPU part":
			if part == "" {
				part = v
			}
		}
	}
	if c.Model == "" && implementer != "" {
		c.Model = "implementer " + implementer + " part " + part
	}
	return c
}

func parseMemTotalMiB(b []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}

// VirtualDisk reports whether a /sys/block name is a kernel-made device
// rather than a disk: loop, ram, zram, device-mapper, md, nbd, optical,
// floppy.
func VirtualDisk(name string) bool {
	for _, p := range []string{"loop", "ram", "zram", "dm-", "md", "nbd", "sr", "fd"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func disks(dir, byPathDir string) []agent.Disk {
	byPath := byPathLinks(byPathDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []agent.Disk
	for _, e := range ents {
		name := e.Name()
		if VirtualDisk(name) {
			continue
		}
		d := filepath.Join(dir, name)
		sectors, _ := readInt(filepath.Join(d, "size"))
		if sectors <= 0 {
			continue
		}
		disk := agent.Disk{Name: name, SizeBytes: sectors * 512}
		if v, _ := readInt(filepath.Join(d, "queue/rotational")); v == 1 {
			disk.Rotational = true
		}
		if v, _ := readInt(filepath.Join(d, "removable")); v == 1 {
			disk.Removable = true
		}
		disk.Model, _ = readTrim(filepath.Join(d, "device/model"))
		disk.Serial, _ = readTrim(filepath.Join(d, "device/serial"))
		if disk.Serial == "" {
			disk.Serial, _ = readTrim(filepath.Join(d, "serial")) // nvme, virtio
		}
		disk.WWN, _ = readTrim(filepath.Join(d, "wwid")) // nvme
		if disk.WWN == "" {
			disk.WWN, _ = readTrim(filepath.Join(d, "device/wwid")) // scsi, sata
		}
		disk.ByPath = byPath[name]
		out = append(out, disk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// byPathLinks maps kernel disk names to their /dev/disk/by-path links
// (whole disks only: a link to a partition is skipped).
func byPathLinks(dir string) map[string][]string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	for _, e := range ents {
		if strings.Contains(e.Name(), "-part") {
			continue
		}
		t, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		dev := filepath.Base(t)
		out[dev] = append(out[dev], e.Name())
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// nics lists interfaces backed by a device (physical NICs, not lo, bridges,
// veths or bonds) with a 6-byte MAC.
func nics(dir string) []agent.NIC {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []agent.NIC
	for _, e := range ents {
		name := e.Name()
		d := filepath.Join(dir, name)
		if _, err := os.Stat(filepath.Join(d, "device")); err != nil {
			continue
		}
		addr, err := readTrim(filepath.Join(d, "address"))
		if err != nil {
			continue
		}
		hw, err := net.ParseMAC(addr)
		if err != nil || len(hw) != 6 {
			continue
		}
		n := agent.NIC{Name: name, MAC: hw.String()}
		// Reading speed of a down link fails with EINVAL; that is "unknown".
		if s, err := readInt(filepath.Join(d, "speed")); err == nil && s > 0 && s < 1<<31 {
			n.SpeedMbps = int32(s)
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func readTrim(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if len(s) > agent.MaxStringLen {
		s = s[:agent.MaxStringLen]
	}
	return s, nil
}

func readInt(p string) (int64, error) {
	s, err := readTrim(p)
	if err != nil {
		return 0, err
	}
	if s == "" {
		return 0, fs.ErrInvalid
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("not an integer")
	}
	return v, nil
}
