package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The in-place update extension is off by default; half its flags, a bad
// address or a missing or bad certificate are errors naming the flag to
// fix, and without Cluster API's CRDs (this API server has Anvil's only)
// it says to install them.
func TestCAPIExtensionFlags(t *testing.T) {
	parse := func(args ...string) serveConfig {
		t.Helper()
		var cfg serveConfig
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		cfg.bind(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if cfg := parse(); cfg.CAPIExtensionAddr != "" || cfg.validate() != nil {
		t.Fatalf("default: --capi-extension-bind-address %q, validate %v; want off and valid", cfg.CAPIExtensionAddr, cfg.validate())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--capi-extension-bind-address=:9443"}, "--capi-extension-bind-address needs --capi-extension-cert-dir"},
		{[]string{"--capi-extension-cert-dir=/x"}, "--capi-extension-cert-dir is set but --capi-extension-bind-address is not"},
		{[]string{"--capi-extension-bind-address=9443", "--capi-extension-cert-dir=/x"}, `--capi-extension-bind-address "9443"`},
	} {
		cfg := parse(tc.args...)
		if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: newScheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := parse("--capi-extension-bind-address=127.0.0.1:0", "--capi-extension-cert-dir="+dir)
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	err = setupCAPIExtension(mgr, cfg)
	if err == nil || !strings.HasPrefix(err.Error(), "--capi-extension-cert-dir: ") || !strings.Contains(err.Error(), filepath.Join(dir, "tls.crt")) {
		t.Fatalf("no certificate: %v", err)
	}
	for _, f := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("-----BEGIN CERTIFICATE-----\nbad\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := setupCAPIExtension(mgr, cfg); err == nil || !strings.HasPrefix(err.Error(), "--capi-extension-cert-dir: ") {
		t.Fatalf("bad certificate: %v", err)
	}
	writeSelfSigned(t, dir)
	err = setupCAPIExtension(mgr, cfg)
	if err == nil || !strings.Contains(err.Error(), "--capi-extension-bind-address: the API server does not serve cluster.x-k8s.io/v1beta2, Kind=Machine (install Cluster API's core CRDs") {
		t.Fatalf("without Cluster API's CRDs: %v", err)
	}
}

func writeSelfSigned(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "anvil"}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string][]byte{"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), "tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
