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
	dir := t.TempDir()
	return runCloudInitScript[cloudInitResult](t, seedScript, cmdline, dir)
}

// consumeScript runs what cloud-init does with a seed up to its modules,
// in a temporary directory: the NoCloud datasource reads the seed (file or
// http, from DEBUG_PROC_CMDLINE), stages.Init stores and walks the
// user-data with cloud-init's own part handlers (MIME, jinja, cloud-config
// merging by each part's Merge-Type, shell scripts), and the merged
// cloud-config (instance/cloud-config.txt) is validated against
// cloud-init's schema. Then its write_files module writes the files below
// a root directory (paths prefixed, owner the current user: the test
// need not be root). It reports the user-data's scripts too.
const consumeScript = `
import copy, grp, json, os, pwd, sys
from cloudinit import helpers, stages, util
from cloudinit.settings import PER_INSTANCE
from cloudinit.sources import DataSourceNoCloud as nc
from cloudinit.config import cc_write_files
from cloudinit.config.schema import get_schema, validate_cloudconfig_schema

tmp, root, net = sys.argv[1], sys.argv[2], sys.argv[3] == "net"
cfg = {"system_info": {"distro": "debian", "paths": {"cloud_dir": tmp + "/cloud", "run_dir": tmp + "/run"}}}
paths = helpers.Paths(cfg["system_info"]["paths"])
cls = nc.DataSourceNoCloudNet if net else nc.DataSourceNoCloud
ds = cls(sys_cfg=cfg, distro=None, paths=paths)
if not ds.get_data():
    print(json.dumps({"ok": False}))
    sys.exit(0)
init = stages.Init(ds_deps=[])
init._read_cfg = lambda extra_fns: copy.deepcopy(cfg)  # stay in tmp
init.datasource = ds
init.initialize()
init.instancify()
init.update()
init.consume_data(PER_INSTANCE)
merged = util.load_yaml(util.load_file(init.paths.get_ipath("cloud_config"))) or {}
schema = ""
try:
    validate_cloudconfig_schema(merged, get_schema(), strict=True)
except Exception as e:
    schema = str(e)
me = pwd.getpwuid(os.getuid()).pw_name + ":" + grp.getgrgid(os.getgid()).gr_name
files = copy.deepcopy(merged.get("write_files", []))
for f in files:
    f["path"] = root + f["path"]
    f["owner"] = me
cc_write_files.write_files("write_files", files, me)
written = {}
for f in merged.get("write_files", []):
    st = os.stat(root + f["path"])
    written[f["path"]] = {"content": util.load_file(root + f["path"]), "mode": st.st_mode & 0o777}
sdir = init.paths.get_ipath("scripts")
scripts = {n: util.load_file(os.path.join(sdir, n)) for n in sorted(os.listdir(sdir))}
print(json.dumps({"ok": True, "metadata": ds.metadata, "config": merged, "files": written, "scripts": scripts, "schemaError": schema}, default=str))
`

// consumed is what consumeScript reports.
type consumed struct {
	OK       bool
	Metadata map[string]any
	// Config is the merged cloud-config.
	Config struct {
		WriteFiles []struct {
			Path, Content, Permissions string
		} `json:"write_files"`
		Runcmd  []any `json:"runcmd"`
		Bootcmd []any `json:"bootcmd"`
	}
	Files map[string]struct {
		Content string
		Mode    int
	}
	// Scripts are the user-data's shell scripts cloud-init will run, by name.
	Scripts     map[string]string
	SchemaError string
}

// python returns Debian's python3 with cloud-init's modules, or skips
// (fails under CI=true).
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil &&
			exec.Command(path, "-c", "import cloudinit.sources.DataSourceNoCloud").Run() == nil {
			return path
		}
	}
	need.OrSkip(t, "cloud-init's python modules are missing (Debian package cloud-init)")
	return ""
}

// consumeWithCloudInit lets the real cloud-init consume a seed: cmdline is
// the kernel command line (ds=nocloud;s=file://... or
// ds=nocloud-net;s=http://...).
func consumeWithCloudInit(t *testing.T, cmdline string, net bool) consumed {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	must(t, os.MkdirAll(root, 0o755))
	mode := "file"
	if net {
		mode = "net"
	}
	return runCloudInitScript[consumed](t, consumeScript, cmdline, dir, root, mode)
}

// runCloudInitScript runs a python script (source) with the real
// cloud-init's interpreter, the kernel command line cmdline and args (the
// first is the directory the script is written to), and decodes its JSON
// answer, which must say OK.
func runCloudInitScript[T interface{ accepted() bool }](t *testing.T, source, cmdline string, args ...string) T {
	t.Helper()
	var got T
	py := python(t)
	script := filepath.Join(args[0], "script.py")
	must(t, os.WriteFile(script, []byte(source), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "DEBUG_PROC_CMDLINE="+cmdline)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("cloud-init: %v\n%s", err, stderr)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !got.accepted() {
		t.Fatalf("cloud-init did not accept the seed: %s", out)
	}
	return got
}

func (r cloudInitResult) accepted() bool { return r.OK }
func (c consumed) accepted() bool        { return c.OK }
