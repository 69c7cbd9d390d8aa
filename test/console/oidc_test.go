package console_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/deploy"
)

// oidcIssuer is an OpenID Connect issuer for the API server to trust: its
// discovery document and signing keys over HTTPS, and ID tokens it signs.
// No real identity provider runs here (Debian has none that fits a test),
// so this plays the part the API server talks to: discovery and JWKS, as
// the spec lays them out. The API server does the rest itself (the
// --authentication-config JWT authenticator).
type oidcIssuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

const oidcAudience = "anvil-console"

func startOIDCIssuer() (*oidcIssuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	o := &oidcIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": o.srv.URL, "jwks_uri": o.srv.URL + "/keys",
			"id_token_signing_alg_values_supported": []string{"RS256"}, "response_types_supported": []string{"id_token"},
			"subject_types_supported": []string{"public"}})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{"kty": "RSA", "alg": "RS256", "use": "sig", "kid": "k1",
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	})
	o.srv = httptest.NewTLSServer(mux)
	return o, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// authenticationConfig writes the API server's AuthenticationConfiguration
// trusting the issuer (usernames "oidc:" + sub) and returns its path.
func (o *oidcIssuer) authenticationConfig(dir string) (string, error) {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.srv.Certificate().Raw})
	var indented strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(ca)), "\n") {
		indented.WriteString("      " + l + "\n")
	}
	cfg := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [%s]
    certificateAuthority: |
%s  claimMappings:
    username:
      claim: sub
      prefix: "oidc:"
`, o.srv.URL, oidcAudience, indented.String())
	path := filepath.Join(dir, "authentication-config.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}

// idToken signs an ID token for sub, valid for an hour.
func (o *oidcIssuer) idToken(sub string) (string, error) {
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "k1"})
	claims, _ := json.Marshal(map[string]any{"iss": o.srv.URL, "aud": oidcAudience, "sub": sub,
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix()})
	signing := b64(header) + "." + b64(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, o.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + b64(sig), nil
}

// TestConsoleOIDC: where the cluster trusts an OIDC issuer, a person signs
// in to the console with their ID token; the console forwards it, the API
// server names them from it, and RBAC bound to that name decides.
func TestConsoleOIDC(t *testing.T) {
	if issuer == nil {
		t.Skip("the OIDC issuer did not start (see TestMain's output)")
	}
	s := newStack(t, 1, false)
	ctx := context.Background()
	token, err := issuer.idToken("dana")
	if err != nil {
		t.Fatal(err)
	}
	if err := deploy.InstallUserRoles(ctx, s.c); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s.c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dana", Namespace: s.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "anvil-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "oidc:dana"}}})
	// The API server loads the issuer's keys in the background: ask it
	// until it accepts the token.
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = token
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the API server accepts the ID token", func(ctx context.Context) (bool, string) {
		r := &authenticationv1.SelfSubjectReview{}
		if err := c.Create(ctx, r); err != nil {
			return false, err.Error()
		}
		return r.Status.UserInfo.Username == "oidc:dana", r.Status.UserInfo.Username
	})

	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: time.Minute}
	resp, err := hc.PostForm(s.console+"/login", url.Values{"token": {token}, "next": {"/racks?ns=" + s.ns}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "oidc:dana") || !strings.Contains(string(page), "sim-0") {
		t.Fatalf("signed in with an ID token: %d\n%.3000s", resp.StatusCode, page)
	}
	noSecrets(t, "the racks page", string(page), token)
	csrf := between(string(page), `name="csrf-token" content="`, `"`)
	req, _ := http.NewRequest(http.MethodPost, s.console+"/actions/hosts/"+s.ns+"/sim-0/power", strings.NewReader("op=on"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "refused by RBAC") || !strings.Contains(string(body), "oidc:dana") {
		t.Errorf("a viewer's power on: %d %s", resp.StatusCode, body)
	}
	h := &metalv1.Host{}
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: "sim-0"}, h); err != nil || h.Spec.Online {
		t.Errorf("sim-0 spec.online=%t after a refused power on (err %v)", h.Spec.Online, err)
	}
}

// between is s from after start to the next end ("" if none).
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	if j := strings.Index(s, end); j >= 0 {
		return s[:j]
	}
	return s
}
