package redfishsim

// The simulator checked by Redfish clients nobody here wrote: DMTF's
// redfishtool and OpenStack's sushy (Debian packages redfishtool and
// python3-sushy).

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

func runCmd(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	// Loopback only: no proxies. And no CA bundle overrides: python-requests
	// lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE win over the CA file a client
	// passes explicitly.
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "NO_PROXY=*", "no_proxy=*")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestRedfishtool(t *testing.T) {
	tool, err := exec.LookPath("redfishtool")
	if err != nil {
		need.OrSkip(t, "redfishtool not installed (Debian package redfishtool): %v", err)
	}
	// -S Always: https for every request, also the unauthenticated ones.
	// The simulator's certificate is self-signed; redfishtool does not
	// verify certificates.
	s := startSim(t, Options{TLS: true, Systems: []SystemOptions{{PowerState: "Off"}}})
	host := strings.TrimPrefix(s.URL(), "https://")
	for _, auth := range []string{"Session", "Basic"} {
		t.Run(auth, func(t *testing.T) {
			base := []string{"-S", "Always", "-r", host, "-u", s.Username(), "-p", s.Password(), "-A", auth, "-T", "20", "-n"}
			out := runCmd(t, tool, append(base, "-P", "PowerState", "Systems", "-1", "get")...)
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("redfishtool output %q: %v", out, err)
			}
			want := s.PowerState("437XR1138R2")
			if got["PowerState"] != want {
				t.Fatalf("redfishtool read PowerState %v, simulator has %s", got["PowerState"], want)
			}
			next := map[string]string{"Off": "On", "On": "ForceOff"}[want]
			runCmd(t, tool, append(base, "Systems", "-1", "reset", next)...)
			if s.PowerState("437XR1138R2") == want {
				t.Fatalf("redfishtool reset %s did not change the power state", next)
			}
			runCmd(t, tool, append(base, "Systems", "-1", "setBootOverride", "Once", "Pxe")...)
			if b := s.Boot("437XR1138R2"); b.Target != "Pxe" || b.Enabled != "Once" {
				t.Fatalf("boot after redfishtool setBootOverride: %+v", b)
			}
		})
	}
	if auth := s.Stats(); auth.SessionsCreated == 0 {
		t.Fatalf("redfishtool -A Session created no session: %+v", auth)
	}
}

const sushyScript = `
import json, sys
import sushy

url, user, password, cafile = sys.argv[1:5]
root = sushy.Sushy(url, username=user, password=password, verify=cafile)
systems = root.get_system_collection()
system = root.get_system(systems.members_identities[0])
before = system.power_state
allowed = sorted(str(v.value) for v in system.get_allowed_reset_system_values())
system.reset_system(sushy.RESET_ON if before == sushy.POWER_STATE_OFF else sushy.RESET_FORCE_OFF)
system.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_PXE,
                               enabled=sushy.BOOT_SOURCE_ENABLED_ONCE,
                               mode=sushy.BOOT_SOURCE_MODE_UEFI)
system.refresh()
print(json.dumps({
    "before": str(before.value),
    "after": str(system.power_state.value),
    "allowed": allowed,
    "boot": str(system.boot.target.value),
    "uuid": system.uuid,
}))
`

// python3 for sushy: Debian's interpreter, which sees python3-sushy (a
// pyenv python on PATH would not).
func sushyPython(t *testing.T) string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import sushy").Run() == nil {
			return path
		}
	}
	need.OrSkip(t, "no python3 with sushy (Debian package python3-sushy)")
	return ""
}

func TestSushy(t *testing.T) {
	py := sushyPython(t)
	s := startSim(t, Options{TLS: true, Systems: []SystemOptions{{PowerState: "Off"}}})
	dir := t.TempDir()
	script := filepath.Join(dir, "check.py")
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(script, []byte(sushyScript), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, s.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runCmd(t, py, script, s.URL(), s.Username(), s.Password(), ca)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		Before, After, Boot, UUID string
		Allowed                   []string
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("sushy output %q: %v", out, err)
	}
	if got.Before != "Off" || got.After != "On" || s.PowerState("437XR1138R2") != "On" {
		t.Fatalf("sushy saw %+v; simulator power %s", got, s.PowerState("437XR1138R2"))
	}
	if got.Boot != "Pxe" || s.Boot("437XR1138R2") != (BootOverride{Target: "Pxe", Enabled: "Once", Mode: "UEFI"}) {
		t.Fatalf("sushy boot %q, simulator %+v", got.Boot, s.Boot("437XR1138R2"))
	}
	if len(got.Allowed) != 8 || got.UUID != "38947555-7742-3448-3784-823347823834" {
		t.Fatalf("sushy read %+v", got)
	}
	if st := s.Stats(); st.SessionsCreated != 1 || st.Resets != 1 || st.Patches != 1 {
		t.Fatalf("stats after sushy: %+v", st)
	}
}
