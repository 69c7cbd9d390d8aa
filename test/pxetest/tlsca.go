package pxetest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// CA is a test certificate authority (RSA: the iPXE builds Anvil serves
// verify RSA signatures only).
type CA struct {
	Cert *x509.Certificate
	Key  *rsa.PrivateKey
	PEM  []byte // the certificate
}

// NewCA makes a self-signed CA valid for a day.
func NewCA(name string) (*CA, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: c, Key: k, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// ServerCert describes a certificate Issue makes.
type ServerCert struct {
	IPs []net.IP
	// NotAfter, default a day from now.
	NotAfter time.Time
	// ECDSA makes a P-256 key instead of RSA 2048.
	ECDSA bool
}

// Issue signs a server certificate; it returns certificate and key in PEM.
func (ca *CA) Issue(o ServerCert) (certPEM, keyPEM []byte, err error) {
	var key crypto.Signer
	if o.ECDSA {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		return nil, nil, err
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "boot server"},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: o.NotAfter, IPAddresses: o.IPs,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, err
	}
	kd, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// SignatureList is an EFI_SIGNATURE_LIST (UEFI 2.x, 32.4.1) of one X.509
// certificate, the format OVMF reads from fw_cfg etc/edk2/https/cacerts.
func SignatureList(der []byte) []byte {
	// EFI_CERT_X509_GUID a5c059a1-94e4-4aa7-87b5-ab155c2bf072, mixed-endian.
	x509GUID := []byte{0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72}
	sigSize := 16 + len(der) // owner GUID + certificate
	out := append([]byte(nil), x509GUID...)
	out = binary.LittleEndian.AppendUint32(out, uint32(16+4+4+4+sigSize))
	out = binary.LittleEndian.AppendUint32(out, 0) // SignatureHeaderSize
	out = binary.LittleEndian.AppendUint32(out, uint32(sigSize))
	out = append(out, make([]byte, 16)...) // SignatureOwner: none
	return append(out, der...)
}
