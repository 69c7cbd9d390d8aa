// Command images builds the OCI images of anvil and anvil-agent for
// linux/amd64 and linux/arm64 without a container daemon or registry: it
// cross-compiles the static binaries with the go command, puts each on a
// minimal root filesystem, and writes one OCI image layout per image, tarred,
// as <out>/<name>-<version>.oci.tar. Every timestamp is SOURCE_DATE_EPOCH, so
// the same commit and toolchain give the same digests.
//
// `images pod-images -out DIR` instead writes the host image's own pod
// images (pod.go): anvil.local/pause:1 and anvil.local/web:1, linux/amd64.
//
// It is its own module so go-containerregistry stays out of anvil's go.mod.
// `make images` runs it; see the README's Images section for loading.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type options struct {
	repoRoot  string // the anvil module
	out       string
	goCmd     string
	meta      meta
	specs     []spec     // the images to build (all by default)
	platforms []platform // each image's platforms (all by default)
}

func main() {
	run := run
	if len(os.Args) > 1 && os.Args[1] == "pod-images" {
		run, os.Args = runPodImages, os.Args[1:]
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	var o options
	var epoch, only, plat string
	fs.StringVar(&o.repoRoot, "repo-root", "../..", "root of the anvil repository (the module whose ./cmd/anvil is built)")
	fs.StringVar(&o.out, "out", "../../bin/images", "directory the .oci.tar archives are written to")
	fs.StringVar(&o.goCmd, "go", "go", "go command")
	fs.StringVar(&o.meta.version, "version", "", "version: the binaries' main.version, the image tag and its org.opencontainers.image.version label (required)")
	fs.StringVar(&o.meta.revision, "revision", "", "commit for the org.opencontainers.image.revision label (default: git rev-parse HEAD in -repo-root)")
	fs.StringVar(&o.meta.source, "source", "https://anvil.dev/anvil", "source URL for the org.opencontainers.image.source label")
	fs.StringVar(&o.meta.repo, "repository", "anvil.dev", "image name prefix: the images are <repository>/anvil and <repository>/anvil-agent")
	fs.StringVar(&epoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Unix seconds every timestamp in the images is set to (default $SOURCE_DATE_EPOCH, else the commit time of HEAD)")
	fs.StringVar(&only, "image", "", "build only this image (anvil or anvil-agent); default both. The lab's host image carries the anvil image alone")
	fs.StringVar(&plat, "platform", "", "build only this platform (linux/amd64 or linux/arm64); default both")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := o.choose(only, plat); err != nil {
		return err
	}
	if err := o.complete(epoch); err != nil {
		return err
	}
	files, err := build(o)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Println(f)
	}
	return nil
}

// choose narrows the images and platforms to one each where asked.
func (o *options) choose(only, plat string) error {
	o.specs, o.platforms = specs, platforms
	if only != "" {
		o.specs = nil
		for _, s := range specs {
			if s.name == only {
				o.specs = []spec{s}
			}
		}
		if o.specs == nil {
			return fmt.Errorf("-image %q: want anvil or anvil-agent", only)
		}
	}
	if plat != "" {
		o.platforms = nil
		for _, p := range platforms {
			if p.String() == plat {
				o.platforms = []platform{p}
			}
		}
		if o.platforms == nil {
			return fmt.Errorf("-platform %q: want linux/amd64 or linux/arm64", plat)
		}
	}
	return nil
}

// complete checks the options and fills the defaults that need git.
func (o *options) complete(epoch string) error {
	if !validTag(o.meta.version) {
		return fmt.Errorf("-version %q is not an image tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}); set VERSION= for make images", o.meta.version)
	}
	if o.meta.repo == "" || strings.HasSuffix(o.meta.repo, "/") || strings.ContainsAny(o.meta.repo, ": ") {
		return fmt.Errorf("-repository %q must be a registry/path prefix without a tag or trailing slash", o.meta.repo)
	}
	abs, err := filepath.Abs(o.repoRoot)
	if err != nil {
		return err
	}
	o.repoRoot = abs
	if _, err := os.Stat(filepath.Join(abs, "cmd", "anvil")); err != nil {
		return fmt.Errorf("-repo-root %s is not the anvil repository: %w", abs, err)
	}
	if o.meta.revision == "" {
		if o.meta.revision, err = git(abs, "rev-parse", "HEAD"); err != nil {
			return fmt.Errorf("no -revision given and %w", err)
		}
	}
	if epoch == "" {
		if epoch, err = git(abs, "log", "-1", "--format=%ct"); err != nil {
			return fmt.Errorf("no -source-date-epoch or SOURCE_DATE_EPOCH given and %w", err)
		}
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || sec < 0 {
		return fmt.Errorf("-source-date-epoch (SOURCE_DATE_EPOCH) %q is not Unix seconds", epoch)
	}
	o.meta.created = time.Unix(sec, 0).UTC()
	return nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// build compiles every binary and writes every archive; it returns the
// archives' paths.
func build(o options) ([]string, error) {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "anvil-images-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if o.specs == nil {
		o.specs = specs
	}
	if o.platforms == nil {
		o.platforms = platforms
	}
	var files []string
	for _, s := range o.specs {
		binaries := map[platform][]byte{}
		for _, p := range o.platforms {
			bin := filepath.Join(tmp, p.os+"-"+p.arch, s.name)
			if err := goBuild(o, s, p, bin); err != nil {
				return nil, err
			}
			if binaries[p], err = os.ReadFile(bin); err != nil {
				return nil, err
			}
		}
		idx, err := buildIndex(s, o.meta, o.platforms, binaries)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(o.out, s.name+"-"+o.meta.version+".oci.tar")
		if err := writeArchive(file, s, o.meta, idx); err != nil {
			return nil, fmt.Errorf("write %s: %w", file, err)
		}
		files = append(files, file)
	}
	return files, nil
}

// goBuild builds like `make build`: static, -trimpath, the version stamped.
func goBuild(o options, s spec, p platform, out string) error {
	ldflags := strings.TrimSpace("-X main.version=" + o.meta.version + " " + s.ldflags)
	cmd := exec.Command(o.goCmd, "build", "-trimpath", "-ldflags", ldflags, "-o", out, s.pkg)
	cmd.Dir = o.repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.os, "GOARCH="+p.arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s for %s: %w", s.pkg, p, err)
	}
	return nil
}
