package machine

import (
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// KubeletStep reports whether Anvil upgrades a kubelet from running to
// version in place: no downgrade unless allowDowngrade, no skipped minor.
// It is the pure half of the upgrade's validation (the API server's skew
// and the class's artifact are checked when the upgrade starts), exported
// for Cluster API's in-place hooks (capi/inplace).
func KubeletStep(running, version string, allowDowngrade bool) error {
	_, err := kubeletSkew(running, version, allowDowngrade)
	return err
}

// APISkew reports whether a kubelet version fits the API server's
// (apiVersion, its git version as discovery reports it): not newer than
// its minor, at most 3 minors older. The same rule the upgrade applies,
// exported for upgrade previews (ops).
func APISkew(apiVersion, version string) error {
	api, err := utilversion.ParseGeneric(apiVersion)
	if err != nil {
		return fmt.Errorf("the API server's version %q is not a version", apiVersion)
	}
	to, err := utilversion.ParseSemantic(version)
	if err != nil {
		return fmt.Errorf("spec.version %q is not a version", version)
	}
	return apiSkew(api, to, version)
}
