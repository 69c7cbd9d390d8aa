// Package testenv holds test helpers shared by the agent packages.
package testenv

import (
	"anvil.dev/anvil/test/need"
	"os"
	"os/exec"
	"testing"
)

// Require skips the test when ok is false, or fails it when CI=true: CI
// installs every dependency, so a missing one there is a broken setup, not
// a reason to skip. (Only tests read the environment.)
func Require(t testing.TB, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	need.OrSkip(t, "%s", why)
}

// RequireRoot needs uid 0.
func RequireRoot(t testing.TB) {
	t.Helper()
	Require(t, os.Geteuid() == 0, "needs root")
}

// RequireCommands needs each command on PATH; the Debian package that
// ships it is named in the message.
func RequireCommands(t testing.TB, cmds map[string]string) {
	t.Helper()
	for cmd, pkg := range cmds {
		_, err := exec.LookPath(cmd)
		Require(t, err == nil, cmd+" not found (Debian package "+pkg+")")
	}
}
