// Package pxetest prepares what a QEMU VM needs to network boot against the
// pxe services for real: a Debian kernel with its NIC modules, a busybox
// initramfs that reports back over HTTP, an IPv6 router advertisement
// sender (so iPXE does not wait ~15 s for one), and QEMU command lines for
// BIOS (QEMU's iPXE option ROM) and UEFI (OVMF's own PXE client).
//
// It shells out to Debian tools: apt-get and dpkg-deb (kernel), busybox
// from busybox-static (initramfs), qemu-system-x86_64, ipxe-qemu and ovmf.
package pxetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Kernel is an unpacked Debian kernel package.
type Kernel struct {
	Release    string // e.g. 6.1.0-57-amd64
	Vmlinuz    string // path to the bzImage (with EFI stub)
	ModulesDir string // lib/modules/<release>
}

// KernelOptions configures PrepareKernel.
type KernelOptions struct {
	// CacheDir keeps the downloaded .deb and the unpacked tree between
	// runs. Required.
	CacheDir string
	// Package to download; default: what linux-image-amd64 depends on.
	Package string
}

var pkgRE = regexp.MustCompile(`Depends: (linux-image-[0-9][^\s]*-amd64)`)

// PrepareKernel downloads (apt-get download) and unpacks (dpkg-deb -x) a
// Debian kernel into opts.CacheDir, reusing an earlier unpack.
func PrepareKernel(ctx context.Context, opts KernelOptions) (*Kernel, error) {
	if opts.CacheDir == "" {
		return nil, errors.New("pxetest: KernelOptions.CacheDir is required")
	}
	if err := os.MkdirAll(opts.CacheDir, 0o755); err != nil {
		return nil, err
	}
	pkg := opts.Package
	if pkg == "" {
		out, err := run(ctx, "", "apt-cache", "depends", "linux-image-amd64")
		if err != nil {
			return nil, err
		}
		m := pkgRE.FindStringSubmatch(out)
		if m == nil {
			return nil, fmt.Errorf("pxetest: cannot find the kernel package behind linux-image-amd64:\n%s", out)
		}
		pkg = m[1]
	}
	release := strings.TrimPrefix(pkg, "linux-image-")
	tree := filepath.Join(opts.CacheDir, pkg)
	k := &Kernel{
		Release:    release,
		Vmlinuz:    filepath.Join(tree, "boot", "vmlinuz-"+release),
		ModulesDir: filepath.Join(tree, "lib", "modules", release),
	}
	if _, err := os.Stat(k.Vmlinuz); err == nil {
		return k, nil
	}
	debs, _ := filepath.Glob(filepath.Join(opts.CacheDir, pkg+"_*.deb"))
	if len(debs) == 0 {
		if _, err := run(ctx, opts.CacheDir, "apt-get", "download", pkg); err != nil {
			return nil, err
		}
		debs, _ = filepath.Glob(filepath.Join(opts.CacheDir, pkg+"_*.deb"))
		if len(debs) == 0 {
			return nil, fmt.Errorf("pxetest: apt-get download %s left no .deb", pkg)
		}
	}
	tmp := tree + ".tmp"
	os.RemoveAll(tmp)
	if _, err := run(ctx, "", "dpkg-deb", "-x", debs[0], tmp); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, tree); err != nil {
		return nil, err
	}
	return k, nil
}

// VirtioNetModules and E1000Modules are the module load orders for the NIC
// drivers Debian builds as modules.
var (
	VirtioNetModules = []string{"virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci", "failover", "net_failover", "virtio_net"}
	E1000Modules     = []string{"e1000"}
)

// CallbackArg is the kernel command line parameter the initramfs reads:
// anvil.callback=<URL>. After DHCP it GETs that URL (with ?ip=<address>
// appended), prints CallbackDoneMarker on the console and powers off.
const (
	CallbackArg        = "anvil.callback"
	CallbackDoneMarker = "ANVIL-PXETEST-CALLBACK-DONE"
)

// InitramfsOptions configures BuildInitramfs.
type InitramfsOptions struct {
	Kernel  *Kernel
	Modules []string // load order; default VirtioNetModules
	// Busybox is a static busybox binary; default /bin/busybox.
	Busybox string
	// Output path of the (uncompressed newc) cpio archive.
	Output string
}

const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
exec 0</dev/console 1>/dev/console 2>&1
echo "anvil pxetest initramfs: loading modules"
for m in %s; do insmod /lib/modules/$m.ko || echo "insmod $m failed"; done
cb=$(sed -n 's/.*%s=\([^ ]*\).*/\1/p' /proc/cmdline)
for i in 1 2 3 4 5 6 7 8 9 10; do [ -e /sys/class/net/eth0 ] && break; sleep 1; done
ip link set eth0 up
udhcpc -i eth0 -n -q -t 10 -T 2 -s /bin/udhcpc.script
ip=$(ip -4 -o addr show dev eth0 | sed -n 's/.* inet \([0-9.]*\).*/\1/p')
echo "anvil pxetest initramfs: address $ip, calling back $cb"
# busybox wget cannot verify a certificate: an https:// callback is
# encrypted, not authenticated (tests of HTTPS boot only). ca=1: the boot
# server's CA initrd put its certificate into this root file system.
ca=0; [ -s /etc/ssl/certs/anvil-boot-ca.pem ] && ca=1
for i in 1 2 3 4 5; do wget -q --no-check-certificate -O - "$cb?ip=$ip&ca=$ca" && echo %s && break; sleep 2; done
poweroff -f
`

const udhcpcScript = `#!/bin/busybox sh
case "$1" in
bound|renew)
	ifconfig "$interface" "$ip" netmask "$subnet"
	[ -n "$router" ] && ip route replace default via "${router%% *}" dev "$interface"
	;;
esac
exit 0
`

// BuildInitramfs writes a busybox initramfs with the kernel's NIC modules
// and an init that DHCPs, calls back and powers off.
func BuildInitramfs(ctx context.Context, opts InitramfsOptions) error {
	if opts.Kernel == nil || opts.Output == "" {
		return errors.New("pxetest: InitramfsOptions needs Kernel and Output")
	}
	if opts.Modules == nil {
		opts.Modules = VirtioNetModules
	}
	if opts.Busybox == "" {
		opts.Busybox = "/bin/busybox"
	}
	stage, err := os.MkdirTemp(filepath.Dir(opts.Output), ".initramfs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	for _, d := range []string{"bin", "dev", "proc", "sys", "lib/modules", "tmp"} {
		if err := os.MkdirAll(filepath.Join(stage, d), 0o755); err != nil {
			return err
		}
	}
	bb, err := os.ReadFile(opts.Busybox)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "bin", "busybox"), bb, 0o755); err != nil {
		return err
	}
	for _, m := range opts.Modules {
		src, err := findModule(opts.Kernel.ModulesDir, m)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, "lib", "modules", m+".ko"), data, 0o644); err != nil {
			return err
		}
	}
	init := fmt.Sprintf(initScript, strings.Join(opts.Modules, " "), regexp.QuoteMeta(CallbackArg), CallbackDoneMarker)
	if err := os.WriteFile(filepath.Join(stage, "init"), []byte(init), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "bin", "udhcpc.script"), []byte(udhcpcScript), 0o755); err != nil {
		return err
	}
	out, err := os.Create(opts.Output)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.CommandContext(ctx, "sh", "-c", "find . | busybox cpio -o -H newc")
	cmd.Dir = stage
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pxetest: cpio: %v: %s", err, stderr.String())
	}
	return out.Close()
}

// findModule finds <name>.ko (module names use _ and - interchangeably).
func findModule(dir, name string) (string, error) {
	var found string
	alt := strings.ReplaceAll(name, "_", "-")
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || found != "" {
			return err
		}
		if b := d.Name(); b == name+".ko" || b == alt+".ko" {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if err == nil && found == "" {
		err = fmt.Errorf("pxetest: module %s not found under %s", name, dir)
	}
	return found, err
}

func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("pxetest: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
