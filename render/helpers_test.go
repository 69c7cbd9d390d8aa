package render

import (
	"anvil.dev/anvil/test/need"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ignconfig "github.com/coreos/ignition/v2/config"
	"github.com/vincent-petithory/dataurl"
)

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testCAPEM returns a freshly generated self-signed CA certificate.
func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// hostVars are realistic per-host values with secrets that tests look for.
func hostVars(t *testing.T) Vars {
	v := SampleVars()
	v.Hostname = "node-a1"
	v.MACs = []string{"52:54:00:12:34:56", "52:54:00:12:34:57"}
	v.FailureDomain = "rack-7"
	v.Join.Token = "k3x9qa.z8r1m0p4w7t2v5y6"
	v.Join.CACertPEM = testCAPEM(t)
	v.Join.NodeName = "node-a1"
	v.Join.ProviderID = "anvil://0b5c2d9e-1111-2222-3333-444455556666"
	v.Join.KubeletURL = "http://192.0.2.1/artifacts/kubelet-v1.37.2"
	v.Join.KubeletSHA256 = strings.Repeat("ab", 32)
	v.Agent.Credential = "AgEnTcReD-Qw3rTy9UiOp_LkJhGfDsAzXcVbNm12345"
	v.Extra = map[string]string{"variant": "fcos", "butaneVersion": "1.6.0"}
	return v
}

// ignFiles parses an Ignition config with the Ignition library (any
// supported version, translated to the newest) and returns file contents by
// path, decoding data URLs and gzip.
func ignFiles(t *testing.T, ign []byte) map[string]string {
	t.Helper()
	cfg, rpt, err := ignconfig.Parse(ign)
	if err != nil || rpt.IsFatal() {
		t.Fatalf("ignition config does not parse: %v\n%s", err, rpt)
	}
	out := map[string]string{}
	for _, f := range cfg.Storage.Files {
		if f.Contents.Source == nil {
			out[f.Path] = ""
			continue
		}
		src := *f.Contents.Source
		if !strings.HasPrefix(src, "data:") {
			out[f.Path] = "remote:" + src
			continue
		}
		du, err := dataurl.DecodeString(src)
		if err != nil {
			t.Fatalf("file %s: bad data URL: %v", f.Path, err)
		}
		data := du.Data
		if f.Contents.Compression != nil && *f.Contents.Compression == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		out[f.Path] = string(data)
	}
	for _, u := range cfg.Systemd.Units {
		if u.Contents != nil {
			out["unit:"+u.Name] = *u.Contents
		}
	}
	return out
}

var (
	ignValidateOnce sync.Once
	ignValidatePath string
	ignValidateErr  string
)

// ignitionValidate builds upstream's ignition-validate command
// (github.com/coreos/ignition/v2/validate) once and returns its path.
func ignitionValidate(t *testing.T) string {
	t.Helper()
	ignValidateOnce.Do(func() {
		// go test puts its own GOROOT/bin first on PATH.
		goBin, err := exec.LookPath("go")
		if err != nil {
			ignValidateErr = "go toolchain not found to build ignition-validate"
			return
		}
		dir, err := os.MkdirTemp("", "ignvalidate")
		if err != nil {
			ignValidateErr = err.Error()
			return
		}
		p := filepath.Join(dir, "ignition-validate")
		cmd := exec.Command(goBin, "build", "-o", p, "github.com/coreos/ignition/v2/validate")
		if out, err := cmd.CombinedOutput(); err != nil {
			ignValidateErr = "building ignition-validate: " + err.Error() + ": " + string(out)
			return
		}
		ignValidatePath = p
	})
	if ignValidatePath == "" {
		need.OrSkip(t, "%s", ignValidateErr)
	}
	return ignValidatePath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if ignValidatePath != "" {
		os.RemoveAll(filepath.Dir(ignValidatePath))
	}
	os.Exit(code)
}
