package inplace

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the certificate Secret. ca.crt is what Cluster API injects into
// the ExtensionConfig (runtime.cluster.x-k8s.io/inject-ca-from-secret);
// cert-manager writes the same three, so its Secret works as well.
const (
	secretCACert = "ca.crt"
	secretCAKey  = "ca.key" // only in a Secret Anvil made
)

// GeneratedByAnnotation marks a certificate Secret Anvil made and renews.
// A Secret without it (cert-manager's, or an admin's) is only read.
const GeneratedByAnnotation = "metal.anvil.dev/generated-by"

// Lifetimes of what Anvil generates, and how early each is renewed.
const (
	caLifetime    = 10 * 365 * 24 * time.Hour
	caRenewBefore = 365 * 24 * time.Hour
	leafLifetime  = 365 * 24 * time.Hour
	leafRenewBefr = 30 * 24 * time.Hour
	// certResync is how often every replica rereads the Secret, so a
	// renewal by another replica or by cert-manager is served within it.
	certResync = time.Minute
)

// CertSecret serves the extension's certificate from a Secret. If the
// Secret does not exist it is created with a CA of its own and a serving
// certificate for DNSNames and IPs, and renewed before either expires or
// when the names change; the previous CA stays in ca.crt until it expires
// so that Cluster API's copy of the bundle keeps verifying across a CA
// renewal. A Secret Anvil did not make is used as it is.
type CertSecret struct {
	Key      types.NamespacedName
	DNSNames []string
	IPs      []net.IP
	// Reader reads the Secret past any cache (the manager's APIReader);
	// Client creates and updates it.
	Reader client.Reader
	Client client.Client
	Logger logr.Logger

	current atomic.Pointer[tls.Certificate]
	now     func() time.Time // tests move the clock
}

// GetCertificate is tls.Config's: the certificate last read.
func (s *CertSecret) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.current.Load(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no serving certificate read yet from Secret %s", s.Key)
}

// Start makes sure the Secret holds a valid certificate and rereads it
// every certResync until ctx ends. Errors are logged and retried: the
// server refuses handshakes until a certificate is loaded.
func (s *CertSecret) Start(ctx context.Context) error {
	failures := 0
	for {
		next := certResync
		if err := s.Sync(ctx); err != nil {
			s.Logger.Error(err, "serving certificate", "secret", s.Key.String())
			next = min(certResync, time.Second<<min(failures, 6))
			failures++
		} else {
			failures = 0
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// Sync reads the Secret once, creates or renews it if it is Anvil's and
// due, and loads the serving certificate.
func (s *CertSecret) Sync(ctx context.Context) error {
	now := time.Now()
	if s.now != nil {
		now = s.now()
	}
	sec := &corev1.Secret{}
	err := s.Reader.Get(ctx, s.Key, sec)
	switch {
	case apierrors.IsNotFound(err):
		data, err := s.generate(nil, now)
		if err != nil {
			return err
		}
		sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.Key.Name, Namespace: s.Key.Namespace,
			Annotations: map[string]string{GeneratedByAnnotation: "anvil serve --capi-extension-cert-secret"},
			Labels:      map[string]string{"app.kubernetes.io/name": "anvil"}},
			Type: corev1.SecretTypeTLS, Data: data}
		switch err := s.Client.Create(ctx, sec); {
		case apierrors.IsAlreadyExists(err): // another replica made it first: use theirs
			if err := s.Reader.Get(ctx, s.Key, sec); err != nil {
				return fmt.Errorf("reading Secret %s: %w", s.Key, err)
			}
		case err != nil:
			return fmt.Errorf("creating Secret %s: %w", s.Key, err)
		default:
			s.Logger.Info("created the serving certificate Secret", "secret", s.Key.String(), "dnsNames", s.DNSNames, "ips", s.IPs)
		}
	case err != nil:
		return fmt.Errorf("reading Secret %s: %w", s.Key, err)
	case sec.Annotations[GeneratedByAnnotation] == "":
		// cert-manager's or an admin's: used as it is.
	default:
		if why := s.renewal(sec.Data, now); why != "" {
			data, err := s.generate(sec.Data, now)
			if err != nil {
				return err
			}
			sec.Data = data
			if err := s.Client.Update(ctx, sec); err != nil {
				// A conflict is another replica's renewal: read it next time.
				return fmt.Errorf("renewing the certificate in Secret %s (%s): %w", s.Key, why, err)
			}
			s.Logger.Info("renewed the serving certificate", "secret", s.Key.String(), "reason", why)
		}
	}
	pair, err := tls.X509KeyPair(sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		// crypto/tls says what is wrong without quoting the key.
		return fmt.Errorf("serving certificate Secret %s: %s and %s are not a PEM certificate and its key: %w", s.Key, corev1.TLSCertKey, corev1.TLSPrivateKeyKey, err)
	}
	if old := s.current.Load(); old == nil || !bytes.Equal(old.Certificate[0], pair.Certificate[0]) {
		s.current.Store(&pair)
	}
	return nil
}

// renewal says why an Anvil-made Secret needs new certificates, or "".
func (s *CertSecret) renewal(data map[string][]byte, now time.Time) string {
	ca, _, err := parseCA(data)
	if err != nil {
		return "its CA is unreadable"
	}
	if now.Add(caRenewBefore).After(ca.NotAfter) {
		return "the CA expires " + ca.NotAfter.UTC().Format(time.RFC3339)
	}
	leaf, err := firstCert(data[corev1.TLSCertKey])
	if err != nil {
		return "the serving certificate is unreadable"
	}
	if now.Add(leafRenewBefr).After(leaf.NotAfter) {
		return "the serving certificate expires " + leaf.NotAfter.UTC().Format(time.RFC3339)
	}
	if err := leaf.CheckSignatureFrom(ca); err != nil {
		return "the serving certificate is not signed by its CA"
	}
	if !slices.Equal(leaf.DNSNames, s.DNSNames) || !slices.EqualFunc(leaf.IPAddresses, s.IPs, net.IP.Equal) {
		return fmt.Sprintf("the serving certificate names %v %v, not %v %v", leaf.DNSNames, leaf.IPAddresses, s.DNSNames, s.IPs)
	}
	return ""
}

// generate returns Secret data with a serving certificate signed by the
// CA in old, or by a new CA when old has none worth keeping. A replaced CA
// that is still valid stays in ca.crt after the new one.
func (s *CertSecret) generate(old map[string][]byte, now time.Time) (map[string][]byte, error) {
	ca, caKey, err := parseCA(old)
	bundle := []byte(nil)
	if err != nil || now.Add(caRenewBefore).After(ca.NotAfter) {
		if err == nil && now.Before(ca.NotAfter) {
			bundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
		}
		if ca, caKey, err = newCA(now); err != nil {
			return nil, err
		}
	} else {
		bundle = old[secretCACert] // the same CA, with any predecessor still listed
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "anvil-capi-extension"},
		NotBefore: now.Add(-5 * time.Minute), NotAfter: now.Add(leafLifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: s.DNSNames, IPAddresses: s.IPs}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyPEM, err := pemKey(key)
	if err != nil {
		return nil, err
	}
	caKeyPEM, err := pemKey(caKey)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	if !bytes.HasPrefix(bundle, caPEM) {
		bundle = append(caPEM, bundle...)
	}
	return map[string][]byte{
		corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		corev1.TLSPrivateKeyKey: keyPEM,
		secretCACert:            bundle,
		secretCAKey:             caKeyPEM,
	}, nil
}

func newCA(now time.Time) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "anvil-capi-extension-ca"},
		NotBefore: now.Add(-5 * time.Minute), NotAfter: now.Add(caLifetime), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

// parseCA reads the CA (the first certificate of ca.crt) and its key.
func parseCA(data map[string][]byte) (*x509.Certificate, crypto.Signer, error) {
	ca, err := firstCert(data[secretCACert])
	if err != nil {
		return nil, nil, err
	}
	b, _ := pem.Decode(data[secretCAKey])
	if b == nil {
		return nil, nil, errors.New("no CA key")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok || !publicKeyMatches(ca, signer) {
		return nil, nil, errors.New("the CA key does not match the CA")
	}
	return ca, signer, nil
}

func publicKeyMatches(c *x509.Certificate, k crypto.Signer) bool {
	pub, ok := k.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(c.PublicKey)
}

func firstCert(p []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(p)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}

func pemKey(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
