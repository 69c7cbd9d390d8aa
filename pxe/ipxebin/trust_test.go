package ipxebin

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"testing"
	"time"
)

func testCA(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func TestTrust(t *testing.T) {
	ca := testCA(t)
	fp := sha256.Sum256(ca)
	twice := append(append([]byte("x"), defaultRoot[:]...), defaultRoot[:]...)
	for _, tc := range []struct {
		name    string
		build   Build
		ca      []byte
		wantErr error // nil with badCA: any error
		badCA   bool
	}{
		{"ipxe.efi", EFI, ca, nil, false},
		{"snp.efi", SNP, ca, nil, false},
		{"no fingerprint", Build{Name: "empty", Data: []byte("no root here")}, ca, ErrNoTrustAnchor, false},
		{"fingerprint twice", Build{Name: "twice", Data: twice}, ca, ErrNoTrustAnchor, false},
		{"not a certificate", SNP, []byte("not DER"), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Trust(tc.build, tc.ca)
			if tc.badCA {
				if err == nil {
					t.Fatal("want an error for a CA that is not a certificate")
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if len(out) != len(tc.build.Data) {
				t.Errorf("size %d, want %d", len(out), len(tc.build.Data))
			}
			if bytes.Contains(out, defaultRoot[:]) || bytes.Count(out, fp[:]) != 1 {
				t.Error("the CA's fingerprint does not replace the default root's exactly once")
			}
			i := bytes.Index(out, fp[:])
			if !bytes.Equal(out[:i], tc.build.Data[:i]) || !bytes.Equal(out[i+32:], tc.build.Data[i+32:]) {
				t.Error("bytes outside the fingerprint changed")
			}
			if !bytes.Contains(tc.build.Data, defaultRoot[:]) {
				t.Error("the original build was modified")
			}
		})
	}
}
