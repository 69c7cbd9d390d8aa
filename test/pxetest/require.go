package pxetest

import (
	"os"
	"testing"

	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/qemuaccel"
)

// RequireOVMF skips the test unless ANVIL_QEMU_TEST=1 (a UEFI boot under
// TCG takes a minute), then requires what it needs as netnstest does
// (root, qemu-system-x86_64, ip, the extra commands, OVMF) and logs the
// accelerator QEMU will use.
func RequireOVMF(t testing.TB, commands ...string) {
	t.Helper()
	if os.Getenv("ANVIL_QEMU_TEST") != "1" {
		t.Skip("set ANVIL_QEMU_TEST=1 to boot QEMU VMs")
	}
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, append([]string{"qemu-system-x86_64", "ip"}, commands...)...)
	_, err := os.Stat("/usr/share/OVMF/OVMF_CODE_4M.fd")
	netnstest.Require(t, err == nil, "OVMF missing (package ovmf)")
	t.Log(qemuaccel.Choose())
}
