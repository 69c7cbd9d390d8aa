package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
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
	if cfg := parse(); cfg.CAPIExtension.Addr != "" || cfg.validate() != nil {
		t.Fatalf("default: --capi-extension-bind-address %q, validate %v; want off and valid", cfg.CAPIExtension.Addr, cfg.validate())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--capi-extension-bind-address=:9443"}, "--capi-extension-bind-address needs --capi-extension-cert-dir (a directory with tls.crt and tls.key) or --capi-extension-cert-secret"},
		{[]string{"--capi-extension-cert-dir=/x"}, "--capi-extension-cert-dir is set but --capi-extension-bind-address is not"},
		{[]string{"--capi-extension-url=https://a"}, "--capi-extension-url is set but --capi-extension-bind-address is not"},
		{[]string{"--capi-extension-bind-address=9443", "--capi-extension-cert-dir=/x"}, `--capi-extension-bind-address "9443"`},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-dir=/x", "--capi-extension-cert-secret=a/b"}, "both set: choose one"},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-dir=/x", "--capi-extension-service=a/b"}, "with --capi-extension-cert-dir, write the ExtensionConfig yourself"},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-secret=a/b"}, "needs exactly one of --capi-extension-service"},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-secret=a/b", "--capi-extension-service=a/s", "--capi-extension-url=https://h"}, "needs exactly one of --capi-extension-service"},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-secret=b", "--capi-extension-url=https://h"}, `--capi-extension-cert-secret "b": want NAMESPACE/NAME`},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-secret=a/b", "--capi-extension-service=a/s:0"}, `--capi-extension-service "a/s:0": want NAMESPACE/NAME[:PORT]`},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-secret=a/b", "--capi-extension-service=Bad/s"}, `--capi-extension-service "Bad/s"`},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-secret=a/b", "--capi-extension-url=http://h:1"}, `--capi-extension-url "http://h:1": want https://`},
		{[]string{"--capi-extension-bind-address=:9443", "--capi-extension-cert-secret=a/b", "--capi-extension-url=https://u:p@h:1"}, `no user, query or fragment`},
	} {
		cfg := parse(tc.args...)
		if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}

	// The certificate names what Cluster API dials.
	for _, tc := range []struct {
		args     []string
		dnsNames []string
		ips      string
		port     int32
	}{
		{[]string{"--capi-extension-service=anvil-system/anvil-capi-extension:9443"}, []string{"anvil-capi-extension.anvil-system.svc", "anvil-capi-extension.anvil-system.svc.cluster.local"}, "[]", 9443},
		{[]string{"--capi-extension-service=ns/ext"}, []string{"ext.ns.svc", "ext.ns.svc.cluster.local"}, "[]", 0},
		{[]string{"--capi-extension-url=https://127.0.0.1:9443"}, nil, "[127.0.0.1]", 0},
		{[]string{"--capi-extension-url=https://ext.example:9443/x"}, []string{"ext.example"}, "[]", 0},
	} {
		cfg := parse(append(tc.args, "--capi-extension-bind-address=:9443", "--capi-extension-cert-secret=ns/cert")...)
		if err := cfg.validate(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		e := cfg.CAPIExtension
		if !slices.Equal(e.dnsNames, tc.dnsNames) || fmt.Sprint(e.ips) != tc.ips || e.certSecret.String() != "ns/cert" {
			t.Errorf("%v: certificate for %v %v in %s, want %v %s in ns/cert", tc.args, e.dnsNames, e.ips, e.certSecret, tc.dnsNames, tc.ips)
		}
		if got := int32(0); e.service != nil && e.service.Port != nil {
			got = *e.service.Port
			if got != tc.port {
				t.Errorf("%v: service port %d, want %d", tc.args, got, tc.port)
			}
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
