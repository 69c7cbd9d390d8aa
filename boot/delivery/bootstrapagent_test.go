package delivery_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	ign3 "github.com/coreos/ignition/v2/config"

	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/render"
)

// sampleEnv is an agent env-file as Configs builds it for a cloud-config
// host.
func sampleEnv(cred string) render.AgentEnv {
	return render.AgentEnv{Endpoint: "http://10.0.0.1:8080", Credential: cred, NodeName: "node-07",
		KubeletManager: "systemd", KubeletBin: "/usr/bin/kubelet", Kubeconfig: "/etc/kubernetes/kubelet.conf"}
}

// sampleKubelet is the Machine's kubelet as Configs finds it in its class.
var sampleKubelet = delivery.NewHostKubelet("v1.36.3", "http://10.0.0.1:8080/artifacts/default/c/kubelet/v1.36.3/kubelet", strings.Repeat("ab", 32))

// capiJoin is user-data as Cluster API's kubeadm bootstrap provider writes
// it: a jinja template (the Node's name from the meta-data), files and the
// join in runcmd.
const capiJoin = `## template: jinja
#cloud-config
write_files:
- path: /run/kubeadm/kubeadm-join-config.yaml
  owner: root:root
  permissions: '0640'
  content: |
    apiVersion: kubeadm.k8s.io/v1beta4
    kind: JoinConfiguration
    nodeRegistration:
      name: '{{ ds.meta_data.local_hostname }}'
      kubeletExtraArgs:
      - name: provider-id
        value: '{{ ds.meta_data.provider_id }}'
- path: /run/cluster-api/placeholder
  owner: root:root
  permissions: '0640'
  content: "This placeholder file is used to create the /run/cluster-api sub directory in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)"
runcmd:
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete
`

// TestAgentPartWithRealCloudInit: whatever form Cluster API's user-data
// has, the real cloud-init runs it as it would on its own and Anvil's part
// too: both parts' files are written (jinja rendered with the meta-data),
// the agent's env-file with mode 0600, and runcmd keeps Cluster API's
// commands first and starts the agent after them.
func TestAgentPartWithRealCloudInit(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("#cloud-config\nwrite_files:\n- path: /etc/gzipped\n  content: from gzip\nruncmd:\n- [echo, gzipped]\n"))
	must(t, zw.Close())
	mime := "Content-Type: multipart/mixed; boundary=\"CAPI\"\r\nMIME-Version: 1.0\r\n\r\n" +
		"--CAPI\r\nContent-Type: text/cloud-config\r\nMIME-Version: 1.0\r\n\r\n#cloud-config\r\nwrite_files:\r\n- path: /etc/from-mime\r\n  content: part one\r\nruncmd:\r\n- [echo, mime]\r\n" +
		"--CAPI\r\nContent-Type: text/x-shellscript\r\nMIME-Version: 1.0\r\n\r\n#!/bin/sh\necho capi script\r\n--CAPI--\r\n"
	for _, tc := range []struct {
		name      string
		userData  []byte
		files     map[string]string // Cluster API's files, and what they contain
		firstCmds []string          // Cluster API's runcmd, as cloud-init lists it
		script    string            // a script of Cluster API's, if any
	}{
		{"jinja cloud-config (kubeadm bootstrap provider)", []byte(capiJoin),
			map[string]string{"/run/kubeadm/kubeadm-join-config.yaml": "name: 'node-07'\n", "/run/cluster-api/placeholder": "This placeholder"},
			[]string{"kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete"}, ""},
		{"plain cloud-config", []byte("#cloud-config\nwrite_files:\n- path: /etc/capi\n  content: plain\nruncmd:\n- [echo, plain]\n"),
			map[string]string{"/etc/capi": "plain"}, []string{"[echo plain]"}, ""},
		{"MIME multipart, CRLF", []byte(mime), map[string]string{"/etc/from-mime": "part one"}, []string{"[echo mime]"}, "echo capi script"},
		{"gzip", gz.Bytes(), map[string]string{"/etc/gzipped": "from gzip"}, []string{"[echo gzipped]"}, ""},
		{"shell script", []byte("#!/bin/sh\necho hello\n"), nil, nil, "echo hello"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred := "0b6c9d1e-uid." + strings.Repeat("s", 43)
			env := sampleEnv(cred)
			ud, err := delivery.WithAgentCloudConfig(tc.userData, env, sampleKubelet)
			must(t, err)
			seed := t.TempDir()
			must(t, os.WriteFile(filepath.Join(seed, "meta-data"), []byte("instance-id: i-1\nlocal-hostname: node-07\nprovider-id: anvil://uid\n"), 0o600))
			must(t, os.WriteFile(filepath.Join(seed, "user-data"), ud, 0o600))
			got := consumeWithCloudInit(t, "ds=nocloud;s=file://"+seed+"/", false)
			if got.SchemaError != "" {
				t.Errorf("the merged cloud-config does not validate: %s", got.SchemaError)
			}
			for path, want := range tc.files {
				if f, ok := got.Files[path]; !ok || !strings.Contains(f.Content, want) {
					t.Errorf("Cluster API's %s: %q, want it to contain %q", path, f.Content, want)
				}
			}
			if f := got.Files[render.AgentEnvPath]; f.Content != env.File() || f.Mode != 0o600 {
				t.Errorf("%s: mode %o:\n%s", render.AgentEnvPath, f.Mode, f.Content)
			}
			if f := got.Files[render.AgentUnitPath]; f.Content != render.AgentUnit("/usr/local/bin/anvil-agent") || f.Mode != 0o644 {
				t.Errorf("%s: mode %o:\n%s", render.AgentUnitPath, f.Mode, f.Content)
			}
			if n := len(got.Files); n != len(tc.files)+2 {
				t.Errorf("cloud-init wrote %d files, want %d", n, len(tc.files)+2)
			}
			var scripts []string
			for _, s := range got.Scripts {
				scripts = append(scripts, s)
			}
			if tc.script != "" && (len(scripts) != 1 || !strings.Contains(scripts[0], tc.script)) || tc.script == "" && len(scripts) != 0 {
				t.Errorf("user-data scripts %q, want one with %q", scripts, tc.script)
			}
			var cmds []string
			for _, c := range got.Config.Runcmd {
				s := fmt.Sprint(c)
				cmds = append(cmds, s)
			}
			want := append(append([]string{}, tc.firstCmds...), "[systemctl daemon-reload]", "[systemctl enable kubelet.service]", "[systemctl enable --now anvil-agent.service]")
			if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
				t.Errorf("runcmd:\n%s\nwant:\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
			}
			// The Machine's kubelet, in bootcmd (before runcmd's join).
			wantBoot := fmt.Sprint(delivery.KubeletBootcmd(sampleKubelet, env.KubeletBin))
			if n := len(got.Config.Bootcmd); n == 0 || fmt.Sprint(got.Config.Bootcmd[n-1]) != wantBoot {
				t.Errorf("bootcmd %v, want it to end with %s", got.Config.Bootcmd, wantBoot)
			}
		})
	}
}

// ignFiles are an Ignition config's files by path.
func ignFiles(t *testing.T, cfg map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	st, _ := cfg["storage"].(map[string]any)
	fs, _ := st["files"].([]any)
	for _, f := range fs {
		m := f.(map[string]any)
		out[m["path"].(string)] = m
	}
	return out
}

// dataOf decodes a file's base64 data: URL.
func dataOf(t *testing.T, f map[string]any) string {
	t.Helper()
	src := f["contents"].(map[string]any)["source"].(string)
	b64, ok := strings.CutPrefix(src, "data:;base64,")
	if !ok {
		t.Fatalf("source %q", src)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	must(t, err)
	return string(b)
}

// TestAgentInIgnition: the agent's env-file and unit are appended to
// Cluster API's Ignition config, whose own content stays as it was, and
// Ignition's parser of the config's version accepts the result (spec 3);
// spec 2.x (the kubeadm bootstrap provider's, for Flatcar) gets the
// spec 2 form. What cannot be handled is refused naming the Secret and
// quoting nothing of the config.
func TestAgentInIgnition(t *testing.T) {
	const what = "bootstrap data Secret ns/s (spec.bootstrap.dataSecretName of Machine m)"
	cred := "0b6c9d1e-uid." + strings.Repeat("s", 43)
	env := sampleEnv(cred)
	env.KubeletBin = "/opt/bin/kubelet"
	secret := "kubeadm-secret-" + strings.Repeat("q", 16)
	capi34 := `{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core"}]},
	  "storage":{"files":[{"path":"/etc/kubeadm.yml","mode":384,"contents":{"source":"data:,` + secret + `"}},{"path":"/etc/big","contents":{"source":"data:,x"},"mode":420}],
	             "disks":[{"device":"/dev/sdb","partitions":[{"number":1,"sizeMiB":9007199254740993}]}]},
	  "systemd":{"units":[{"name":"kubeadm.service","enabled":true,"contents":"[Service]\nExecStart=/bin/sh -c 'kubeadm join && echo ok >/run/ok'\n"}]}}`
	capi23 := `{"ignition":{"config":{},"security":{"tls":{}},"timeouts":{},"version":"2.3.0"},"networkd":{},"passwd":{},
	  "storage":{"files":[{"filesystem":"root","path":"/etc/kubeadm.yml","mode":384,"contents":{"source":"data:,` + secret + `","verification":{}}}]},
	  "systemd":{"units":[{"name":"kubeadm.service","enabled":true,"contents":"[Service]\nExecStart=/opt/bin/kubeadm join\n"}]}}`

	for _, tc := range []struct {
		name, capi, version string
		v3                  bool
	}{
		{"3.4.0", capi34, "3.4.0", true},
		{"3.0.0", strings.Replace(strings.Replace(capi34, `"3.4.0"`, `"3.0.0"`, 1), `,"sizeMiB":9007199254740993`, "", 1), "3.0.0", true},
		{"2.3.0 (kubeadm bootstrap provider)", capi23, "2.3.0", false},
		{"no storage or systemd", `{"ignition":{"version":"3.2.0"}}`, "3.2.0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := delivery.WithAgentIgnition([]byte(tc.capi), env, what)
			must(t, err)
			if tc.v3 {
				if _, rep, err := ign3.Parse(out); err != nil || rep.IsFatal() {
					t.Fatalf("Ignition refuses the result: %v %s", err, rep)
				}
			}
			var in, got map[string]any
			dec := json.NewDecoder(strings.NewReader(tc.capi))
			dec.UseNumber()
			must(t, dec.Decode(&in))
			dec = json.NewDecoder(bytes.NewReader(out))
			dec.UseNumber()
			must(t, dec.Decode(&got))
			// Cluster API's content: every entry as it was, ours after.
			inFiles, gotFiles := ignFiles(t, in), ignFiles(t, got)
			for p, f := range inFiles {
				if !reflect.DeepEqual(gotFiles[p], f) {
					t.Errorf("Cluster API's %s changed: %v, was %v", p, gotFiles[p], f)
				}
			}
			if len(gotFiles) != len(inFiles)+1 {
				t.Errorf("%d files, want %d", len(gotFiles), len(inFiles)+1)
			}
			for _, k := range []string{"ignition", "passwd", "networkd"} {
				if !reflect.DeepEqual(got[k], in[k]) {
					t.Errorf("%s changed: %v, was %v", k, got[k], in[k])
				}
			}
			if d, _ := in["storage"].(map[string]any); d != nil && !reflect.DeepEqual(got["storage"].(map[string]any)["disks"], d["disks"]) {
				t.Error("storage.disks changed")
			}
			if tc.name == "3.4.0" && (!strings.Contains(string(out), "9007199254740993") || !strings.Contains(string(out), "join && echo ok >/run/ok")) {
				t.Error("a large number lost its digits, or a string its characters")
			}
			agent := gotFiles[render.AgentEnvPath]
			if agent == nil || dataOf(t, agent) != env.File() || agent["mode"] != json.Number("384") {
				t.Fatalf("agent env-file %v", agent)
			}
			if _, ok := agent["filesystem"]; ok == tc.v3 {
				t.Errorf("spec %s: filesystem %v", tc.version, agent["filesystem"])
			}
			units := got["systemd"].(map[string]any)["units"].([]any)
			last := units[len(units)-1].(map[string]any)
			if last["name"] != render.AgentUnitName || last["enabled"] != true || last["contents"] != render.AgentUnit("/opt/bin/anvil-agent") {
				t.Errorf("last unit %v", last)
			}
			if in["systemd"] != nil && !reflect.DeepEqual(units[:len(units)-1], in["systemd"].(map[string]any)["units"]) {
				t.Error("Cluster API's units changed")
			}
		})
	}

	for _, tc := range []struct{ name, capi, errHas string }{
		{"not JSON", "#cloud-config\n" + secret, "is not Ignition JSON"},
		{"spec 1", `{"ignitionVersion":1,"x":"` + secret + `"}`, `has Ignition version "": Anvil adds its agent to configs of Ignition spec 3.0.0 to 3.6.0 and 2.1.0 to 2.3.0 only`},
		{"spec 2.0", `{"ignition":{"version":"2.0.0"}}`, `version "2.0.0"`},
		{"experimental", `{"ignition":{"version":"3.7.0-experimental"}}`, `version "3.7.0-experimental"`},
		{"invalid 3.4", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"relative/` + secret + `"}]}}`, "is not a valid Ignition 3.4.0 config: 1 error(s) at $.storage.files.0.path"},
		{"storage not an object", `{"ignition":{"version":"2.3.0"},"storage":["` + secret + `"]}`, "storage is not an object"},
		{"writes the agent's env-file", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/anvil/agent.env","contents":{"source":"data:,` + secret + `"}}]}}`, "already writes /etc/anvil/agent.env"},
		{"has the agent's unit", `{"ignition":{"version":"2.3.0"},"systemd":{"units":[{"name":"anvil-agent.service","contents":"` + secret + `"}]}}`, "already has the unit anvil-agent.service"},
	} {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			_, err := delivery.WithAgentIgnition([]byte(tc.capi), env, what)
			if err == nil || !strings.HasPrefix(err.Error(), what) || !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("err = %v, want it to start with the Secret and say %q", err, tc.errHas)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), cred) {
				t.Fatalf("the error quotes the config or the credential: %v", err)
			}
		})
	}
}

// TestKubeletBootcmd runs the bootcmd script that installs the Machine's
// kubelet before kubeadm join (without cloud-init-per, which only guards
// it to once per instance), against a loopback server: it installs a
// kubelet whose sha256 matches, leaves alone one that already matches or
// that the agent has adopted (a symlink), and for a wrong digest installs
// nothing and removes the image's kubelet, so that the join stops.
func TestKubeletBootcmd(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 missing (cloud-init's interpreter; the script fetches with it)")
	}
	good := []byte("#!/bin/sh\necho Kubernetes v1.36.3\n")
	sum := sha256.Sum256(good)
	var mu sync.Mutex
	gets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets++
		mu.Unlock()
		_, _ = w.Write(good)
	}))
	defer srv.Close()
	run := func(t *testing.T, k delivery.HostKubelet, bin string) (string, error) {
		t.Helper()
		argv := delivery.KubeletBootcmd(k, bin)
		if len(argv) < 6 || strings.Join(argv[:5], " ") != "cloud-init-per instance anvil-kubelet sh -c" {
			t.Fatalf("bootcmd %q, want cloud-init-per instance anvil-kubelet sh -c SCRIPT", argv)
		}
		out, err := exec.Command(argv[3], argv[4:]...).CombinedOutput()
		return string(out), err
	}
	fetches := func() int { mu.Lock(); defer mu.Unlock(); return gets }
	k := delivery.NewHostKubelet("v1.36.3", srv.URL+"/kubelet", hex.EncodeToString(sum[:]))

	t.Run("installs", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "kubelet")
		must(t, os.WriteFile(bin, []byte("the image's kubelet"), 0o755))
		out, err := run(t, k, bin)
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		got, err := os.ReadFile(bin)
		must(t, err)
		fi, err := os.Stat(bin)
		must(t, err)
		if !bytes.Equal(got, good) || fi.Mode().Perm() != 0o755 {
			t.Fatalf("%s is %q mode %o, want the served kubelet, 0755 (output %s)", bin, got, fi.Mode().Perm(), out)
		}
		before := fetches()
		if out, err := run(t, k, bin); err != nil || fetches() != before {
			t.Fatalf("a second run with the right kubelet in place: %v, %d fetches (%s)", err, fetches()-before, out)
		}
	})
	t.Run("adopted", func(t *testing.T) {
		dir := t.TempDir()
		must(t, os.WriteFile(filepath.Join(dir, "v1.37.2"), []byte("upgraded"), 0o755))
		bin := filepath.Join(dir, "kubelet")
		must(t, os.Symlink(filepath.Join(dir, "v1.37.2"), bin))
		before := fetches()
		if out, err := run(t, k, bin); err != nil || fetches() != before {
			t.Fatalf("with the agent's symlink in place: %v, %d fetches (%s)", err, fetches()-before, out)
		}
		if l, err := os.Readlink(bin); err != nil || l != filepath.Join(dir, "v1.37.2") {
			t.Fatalf("the agent's symlink was changed: %q, %v", l, err)
		}
	})
	t.Run("wrong digest", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "kubelet")
		must(t, os.WriteFile(bin, []byte("the image's kubelet"), 0o755))
		bad := delivery.NewHostKubelet("v1.36.3", srv.URL+"/kubelet", strings.Repeat("0", 64))
		out, err := run(t, bad, bin)
		if err == nil {
			t.Fatalf("a kubelet failing its sha256 was accepted: %s", out)
		}
		if _, err := os.Stat(bin); !os.IsNotExist(err) {
			t.Fatalf("%s is still there after a failed check (%v): kubeadm would join with the image's kubelet", bin, err)
		}
		if _, err := os.Stat(bin + ".anvil-new"); !os.IsNotExist(err) {
			t.Fatalf("the rejected download was left at %s.anvil-new", bin)
		}
		if !strings.Contains(out, "failed its download or sha256 check") {
			t.Fatalf("output %q does not say why", out)
		}
	})
}
