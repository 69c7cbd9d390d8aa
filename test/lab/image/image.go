package image

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/test/pxetest"
)

// Options configure Build.
type Options struct {
	// CacheDir keeps built images (by content key) and the agent build.
	// Required.
	CacheDir string
	// KernelCacheDir keeps the Debian kernel download (default CacheDir;
	// the tests share bin/cache/kernel).
	KernelCacheDir string
	// KernelPackage overrides the Debian kernel package
	// (pxetest.KernelOptions.Package).
	KernelPackage string
	// RepoRoot is the anvil.dev/anvil module (default: found above the
	// working directory). The agent is built from it, BinDir defaults into it.
	RepoRoot string
	// BinDir holds fake-cri and ignition built by hack/tools (default
	// <RepoRoot>/bin).
	BinDir string
	// Agent is a static anvil-agent binary; empty builds one from
	// <RepoRoot>/cmd/anvil-agent with CGO_ENABLED=0.
	Agent string
	// FakeCRI and Ignition override <BinDir>/fake-cri and <BinDir>/ignition.
	FakeCRI, Ignition string
	// Busybox is a static busybox (default /bin/busybox, busybox-static).
	Busybox string
	// DHClient is ISC dhclient (default /sbin/dhclient, isc-dhcp-client):
	// the DHCPv6 client of an ip=dhcp6 boot (Debian's busybox has no
	// udhcpc6).
	DHClient string
	Logger   logr.Logger
}

// Image is a built lab host image.
type Image struct {
	// Kernel (bzImage) and Initrd (gzip'd newc cpio) paths under CacheDir.
	Kernel, Initrd string
	// KernelSHA256 and InitrdSHA256 are hex digests, as a MachineClass wants.
	KernelSHA256 string `json:"kernelSHA256"`
	InitrdSHA256 string `json:"initrdSHA256"`
	// KernelRelease, e.g. 6.1.0-57-amd64.
	KernelRelease string `json:"kernelRelease"`
	// Modules in load order.
	Modules []string `json:"modules"`
	// Key is the content key: equal inputs give the same image.
	Key string `json:"key"`
	// Cached says Build reused an earlier build.
	Cached bool `json:"-"`
}

// NICModules are the network drivers the image loads: virtio-net and e1000
// (test/pxetest's lists); virtio_blk adds the state disk.
func NICModules() []string {
	return append(append(append([]string{}, pxetest.VirtioNetModules...), pxetest.E1000Modules...), "virtio_blk")
}

// FSModules are the filesystems the installer mounts: ext4, the root
// filesystem of an installed image (its dependencies come from the
// modules themselves).
func FSModules() []string { return []string{"ext4"} }

// Modules are what the image loads: NICModules and FSModules.
func Modules() []string { return append(NICModules(), FSModules()...) }

// formatVersion changes when the image layout changes in a way the inputs
// do not show (the archive writer, the scripts are hashed as contents).
const formatVersion = "anvil-lab-image/2"

// Build writes the kernel and initramfs of the lab host image into
// CacheDir/images/<key>/, or returns the earlier build of the same inputs.
// It needs apt-get and dpkg-deb (the first time, for the kernel), go (the
// agent), ldd (Ignition's libraries) and busybox-static.
func Build(ctx context.Context, o Options) (*Image, error) {
	start := time.Now()
	if err := o.defaults(); err != nil {
		return nil, err
	}
	log := o.Logger
	k, err := pxetest.PrepareKernel(ctx, pxetest.KernelOptions{CacheDir: o.KernelCacheDir, Package: o.KernelPackage})
	if err != nil {
		return nil, fmt.Errorf("lab image: kernel: %w", err)
	}
	if o.Agent == "" {
		if o.Agent, err = buildAgent(ctx, o); err != nil {
			return nil, err
		}
	}
	modules, err := moduleOrder(k.ModulesDir, Modules())
	if err != nil {
		return nil, err
	}
	t, err := assemble(ctx, o, k, modules)
	if err != nil {
		return nil, err
	}
	key, err := contentKey(t, k.Vmlinuz)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(o.CacheDir, "images", key)
	img := &Image{Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initramfs.cpio.gz")}
	if b, err := os.ReadFile(filepath.Join(dir, "image.json")); err == nil && json.Unmarshal(b, img) == nil && img.Key == key {
		img.Cached = true
		now := time.Now()
		_ = os.Chtimes(dir, now, now) // recently used: not pruned
		log.Info("lab image reused", "key", key, "dir", dir)
		return img, nil
	}
	tmp, err := os.MkdirTemp(filepath.Join(o.CacheDir, "images"), ".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := copyFile(k.Vmlinuz, filepath.Join(tmp, "vmlinuz")); err != nil {
		return nil, err
	}
	if err := writeInitramfs(filepath.Join(tmp, "initramfs.cpio.gz"), t); err != nil {
		return nil, err
	}
	img.KernelRelease, img.Modules, img.Key = k.Release, modules, key
	if img.KernelSHA256, err = FileSHA256(filepath.Join(tmp, "vmlinuz")); err != nil {
		return nil, err
	}
	if img.InitrdSHA256, err = FileSHA256(filepath.Join(tmp, "initramfs.cpio.gz")); err != nil {
		return nil, err
	}
	manifest, _ := json.MarshalIndent(img, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "image.json"), manifest, 0o644); err != nil {
		return nil, err
	}
	os.RemoveAll(dir) // a partial earlier build
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	pruneImages(filepath.Join(o.CacheDir, "images"), keepImages, log)
	fi, _ := os.Stat(img.Initrd)
	log.Info("lab image built", "key", key, "kernel", k.Release, "initrdBytes", fi.Size(), "took", time.Since(start).Round(time.Millisecond).String())
	return img, nil
}

func (o *Options) defaults() error {
	if o.CacheDir == "" {
		return errors.New("lab image: Options.CacheDir is required")
	}
	if err := os.MkdirAll(filepath.Join(o.CacheDir, "images"), 0o755); err != nil {
		return err
	}
	if o.KernelCacheDir == "" {
		o.KernelCacheDir = o.CacheDir
	}
	if o.RepoRoot == "" && (o.Agent == "" || o.BinDir == "") {
		root, err := RepoRoot()
		if err != nil {
			return err
		}
		o.RepoRoot = root
	}
	if o.BinDir == "" {
		o.BinDir = filepath.Join(o.RepoRoot, "bin")
	}
	if o.FakeCRI == "" {
		o.FakeCRI = filepath.Join(o.BinDir, "fake-cri")
	}
	if o.Ignition == "" {
		o.Ignition = filepath.Join(o.BinDir, "ignition")
	}
	if o.Busybox == "" {
		o.Busybox = "/bin/busybox"
	}
	for what, p := range map[string]string{"fake-cri": o.FakeCRI, "ignition": o.Ignition} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("lab image: %s not found at %s: run `make tools` (ignition also needs gcc and libblkid-dev)", what, p)
		}
	}
	if _, err := os.Stat(o.Busybox); err != nil {
		return fmt.Errorf("lab image: busybox not found at %s: install busybox-static", o.Busybox)
	}
	if o.DHClient == "" {
		o.DHClient = "/sbin/dhclient"
	}
	if _, err := os.Stat(o.DHClient); err != nil {
		return fmt.Errorf("lab image: dhclient not found at %s: install isc-dhcp-client", o.DHClient)
	}
	return nil
}

// keepImages is how many images (the newest) a cache keeps.
const keepImages = 3

// pruneImages removes all but the newest keep images (about 35 MB each).
func pruneImages(dir string, keep int, log logr.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type built struct {
		name string
		mod  time.Time
	}
	var all []built
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			all = append(all, built{e.Name(), fi.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	for i := keep; i < len(all); i++ {
		if err := os.RemoveAll(filepath.Join(dir, all[i].name)); err == nil {
			log.V(1).Info("pruned an old lab image", "key", all[i].name)
		}
	}
}

// RepoRoot finds the anvil.dev/anvil module root above the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module anvil.dev/anvil\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("lab image: no anvil.dev/anvil go.mod above the working directory; set Options.RepoRoot")
		}
		dir = parent
	}
}

func buildAgent(ctx context.Context, o Options) (string, error) {
	out := filepath.Join(o.CacheDir, "build", "anvil-agent")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=lab", "-o", out, "./cmd/anvil-agent")
	cmd.Dir = o.RepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("lab image: building anvil-agent: %v\n%s", err, b)
	}
	return out, nil
}

// assemble lays out the initramfs.
func assemble(ctx context.Context, o Options, k *pxetest.Kernel, modules []string) (tree, error) {
	t := tree{}
	for _, d := range []string{"dev", "proc", "sys", "run", "tmp", "root", "etc", "var/log", "var/lib", "usr/bin", "sbin", "opt"} {
		t.dir(d)
	}
	t["tmp"] = entry{mode: fs.ModeDir | fs.ModeSticky | 0o777}
	t["root"] = entry{mode: fs.ModeDir | 0o700}
	t.chardev("dev/console", 0o600, 5, 1)
	t.chardev("dev/null", 0o666, 1, 3)
	t.symlink("var/run", "../run")
	t.file("init", 0o755, []byte(stage1))
	t.file("sbin/lab-init", 0o755, []byte(stage2Script(modules)))
	t.file("etc/udhcpc.script", 0o755, []byte(udhcpcScript))
	t.file("etc/dhclient6.script", 0o755, []byte(dhclient6Script))
	t.file("etc/dhclient6.conf", 0o644, []byte(dhclient6Conf))
	t.file("etc/hosts", 0o644, []byte("127.0.0.1 localhost\n::1 localhost\n"))
	t.file("etc/resolv.conf", 0o644, nil)
	t.file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n"))
	t.file("etc/group", 0o644, []byte("root:x:0:\n"))
	t.file("etc/os-release", 0o644, []byte("NAME=\"Anvil lab\"\nID=anvil-lab\nPRETTY_NAME=\"Anvil lab host image\"\n"))

	t.copyOf("bin/busybox", 0o755, o.Busybox)
	applets, err := exec.CommandContext(ctx, o.Busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("lab image: %s --list: %w", o.Busybox, err)
	}
	for _, a := range strings.Fields(string(applets)) {
		if a != "busybox" && !strings.Contains(a, "/") {
			t.symlink("bin/"+a, "busybox")
		}
	}
	t.copyOf("usr/bin/anvil-agent", 0o755, o.Agent)
	t.copyOf("usr/bin/fake-cri", 0o755, o.FakeCRI)

	// Ignition (cgo, libblkid) and dhclient are linked dynamically.
	for name, bin := range map[string]string{"ignition": o.Ignition, "dhclient": o.DHClient} {
		if err := t.dynamic(ctx, name, bin); err != nil {
			return nil, err
		}
	}

	for _, m := range modules {
		p, err := modulePath(k.ModulesDir, m)
		if err != nil {
			return nil, err
		}
		t.copyOf("lib/modules/"+m+".ko", 0o644, p)
	}
	return t, nil
}

// dynamic adds a dynamically linked bin as usr/bin/<name>: the binary and
// the libraries ldd names go to usr/libexec/<name>/ (the loader to its
// absolute path), and usr/bin/<name> runs it with LD_LIBRARY_PATH set.
func (t tree) dynamic(ctx context.Context, name, bin string) error {
	dir := "usr/libexec/" + name
	t.copyOf(dir+"/"+name, 0o755, bin)
	libs, err := sharedLibs(ctx, bin)
	if err != nil {
		return err
	}
	for _, l := range libs {
		if l.loader {
			t.copyOf(l.path, 0o755, l.path)
			continue
		}
		t.copyOf(dir+"/"+filepath.Base(l.path), 0o755, l.path)
	}
	t.file("usr/bin/"+name, 0o755, []byte("#!/bin/sh\nLD_LIBRARY_PATH=/"+dir+" exec /"+dir+"/"+name+" \"$@\"\n"))
	return nil
}

type sharedLib struct {
	path   string
	loader bool // the ELF interpreter: must stay at its absolute path
}

// sharedLibs parses `ldd bin`.
func sharedLibs(ctx context.Context, bin string) ([]sharedLib, error) {
	out, err := exec.CommandContext(ctx, "ldd", bin).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") {
			return nil, nil
		}
		return nil, fmt.Errorf("lab image: ldd %s: %v\n%s", bin, err, out)
	}
	var libs []sharedLib
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			libs = append(libs, sharedLib{path: f[2]})
		case len(f) >= 3 && f[1] == "=>":
			return nil, fmt.Errorf("lab image: %s needs %s, which ldd cannot find", bin, f[0])
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			libs = append(libs, sharedLib{path: f[0], loader: true})
		}
	}
	return libs, nil
}

// contentKey hashes every entry (names, modes, contents) and the kernel.
func contentKey(t tree, vmlinuz string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", formatVersion)
	ksum, err := FileSHA256(vmlinuz)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "kernel %s\n", ksum)
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := t[n]
		sum := sha256.Sum256(e.data)
		digest := hex.EncodeToString(sum[:])
		if e.source != "" {
			if digest, err = FileSHA256(e.source); err != nil {
				return "", err
			}
		}
		fmt.Fprintf(h, "%q %v %d:%d %q %s\n", n, e.mode, e.major, e.minor, e.target, digest)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func writeInitramfs(path string, t tree) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	err = writeNewc(zw, t, func(p string) (io.ReadCloser, int64, error) {
		r, err := os.Open(p)
		if err != nil {
			return nil, 0, err
		}
		fi, err := r.Stat()
		if err != nil {
			r.Close()
			return nil, 0, err
		}
		return r, fi.Size(), nil
	})
	if err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
