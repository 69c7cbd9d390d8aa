package token

import (
	"anvil.dev/anvil/test/need"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
)

var testOwner = Owner{
	Host:    ObjectRef{Namespace: "metal", Name: "rack7-u12", UID: "0b5c2d9e-1111-2222-3333-444455556666"},
	Machine: ObjectRef{Namespace: "default", Name: "worker-a-" + strings.Repeat("x", 70), UID: "9f9f9f9f-aaaa-bbbb-cccc-dddddddddddd"},
}

func TestMintSecretShape(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		opts       MintOptions
		wantGroups string
		wantSign   string
		wantExp    time.Time
	}{
		{
			name:       "defaults",
			opts:       MintOptions{Owner: testOwner, Now: func() time.Time { return now }},
			wantGroups: AnvilGroup, wantSign: "false", wantExp: now.Add(15 * time.Minute),
		},
		{
			name: "kubeadm group, signing, ttl, extra group",
			opts: MintOptions{Owner: testOwner, Now: func() time.Time { return now }, TTL: time.Hour,
				KubeadmGroup: true, Signing: true, ExtraGroups: []string{"system:bootstrappers:rack7", AnvilGroup}},
			wantGroups: AnvilGroup + "," + KubeadmGroup + ",system:bootstrappers:rack7",
			wantSign:   "true", wantExp: now.Add(time.Hour),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientset()
			tok, err := Mint(ctx, c, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`).MatchString(tok.Value()) {
				t.Fatalf("token %q has the wrong format", tok.Value())
			}
			s, err := c.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+tok.ID, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"token-id":                       tok.ID,
				"token-secret":                   strings.TrimPrefix(tok.Value(), tok.ID+"."),
				"expiration":                     tc.wantExp.Format(time.RFC3339),
				"usage-bootstrap-authentication": "true",
				"usage-bootstrap-signing":        tc.wantSign,
				"auth-extra-groups":              tc.wantGroups,
			}
			for k, v := range want {
				if got := string(s.Data[k]); got != v {
					t.Errorf("data[%s] = %q, want %q", k, got, v)
				}
			}
			if s.Type != corev1.SecretType("bootstrap.kubernetes.io/token") {
				t.Errorf("type %q", s.Type)
			}
			if !strings.Contains(string(s.Data["description"]), "default/worker-a-") {
				t.Errorf("description %q does not name the machine", s.Data["description"])
			}
			if s.Labels[LabelMachineUID] != string(testOwner.Machine.UID) || s.Labels[LabelHostUID] != string(testOwner.Host.UID) ||
				s.Labels[LabelManagedBy] != "anvil" {
				t.Errorf("labels %v", s.Labels)
			}
			if s.Annotations[AnnotationMachine] != testOwner.Machine.String() || s.Annotations[AnnotationHost] != "metal/rack7-u12" {
				t.Errorf("annotations %v", s.Annotations)
			}
			if !tok.Expiration.Equal(tc.wantExp) {
				t.Errorf("Expiration %v, want %v", tok.Expiration, tc.wantExp)
			}
			inf, err := Lookup(ctx, c, tok.ID)
			if err != nil {
				t.Fatal(err)
			}
			if inf.Owner != testOwner || inf.ID != tok.ID || !inf.Expiration.Equal(tc.wantExp) {
				t.Errorf("Lookup = %+v", inf)
			}
		})
	}
}

func TestMintRejects(t *testing.T) {
	c := fake.NewClientset()
	for _, opts := range []MintOptions{
		{},
		{Owner: testOwner, ExtraGroups: []string{"system:masters"}},
		{Owner: testOwner, ExtraGroups: []string{"system:bootstrappers:UPPER"}},
	} {
		if _, err := Mint(context.Background(), c, opts); err == nil {
			t.Errorf("Mint(%+v) succeeded", opts)
		}
	}
}

func TestTokenFormattingRedacts(t *testing.T) {
	tok := Token{ID: "abcdef", secret: "0123456789abcdef", Owner: testOwner}
	var logged bytes.Buffer
	log := funcr.New(func(prefix, args string) { logged.WriteString(args) }, funcr.Options{})
	log.Info("minted", "token", tok, "ptr", &tok)
	js, _ := json.Marshal(struct{ T Token }{tok})
	outs := []string{
		fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s %q %x %d", tok, tok, tok, tok, tok, tok, tok),
		fmt.Sprintf("%v %+v", &tok, []Token{tok}), tok.String(), tok.GoString(), string(js), logged.String(),
	}
	for _, o := range outs {
		if strings.Contains(o, tok.secret) || strings.Contains(o, "0123456789") {
			t.Errorf("formatted token leaks the secret: %s", o)
		}
		if !strings.Contains(o, "abcdef") {
			t.Errorf("formatted token lost its ID: %s", o)
		}
	}
	if tok.Value() != "abcdef.0123456789abcdef" {
		t.Errorf("Value() = %q", tok.Value())
	}
	if tok.Username() != "system:bootstrap:abcdef" || tok.SecretName() != "bootstrap-token-abcdef" {
		t.Errorf("Username/SecretName wrong: %s %s", tok.Username(), tok.SecretName())
	}
}

func TestRefreshRevokeLookupFake(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset()
	tok, err := Mint(ctx, c, MintOptions{Owner: testOwner, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := Refresh(ctx, c, tok.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !exp.After(tok.Expiration.Add(50 * time.Minute)) {
		t.Fatalf("Refresh did not extend: %v -> %v", tok.Expiration, exp)
	}
	// A shorter TTL never shortens the expiration.
	exp2, err := Refresh(ctx, c, tok.ID, time.Second)
	if err != nil || !exp2.Equal(exp) {
		t.Fatalf("short refresh moved expiration %v -> %v (%v)", exp, exp2, err)
	}
	inf, _ := Lookup(ctx, c, tok.ID)
	if !inf.Expiration.Equal(exp) {
		t.Fatalf("stored expiration %v, want %v", inf.Expiration, exp)
	}

	old, err := Mint(ctx, c, MintOptions{Owner: testOwner, Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Refresh(ctx, c, old.ID, time.Hour); !errors.Is(err, ErrExpired) {
		t.Fatalf("refreshing an expired token: %v, want ErrExpired", err)
	}

	// Not ours: a kubeadm token without the managed-by label.
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-kubadm", Namespace: "kube-system"},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data:       map[string][]byte{"token-id": []byte("kubadm"), "token-secret": []byte("0000000000000000")},
	}
	if _, err := c.CoreV1().Secrets("kube-system").Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"revoke":  Revoke(ctx, c, "kubadm"),
		"refresh": func() error { _, err := Refresh(ctx, c, "kubadm", time.Hour); return err }(),
		"lookup":  func() error { _, err := Lookup(ctx, c, "kubadm"); return err }(),
	} {
		if !errors.Is(err, ErrNotManaged) {
			t.Errorf("%s on a foreign token: %v, want ErrNotManaged", name, err)
		}
	}
	if _, err := c.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-kubadm", metav1.GetOptions{}); err != nil {
		t.Fatalf("foreign token was deleted: %v", err)
	}
	if _, err := Lookup(ctx, c, "BAD!"); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("invalid id: %v", err)
	}

	if err := Revoke(ctx, c, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup(ctx, c, tok.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after revoke: %v, want ErrNotFound", err)
	}
	if err := Revoke(ctx, c, tok.ID); err != nil {
		t.Fatalf("second revoke: %v", err)
	}
}

func TestIDFromUsername(t *testing.T) {
	for in, want := range map[string]string{
		"system:bootstrap:abc123": "abc123",
		"system:bootstrap:ABC123": "",
		"system:node:abc123":      "",
		"system:bootstrap:abc":    "",
	} {
		got, ok := IDFromUsername(in)
		if got != want || ok != (want != "") {
			t.Errorf("IDFromUsername(%q) = %q,%v", in, got, ok)
		}
	}
}

// TestCACertHashKnownAnswer compares with openssl, computed independently:
// openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256sum.
func TestCACertHashKnownAnswer(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		need.OrSkip(t, "openssl not installed (Debian package openssl)")
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, keys := range map[string][2]any{
		"ecdsa": {ecKey, &ecKey.PublicKey},
		"rsa":   {rsaKey, &rsaKey.PublicKey},
	} {
		t.Run(name, func(t *testing.T) {
			tmpl := &x509.Certificate{
				SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "kubernetes"},
				NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
				IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
			}
			der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, keys[1], keys[0])
			if err != nil {
				t.Fatal(err)
			}
			certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
			p := filepath.Join(t.TempDir(), "ca.crt")
			if err := os.WriteFile(p, certPEM, 0o600); err != nil {
				t.Fatal(err)
			}
			pub, err := exec.Command(openssl, "x509", "-pubkey", "-noout", "-in", p).Output()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(openssl, "pkey", "-pubin", "-outform", "der")
			cmd.Stdin = bytes.NewReader(pub)
			spki, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			cmd = exec.Command("sha256sum")
			cmd.Stdin = bytes.NewReader(spki)
			sum, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			want := "sha256:" + strings.Fields(string(sum))[0]

			// A leading non-certificate block is skipped, as in a bundle
			// file with the key first.
			keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki})
			for _, input := range [][]byte{certPEM, append(keyPEM, certPEM...)} {
				got, err := CACertHash(input)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("CACertHash = %s, openssl says %s", got, want)
				}
			}
		})
	}
	if _, err := CACertHash([]byte("not pem")); err == nil {
		t.Fatal("CACertHash accepted garbage")
	}
}
