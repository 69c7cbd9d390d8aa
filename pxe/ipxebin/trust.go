package ipxebin

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
)

// defaultRoot is the SHA-256 fingerprint of the "iPXE root CA", the one
// root these builds trust (iPXE's rootcert.c table, stored as is in the
// .efi). iPXE knows roots only by fingerprint, fixed at build time; its
// `trust` setting cannot widen that at run time.
var defaultRoot = [sha256.Size]byte{
	0x9f, 0xaf, 0x71, 0x7b, 0x7f, 0x8c, 0xa2, 0xf9, 0x3c, 0x25, 0x6c, 0x79, 0xf8, 0xac, 0x55, 0x91,
	0x89, 0x5d, 0x66, 0xd1, 0xff, 0x3b, 0xee, 0x63, 0x97, 0xa7, 0x0d, 0x29, 0xc6, 0x5e, 0xed, 0x1a,
}

// ErrNoTrustAnchor is wrapped by Trust when a binary does not hold the
// default root's fingerprint exactly once.
var ErrNoTrustAnchor = errors.New("iPXE root CA fingerprint not found exactly once")

// Trust returns a copy of b that trusts only the CA whose certificate
// (DER) is caDER: the default root's fingerprint replaced by the CA's,
// which is what iPXE's own TRUST= build option produces. iPXE has the
// fingerprint, not the certificate, so a server must send the CA
// certificate in its TLS chain (leaf, then CA).
func Trust(b Build, caDER []byte) ([]byte, error) {
	if _, err := x509.ParseCertificate(caDER); err != nil {
		return nil, fmt.Errorf("ipxebin: CA certificate: %w", err)
	}
	return trustFingerprint(b, sha256.Sum256(caDER))
}

func trustFingerprint(b Build, fp [sha256.Size]byte) ([]byte, error) {
	if n := bytes.Count(b.Data, defaultRoot[:]); n != 1 {
		return nil, fmt.Errorf("ipxebin: %s: %w (found %d times)", b.Name, ErrNoTrustAnchor, n)
	}
	out := b.Clone()
	i := bytes.Index(out, defaultRoot[:])
	copy(out[i:], fp[:])
	return out, nil
}
