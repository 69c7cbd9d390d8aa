// Package clusterctl makes Anvil a clusterctl provider: a local provider
// repository (infrastructure-anvil/<version>/ with
// infrastructure-components.yaml and metadata.yaml) that `clusterctl init
// --infrastructure anvil` installs from. The components are `kustomize
// build capi/clusterctl` (deploy/ reshaped for clusterctl, see its
// kustomization.yaml), built when asked, so they never drift from deploy/.
package clusterctl

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	// ProviderName is the name clusterctl knows Anvil by (--infrastructure anvil).
	ProviderName = "anvil"
	// ProviderLabel is clusterctl's directory name for it in a repository
	// (its manifest label: <type>-<name>).
	ProviderLabel = "infrastructure-" + ProviderName
	// ComponentsFile and MetadataFile are the files clusterctl reads from
	// a release's directory.
	ComponentsFile = "infrastructure-components.yaml"
	MetadataFile   = "metadata.yaml"
)

//go:embed metadata.yaml
var metadata []byte

// Metadata is metadata.yaml: the Cluster API contract of each release series.
func Metadata() []byte { return append([]byte(nil), metadata...) }

// Components is infrastructure-components.yaml: the kustomize build of
// capi/clusterctl in the repository at root.
func Components(root string) ([]byte, error) {
	dir := filepath.Join(root, "capi", "clusterctl")
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return res.AsYaml()
}

// WriteRepository writes release ver (semantic, v0.1.0) of the provider
// (from the repository at root) into the local clusterctl repository at dir and returns the components file's path:
// point clusterctl's providers: url at it (file://<path>).
func WriteRepository(root, dir, ver string) (string, error) {
	if err := checkVersion(ver); err != nil {
		return "", err
	}
	comps, err := Components(root)
	if err != nil {
		return "", err
	}
	rel := filepath.Join(dir, ProviderLabel, ver)
	if err := os.MkdirAll(rel, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(rel, MetadataFile), metadata, 0o644); err != nil {
		return "", err
	}
	p := filepath.Join(rel, ComponentsFile)
	return p, os.WriteFile(p, comps, 0o644)
}

// checkVersion refuses what clusterctl would: a version that is not
// semantic, or that no release series of metadata.yaml covers.
func checkVersion(ver string) error {
	v, err := version.ParseSemantic(ver)
	if err != nil || ver[0] != 'v' {
		return fmt.Errorf("version %q: clusterctl needs a semantic version with a leading v (v0.1.0)", ver)
	}
	var md struct {
		ReleaseSeries []struct {
			Major, Minor uint
			Contract     string
		} `json:"releaseSeries"`
	}
	if err := yaml.Unmarshal(metadata, &md); err != nil {
		return fmt.Errorf("capi/clusterctl/metadata.yaml: %w", err)
	}
	for _, s := range md.ReleaseSeries {
		if s.Major == v.Major() && s.Minor == v.Minor() {
			return nil
		}
	}
	return fmt.Errorf("version %s: no release series %d.%d in capi/clusterctl/metadata.yaml (add it with its Cluster API contract)", ver, v.Major(), v.Minor())
}
