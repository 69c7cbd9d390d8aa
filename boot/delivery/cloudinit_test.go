package delivery_test

import (
	"anvil.dev/anvil/test/need"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// seedScript runs cloud-init's own NoCloud network datasource
// (DataSourceNoCloudNet.get_data) with the kernel command line taken from
// DEBUG_PROC_CMDLINE, which cloud-init's util.get_cmdline honours.
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

type cloudInitResult struct {
	OK       bool
	Metadata map[string]any
	Userdata string
}

// runCloudInit lets the real cloud-init (Debian package cloud-init) read
// its seed with the given kernel command line. It skips without
// cloud-init, unless CI=true.
func runCloudInit(t *testing.T, cmdline string) cloudInitResult {
	t.Helper()
	python := ""
	// Debian's interpreter first: cloud-init lives in its dist-packages.
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil &&
			exec.Command(path, "-c", "import cloudinit.sources.DataSourceNoCloud").Run() == nil {
			python = path
			break
		}
	}
	if python == "" {
		need.OrSkip(t, "cloud-init's python modules are missing (Debian package cloud-init)")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "seed.py")
	must(t, os.WriteFile(script, []byte(seedScript), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, script, dir)
	cmd.Env = append(os.Environ(), "DEBUG_PROC_CMDLINE="+cmdline)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("cloud-init: %v\n%s", err, stderr)
	}
	var got cloudInitResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !got.OK {
		t.Fatalf("cloud-init did not accept the seed: %s", out)
	}
	return got
}
