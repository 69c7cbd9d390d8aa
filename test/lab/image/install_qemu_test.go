package image

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/onhost/install"
	"anvil.dev/anvil/test/disktest"
	"anvil.dev/anvil/test/netnstest"
)

// TestQEMUInstall boots the lab image with anvil.install=<plan URL> (as
// Anvil's provisioning boot of a MachineClass with spec.image does) and a
// blank virtio disk, against a plan server in the lab network that speaks
// the install protocol and serves a GPT+ext4 image built here (sgdisk,
// mkfs.ext4). The init runs `anvil-agent install`, which writes the image,
// seeds it and reports; the VM then reboots (QEMU, run with -no-reboot,
// exits). From the host side: the disk holds the image outside its root
// filesystem byte for byte, the root filesystem (read with debugfs) holds
// the image's own files and the seed, and the console shows no secret.
//
// Runs only with ANVIL_QEMU_TEST=1 (root, qemu-system-x86, gdisk, e2fsprogs).
func TestQEMUInstall(t *testing.T) {
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to boot a QEMU VM")
	}
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "qemu-system-x86_64", "ip")
	disktest.Tools(t)
	img := buildImage(t)
	l := newLabNet(t)

	osImage := disktest.Build(t, t.TempDir(), 24<<20, "")
	raw, err := os.ReadFile(osImage.Path)
	must(t, err)
	imageSHA, err := FileSHA256(osImage.Path)
	must(t, err)
	const diskSize = 64 << 20
	disk := filepath.Join(l.dir, "install.disk")
	must(t, os.WriteFile(disk, nil, 0o600))
	must(t, os.Truncate(disk, diskSize))

	h := &labHost{name: "vm-install", mac: net.HardwareAddr{0x52, 0x54, 0x00, 0x1a, 0xb1, 0x01}, ip: l.subnet.Addr().Next().Next().Next()}
	planCred, seedSecret := randomID(16), randomID(16)
	base := "/config/" + strings.ReplaceAll(h.mac.String(), ":", "-") + "/install"
	planURL := l.url(base) + "?cred=" + planCred
	plan := agent.InstallPlan{
		Device:  "vda",
		Image:   agent.InstallImage{URL: l.url("/images/host.img"), SHA256: imageSHA},
		SeedURL: l.url("/nocloud/" + seedSecret + "/"),
	}
	l.mu.Lock()
	l.files["/images/host.img"] = osImage.Path
	l.mu.Unlock()

	var mu sync.Mutex
	var requests []agent.InstallRequest
	var results []agent.InstallResult
	reported := make(chan struct{}, 1)
	decode := func(w http.ResponseWriter, r *http.Request, v any) bool {
		if r.URL.Query().Get("cred") != planCred {
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(agent.ErrorResponse{Error: "wrong credential"})
			return false
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, agent.MaxBodyBytes)).Decode(v); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(agent.ErrorResponse{Error: "bad body"})
			return false
		}
		return true
	}
	l.mux.HandleFunc("POST "+base, func(w http.ResponseWriter, r *http.Request) {
		var req agent.InstallRequest
		if !decode(w, r, &req) {
			return
		}
		mu.Lock()
		requests = append(requests, req)
		mu.Unlock()
		t.Logf("http: install plan for boot %s, disks %+v", req.BootID, req.Disks)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(plan)
	})
	l.mux.HandleFunc("POST "+base+agent.InstallResultSuffix, func(w http.ResponseWriter, r *http.Request) {
		var res agent.InstallResult
		if !decode(w, r, &res) {
			return
		}
		if err := res.Validate(); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(agent.ErrorResponse{Error: err.Error()})
			return
		}
		mu.Lock()
		results = append(results, res)
		mu.Unlock()
		t.Logf("http: install result %+v", res)
		w.WriteHeader(http.StatusNoContent)
		select {
		case reported <- struct{}{}:
		default:
		}
	})
	l.startDHCP([]*labHost{h})

	args := append(KernelArgs(), agent.InstallArg+"="+planURL)
	v := l.bootVM(t, vmOptions{name: "install", img: img, mac: h.mac, disk: disk, args: args, memoryMB: 512})
	select {
	case <-reported:
		mu.Lock()
		res := results[len(results)-1]
		mu.Unlock()
		if res.Outcome != agent.InstallSucceeded {
			t.Fatalf("the installer reported %s %s: %s", res.Outcome, res.Reason, res.Message)
		}
	case <-v.exited:
		t.Fatal("the VM exited before it reported an install result")
	case <-time.After(8 * time.Minute):
		t.Fatal("no install result within 8 minutes")
	}
	// The init reboots after the result; QEMU (-no-reboot) exits then.
	select {
	case <-v.exited:
	case <-time.After(2 * time.Minute):
		t.Fatal("the VM did not reboot after the install")
	}
	installedAfter := time.Since(v.start)
	checkConsole(t, v, []string{MarkerNetworkUp, MarkerInstallStarted, MarkerInstallWritten})
	serial := v.serialLog()
	for what, secret := range map[string]string{"plan credential": planCred, "seed URL credential": seedSecret} {
		if strings.Contains(serial, secret) {
			t.Errorf("the serial console shows the %s", what)
		}
	}
	if strings.Contains(serial, "agent config saved to the state disk") {
		t.Error("the install boot saved lab state to the disk it installs")
	}

	mu.Lock()
	if len(requests) != 1 || requests[0].BootID == "" || len(requests[0].Disks) != 1 || requests[0].Disks[0].Name != "vda" || requests[0].Disks[0].SizeBytes != diskSize {
		t.Errorf("install requests %+v, want one with the boot ID and the 64 MiB vda", requests)
	}
	if len(results) != 1 || results[0].Outcome != agent.InstallSucceeded || results[0].Device != "vda" || results[0].SHA256 != imageSHA ||
		results[0].BytesWritten != int64(len(raw)) || len(requests) == 1 && results[0].BootID != requests[0].BootID {
		t.Errorf("install results %+v", results)
	}
	mu.Unlock()

	got, err := os.ReadFile(disk)
	must(t, err)
	rootEnd := osImage.RootOffset + osImage.RootSize
	if !bytes.Equal(got[:osImage.RootOffset], raw[:osImage.RootOffset]) {
		t.Error("the disk does not start with the image (GPT, anvil-bios, anvil-esp)")
	}
	if !bytes.Equal(got[rootEnd:len(raw)], raw[rootEnd:]) {
		t.Error("the image's backup GPT is not on the disk")
	}
	if !allZero(got[len(raw):]) {
		t.Error("the disk changed past the image")
	}
	if marker, ok := disktest.ReadFile(t, disk, osImage.RootOffset, "etc/anvil-image-id"); !ok || string(marker) != osImage.MarkerContent {
		t.Errorf("the root filesystem on the disk is not the image's: marker %q", marker)
	}
	seed, ok := disktest.ReadFile(t, disk, osImage.RootOffset, agent.InstallSeedFile)
	switch {
	case !ok:
		t.Errorf("no %s in the installed root filesystem", agent.InstallSeedFile)
	case !bytes.Equal(seed, install.SeedConfig(plan.SeedURL)):
		t.Errorf("seed file:\n%s\nwant:\n%s", seed, install.SeedConfig(plan.SeedURL))
	default:
		if m := disktest.Mode(t, disk, osImage.RootOffset, agent.InstallSeedFile); m != 0o600 {
			t.Errorf("seed file mode %o, want 600", m)
		}
	}
	t.Logf("MEASURED: install boot: VM start -> rebooted into the disk %v (image %d MiB)", installedAfter.Round(100*time.Millisecond), len(raw)>>20)
}
