package netboot

import (
	"bytes"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/ipxebin"
)

// TLS flags: the boot server's certificate and key, and the CA that issued
// it, which the iPXE binaries Anvil serves are patched to trust.
const (
	flagTLSCert = "--http-tls-cert-file"
	flagTLSKey  = "--http-tls-key-file"
	flagTLSCA   = "--http-tls-ca-file"
)

// TLS reports whether HTTPS boot is configured.
func (o *Options) TLS() bool {
	return o.HTTPTLSCertFile != "" || o.HTTPTLSKeyFile != "" || o.HTTPTLSCAFile != ""
}

// bootTLS is the loaded HTTPS configuration.
type bootTLS struct {
	chain tls.Certificate // leaf, intermediates, CA
	caDER []byte
}

// loadTLS reads and checks the three files: all three given, key matching
// the certificate, the certificate issued by the CA (directly or through
// intermediates in the certificate file) and valid at now, and RSA keys,
// since the iPXE builds served verify RSA signatures only. Each error
// names the flag to fix.
func (o *Options) loadTLS(now time.Time) (*bootTLS, error) {
	var missing []error
	for _, f := range []struct{ flag, v string }{{flagTLSCert, o.HTTPTLSCertFile}, {flagTLSKey, o.HTTPTLSKeyFile}, {flagTLSCA, o.HTTPTLSCAFile}} {
		if f.v == "" {
			missing = append(missing, fmt.Errorf("HTTPS boot needs %s, %s and %s: %s is missing", flagTLSCert, flagTLSKey, flagTLSCA, f.flag))
		}
	}
	if len(missing) > 0 {
		return nil, errors.Join(missing...)
	}
	caPEM, err := os.ReadFile(o.HTTPTLSCAFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagTLSCA, err)
	}
	cas, err := parseCerts(caPEM)
	if err != nil || len(cas) != 1 {
		return nil, fmt.Errorf("%s %s: want exactly one PEM certificate (the CA iPXE is to trust): %v", flagTLSCA, o.HTTPTLSCAFile, err)
	}
	ca := cas[0]
	if !ca.IsCA {
		return nil, fmt.Errorf("%s %s: %q is not a CA certificate (basicConstraints CA:TRUE)", flagTLSCA, o.HTTPTLSCAFile, ca.Subject)
	}
	if err := validAt(ca, now); err != nil {
		return nil, fmt.Errorf("%s %s: %w", flagTLSCA, o.HTTPTLSCAFile, err)
	}
	if _, ok := ca.PublicKey.(*rsa.PublicKey); !ok {
		return nil, fmt.Errorf("%s %s: the CA key is %s; the iPXE builds served verify RSA signatures only", flagTLSCA, o.HTTPTLSCAFile, ca.PublicKeyAlgorithm)
	}
	for _, f := range []struct{ flag, path string }{{flagTLSCert, o.HTTPTLSCertFile}, {flagTLSKey, o.HTTPTLSKeyFile}} {
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	pair, err := tls.LoadX509KeyPair(o.HTTPTLSCertFile, o.HTTPTLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("%s %s and %s %s: %w", flagTLSCert, o.HTTPTLSCertFile, flagTLSKey, o.HTTPTLSKeyFile, err)
	}
	leaf := pair.Leaf
	if _, ok := leaf.PublicKey.(*rsa.PublicKey); !ok {
		return nil, fmt.Errorf("%s %s: the key is %s; iPXE needs RSA", flagTLSCert, o.HTTPTLSCertFile, leaf.PublicKeyAlgorithm)
	}
	if err := validAt(leaf, now); err != nil {
		return nil, fmt.Errorf("%s %s: %w", flagTLSCert, o.HTTPTLSCertFile, err)
	}
	// The chain sent: the file's certificates without a copy of the CA,
	// then the CA.
	var chain [][]byte
	inter := x509.NewCertPool()
	for i, der := range pair.Certificate {
		if bytes.Equal(der, ca.Raw) {
			continue
		}
		if i > 0 {
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return nil, fmt.Errorf("%s %s: certificate %d: %w", flagTLSCert, o.HTTPTLSCertFile, i, err)
			}
			inter.AddCert(c)
		}
		chain = append(chain, der)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return nil, fmt.Errorf("%s %s is not a server certificate issued by %s %s (%q): %w", flagTLSCert, o.HTTPTLSCertFile, flagTLSCA, o.HTTPTLSCAFile, ca.Subject, err)
	}
	if o.HTTPBaseURL != "" {
		u, err := url.Parse(o.HTTPBaseURL)
		if err != nil || u.Scheme != "https" {
			return nil, fmt.Errorf("--http-base-url %q: HTTPS boot (%s) needs an https:// URL", o.HTTPBaseURL, flagTLSCert)
		}
		if err := leaf.VerifyHostname(u.Hostname()); err != nil {
			return nil, fmt.Errorf("%s %s does not name --http-base-url's host: %w", flagTLSCert, o.HTTPTLSCertFile, err)
		}
	}
	pair.Certificate = append(chain, ca.Raw)
	return &bootTLS{chain: pair, caDER: ca.Raw}, nil
}

// BootCA reads the CA of --http-tls-ca-file (DER), for what else must
// trust the boot server: the virtual media ISOs' iPXE. Nil without HTTPS.
// Validate checks the whole HTTPS configuration; this only reads the CA.
func (o *Options) BootCA() ([]byte, error) {
	if o.HTTPTLSCAFile == "" {
		return nil, nil
	}
	data, err := os.ReadFile(o.HTTPTLSCAFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagTLSCA, err)
	}
	cas, err := parseCerts(data)
	if err != nil || len(cas) != 1 {
		return nil, fmt.Errorf("%s %s: want exactly one PEM CERTIFICATE (%v)", flagTLSCA, o.HTTPTLSCAFile, err)
	}
	return cas[0].Raw, nil
}

func parseCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return out, nil
}

func validAt(c *x509.Certificate, now time.Time) error {
	switch {
	case now.After(c.NotAfter):
		return fmt.Errorf("%q expired at %s", c.Subject, c.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(c.NotBefore):
		return fmt.Errorf("%q is not valid before %s", c.Subject, c.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

// trustedIPXEDir writes the iPXE EFI builds patched to trust caDER into a
// new directory under parent (TFTP's and /ipxe/'s root with HTTPS) under
// the names DHCP gives firmware clients: the x86-64 ipxe.efi also as
// snponly.efi, and ipxebin.SNP (an arm64 build, file(1) says) as
// snp-arm64.efi, so they chain into an iPXE that speaks HTTPS and trusts
// the CA. Debian's BIOS undionly.kpxe has no HTTPS and is not there.
func trustedIPXEDir(parent string, caDER []byte) (string, error) {
	dir, err := os.MkdirTemp(parent, "anvil-ipxe-")
	if err != nil {
		return "", fmt.Errorf("iPXE binaries for HTTPS: %w", err)
	}
	for _, f := range []struct {
		b     ipxebin.Build
		names []string
	}{{ipxebin.EFI, []string{"ipxe.efi", "snponly.efi"}}, {ipxebin.SNP, []string{"snp-arm64.efi"}}} {
		data, err := ipxebin.Trust(f.b, caDER)
		if err == nil {
			for _, n := range f.names {
				if err = os.WriteFile(filepath.Join(dir, n), data, 0o444); err != nil {
					break
				}
			}
		}
		if err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("iPXE binaries for HTTPS (%s): %w", flagTLSCA, err)
		}
	}
	return dir, nil
}

// httpsBaseURL is baseURL's default with HTTPS.
func httpsBaseURL(host, port string) string {
	if port == "" || port == "443" {
		return "https://" + host
	}
	return "https://" + net.JoinHostPort(host, port)
}

// httpTLS is httpboot's TLS configuration, nil without HTTPS.
func (o *Options) httpTLS() *tls.Config {
	if o.tls == nil {
		return nil
	}
	return httpboot.TLSConfig(o.tls.chain)
}

// caInitrd is the initrd that puts the CA into the booted OS's roots (see
// httpboot.CAInitrd), nil without HTTPS.
func (o *Options) caInitrd() []byte {
	if o.tls == nil {
		return nil
	}
	return httpboot.CAInitrd(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.tls.caDER}))
}
