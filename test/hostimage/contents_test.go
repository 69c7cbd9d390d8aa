package hostimage

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/test/need"
)

// TestHostImageContents reads the built image without booting it: the GPT
// names the installer relies on, and in the root filesystem (debugfs, no
// mount) the binaries, the units (kubelet present but not enabled, the image
// import enabled), containerd's config and no swap. It needs only the image
// (make host-image) and debugfs, and skips without them.
func TestHostImageContents(t *testing.T) {
	repo, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(repo, "bin", "hostimage", imageName)
	if _, err := os.Stat(img); err != nil {
		t.Skipf("skipping: %s missing: run `make host-image` (root)", img)
	}
	if _, err := exec.LookPath("debugfs"); err != nil {
		t.Skip("skipping: no debugfs (apt-get install e2fsprogs)")
	}
	parts, err := ReadGPT(img)
	if err != nil {
		t.Fatal(err)
	}
	root := checkLayout(t, parts)
	fs := fmt.Sprintf("%s?offset=%d", img, root.Offset())
	debugfs := func(req string) string {
		out, err := exec.Command("debugfs", "-R", req, fs).Output()
		if err != nil {
			t.Fatalf("debugfs -R %q: %v", req, err)
		}
		return string(out)
	}
	// stat prints the inode on stdout only when the file exists (the
	// error goes to stderr).
	exists := func(path string) bool { return strings.Contains(debugfs("stat "+path), "Inode:") }
	for _, p := range []string{"/usr/bin/kubelet", "/usr/bin/kubeadm", "/usr/lib/anvil/kubelet-start", "/usr/local/bin/anvil-agent", "/usr/lib/anvil/images/pause.oci.tar",
		"/usr/lib/anvil/images/web.oci.tar", "/usr/lib/anvil/import-images", "/etc/systemd/system/kubelet.service", "/vmlinuz", "/initrd.img", "/boot/grub/grub.cfg"} {
		if !exists(p) {
			t.Errorf("%s missing from the root filesystem", p)
		}
	}
	if exists("/etc/systemd/system/multi-user.target.wants/kubelet.service") {
		t.Error("kubelet.service is enabled; the host's user-data enables it once its config is written")
	}
	for _, u := range []string{"containerd.service.wants/anvil-import-images.service", "multi-user.target.wants/systemd-networkd.service",
		"multi-user.target.wants/containerd.service", "network-online.target.wants/systemd-networkd-wait-online.service"} {
		if !exists("/etc/systemd/system/" + u) {
			t.Errorf("%s is not enabled (no /etc/systemd/system/%s)", filepath.Base(u), u)
		}
	}
	if exists("/" + agent.InstallSeedFile) {
		t.Errorf("the image already has %s: only the installer writes it", agent.InstallSeedFile)
	}
	cfg := debugfs("cat /etc/containerd/config.toml")
	for _, want := range []string{`SystemdCgroup = true`, `sandbox_image = "anvil.local/pause:1"`, `bin_dir = "/usr/lib/cni"`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("containerd config lacks %s", want)
		}
	}
	if fstab := debugfs("cat /etc/fstab"); strings.Contains(fstab, "swap") && !strings.Contains(fstab, "No swap") {
		t.Errorf("fstab has swap:\n%s", fstab)
	}
	if grub := debugfs("cat /boot/grub/grub.cfg"); !strings.Contains(grub, "console=ttyS0") || strings.Contains(grub, "quiet") {
		t.Errorf("grub.cfg's command line needs console=ttyS0 and no quiet:\n%s", grub)
	}

	// The manifest names what went in.
	var m struct {
		SHA256   string            `json:"sha256"`
		Packages map[string]string `json:"packages"`
		Kubelet  struct{ Version string }
		Kubeadm  struct{ Version string }
		// AnvilImage: the controller image's archive digest, null when
		// built without ANVIL_IMAGE (make host-image always sets it).
		AnvilImage *string `json:"anvilImage"`
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(img), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	sum, _ := os.ReadFile(img + ".sha256")
	if m.SHA256 == "" || !strings.HasPrefix(string(sum), m.SHA256+" ") {
		t.Errorf("manifest sha256 %q, .sha256 file %q", m.SHA256, sum)
	}
	for _, p := range []string{"containerd", "runc", "cloud-init", "linux-image-amd64"} {
		if m.Packages[p] == "" {
			t.Errorf("manifest lacks the version of %s", p)
		}
	}
	if m.Kubelet.Version != "v1.37.2" || m.Kubeadm.Version != "v1.37.2" {
		t.Errorf("manifest kubelet %q and kubeadm %q, want v1.37.2", m.Kubelet.Version, m.Kubeadm.Version)
	}
	if m.AnvilImage == nil {
		t.Error("manifest.json: anvilImage is null: make host-image builds the image with the anvil controller image (ANVIL_IMAGE)")
	} else if !exists("/usr/lib/anvil/images/anvil.oci.tar") {
		t.Errorf("manifest.json names anvilImage %s but /usr/lib/anvil/images/anvil.oci.tar is missing", *m.AnvilImage)
	}
	t.Logf("image: %s; packages %v", m.SHA256, m.Packages)
}
