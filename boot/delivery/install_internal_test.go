package delivery

import (
	"testing"

	"anvil.dev/anvil/agent"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// recordInstall copies the installer's outcome and reason into the Host's
// typed status fields by value: the two lists must stay the same words (the
// API server refuses any other).
func TestInstallWordsMatchTheAPI(t *testing.T) {
	for wire, api := range map[string]string{
		string(agent.InstallSucceeded):        string(metalv1.InstallInstalled),
		string(agent.InstallFailed):           string(metalv1.InstallFailed),
		string(agent.InstallNoRootDevice):     string(metalv1.InstallNoRootDevice),
		string(agent.InstallDownloadFailed):   string(metalv1.InstallDownloadFailed),
		string(agent.InstallChecksumMismatch): string(metalv1.InstallChecksumMismatch),
		string(agent.InstallWriteFailed):      string(metalv1.InstallWriteFailed),
		string(agent.InstallSeedFailed):       string(metalv1.InstallSeedFailed),
	} {
		if wire != api {
			t.Errorf("agent says %q where the API says %q", wire, api)
		}
	}
}
