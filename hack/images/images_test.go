package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// The archives are read back with the standard library only, so the check
// does not share go-containerregistry's idea of what it wrote.

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Variant      string `json:"variant"`
	} `json:"platform"`
}

type index struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type imageConfig struct {
	Created      time.Time `json:"created"`
	OS           string    `json:"os"`
	Architecture string    `json:"architecture"`
	Variant      string    `json:"variant"`
	Config       struct {
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		User       string            `json:"User"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// archive is an OCI layout read from its tar.
type archive struct {
	t     *testing.T
	name  string
	files map[string][]byte
}

func readArchive(t *testing.T, file string) *archive {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := &archive{t: t, name: filepath.Base(file), files: map[string][]byte{}}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if a.files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// blob returns the blob d points to after checking its size and digest.
func (a *archive) blob(d descriptor) []byte {
	a.t.Helper()
	hexd, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok {
		a.t.Fatalf("%s: digest %q is not sha256", a.name, d.Digest)
	}
	b, ok := a.files["blobs/sha256/"+hexd]
	if !ok {
		a.t.Fatalf("%s: blob %s (%s) missing", a.name, d.Digest, d.MediaType)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexd || int64(len(b)) != d.Size {
		a.t.Fatalf("%s: blob %s has digest %x and size %d, descriptor says size %d", a.name, d.Digest, sum, len(b), d.Size)
	}
	return b
}

func (a *archive) json(b []byte, v any) {
	a.t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		a.t.Fatalf("%s: %v", a.name, err)
	}
}

type file struct {
	hdr  *tar.Header
	data []byte
}

// rootfs unpacks the layers of m (in order, later files win), checking each
// against its diff_id.
func (a *archive) rootfs(m manifest, cfg imageConfig) map[string]file {
	a.t.Helper()
	if len(cfg.RootFS.DiffIDs) != len(m.Layers) || cfg.RootFS.Type != "layers" {
		a.t.Fatalf("%s: %d layers, rootfs %+v", a.name, len(m.Layers), cfg.RootFS)
	}
	fs := map[string]file{}
	for i, l := range m.Layers {
		if l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
			a.t.Fatalf("%s: layer media type %s", a.name, l.MediaType)
		}
		zr, err := gzip.NewReader(bytes.NewReader(a.blob(l)))
		if err != nil {
			a.t.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			a.t.Fatal(err)
		}
		if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != cfg.RootFS.DiffIDs[i] {
			a.t.Fatalf("%s: layer %d diff_id %s, uncompressed sha256:%x", a.name, i, cfg.RootFS.DiffIDs[i], sum)
		}
		tr := tar.NewReader(bytes.NewReader(raw))
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				a.t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				a.t.Fatal(err)
			}
			fs["/"+strings.TrimSuffix(h.Name, "/")] = file{h, data}
		}
	}
	return fs
}

const (
	testVersion  = "v9.9.9-imagetest"
	testRevision = "0123456789abcdef0123456789abcdef01234567"
	testEpoch    = 1700000000
)

// make images writes both images; each is an OCI layout of a two-platform
// index whose digests verify, whose configs carry the entrypoint, user and
// version labels, and whose binaries are static for their architecture; the
// amd64 binaries run and print the version they were built with.
//
// With -short (make test) only the agent's image is built, for both
// platforms: the controller's arm64 build compiles all of Kubernetes'
// client libraries for arm64 once more (about 390 s of CPU on a cold Go
// cache), and TestOneImageOnePlatform builds the controller's image for
// amd64. The agent's arm64 build takes the same path through the build.
func TestImages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the binaries with")
	}
	out := t.TempDir()
	o := options{out: out, goCmd: "go", meta: meta{version: testVersion, revision: testRevision, source: "https://example.test/anvil", repo: "anvil.dev"}}
	o.repoRoot = "../.."
	only := ""
	if testing.Short() {
		only = "anvil-agent"
	}
	if err := o.choose(only, ""); err != nil {
		t.Fatal(err)
	}
	if err := o.complete(fmt.Sprint(testEpoch)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	files, err := build(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %d images (%d binaries) in %s", len(files), len(o.specs)*len(o.platforms), time.Since(start).Round(time.Second))
	var want []string
	for _, s := range o.specs {
		want = append(want, filepath.Join(out, s.name+"-"+testVersion+".oci.tar"))
	}
	if len(want) == 0 || !slices.Equal(files, want) {
		t.Fatalf("wrote %v, want %v", files, want)
	}
	users := map[string]string{"anvil": "65532:65532", "anvil-agent": "0:0"}
	for i, s := range o.specs {
		t.Run(s.name, func(t *testing.T) {
			checkImage(t, files[i], s.name, users[s.name], o.meta, platforms)
		})
	}
}

// -image and -platform build one image for one platform: the lab's host
// image carries the anvil image for amd64 alone.
func TestOneImageOnePlatform(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the binaries with")
	}
	out := t.TempDir()
	o := options{out: out, goCmd: "go", repoRoot: "../..", meta: meta{version: testVersion, revision: testRevision, source: "https://example.test/anvil", repo: "anvil.dev"}}
	if err := o.choose("anvil", "linux/amd64"); err != nil {
		t.Fatal(err)
	}
	if err := o.complete(fmt.Sprint(testEpoch)); err != nil {
		t.Fatal(err)
	}
	files, err := build(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(out, "anvil-"+testVersion+".oci.tar")}; !slices.Equal(files, want) {
		t.Fatalf("wrote %v, want %v", files, want)
	}
	checkImage(t, files[0], "anvil", "65532:65532", o.meta, []platform{{"linux", "amd64", ""}})
}

func checkImage(t *testing.T, file, name, user string, m meta, want []platform) {
	a := readArchive(t, file)
	var lay struct{ ImageLayoutVersion string }
	if a.json(a.files["oci-layout"], &lay); lay.ImageLayoutVersion != "1.0.0" {
		t.Fatalf("oci-layout is %q", a.files["oci-layout"])
	}
	var top index
	a.json(a.files["index.json"], &top)
	if len(top.Manifests) != 1 {
		t.Fatalf("index.json has %d entries, want the one image index", len(top.Manifests))
	}
	ref := top.Manifests[0]
	if ref.MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Fatalf("index.json points to a %s", ref.MediaType)
	}
	if got, want := ref.Annotations["io.containerd.image.name"], "anvil.dev/"+name+":"+testVersion; got != want {
		t.Errorf("io.containerd.image.name %q, want %q", got, want)
	}
	if got := ref.Annotations["org.opencontainers.image.ref.name"]; got != testVersion {
		t.Errorf("ref.name %q, want %q", got, testVersion)
	}
	var idx index
	a.json(a.blob(ref), &idx)
	if idx.SchemaVersion != 2 || idx.MediaType != ref.MediaType || idx.Annotations["org.opencontainers.image.version"] != testVersion {
		t.Errorf("image index: schema %d, media type %s, annotations %v", idx.SchemaVersion, idx.MediaType, idx.Annotations)
	}
	var plats []string
	binaries := map[platform][]byte{}
	for _, d := range idx.Manifests {
		if d.Platform == nil || d.MediaType != "application/vnd.oci.image.manifest.v1+json" {
			t.Fatalf("index entry %+v", d)
		}
		p := d.Platform.OS + "/" + d.Platform.Architecture
		plats = append(plats, p)
		var man manifest
		a.json(a.blob(d), &man)
		if man.SchemaVersion != 2 || man.Config.MediaType != "application/vnd.oci.image.config.v1+json" {
			t.Fatalf("%s manifest: schema %d, config %s", p, man.SchemaVersion, man.Config.MediaType)
		}
		var cfg imageConfig
		a.json(a.blob(man.Config), &cfg)
		if cfg.OS+"/"+cfg.Architecture != p || cfg.Variant != d.Platform.Variant {
			t.Errorf("%s config says %s/%s %s", p, cfg.OS, cfg.Architecture, cfg.Variant)
		}
		if !cfg.Created.Equal(time.Unix(testEpoch, 0)) {
			t.Errorf("%s created %s, want SOURCE_DATE_EPOCH %d", p, cfg.Created, testEpoch)
		}
		if !slices.Equal(cfg.Config.Entrypoint, []string{"/" + name}) || len(cfg.Config.Cmd) != 0 {
			t.Errorf("%s entrypoint %q cmd %q", p, cfg.Config.Entrypoint, cfg.Config.Cmd)
		}
		if cfg.Config.User != user {
			t.Errorf("%s user %q, want %q", p, cfg.Config.User, user)
		}
		for k, v := range map[string]string{
			"org.opencontainers.image.version":  testVersion,
			"org.opencontainers.image.revision": testRevision,
			"org.opencontainers.image.title":    name,
			"org.opencontainers.image.source":   "https://example.test/anvil",
			"org.opencontainers.image.created":  "2023-11-14T22:13:20Z",
		} {
			if cfg.Config.Labels[k] != v {
				t.Errorf("%s label %s=%q, want %q", p, k, cfg.Config.Labels[k], v)
			}
		}
		fs := a.rootfs(man, cfg)
		checkRootFS(t, p, fs)
		bin, ok := fs["/"+name]
		if !ok || bin.hdr.Typeflag != tar.TypeReg || bin.hdr.Mode != 0o755 {
			t.Fatalf("%s: /%s missing or not a 0755 file", p, name)
		}
		checkELF(t, p, bin.data)
		binaries[platform{d.Platform.OS, d.Platform.Architecture, d.Platform.Variant}] = bin.data
		if p == "linux/amd64" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
			checkRuns(t, name, bin.data)
		}
	}
	var wantPlats []string
	for _, p := range want {
		wantPlats = append(wantPlats, p.String())
	}
	if !slices.Equal(plats, wantPlats) {
		t.Errorf("platforms %v, want %v", plats, wantPlats)
	}

	// The same binaries give the same bytes: nothing depends on the clock
	// or the order files were written in.
	s := specs[slices.IndexFunc(specs, func(s spec) bool { return s.name == name })]
	again, err := buildIndex(s, m, want, binaries)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := again.Digest(); err != nil || d.String() != ref.Digest {
		t.Errorf("rebuilt index digest %v (%v), the archive has %s", d, err, ref.Digest)
	}
	file2 := filepath.Join(t.TempDir(), "again.oci.tar")
	if err := writeArchive(file2, s, m, again); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(file)
	b2, _ := os.ReadFile(file2)
	if !bytes.Equal(b1, b2) {
		t.Error("writing the same index twice gave different archives")
	}
}

// checkRootFS: the users the configs name exist, and the CA roots parse.
func checkRootFS(t *testing.T, p string, fs map[string]file) {
	t.Helper()
	if !strings.Contains(string(fs["/etc/passwd"].data), "nonroot:x:65532:65532:") || !strings.Contains(string(fs["/etc/group"].data), "nonroot:x:65532:") {
		t.Errorf("%s: /etc/passwd or /etc/group lacks nonroot 65532", p)
	}
	rest, n := fs["/etc/ssl/certs/ca-certificates.crt"].data, 0
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			t.Fatalf("%s: CA bundle: %v", p, err)
		}
		n++
	}
	if n < 100 {
		t.Errorf("%s: CA bundle has %d certificates", p, n)
	}
	if tmp := fs["/tmp"]; tmp.hdr == nil || tmp.hdr.Typeflag != tar.TypeDir || tmp.hdr.Mode != 0o1777 {
		t.Errorf("%s: no sticky world-writable /tmp", p)
	}
	for name, f := range fs {
		if !f.hdr.ModTime.Equal(time.Unix(testEpoch, 0)) {
			t.Errorf("%s: %s has mtime %s", p, name, f.hdr.ModTime)
		}
	}
}

// checkELF: a static executable for the platform's architecture.
func checkELF(t *testing.T, p string, b []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	defer f.Close()
	want := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}[p]
	if f.Machine != want || f.Type != elf.ET_EXEC {
		t.Errorf("%s: ELF %s %s, want an executable for %s", p, f.Type, f.Machine, want)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: binary is dynamically linked (%s)", p, prog.Type)
		}
	}
}

// checkRuns runs the binary taken out of the image and asks its version.
func checkRuns(t *testing.T, name string, b []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	arg, want := "version", "anvil "+testVersion+" ("
	if name == "anvil-agent" {
		arg, want = "--version", testVersion+"\n"
	}
	cmd := exec.Command(path, arg)
	cmd.Env = []string{"HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, arg, err, out)
	}
	if !strings.HasPrefix(string(out), want) || (name == "anvil" && !strings.Contains(string(out), "linux/amd64)")) {
		t.Errorf("%s %s printed %q, want it to start with %q", name, arg, out, want)
	}
	t.Logf("%s %s: %s", name, arg, strings.TrimSpace(string(out)))
}

// Bad options name the flag to fix, before anything is built.
func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-repo-root", "../..", "-source-date-epoch", "1"}, "-version"},
		{[]string{"-repo-root", "../..", "-version", "v1/2", "-source-date-epoch", "1"}, "-version"},
		{[]string{"-repo-root", "../..", "-version", "-x", "-source-date-epoch", "1"}, "-version"},
		{[]string{"-repo-root", "../..", "-version", "v1", "-source-date-epoch", "yesterday"}, "-source-date-epoch"},
		{[]string{"-repo-root", "../..", "-version", "v1", "-source-date-epoch", "1", "-repository", "anvil.dev/"}, "-repository"},
		{[]string{"-repo-root", t.TempDir(), "-version", "v1", "-source-date-epoch", "1"}, "-repo-root"},
		{[]string{"-repo-root", "../..", "-version", "v1", "-source-date-epoch", "1", "-image", "kubelet"}, "-image"},
		{[]string{"-repo-root", "../..", "-version", "v1", "-source-date-epoch", "1", "-platform", "linux/riscv64"}, "-platform"},
	} {
		err := run(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%q: error %v, want one naming %s", tc.args, err, tc.flag)
		}
	}
}
