package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The pod images the host image ships (hack/hostimage): there is no
// registry, so its containerd imports these at first boot. Each is one
// static binary and nothing else, for linux/amd64 (the image's only
// architecture).
const (
	podRepo    = "anvil.local"
	podVersion = "1"
)

var podSpecs = []spec{
	{name: "pause", pkg: "./pod/pause", user: "65535:65535", description: "The host image's pod sandbox: holds the namespaces, reaps zombies, exits on SIGTERM."},
	{name: "web", pkg: "./pod/web", user: "65532:65532", description: "The host image's test workload: GET / answers its hostname and a request count; PORT (8080)."},
}

// runPodImages is `images pod-images`: <out>/<name>.oci.tar for each of
// podSpecs, named anvil.local/<name>:1 for containerd. Timestamps are
// -source-date-epoch (0 by default), so an unchanged source and toolchain
// give the same bytes and the host image's cache key stays put.
func runPodImages(args []string) error {
	fs := flag.NewFlagSet("pod-images", flag.ContinueOnError)
	out := fs.String("out", "../../bin/hostimage/pod-images", "directory the .oci.tar archives are written to")
	goCmd := fs.String("go", "go", "go command")
	epoch := fs.String("source-date-epoch", "0", "Unix seconds every timestamp in the images is set to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("pod-images: unexpected arguments %q", fs.Args())
	}
	sec, err := strconv.ParseInt(*epoch, 10, 64)
	if err != nil || sec < 0 {
		return fmt.Errorf("pod-images: -source-date-epoch %q is not Unix seconds", *epoch)
	}
	files, err := buildPodImages(*out, *goCmd, time.Unix(sec, 0).UTC())
	for _, f := range files {
		fmt.Println(f)
	}
	return err
}

func buildPodImages(out, goCmd string, created time.Time) ([]string, error) {
	here, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(here, "pod", "pause", "main.go")); err != nil {
		return nil, fmt.Errorf("pod-images runs in hack/images (cd hack/images && go run . pod-images): %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "anvil-pod-images-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	m := meta{version: podVersion, revision: "", source: "https://anvil.dev/anvil", repo: podRepo, created: created}
	p := platform{"linux", "amd64", ""}
	var files []string
	for _, s := range podSpecs {
		bin := filepath.Join(tmp, s.name)
		o := options{repoRoot: here, goCmd: goCmd, meta: m}
		s.ldflags = "-s -w"
		if err := goBuild(o, s, p, bin); err != nil {
			return files, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return files, err
		}
		img, err := buildImage(s, p, m, nil, data)
		if err != nil {
			return files, fmt.Errorf("%s: %w", s.name, err)
		}
		idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: p.os, Architecture: p.arch},
		}})
		file := filepath.Join(out, s.name+".oci.tar")
		if err := writeArchive(file, s, m, idx); err != nil {
			return files, fmt.Errorf("write %s: %w", file, err)
		}
		files = append(files, file)
	}
	return files, nil
}
