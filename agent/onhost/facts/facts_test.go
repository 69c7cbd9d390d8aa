package facts

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"anvil.dev/anvil/agent"
)

const x86CPUInfo = `processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
flags		: fpu vme

processor	: 1
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
`

const arm64CPUInfo = `processor	: 0
BogoMIPS	: 50.00
CPU implementer	: 0x41
CPU part	: 0xd0c

processor	: 1
CPU implementer	: 0x41
CPU part	: 0xd0c

processor	: 2
CPU implementer	: 0x41
CPU part	: 0xd0c
`

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if s == "<dir>" {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCollect(t *testing.T) {
	base := map[string]string{
		"proc/sys/kernel/random/boot_id": "95ec1d05-f628-49bd-965c-d2d0a18047e1\n",
		"proc/sys/kernel/osrelease":      "6.1.0-18-amd64\n",
		"proc/sys/kernel/hostname":       "worker-7\n",
		"proc/meminfo":                   "MemTotal:       263856820 kB\nMemFree:         1000 kB\n",
		"sys/block/sda/size":             "3907029168\n",
		"sys/block/sda/queue/rotational": "1\n",
		"sys/block/sda/removable":        "0\n",
		"sys/block/sda/device/model":     "ST2000NM0055   \n",
		"sys/block/sda/device/serial":    "ZC20ABCD\n",
		"sys/block/nvme0n1/size":         "1875385008\n",
		"sys/block/nvme0n1/serial":       "S64FNE0R\n",
		"sys/block/nvme0n1/wwid":         "eui.0025388b71b2c3d4\n",
		"sys/block/sda/device/wwid":      "naa.5000c500a1b2c3d4\n",
		"sys/block/sdb/size":             "0\n", // card reader without a card
		"sys/block/loop0/size":           "1000\n",
		"sys/block/sr0/size":             "1000\n",
		"sys/class/net/eno1/device":      "<dir>",
		"sys/class/net/eno1/address":     "3C:EC:EF:00:11:22\n",
		"sys/class/net/eno1/speed":       "25000\n",
		"sys/class/net/eno2/device":      "<dir>",
		"sys/class/net/eno2/address":     "3c:ec:ef:00:11:23\n",
		"sys/class/net/eno2/speed":       "-1\n", // link down
		"sys/class/net/ib0/device":       "<dir>",
		"sys/class/net/ib0/address":      "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0f:5a:2b\n",
		"sys/class/net/lo/address":       "00:00:00:00:00:00\n",
		"sys/class/net/br0/address":      "3c:ec:ef:00:11:22\n",
	}
	wantDisks := []agent.Disk{
		{Name: "nvme0n1", SizeBytes: 1875385008 * 512, Serial: "S64FNE0R", WWN: "eui.0025388b71b2c3d4",
			ByPath: []string{"pci-0000:01:00.0-nvme-1"}},
		{Name: "sda", SizeBytes: 3907029168 * 512, Rotational: true, Model: "ST2000NM0055", Serial: "ZC20ABCD", WWN: "naa.5000c500a1b2c3d4",
			ByPath: []string{"pci-0000:00:17.0-ata-1", "pci-0000:00:17.0-ata-1.0"}},
	}
	wantNICs := []agent.NIC{{Name: "eno1", MAC: "3c:ec:ef:00:11:22", SpeedMbps: 25000}, {Name: "eno2", MAC: "3c:ec:ef:00:11:23"}}
	tests := []struct {
		name    string
		cpuinfo string
		wantCPU agent.CPU
	}{
		{"x86_64", x86CPUInfo, agent.CPU{Model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", Count: 2}},
		{"aarch64", arm64CPUInfo, agent.CPU{Model: "implementer 0x41 part 0xd0c", Count: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, base)
			write(t, root, map[string]string{"proc/cpuinfo": tt.cpuinfo})
			// udev's links: whole disks and a partition (not a disk).
			links := filepath.Join(root, "dev/disk/by-path")
			must(t, os.MkdirAll(links, 0o755))
			for name, target := range map[string]string{"pci-0000:01:00.0-nvme-1": "../../nvme0n1", "pci-0000:00:17.0-ata-1": "../../sda",
				"pci-0000:00:17.0-ata-1.0": "../../sda", "pci-0000:00:17.0-ata-1-part1": "../../sda1"} {
				must(t, os.Symlink(target, filepath.Join(links, name)))
			}
			r, err := Collect(Options{Root: root, AgentVersion: "v0.1.0", KubeletVersion: "v1.37.0"})
			if err != nil {
				t.Fatal(err)
			}
			if r.BootID != "95ec1d05-f628-49bd-965c-d2d0a18047e1" || r.Kernel != "6.1.0-18-amd64" || r.Hostname != "worker-7" ||
				r.MemoryMiB != 257672 || r.AgentVersion != "v0.1.0" || r.KubeletVersion != "v1.37.0" {
				t.Errorf("report %+v", r)
			}
			if r.CPU != tt.wantCPU {
				t.Errorf("cpu %+v, want %+v", r.CPU, tt.wantCPU)
			}
			if !reflect.DeepEqual(r.Disks, wantDisks) {
				t.Errorf("disks %+v", r.Disks)
			}
			if !reflect.DeepEqual(r.NICs, wantNICs) {
				t.Errorf("nics %+v", r.NICs)
			}
			if err := r.Validate(); err != nil {
				t.Errorf("the report does not validate: %v", err)
			}
		})
	}
}

func TestCollectNeedsBootID(t *testing.T) {
	if _, err := Collect(Options{Root: t.TempDir()}); err == nil {
		t.Error("no error without a boot_id")
	}
}

// TestCollectThisHost reads the real /proc and /sys.
func TestCollectThisHost(t *testing.T) {
	r, err := Collect(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(r.BootID) || r.CPU.Count < 1 || r.MemoryMiB < 1 || r.Kernel == "" {
		t.Errorf("report %+v", r)
	}
	if err := r.Validate(); err != nil {
		t.Errorf("the report does not validate: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
