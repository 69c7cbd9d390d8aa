package delivery

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/test/pxetest"
)

// TestMediaIPXE: the ISO's iPXE runs autoexec.ipxe, and with HTTPS it
// trusts the boot server's CA (its fingerprint is in the binary), else the
// ISO could not fetch its script from an https:// base URL.
func TestMediaIPXE(t *testing.T) {
	ca, err := pxetest.NewCA("boot CA")
	if err != nil {
		t.Fatal(err)
	}
	autoexec, err := ipxebin.Autoexec(ipxebin.EFI.Data)
	if err != nil {
		t.Fatal(err)
	}
	fp := sha256.Sum256(ca.Cert.Raw)

	plain, err := mediaIPXE(nil)
	if err != nil || !bytes.Equal(plain, autoexec) {
		t.Fatalf("without a CA: want the autoexec build unchanged (err %v)", err)
	}
	trusted, err := mediaIPXE(ca.Cert.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(trusted, fp[:]) {
		t.Error("with a CA: the ISO's iPXE does not hold the CA's fingerprint")
	}
	if len(trusted) != len(autoexec) || bytes.Equal(trusted, autoexec) {
		t.Error("with a CA: want the autoexec build with only the trust anchor replaced")
	}
	if _, err := mediaIPXE([]byte("not a certificate")); err == nil {
		t.Error("a CA that is not a certificate: want an error")
	}
}
