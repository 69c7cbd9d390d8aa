package hostimage

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/test/logs"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/qemuaccel"
)

const imageName = "debian-12-amd64.raw"

// diskSize is the VM's disk: well over the image (1.75 GiB), so growpart has room.
const diskSize = 4 << 30

// Console markers the user-data prints. The script builds each from two
// words, so the marker itself never appears in the user-data's text.
const (
	markerCloudInit = "ANVIL-HOSTIMAGE-CLOUDINIT"
	markerWeb       = "ANVIL-HOSTIMAGE-WEB"
	markerRootFS    = "ANVIL-HOSTIMAGE-ROOTFS"
	markerFail      = "ANVIL-HOSTIMAGE-FAIL"
)

// TestQEMUHostImageBoot boots a copy of bin/hostimage/debian-12-amd64.raw
// (make host-image) under QEMU twice, SeaBIOS and OVMF, with the installer's
// NoCloud seed file written into the copy's anvil-root partition (found by
// its GPT name, as the installer does) and pointing at this test's HTTP
// server. The seed's user-data prints a marker, enables the image's
// kubelet.service standalone with a static hostNetwork pod of
// anvil.local/web:1 (sandbox anvil.local/pause:1), and prints what the pod
// answers on :8080. It proves: the disk boots under BIOS and UEFI,
// cloud-init reads the HTTP seed (meta-data's hostname comes back from the
// pod), and containerd runs our images under the kubelet.
//
// Runs only with ANVIL_QEMU_TEST=1 (root, qemu-system-x86, OVMF, debugfs).
func TestQEMUHostImageBoot(t *testing.T) {
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to boot the host image in QEMU (two boots, about 10 minutes each under TCG)")
	}
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "qemu-system-x86_64", "debugfs", "cp")
	repo, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(repo, "bin", "hostimage", imageName)
	if _, err := os.Stat(img); err != nil {
		need.OrSkip(t, "%s missing: run `make host-image` (root)", img)
	}
	checkSHA256(t, img)
	parts, err := ReadGPT(img)
	if err != nil {
		t.Fatal(err)
	}
	root := checkLayout(t, parts)

	accel := qemuaccel.Choose()
	t.Log(accel)
	for _, fw := range []string{"bios", "uefi"} {
		t.Run(fw, func(t *testing.T) {
			if fw == "uefi" {
				netnstest.Require(t, fileExists(ovmfCode) && fileExists(ovmfVars), "%s and %s missing (apt-get install ovmf)", ovmfCode, ovmfVars)
			}
			bootOnce(t, img, root, fw, accel)
		})
	}
}

const (
	ovmfCode = "/usr/share/OVMF/OVMF_CODE.fd"
	ovmfVars = "/usr/share/OVMF/OVMF_VARS.fd"
)

func bootOnce(t *testing.T, img string, root Partition, fw string, accel qemuaccel.Choice) {
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk.raw")
	run(t, "cp", "--sparse=always", img, disk)
	// A real disk is bigger than the image: cloud-init's growpart and
	// resize_rootfs must move the backup GPT and grow anvil-root into the
	// rest, as they will after the installer's write.
	if err := os.Truncate(disk, diskSize); err != nil {
		t.Fatal(err)
	}

	host := "anvil-test-" + fw
	seed := newSeedServer(t, host)
	writeSeed(t, disk, root, seed.url)

	args := append(accel.Args(), "-m", "2048", "-smp", "2", "-no-reboot",
		"-display", "none", "-monitor", "none", "-serial", "stdio",
		"-drive", "file="+disk+",if=virtio,format=raw",
		"-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0")
	if fw == "uefi" {
		vars := filepath.Join(dir, "OVMF_VARS.fd")
		run(t, "cp", ovmfVars, vars)
		args = append(args, "-drive", "if=pflash,format=raw,readonly=on,file="+ovmfCode,
			"-drive", "if=pflash,format=raw,file="+vars)
	}
	var console logs.Buffer
	cmd := exec.Command("qemu-system-x86_64", args...)
	cmd.Stdout, cmd.Stderr = &console, &console
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start qemu: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // by PID: only the QEMU this test started
		<-exited
		if t.Failed() {
			_ = os.WriteFile(filepath.Join(os.TempDir(), "anvil-hostimage-"+fw+".console"), []byte(console.String()), 0o644)
		}
	})

	// Under TCG a boot to cloud-init's final stage and a running pod takes
	// minutes; the bounds only stop a hung boot.
	wait := func(marker string, within time.Duration) string {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			out := console.String()
			if i := strings.Index(out, marker); i >= 0 {
				line := out[i:]
				if j := strings.IndexAny(line, "\r\n"); j >= 0 {
					line = line[:j]
				}
				return line
			}
			if strings.Contains(out, markerFail) || time.Now().After(deadline) {
				t.Fatalf("no %q on the %s console after %v; last lines:\n%s", marker, fw, time.Since(start).Round(time.Second), lastLines(out, 60))
			}
			select {
			case err := <-exited:
				t.Fatalf("qemu exited (%v) before %q; last lines:\n%s", err, marker, lastLines(console.String(), 60))
			case <-time.After(time.Second):
			}
		}
	}
	ci := wait(markerCloudInit, 20*time.Minute)
	ciAfter := time.Since(start)
	rootfs := wait(markerRootFS, time.Minute)
	var mib int
	if _, err := fmt.Sscanf(rootfs, markerRootFS+" %d MiB", &mib); err != nil || mib < 3500 {
		t.Errorf("root filesystem after growpart: %q, want over 3500 MiB on the %d GiB disk", rootfs, diskSize>>30)
	}
	web := wait(markerWeb, 15*time.Minute)
	webAfter := time.Since(start)

	// The pod's answer: our web server, the hostname cloud-init set from the
	// seed's meta-data, its first request.
	if want := fmt.Sprintf("%s hostname=%s count=1", markerWeb, host); strings.TrimSpace(web) != want {
		t.Errorf("web answer %q, want %q", web, want)
	}
	if !strings.Contains(ci, "kubelet v1.37.2 kubeadm v1.37.2") {
		t.Errorf("cloud-init marker %q does not report kubelet and kubeadm v1.37.2", ci)
	}
	for _, p := range []string{"/seed/meta-data", "/seed/user-data"} {
		if seed.count(p) == 0 {
			t.Errorf("cloud-init never fetched %s from the seed server (got %v)", p, seed.paths())
		}
	}
	t.Logf("MEASURED %s (%s): QEMU start -> cloud-init marker %v, -> web pod answer %v", fw, accel.Accel, ciAfter.Round(time.Second), webAfter.Round(time.Second))
	t.Logf("%s: %s", fw, ci)
	t.Logf("%s: %s", fw, rootfs)
	for _, l := range strings.Split(console.String(), "\n") {
		if strings.Contains(l, "ANVIL-HOSTIMAGE-INFO") {
			t.Logf("%s: %s", fw, strings.TrimSpace(l))
		}
	}
}

// checkLayout checks the partition names and types the installer and the
// firmware rely on, and returns the root partition.
func checkLayout(t *testing.T, parts []Partition) Partition {
	t.Helper()
	want := []struct {
		name string
		typ  [16]byte
	}{{"anvil-bios", TypeBIOSBoot}, {"anvil-esp", TypeESP}, {agent.InstallRootPartLabel, TypeLinux}}
	if len(parts) != len(want) {
		t.Fatalf("GPT has %d partitions (%+v), want %d", len(parts), parts, len(want))
	}
	for i, w := range want {
		if parts[i].Name != w.name || parts[i].TypeGUID != w.typ {
			t.Errorf("partition %d is %q type %x, want %q type %x", parts[i].Number, parts[i].Name, parts[i].TypeGUID, w.name, w.typ)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return parts[2]
}

func checkSHA256(t *testing.T, img string) {
	t.Helper()
	want, err := os.ReadFile(img + ".sha256")
	if err != nil {
		t.Fatalf("%s.sha256: %v (make host-image writes it)", img, err)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.HasPrefix(string(want), got+" ") {
		t.Fatalf("%s has SHA-256 %s, its .sha256 says %q: rebuild with make host-image", img, got, strings.TrimSpace(string(want)))
	}
}

// writeSeed does what the installer does after writing the image: the
// NoCloud seed config, mode 0600, into the anvil-root partition. debugfs
// writes it into the ext4 filesystem inside the disk file (at the
// partition's offset), without a mount or a loop device.
func writeSeed(t *testing.T, disk string, root Partition, seedURL string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "seed.cfg")
	body := fmt.Sprintf("# written by the installer (here: test/hostimage)\ndatasource:\n  NoCloud:\n    seedfrom: %s\n", seedURL)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	dir, file := filepath.Split("/" + agent.InstallSeedFile)
	cmds := fmt.Sprintf("cd %s\nwrite %s %s\nsif %s mode 0100600\n", dir, cfg, file, file)
	c := exec.Command("debugfs", "-w", "-f", "-", fmt.Sprintf("%s?offset=%d", disk, root.Offset()))
	c.Stdin = strings.NewReader(cmds)
	out, err := c.CombinedOutput()
	if err != nil || strings.Contains(string(out), "debugfs: ") && strings.Contains(strings.ToLower(string(out)), "error") {
		t.Fatalf("debugfs writing the seed: %v\n%s", err, out)
	}
	// Read it back, so a silently failed write cannot pass as a boot that
	// ignored the seed.
	c = exec.Command("debugfs", "-R", "cat /"+agent.InstallSeedFile, fmt.Sprintf("%s?offset=%d", disk, root.Offset()))
	got, err := c.Output()
	if err != nil || string(got) != body {
		t.Fatalf("seed file in the image reads %q (%v), want %q", got, err, body)
	}
}

// seedServer serves the NoCloud meta-data and user-data on loopback; QEMU's
// user network reaches the host's loopback as 10.0.2.2.
type seedServer struct {
	url string
	mu  sync.Mutex
	got []string
}

func newSeedServer(t *testing.T, host string) *seedServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &seedServer{url: fmt.Sprintf("http://10.0.2.2:%d/seed/", ln.Addr().(*net.TCPAddr).Port)}
	files := map[string]string{
		"/seed/meta-data":   fmt.Sprintf("instance-id: iid-%s\nlocal-hostname: %s\n", host, host),
		"/seed/user-data":   userData,
		"/seed/vendor-data": "",
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, r.URL.Path)
		s.mu.Unlock()
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

func (s *seedServer) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.got {
		if p == path {
			n++
		}
	}
	return n
}

func (s *seedServer) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// userData runs the image's kubelet standalone (no API server, a static
// pod) through the image's kubelet.service, and reports on the serial
// console. Its loops are bounded.
const userData = `#cloud-config
write_files:
  - path: /etc/kubernetes/kubelet.yaml
    content: |
      apiVersion: kubelet.config.k8s.io/v1beta1
      kind: KubeletConfiguration
      cgroupDriver: systemd
      containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
      staticPodPath: /etc/kubernetes/manifests
      resolvConf: /run/systemd/resolve/resolv.conf
      authentication:
        anonymous: {enabled: false}
        webhook: {enabled: false}
      authorization: {mode: AlwaysAllow}
  - path: /etc/default/kubelet
    content: |
      KUBELET_ARGS="--config=/etc/kubernetes/kubelet.yaml"
  - path: /etc/kubernetes/manifests/web.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata:
        name: web
        namespace: default
      spec:
        hostNetwork: true
        containers:
          - name: web
            image: anvil.local/web:1
            imagePullPolicy: Never
            env:
              - {name: PORT, value: "8080"}
  - path: /usr/local/sbin/anvil-test-report
    permissions: "0755"
    content: |
      #!/bin/sh
      con=/dev/ttyS0
      m() { printf 'ANVIL-HOSTIMAGE-%s\n' "$*" >$con; }
      dump() {
        journalctl -u kubelet -u containerd -u anvil-import-images --no-pager | tail -80 >$con
        ctr -n k8s.io images ls >$con 2>&1
        ctr -n k8s.io containers ls >$con 2>&1
        m "FAIL $*"
        exit 1
      }
      m "INFO $(uname -r) $(containerd --version) $(runc --version | head -1)"
      m "CLOUDINIT $(cloud-init --version 2>&1) kubelet $(/usr/bin/kubelet --version | cut -d' ' -f2) kubeadm $(kubeadm version -o short) on $(hostname) up $(cut -d' ' -f1 /proc/uptime)s"
      m "ROOTFS $(df -m --output=size / | tail -1 | tr -d ' ') MiB"
      systemctl enable kubelet.service && systemctl start --no-block kubelet.service
      i=0
      while [ $i -lt 150 ] && ! systemctl is-active -q anvil-import-images.service; do i=$((i+1)); sleep 2; done
      systemctl is-active -q anvil-import-images.service || dump "anvil-import-images is $(systemctl is-active anvil-import-images.service)"
      m "INFO anvil-import-images active after $((i*2))s: $(ctr -n k8s.io images ls -q | grep anvil.local | tr '\n' ' ')"
      i=0
      while [ $i -lt 300 ]; do
        a=$(python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:8080/", timeout=5).read().decode().strip())' 2>/dev/null) && break
        i=$((i+1)); sleep 2
      done
      [ -n "$a" ] || dump "the web pod did not answer on :8080"
      t="userspace=$(($(systemctl show -P UserspaceTimestampMonotonic) / 1000000))s"
      for u in cloud-init-local systemd-networkd-wait-online cloud-init cloud-config containerd anvil-import-images kubelet; do
        t="$t $u=$(($(systemctl show -P ActiveEnterTimestampMonotonic $u.service) / 1000000))s"
      done
      m "INFO units active at (uptime): $t"
      m "INFO cgroup driver: $(journalctl -u kubelet --no-pager | grep -o 'CRI implementation should be updated to support RuntimeConfig\|Using cgroup driver setting received from the CRI runtime' | head -1)"
      m "WEB $a" # last: the test reads the lines above once it sees this one
runcmd:
  - [/usr/local/sbin/anvil-test-report]
`

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
