package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"anvil.dev/anvil/internal/atomicfile"
)

// pki is the set of files the local control plane needs. They are made once
// and kept, so a restart keeps kubeconfigs and service-account tokens valid.
type pki struct {
	dir string
}

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// ensure creates whatever is missing: a CA, the API server's serving cert,
// an admin client cert and the service-account signing key.
func (p pki) ensure(serverIPs []net.IP, serverNames []string) error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	caKey, caCert, err := p.loadOrCreateCA()
	if err != nil {
		return err
	}
	if err := p.ensureLeaf("apiserver", caKey, caCert, pkix.Name{CommonName: "kube-apiserver"}, serverIPs, serverNames, x509.ExtKeyUsageServerAuth); err != nil {
		return err
	}
	if err := p.ensureLeaf("admin", caKey, caCert, pkix.Name{CommonName: "anvil-admin", Organization: []string{"system:masters"}}, nil, nil, x509.ExtKeyUsageClientAuth); err != nil {
		return err
	}
	// kube-controller-manager runs with --use-service-account-credentials=false,
	// so every controller acts as this identity. upstream's
	// system:kube-controller-manager ClusterRole is written for per-controller
	// service accounts and lacks, for example, "sign" on signers and CSR
	// status updates, hence system:masters for this local control plane.
	if err := p.ensureLeaf("controller-manager", caKey, caCert, pkix.Name{CommonName: "system:kube-controller-manager", Organization: []string{"system:masters"}}, nil, nil, x509.ExtKeyUsageClientAuth); err != nil {
		return err
	}
	if _, err := os.Stat(p.path("sa.key")); errors.Is(err, os.ErrNotExist) {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return err
		}
		if err := writeKey(p.path("sa.key"), k); err != nil {
			return err
		}
		pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(p.path("sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (p pki) loadOrCreateCA() (crypto.Signer, *x509.Certificate, error) {
	if k, c, err := loadPair(p.path("ca.key"), p.path("ca.crt")); err == nil {
		return k, c, nil
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "anvil-local-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.Public(), k)
	if err != nil {
		return nil, nil, err
	}
	if err := writeKey(p.path("ca.key"), k); err != nil {
		return nil, nil, err
	}
	if err := atomicfile.WriteFile(p.path("ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	return k, c, err
}

func (p pki) ensureLeaf(name string, caKey crypto.Signer, ca *x509.Certificate, subj pkix.Name, ips []net.IP, dns []string, usage x509.ExtKeyUsage) error {
	if _, c, err := loadPair(p.path(name+".key"), p.path(name+".crt")); err == nil && coversAll(c, ips, dns) && time.Until(c.NotAfter) > 30*24*time.Hour {
		return nil
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subj,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(2, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, k.Public(), caKey)
	if err != nil {
		return err
	}
	if err := writeKey(p.path(name+".key"), k); err != nil {
		return err
	}
	return atomicfile.WriteFile(p.path(name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func coversAll(c *x509.Certificate, ips []net.IP, dns []string) bool {
	for _, ip := range ips {
		if c.VerifyHostname(ip.String()) != nil {
			return false
		}
	}
	for _, d := range dns {
		if c.VerifyHostname(d) != nil {
			return false
		}
	}
	return true
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func writeKey(path string, k crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func loadPair(keyPath, certPath string) (crypto.Signer, *x509.Certificate, error) {
	kb, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	cb, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	kblk, _ := pem.Decode(kb)
	cblk, _ := pem.Decode(cb)
	if kblk == nil || cblk == nil {
		return nil, nil, fmt.Errorf("%s or %s is not PEM", keyPath, certPath)
	}
	k, err := x509.ParsePKCS8PrivateKey(kblk.Bytes)
	if err != nil {
		return nil, nil, err
	}
	c, err := x509.ParseCertificate(cblk.Bytes)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s is not a signing key", keyPath)
	}
	return signer, c, nil
}
