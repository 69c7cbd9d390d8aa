package netboot_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/pxe/netboot"
	"anvil.dev/anvil/test/pxetest"
)

// TestTLSFlags checks --http-tls-cert-file, --http-tls-key-file and
// --http-tls-ca-file: each bad combination is refused with an error that
// names the flag to fix.
func TestTLSFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, data, 0o600))
		return p
	}
	ca, err := pxetest.NewCA("boot CA")
	must(t, err)
	other, err := pxetest.NewCA("other CA")
	must(t, err)
	ip := []net.IP{net.IPv4(10, 0, 0, 1)}
	issue := func(c *pxetest.CA, o pxetest.ServerCert) (string, string) {
		cert, key, err := c.Issue(o)
		must(t, err)
		n := filepath.Base(t.TempDir())
		return write(n+".crt", cert), write(n+".key", key)
	}
	caFile := write("ca.crt", ca.PEM)
	cert, key := issue(ca, pxetest.ServerCert{IPs: ip})
	_, otherKey := issue(ca, pxetest.ServerCert{IPs: ip})
	foreign, foreignKey := issue(other, pxetest.ServerCert{IPs: ip})
	expired, expiredKey := issue(ca, pxetest.ServerCert{IPs: ip, NotAfter: time.Now().Add(-time.Hour)})
	ec, ecKey := issue(ca, pxetest.ServerCert{IPs: ip, ECDSA: true})

	for _, tc := range []struct {
		name           string
		cert, key, ca  string
		baseURL        string
		want, wantAlso string // substrings of the error; "" with want: no error
	}{
		{"valid", cert, key, caFile, "", "", ""},
		{"valid with base URL", cert, key, caFile, "https://10.0.0.1:8443", "", ""},
		{"no key", cert, "", caFile, "", "--http-tls-key-file is missing", ""},
		{"no CA", cert, key, "", "", "--http-tls-ca-file is missing", ""},
		{"unreadable cert", filepath.Join(dir, "nope.crt"), key, caFile, "", "--http-tls-cert-file", "no such file"},
		{"unreadable CA", cert, key, filepath.Join(dir, "nope.crt"), "", "--http-tls-ca-file", "no such file"},
		{"key of another certificate", cert, otherKey, caFile, "", "--http-tls-key-file", "private key does not match"},
		{"issued by another CA", foreign, foreignKey, caFile, "", "--http-tls-cert-file", "is not a server certificate issued by --http-tls-ca-file"},
		{"expired", expired, expiredKey, caFile, "", "--http-tls-cert-file", "expired"},
		{"ECDSA key", ec, ecKey, caFile, "", "--http-tls-cert-file", "iPXE needs RSA"},
		{"CA file is not a CA", cert, key, cert, "", "--http-tls-ca-file", "not a CA certificate"},
		{"plain base URL", cert, key, caFile, "http://10.0.0.1", "--http-base-url", "https://"},
		{"base URL not in the certificate", cert, key, caFile, "https://boot.example", "--http-base-url", "does not name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := netboot.DefaultOptions()
			o.HTTPBoot, o.HTTPAddr = true, "127.0.0.1:443"
			o.Cache = env.Manager.GetCache()
			o.HTTPTLSCertFile, o.HTTPTLSKeyFile, o.HTTPTLSCAFile, o.HTTPBaseURL = tc.cert, tc.key, tc.ca, tc.baseURL
			err := o.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.wantAlso) {
				t.Fatalf("Validate: %v; want an error with %q and %q", err, tc.want, tc.wantAlso)
			}
		})
	}
}

// TestBootCA: what the virtual media ISOs' iPXE is patched to trust is
// the CA of --http-tls-ca-file; a bad file is refused naming that flag.
func TestBootCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := pxetest.NewCA("boot CA")
	must(t, err)
	good := filepath.Join(dir, "ca.crt")
	must(t, os.WriteFile(good, ca.PEM, 0o600))
	junk := filepath.Join(dir, "junk.crt")
	must(t, os.WriteFile(junk, []byte("not PEM"), 0o600))

	if der, err := (&netboot.Options{}).BootCA(); der != nil || err != nil {
		t.Errorf("plain HTTP: got %d bytes, %v; want nothing", len(der), err)
	}
	der, err := (&netboot.Options{HTTPTLSCAFile: good}).BootCA()
	if err != nil || string(der) != string(ca.Cert.Raw) {
		t.Errorf("good CA file: got %d bytes, %v; want the CA's DER", len(der), err)
	}
	for _, f := range []string{junk, filepath.Join(dir, "missing.crt")} {
		if _, err := (&netboot.Options{HTTPTLSCAFile: f}).BootCA(); err == nil || !strings.Contains(err.Error(), "--http-tls-ca-file") {
			t.Errorf("%s: got %v, want an error naming --http-tls-ca-file", filepath.Base(f), err)
		}
	}
}
