package image

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/pxetest"
)

// needBuildInputs skips (or fails under CI=true) without what Build needs.
func needBuildInputs(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"fake-cri", "ignition", "kubelet"} {
		if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
			need.OrSkip(t, "bin/%s missing: run `make tools` (ignition needs gcc and libblkid-dev)", b)
		}
	}
	for _, c := range []string{"busybox", "apt-get", "dpkg-deb", "ldd", "go"} {
		if _, err := exec.LookPath(c); err != nil {
			need.OrSkip(t, "%s not found (busybox-static, apt, libc-bin, Go)", c)
		}
	}
	if os.Geteuid() != 0 {
		need.OrSkip(t, "building the lab image needs root (file ownership in the initramfs)")
	}
	return root
}

// buildImage builds (or reuses) the image into a cache that outlives the
// test (bin/cache/lab-image-test): the image is ~40 MB and takes seconds,
// so tests in this package share it.
func buildImage(t *testing.T) *Image {
	t.Helper()
	needBuildInputs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	img, err := Build(ctx, Options{
		CacheDir: need.CacheDir(t, "lab-image-test"), KernelCacheDir: need.CacheDir(t, "kernel"),
		Logger: testr.New(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s (cached %v) in %v", img.Key, img.Cached, time.Since(start).Round(time.Millisecond))
	return img
}

// listInitramfs returns name -> header mode of every cpio entry, read with
// busybox cpio (not our writer's reader, there is none).
func listInitramfs(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("busybox", "cpio", "-t", "-v")
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("busybox cpio -t: %v\n%s", err, out)
	}
	entries := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		name := f[len(f)-1]
		if i := slices.Index(f, "->"); i > 0 {
			name = f[i-1]
		}
		entries[name] = f[0]
	}
	return entries
}

// TestBuildImage checks the archive with busybox cpio, the module order and
// the content-keyed cache. It runs with the VM tests (ANVIL_QEMU_TEST=1):
// the first run downloads a Debian kernel.
func TestBuildImage(t *testing.T) {
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 (the first run downloads a Debian kernel with apt-get)")
	}
	img := buildImage(t)
	entries := listInitramfs(t, img.Initrd)
	for name, mode := range map[string]string{
		"init":                               "-rwxr-xr-x",
		"sbin/lab-init":                      "-rwxr-xr-x",
		"dev/console":                        "crw-------",
		"bin/busybox":                        "-rwxr-xr-x",
		"bin/udhcpc":                         "lrwxrwxrwx",
		"bin/switch_root":                    "lrwxrwxrwx",
		"usr/bin/anvil-agent":                "-rwxr-xr-x",
		"usr/bin/fake-cri":                   "-rwxr-xr-x",
		"usr/bin/ignition":                   "-rwxr-xr-x",
		"usr/libexec/ignition/ignition":      "-rwxr-xr-x",
		"usr/libexec/ignition/libblkid.so.1": "-rwxr-xr-x",
		"lib64/ld-linux-x86-64.so.2":         "-rwxr-xr-x",
		"lib/modules/virtio_net.ko":          "-rw-r--r--",
		"lib/modules/virtio_blk.ko":          "-rw-r--r--",
		"lib/modules/e1000.ko":               "-rw-r--r--",
		"tmp":                                "drwxrwxrwt",
	} {
		got, ok := entries[name]
		switch {
		case !ok:
			t.Errorf("initramfs lacks %s", name)
		case got != mode:
			t.Errorf("%s: mode %s, want %s", name, got, mode)
		}
	}
	// Dependencies load first.
	pos := func(m string) int { return slices.Index(img.Modules, m) }
	for _, dep := range [][2]string{{"virtio", "virtio_net"}, {"virtio_ring", "virtio_blk"}, {"net_failover", "virtio_net"}, {"failover", "net_failover"}} {
		if pos(dep[0]) < 0 || pos(dep[1]) < 0 || pos(dep[0]) > pos(dep[1]) {
			t.Errorf("module order %v: %s must load before %s", img.Modules, dep[0], dep[1])
		}
	}
	for _, p := range []struct{ path, sum string }{{img.Kernel, img.KernelSHA256}, {img.Initrd, img.InitrdSHA256}} {
		if got, err := FileSHA256(p.path); err != nil || got != p.sum {
			t.Errorf("%s: sha256 %s (%v), Image says %s", p.path, got, err, p.sum)
		}
	}

	// Same inputs: the same image, from the cache.
	again := buildImage(t)
	if !again.Cached || again.Key != img.Key || again.InitrdSHA256 != img.InitrdSHA256 {
		t.Errorf("second build: cached=%v key %s sha %s, want the cached %s %s", again.Cached, again.Key, again.InitrdSHA256, img.Key, img.InitrdSHA256)
	}
}

// TestScriptsParse runs busybox sh -n over the init scripts: a syntax
// error would otherwise show only as a VM that never gets anywhere.
func TestScriptsParse(t *testing.T) {
	if _, err := exec.LookPath("busybox"); err != nil {
		need.OrSkip(t, "busybox not found (busybox-static)")
	}
	for name, script := range map[string]string{
		"init": stage1, "lab-init": stage2Script(Modules()), "udhcpc.script": udhcpcScript, "dhclient6.script": dhclient6Script,
	} {
		cmd := exec.Command("busybox", "sh", "-n")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
	// The markers tests and people look for are what the script prints.
	for _, m := range []string{MarkerNetworkUp, MarkerStaticNetwork, MarkerDHCP, MarkerDHCP6, MarkerConfigApplied, MarkerStateSaved, MarkerStateRestored, MarkerNothingToDo,
		MarkerAgentStarted, MarkerKubeletHealthy, MarkerKubeletJoined, MarkerInstallStarted, MarkerInstallWritten} {
		text := strings.TrimPrefix(m, MarkerPrefix)
		if !strings.Contains(stage2, `mark "`+text) {
			t.Errorf("lab-init never prints %q", m)
		}
	}
	for _, m := range []string{MarkerInstallFailed} {
		if text := strings.TrimPrefix(m, FailPrefix); !strings.Contains(stage2, `fail "`+text) {
			t.Errorf("lab-init never prints %q", m)
		}
	}
}

// TestIPArg: the init's reading of a kernel ip= argument (nfsroot.rst's
// fields, as boot/media.KernelIPArg writes them) and of BOOTIF.
func TestIPArg(t *testing.T) {
	if _, err := exec.LookPath("busybox"); err != nil {
		need.OrSkip(t, "busybox not found (busybox-static)")
	}
	for _, tc := range []struct{ name, ip, bootif, want string }{
		{"none", "", "", "static= ip= gw= mask= host= dev= dns= mac="},
		{"dhcp", "dhcp", "", "static= ip= gw= mask= host= dev= dns= mac="},
		{"kernel autoconf on", "10.0.0.2::10.0.0.1:255.255.255.0:h:eth0:dhcp", "", "static= ip= gw= mask= host= dev= dns= mac="},
		{"address only", "10.0.0.21:::255.255.255.0:::off", "", "static=1 ip=10.0.0.21 gw= mask=255.255.255.0 host= dev= dns= mac="},
		{"everything", "10.1.2.3::10.1.0.1:255.255.0.0:node-1:eth1:off:10.1.0.53:10.1.0.54", "",
			"static=1 ip=10.1.2.3 gw=10.1.0.1 mask=255.255.0.0 host=node-1 dev=eth1 dns=10.1.0.53 10.1.0.54 mac="},
		{"none autoconf, one DNS", "10.0.0.2::10.0.0.1:255.0.0.0:::none:10.0.0.53", "",
			"static=1 ip=10.0.0.2 gw=10.0.0.1 mask=255.0.0.0 host= dev= dns=10.0.0.53 mac="},
		{"BOOTIF", "10.0.0.2:::255.0.0.0:::off", "01-52-54-00-AB-cd-01",
			"static=1 ip=10.0.0.2 gw= mask=255.0.0.0 host= dev= dns= mac=52:54:00:ab:cd:01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := "set -f\nipcfg='" + tc.ip + "'\nbootif='" + tc.bootif + "'\n" + ipArgShell +
				`echo "static=$static ip=$sip gw=$sgw mask=$smask host=$shost dev=$sdev dns=$sdns mac=$bootmac"`
			out, err := exec.Command("busybox", "sh", "-c", script).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestModuleOrderExt4 resolves ext4's chain from the lab kernel's own
// modules: hard dependencies (jbd2, mbcache, crc16) and the crc32c
// implementation its soft dependency "crypto-crc32c" names, the generic
// one (crc32c-intel needs SSE4.2, which QEMU's default CPU lacks).
func TestModuleOrderExt4(t *testing.T) {
	for _, c := range []string{"apt-get", "dpkg-deb"} {
		if _, err := exec.LookPath(c); err != nil {
			need.OrSkip(t, "%s not found: the lab kernel comes from Debian's apt", c)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The kernel the lab boots (downloaded once into bin/cache/kernel,
	// shared with the QEMU tests).
	k, err := pxetest.PrepareKernel(ctx, pxetest.KernelOptions{CacheDir: need.CacheDir(t, "kernel")})
	if err != nil {
		t.Fatal(err)
	}
	mods, err := moduleOrder(k.ModulesDir, Modules())
	if err != nil {
		t.Fatal(err)
	}
	pos := func(m string) int { return slices.Index(mods, m) }
	for _, dep := range [][2]string{{"jbd2", "ext4"}, {"mbcache", "ext4"}, {"crc16", "ext4"}, {"crc32c_generic", "jbd2"}, {"virtio_ring", "virtio_blk"}} {
		if pos(dep[0]) < 0 || pos(dep[1]) < 0 || pos(dep[0]) > pos(dep[1]) {
			t.Errorf("module order %v: %s must load before %s", mods, dep[0], dep[1])
		}
	}
	if pos("crc32c_intel") >= 0 {
		t.Errorf("module order %v loads crc32c_intel, not only the generic crc32c", mods)
	}
}
