package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Annotation keys of the OCI image spec, and the one containerd's importer
// (`ctr images import`) reads for the image's full name.
const (
	annTitle       = "org.opencontainers.image.title"
	annVersion     = "org.opencontainers.image.version"
	annRevision    = "org.opencontainers.image.revision"
	annSource      = "org.opencontainers.image.source"
	annCreated     = "org.opencontainers.image.created"
	annDescription = "org.opencontainers.image.description"
	annRefName     = "org.opencontainers.image.ref.name"
	annImageName   = "io.containerd.image.name"
)

// nonRoot is the uid and gid of the unprivileged user the anvil image runs
// as (the number distroless images use, so policies written for them fit).
const nonRoot = 65532

// spec is one image: a single static binary at /<name>.
type spec struct {
	name        string // binary and image title: anvil, anvil-agent
	pkg         string // Go package, relative to the repository root
	ldflags     string // beyond -X main.version
	user        string // uid:gid, numeric so runAsNonRoot can be checked
	description string
}

var specs = []spec{
	{
		name: "anvil", pkg: "./cmd/anvil", user: fmt.Sprintf("%d:%d", nonRoot, nonRoot),
		description: "Anvil: controllers, DHCP/TFTP/HTTP boot services and CLI. Non-root; the netboot DaemonSet runs it as root with only NET_BIND_SERVICE and NET_RAW.",
	},
	{
		// The agent writes /opt/anvil, restarts the kubelet and wipes
		// block devices on the host: nothing it does works unprivileged.
		name: "anvil-agent", pkg: "./cmd/anvil-agent", ldflags: "-s -w", user: "0:0",
		description: "anvil-agent: the on-host agent (runs as root: it installs the kubelet and wipes disks).",
	},
}

// platform is one GOOS/GOARCH the images are built for.
type platform struct{ os, arch, variant string }

func (p platform) String() string { return p.os + "/" + p.arch }

var platforms = []platform{{"linux", "amd64", ""}, {"linux", "arm64", "v8"}}

// meta is what every image of one build shares.
type meta struct {
	version  string    // tag and org.opencontainers.image.version
	revision string    // commit
	source   string    // source URL
	repo     string    // image name without tag, e.g. anvil.dev (the image is <repo>/<name>)
	created  time.Time // SOURCE_DATE_EPOCH: every timestamp in the image
}

func (m meta) imageName(s spec) string { return m.repo + "/" + s.name }

// tarEntry is one file or directory of a layer.
type tarEntry struct {
	name     string // without leading slash
	mode     int64
	uid, gid int
	dir      bool
	data     []byte
}

// layerTar writes entries as an uncompressed tar with every timestamp set to
// created and no user or group names, so equal inputs give equal bytes.
func layerTar(entries []tarEntry, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: created, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// caBundle is the Mozilla (NSS) root store from the pinned
// golang.org/x/crypto/x509roots/fallback module, as PEM. It comes from go.sum
// rather than the build machine, so the image does not depend on where it was
// built. Roots carrying a distrust-after constraint are left out: a PEM file
// cannot express it and trusting them without it would be wider than NSS.
func caBundle() []byte {
	var buf bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return buf.Bytes()
}

// baseEntries are the files every image has besides its binary: a passwd and
// group naming root and nonroot (numeric ids resolve without them, but tools
// and $HOME lookups want them), CA roots for TLS to endpoints with public
// certificates (ticket webhooks, artifact and kubelet downloads, BMCs with
// such certificates), and a writable /tmp and home for when the root
// filesystem is not read-only.
func baseEntries() []tarEntry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonRoot, nonRoot)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonRoot)
	return []tarEntry{
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl", mode: 0o755, dir: true},
		{name: "etc/ssl/certs", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caBundle()},
		{name: "home", mode: 0o755, dir: true},
		{name: "home/nonroot", mode: 0o700, uid: nonRoot, gid: nonRoot, dir: true},
		{name: "root", mode: 0o700, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
	}
}

// layerFrom makes an OCI gzip layer of an uncompressed tar. compress/gzip
// writes no timestamp or name, so the compressed bytes are reproducible too.
func layerFrom(raw []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression))
}

// buildImage makes the image of one spec for one platform from its binary,
// on the base layer (nil: the binary alone).
func buildImage(s spec, p platform, m meta, base v1.Layer, binary []byte) (v1.Image, error) {
	raw, err := layerTar([]tarEntry{{name: s.name, mode: 0o755, data: binary}}, m.created)
	if err != nil {
		return nil, err
	}
	bin, err := layerFrom(raw)
	if err != nil {
		return nil, err
	}
	ts := v1.Time{Time: m.created}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	var layers []mutate.Addendum
	tool := "hack/images pod-images"
	if base != nil { // the pod images' binaries read no passwd, group or CA roots
		tool = "hack/images"
		layers = append(layers, mutate.Addendum{Layer: base, History: v1.History{Created: ts, CreatedBy: "hack/images: /etc/passwd, /etc/group, CA roots, /tmp", Comment: "shared by every Anvil image"}})
	}
	layers = append(layers, mutate.Addendum{Layer: bin, History: v1.History{Created: ts, CreatedBy: fmt.Sprintf("%s: CGO_ENABLED=0 GOOS=%s GOARCH=%s go build -trimpath %s", tool, p.os, p.arch, s.pkg)}})
	img, err = mutate.Append(img, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created, cf.Author = ts, ""
	cf.OS, cf.Architecture, cf.Variant = p.os, p.arch, p.variant
	cf.Config = v1.Config{
		Entrypoint: []string{"/" + s.name},
		User:       s.user,
		WorkingDir: "/",
		Labels:     m.labels(s),
	}
	return mutate.ConfigFile(img, cf)
}

func (m meta) labels(s spec) map[string]string {
	return map[string]string{
		annTitle:       s.name,
		annVersion:     m.version,
		annRevision:    m.revision,
		annSource:      m.source,
		annCreated:     m.created.UTC().Format(time.RFC3339),
		annDescription: s.description,
	}
}

// buildIndex makes the multi-platform index of one spec; binaries holds the
// binary per platform.
func buildIndex(s spec, m meta, platforms []platform, binaries map[platform][]byte) (v1.ImageIndex, error) {
	raw, err := layerTar(baseEntries(), m.created)
	if err != nil {
		return nil, err
	}
	base, err := layerFrom(raw)
	if err != nil {
		return nil, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		bin, ok := binaries[p]
		if !ok {
			return nil, fmt.Errorf("no %s binary of %s", p, s.name)
		}
		img, err := buildImage(s, p, m, base, bin)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", s.name, p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: p.os, Architecture: p.arch, Variant: p.variant},
		}})
	}
	ann := mutate.Annotations(idx, m.labels(s))
	out, ok := ann.(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("annotated index of %s is a %T", s.name, ann)
	}
	return out, nil
}

// writeArchive writes idx as an OCI image layout, tarred, to file. The
// layout's index.json names it <repo>/<name>:<version> for containerd and
// <version> for skopeo's oci-archive:FILE:TAG. The tar is written through a
// temporary file and renamed, so a failed build leaves no half archive.
func writeArchive(file string, s spec, m meta, idx v1.ImageIndex) error {
	dir, err := os.MkdirTemp(filepath.Dir(file), ".layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		annImageName: m.imageName(s) + ":" + m.version,
		annRefName:   m.version,
	})); err != nil {
		return err
	}
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := tarDir(f, dir, m.created); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// tarDir tars the files under dir in name order with fixed metadata.
func tarDir(w io.Writer, dir string, created time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	tw := tar.NewWriter(w)
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		h := &tar.Header{Name: name, Mode: 0o644, ModTime: created, Typeflag: tar.TypeReg, Size: fi.Size(), Format: tar.FormatPAX}
		if fi.IsDir() {
			h.Name, h.Mode, h.Typeflag, h.Size = name+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.IsDir() {
			if err := copyFile(tw, filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// validTag reports whether v can be an image tag (the distribution spec's
// [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}).
func validTag(v string) bool {
	if v == "" || len(v) > 128 || v[0] == '.' || v[0] == '-' {
		return false
	}
	return strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
	}) < 0
}
