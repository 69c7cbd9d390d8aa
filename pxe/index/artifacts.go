package index

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/internal/safepath"
)

// ArtifactURLPrefix is where httpboot serves artifacts.
const ArtifactURLPrefix = "/artifacts/"

// Artifact paths (relative to ArtifactURLPrefix). Every artifact of a
// MachineClass lives under <namespace>/<class>/, so two classes can expect
// different digests for files of the same name, and each artifact gets its
// own role directory, so two artifacts of one class never collide:
//
//	<ns>/<class>/kernel/<file>
//	<ns>/<class>/initrd/<i>/<file>
//	<ns>/<class>/image/<file>
//	<ns>/<class>/kubelet/<version>/<file>
//
// <file> is the last element of the artifact's URL path or relative path
// (characters other than [A-Za-z0-9._-] replaced by '_'), kept so logs and
// consoles show a recognisable name. A relative artifact is read from that
// path under the artifact directory; an http(s) artifact is fetched into
// the cache directory, keyed by its sha256.

// KernelPath returns the artifact path of a class's kernel.
func KernelPath(class types.NamespacedName, a metalv1.Artifact) string {
	return classDir(class) + "kernel/" + fileName(a.URL, "vmlinuz")
}

// InitrdPath returns the artifact path of a class's i-th initrd.
func InitrdPath(class types.NamespacedName, i int, a metalv1.Artifact) string {
	return fmt.Sprintf("%sinitrd/%d/%s", classDir(class), i, fileName(a.URL, "initrd"))
}

// ImagePath returns the artifact path of a class's OS image.
func ImagePath(class types.NamespacedName, a metalv1.Artifact) string {
	return classDir(class) + "image/" + fileName(a.URL, "image")
}

// KubeletPath returns the artifact path of a class's kubelet for version
// (the agent downloads it from ArtifactURLPrefix + this path).
func KubeletPath(class types.NamespacedName, k metalv1.KubeletArtifact) string {
	return classDir(class) + "kubelet/" + sanitize(k.Version, "version") + "/" + fileName(k.URL, "kubelet")
}

func classDir(c types.NamespacedName) string { return c.Namespace + "/" + c.Name + "/" }

// fileName is the sanitised last element of an artifact URL or path.
func fileName(raw, fallback string) string {
	p := raw
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		p = u.Path
	}
	return sanitize(path.Base(p), fallback)
}

func sanitize(s, fallback string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	out := strings.Trim(string(b), ".")
	if out == "" || len(out) > 128 {
		return fallback
	}
	return out
}

// classEntry is one MachineClass as the boot services need it.
type classEntry struct {
	key       types.NamespacedName
	spec      httpboot.BootSpec
	specErr   error                        // kernel or initrds unusable: no BootSpec
	otherErr  error                        // image or kubelets unusable (logged)
	artifacts map[string]httpboot.Artifact // by artifact path
}

// parseClass turns a MachineClass into its BootSpec and artifact table.
// Artifacts that are fine are served even when another one of the class
// is broken (the kubelets of a class with a bad image, say).
func parseClass(c *metalv1.MachineClass) *classEntry {
	key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
	e := &classEntry{key: key, artifacts: map[string]httpboot.Artifact{}}
	var bootErrs, otherErrs []error
	add := func(field, p string, a metalv1.Artifact) (string, error) {
		art, err := toArtifact(a)
		if err != nil {
			return "", fmt.Errorf("%s: %w", field, err)
		}
		e.artifacts[p] = art
		return ArtifactURLPrefix + p, nil
	}
	kernel, err := add("spec.kernel.url", KernelPath(key, c.Spec.Kernel), c.Spec.Kernel)
	if err != nil {
		bootErrs = append(bootErrs, err)
	}
	e.spec.KernelURL = kernel
	for i, a := range c.Spec.Initrds {
		u, err := add(fmt.Sprintf("spec.initrds[%d].url", i), InitrdPath(key, i, a), a)
		if err != nil {
			bootErrs = append(bootErrs, err)
		}
		e.spec.InitrdURLs = append(e.spec.InitrdURLs, u)
	}
	e.spec.Args = append([]string(nil), c.Spec.KernelArgs...)
	if c.Spec.Image != nil {
		if _, err := add("spec.image.url", ImagePath(key, *c.Spec.Image), *c.Spec.Image); err != nil {
			otherErrs = append(otherErrs, err)
		}
	}
	for i, k := range c.Spec.Kubelets {
		if _, err := add(fmt.Sprintf("spec.kubelets[%d].url", i), KubeletPath(key, k), k.Artifact); err != nil {
			otherErrs = append(otherErrs, err)
		}
	}
	if len(bootErrs) > 0 {
		e.specErr = fmt.Errorf("MachineClass %s: %w", key, errors.Join(bootErrs...))
	}
	if len(otherErrs) > 0 {
		e.otherErr = fmt.Errorf("MachineClass %s: %w", key, errors.Join(otherErrs...))
	}
	return e
}

// toArtifact maps a class artifact to what httpboot serves: an http(s) URL
// is fetched and cached, anything else must be a plain relative path
// inside the artifact directory. Errors never repeat the URL, which may
// carry a token.
func toArtifact(a metalv1.Artifact) (httpboot.Artifact, error) {
	if len(a.SHA256) != 64 {
		return httpboot.Artifact{}, errors.New("sha256 must be 64 hex digits")
	}
	raw := strings.TrimSpace(a.URL)
	lower := strings.ToLower(raw)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return httpboot.Artifact{}, errors.New("not a valid http(s) URL")
		}
		return httpboot.Artifact{SHA256: a.SHA256, URL: raw}, nil
	}
	if strings.Contains(raw, "://") {
		return httpboot.Artifact{}, errors.New("only http(s) URLs or paths relative to the artifact directory are supported")
	}
	rel, err := safepath.Clean(raw)
	if err != nil {
		return httpboot.Artifact{}, fmt.Errorf("must be an http(s) URL or a path relative to the artifact directory (%v)", err)
	}
	return httpboot.Artifact{SHA256: a.SHA256, File: rel}, nil
}
