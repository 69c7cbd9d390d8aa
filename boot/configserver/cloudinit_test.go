package configserver

import (
	"anvil.dev/anvil/test/need"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedScript runs cloud-init's own NoCloud network datasource
// (DataSourceNoCloudNet.get_data) with the kernel command line taken from
// DEBUG_PROC_CMDLINE, which cloud-init's util.get_cmdline honours, and prints
// what it found.
const seedScript = `
import json, sys
from cloudinit import helpers
from cloudinit.sources import DataSourceNoCloud as nc
tmp = sys.argv[1]
paths = helpers.Paths({"cloud_dir": tmp + "/cloud", "run_dir": tmp + "/run", "seed_dir": tmp + "/seed"})
ds = nc.DataSourceNoCloudNet(sys_cfg={}, distro=None, paths=paths)
ok = ds.get_data()
def s(b):
    return b.decode() if isinstance(b, bytes) else b
print(json.dumps({"ok": bool(ok), "metadata": ds.metadata if ok else None,
                  "userdata": s(ds.userdata_raw) if ok else None}))
`

// TestRealCloudInitFetchesSeed lets the real cloud-init (Debian package
// cloud-init) fetch the NoCloud seed from the server with the kernel
// argument Anvil's iPXE script would pass.
func TestRealCloudInitFetchesSeed(t *testing.T) {
	// Debian's interpreter first: cloud-init lives in its dist-packages, and
	// a python3 earlier on PATH (pyenv, venv) would not see it.
	python := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil &&
			exec.Command(path, "-c", "import cloudinit.sources.DataSourceNoCloud").Run() == nil {
			python = path
			break
		}
	}
	if python == "" {
		need.OrSkip(t, "cloud-init's python modules not installed (Debian package cloud-init)")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "seed.py")
	if err := os.WriteFile(script, []byte(seedScript), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"ds=nocloud;s=", "ds=nocloud-net;s="} {
		t.Run(strings.TrimSuffix(form, ";s="), func(t *testing.T) {
			f := newFixture(t, false)
			cred := f.issue(t, hostA, macA)
			cmdline := "console=ttyS0 ip=dhcp " + form + NoCloudSeedURL(f.base(), macA, cred) + " quiet"

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, python, script, t.TempDir())
			cmd.Env = append(os.Environ(), "DEBUG_PROC_CMDLINE="+cmdline)
			out, err := cmd.Output()
			if err != nil {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("cloud-init: %v\n%s", err, stderr)
			}
			var got struct {
				OK       bool
				Metadata map[string]any
				Userdata string
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !got.OK {
				t.Fatalf("cloud-init did not accept the seed: %s", out)
			}
			if !strings.HasPrefix(got.Userdata, "#cloud-config") || !strings.Contains(got.Userdata, f.tokenA) {
				t.Fatalf("cloud-init got user-data %q", got.Userdata)
			}
			id, _ := got.Metadata["instance-id"].(string)
			if !strings.HasPrefix(id, "anvil-") || got.Metadata["local-hostname"] != "node-a" {
				t.Fatalf("cloud-init got meta-data %v", got.Metadata)
			}
			// cloud-init fetched meta-data, user-data and vendor-data (404)
			// with one credential: that all went through the grace window.
			if f.denied(ReasonReplayed) != 0 {
				t.Fatalf("cloud-init's own fetches were refused as replays")
			}
			// The credential is now bound to the address cloud-init used.
			code, body, hdr := f.get(t, "127.0.0.9", NoCloudSeedURL(f.base(), macA, cred)+"user-data", nil)
			expectDenied(t, code, body, hdr)
		})
	}
}
