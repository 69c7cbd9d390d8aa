package image

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	ign34 "github.com/coreos/ignition/v2/config/v3_4"
	"github.com/vincent-petithory/dataurl"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/render"
	"anvil.dev/anvil/test/need"
)

const zeroSHA = "0000000000000000000000000000000000000000000000000000000000000000"

func testClassVars(kubeletURL, kubeletSHA string) render.Vars {
	v := render.SampleVars()
	v.Hostname = "lab-node-1"
	v.Join.NodeName = "lab-node-1"
	v.Join.ProviderID = "anvil://6f1c8a0e-0000-4000-8000-000000000001"
	v.Join.KubeletURL = kubeletURL
	v.Join.KubeletSHA256 = kubeletSHA
	v.Agent = render.Agent{Endpoint: "http://192.0.2.1", Credential: "6f1c8a0e-0000-4000-8000-000000000001.c2VjcmV0"}
	return v
}

// TestMachineClass checks the class the way Anvil does (the
// MachineClass controller renders it with render.SampleVars through
// Butane and Ignition's validator) and then looks at what a host gets.
func TestMachineClass(t *testing.T) {
	mc, err := MachineClass(ClassOptions{Image: &Image{KernelSHA256: zeroSHA, InitrdSHA256: zeroSHA}, KubeletSHA256: zeroSHA})
	if err != nil {
		t.Fatal(err)
	}
	if mc.Spec.Config.Format != "butane" || mc.Spec.Config.Variant != "fcos" || len(mc.Spec.Kubelets) != 1 || mc.Spec.Kubelets[0].Version != DefaultKubeletVersion {
		t.Fatalf("unexpected class spec: %+v", mc.Spec)
	}
	r := render.NewRenderer(render.Options{})
	if err := r.Validate(mc.Spec.Config.Template, render.Variant(mc.Spec.Config.Variant)); err != nil {
		t.Fatalf("the lab template does not validate: %v", err)
	}
	strict := render.NewRenderer(render.Options{Render: render.RenderOptions{Strict: true}})
	if err := strict.Validate(mc.Spec.Config.Template, render.Variant(mc.Spec.Config.Variant)); err != nil {
		t.Errorf("the lab template has Butane/Ignition warnings: %v", err)
	}

	vars := testClassVars("http://192.0.2.1/artifacts/default/lab/kubelet/v1.37.2/kubelet-v1.37.2", strings.Repeat("ab", 32))
	out, err := r.Ignition(context.Background(), mc.Spec.Config.Template, render.Variant(mc.Spec.Config.Variant), vars)
	if err != nil {
		t.Fatal(err)
	}
	cfg, rpt, err := ign34.Parse(out)
	if err != nil || rpt.IsFatal() {
		t.Fatalf("rendered config: %v %s", err, rpt)
	}
	files := map[string]file{}
	for _, f := range cfg.Storage.Files {
		var c file
		if f.Contents.Source != nil {
			c.source = *f.Contents.Source
		}
		if f.Contents.Compression != nil {
			c.compression = *f.Contents.Compression
		}
		files[f.Path] = c
	}
	kubeletPath := KubeletDir + "/v1.37.2/kubelet"
	if files[kubeletPath].source != vars.Join.KubeletURL {
		t.Errorf("kubelet %s comes from %q, want %q", kubeletPath, files[kubeletPath].source, vars.Join.KubeletURL)
	}
	for _, f := range cfg.Storage.Files {
		if f.Path == kubeletPath && (f.Contents.Verification.Hash == nil || *f.Contents.Verification.Hash != "sha256-"+vars.Join.KubeletSHA256) {
			t.Errorf("kubelet verification %v, want sha256-%s", f.Contents.Verification.Hash, vars.Join.KubeletSHA256)
		}
	}
	if len(cfg.Storage.Links) != 1 || cfg.Storage.Links[0].Path != KubeletDir+"/current" || *cfg.Storage.Links[0].Target != "v1.37.2" {
		t.Errorf("links %+v, want current -> v1.37.2", cfg.Storage.Links)
	}

	agentJSON := decodeFile(t, files, AgentConfigPath)
	var ac struct {
		Endpoint, Credential, NodeName string
		Kubelet                        struct {
			Manager, LogFile string
			Args             []string
		}
	}
	if err := json.Unmarshal([]byte(agentJSON), &ac); err != nil {
		t.Fatalf("agent.json is not JSON: %v\n%s", err, agentJSON)
	}
	if ac.Endpoint != vars.Agent.Endpoint || ac.Credential != vars.Agent.Credential || ac.NodeName != vars.Join.NodeName || ac.Kubelet.Manager != "supervisor" {
		t.Errorf("agent.json %+v does not carry the vars", ac)
	}
	wantArgs := []string{"--hostname-override=lab-node-1", "--provider-id=" + vars.Join.ProviderID, "--config=" + KubeletConfigPath}
	for _, a := range wantArgs {
		if !contains(ac.Kubelet.Args, a) {
			t.Errorf("kubelet args %v lack %s", ac.Kubelet.Args, a)
		}
		if !strings.Contains(decodeFile(t, files, KubeletFlagsPath), a+"\n") {
			t.Errorf("%s lacks %s", KubeletFlagsPath, a)
		}
	}
	if !strings.Contains(decodeFile(t, files, "/etc/kubernetes/bootstrap-kubelet.conf"), "token: "+vars.Join.Token) {
		t.Error("bootstrap kubeconfig lacks the join token")
	}
	kc := decodeFile(t, files, KubeletConfigPath)
	for _, want := range []string{"cgroupDriver: cgroupfs", "cgroupsPerQOS: false", "enforceNodeAllocatable: []", "failSwapOn: false",
		"containerRuntimeEndpoint: unix://" + FakeCRISocket, "providerID: " + vars.Join.ProviderID} {
		if !strings.Contains(kc, want) {
			t.Errorf("kubelet config lacks %q:\n%s", want, kc)
		}
	}
}

// file is the contents of one storage.files entry.
type file struct{ source, compression string }

// decodeFile returns the contents of an inline (data URL) file; Butane
// gzips the larger ones.
func decodeFile(t *testing.T, files map[string]file, path string) string {
	t.Helper()
	f, ok := files[path]
	if !ok {
		t.Fatalf("config writes no %s", path)
	}
	d, err := dataurl.DecodeString(f.source)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data := d.Data
	switch f.compression {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	default:
		t.Fatalf("%s: compression %q", path, f.compression)
	}
	return string(data)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestIgnitionAppliesClass applies a rendered lab config with the real
// Ignition binary (as ignition-apply, against a scratch root): the kubelet
// is downloaded and checked against its digest, and a wrong digest fails
// the whole apply.
func TestIgnitionAppliesClass(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ignBin := filepath.Join(root, "bin", "ignition")
	if _, err := os.Stat(ignBin); err != nil {
		need.OrSkip(t, "bin/ignition missing: run `make tools` with gcc and libblkid-dev installed")
	}
	if os.Geteuid() != 0 {
		need.OrSkip(t, "ignition-apply sets owners: needs root")
	}
	kubelet := []byte("#!/bin/sh\necho not really a kubelet\n")
	sum := sha256.Sum256(kubelet)
	goodSHA := hex.EncodeToString(sum[:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/artifacts/kubelet" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(kubelet)
	}))
	defer srv.Close()
	// ignition picks its mode from argv[0].
	apply := filepath.Join(t.TempDir(), "ignition-apply")
	if err := os.Symlink(ignBin, apply); err != nil {
		t.Fatal(err)
	}
	mc, err := MachineClass(ClassOptions{Image: &Image{KernelSHA256: zeroSHA, InitrdSHA256: zeroSHA}, KubeletSHA256: goodSHA})
	if err != nil {
		t.Fatal(err)
	}
	r := render.NewRenderer(render.Options{})

	for _, tc := range []struct {
		name   string
		sha    string
		wantOK bool
	}{
		{"kubelet digest matches", goodSHA, true},
		{"kubelet digest differs", strings.Repeat("0", 64), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := r.Ignition(context.Background(), mc.Spec.Config.Template, render.Variant(mc.Spec.Config.Variant), testClassVars(srv.URL+"/artifacts/kubelet", tc.sha))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "config.ign")
			if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
				t.Fatal(err)
			}
			sysroot := filepath.Join(dir, "root")
			if err := os.MkdirAll(sysroot, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(apply, "--root", sysroot, cfgPath).CombinedOutput()
			installed := filepath.Join(sysroot, KubeletDir, "v1.37.2", "kubelet")
			if !tc.wantOK {
				if err == nil {
					t.Fatalf("ignition-apply accepted a kubelet with the wrong digest:\n%s", out)
				}
				if _, err := os.Stat(installed); err == nil {
					t.Errorf("%s installed despite the wrong digest", installed)
				}
				if !strings.Contains(string(out), "hash") {
					t.Errorf("the failure does not name the hash:\n%s", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("ignition-apply: %v\n%s", err, out)
			}
			got, err := os.ReadFile(installed)
			if err != nil || string(got) != string(kubelet) {
				t.Fatalf("installed kubelet %q (%v)", got, err)
			}
			if fi, _ := os.Stat(installed); fi.Mode().Perm() != 0o755 {
				t.Errorf("kubelet mode %v, want 0755", fi.Mode().Perm())
			}
			if target, err := os.Readlink(filepath.Join(sysroot, KubeletDir, "current")); err != nil || target != "v1.37.2" {
				t.Errorf("current -> %q (%v), want v1.37.2", target, err)
			}
			if fi, err := os.Stat(filepath.Join(sysroot, AgentConfigPath)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("agent.json: %v %v, want mode 0600 (it holds the credential)", fi, err)
			}
			if h, _ := os.ReadFile(filepath.Join(sysroot, "etc/hostname")); string(h) != "lab-node-1" {
				t.Errorf("hostname %q", h)
			}
		})
	}
}

// TestPublishArtifacts: the files land where the class's relative URLs
// point, with the digests the class names.
func TestPublishArtifacts(t *testing.T) {
	src := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	img := &Image{Kernel: write("vmlinuz", "kernel"), Initrd: write("initrd", "initrd")}
	img.KernelSHA256, _ = FileSHA256(img.Kernel)
	img.InitrdSHA256, _ = FileSHA256(img.Initrd)
	kubelet := write("kubelet", "kubelet")
	kubeletSHA, _ := FileSHA256(kubelet)
	opts := ClassOptions{Image: img, KubeletSHA256: kubeletSHA}
	dir := t.TempDir()
	for i := 0; i < 2; i++ { // publishing again replaces the files
		if err := PublishArtifacts(dir, opts, kubelet); err != nil {
			t.Fatal(err)
		}
	}
	mc, err := MachineClass(opts)
	if err != nil {
		t.Fatal(err)
	}
	arts := append([]metalv1.Artifact{mc.Spec.Kernel, mc.Spec.Kubelets[0].Artifact}, mc.Spec.Initrds...)
	for _, a := range arts {
		got, err := FileSHA256(filepath.Join(dir, a.URL))
		if err != nil || got != a.SHA256 {
			t.Errorf("%s: sha256 %s (%v), class says %s", a.URL, got, err, a.SHA256)
		}
	}
}
