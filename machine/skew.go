package machine

// KubeletStep reports whether Anvil upgrades a kubelet from running to
// version in place: no downgrade unless allowDowngrade, no skipped minor.
// It is the pure half of the upgrade's validation (the API server's skew
// and the class's artifact are checked when the upgrade starts), exported
// for Cluster API's in-place hooks (capi/inplace).
func KubeletStep(running, version string, allowDowngrade bool) error {
	_, err := kubeletSkew(running, version, allowDowngrade)
	return err
}
