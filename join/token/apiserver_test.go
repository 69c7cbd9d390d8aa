package token

import (
	"anvil.dev/anvil/test/need"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// repoBin finds the repository's bin/ directory by walking up to go.mod.
func repoBin(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	t.Fatal("go.mod not found above the test directory")
	return ""
}

// startAPIServer runs a real etcd + kube-apiserver with bootstrap token
// authentication enabled and returns an admin client and config.
func startAPIServer(t *testing.T) (kubernetes.Interface, *rest.Config) {
	t.Helper()
	bin := repoBin(t)
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			need.OrSkip(t, "%s not built in %s (see hack/tools)", b, bin)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		ControlPlaneStartTimeout: 2 * time.Minute, // 2 shared cores, other builds running
		ControlPlaneStopTimeout:  time.Minute,
	}
	env.ControlPlane.GetAPIServer().Configure().Set("enable-bootstrap-token-auth", "true")
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg
}

// whoAmI authenticates with a bearer token and returns the username, or the
// API error (401 for a rejected token).
func whoAmI(ctx context.Context, admin *rest.Config, bearer string) (string, error) {
	cfg := &rest.Config{
		Host:            admin.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData},
		BearerToken:     bearer,
		Timeout:         10 * time.Second,
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

// eventually polls f every 250ms until it returns nil or the timeout passes.
// The API server's token authenticator reads Secrets through an informer and
// caches successful authentications for a few seconds, so both "starts
// working" and "stops working" are eventual.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: not reached within %v: %v", what, timeout, err)
}

func TestBootstrapTokenAgainstAPIServer(t *testing.T) {
	c, cfg := startAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// kube-system is created by the API server shortly after start.
	var expired, tok Token
	eventually(t, time.Minute, "minting an already expired token", func() (err error) {
		expired, err = Mint(ctx, c, MintOptions{Owner: testOwner, TTL: time.Minute,
			Now: func() time.Time { return time.Now().Add(-time.Hour) }})
		return err
	})
	var err error
	tok, err = Mint(ctx, c, MintOptions{Owner: testOwner, TTL: 10 * time.Minute, KubeadmGroup: true})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("minted token authenticates as system:bootstrap:<id>", func(t *testing.T) {
		eventually(t, time.Minute, "token authenticates", func() error {
			user, err := whoAmI(ctx, cfg, tok.Value())
			if err != nil {
				return err
			}
			if user != "system:bootstrap:"+tok.ID {
				t.Fatalf("authenticated as %q, want system:bootstrap:%s", user, tok.ID)
			}
			return nil
		})
		// Groups as configured.
		cl, _ := kubernetes.NewForConfig(&rest.Config{Host: cfg.Host, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}, BearerToken: tok.Value()})
		r, err := cl.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		groups := map[string]bool{}
		for _, g := range r.Status.UserInfo.Groups {
			groups[g] = true
		}
		for _, g := range []string{"system:bootstrappers", AnvilGroup, KubeadmGroup} {
			if !groups[g] {
				t.Errorf("group %s missing from %v", g, r.Status.UserInfo.Groups)
			}
		}
	})

	t.Run("wrong secret is rejected", func(t *testing.T) {
		_, err := whoAmI(ctx, cfg, tok.ID+".0000000000000000")
		if !apierrors.IsUnauthorized(err) {
			t.Fatalf("wrong secret: %v, want 401", err)
		}
	})

	t.Run("expired token is rejected", func(t *testing.T) {
		// The informer delivered tok, created after expired, so it has seen
		// expired as well: a 401 now is the expiry check, not a cache miss.
		inf, err := Lookup(ctx, c, expired.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !inf.Expiration.Before(time.Now()) {
			t.Fatalf("test setup: token expires at %v, not in the past", inf.Expiration)
		}
		_, err = whoAmI(ctx, cfg, expired.Value())
		if !apierrors.IsUnauthorized(err) {
			t.Fatalf("expired token: %v, want 401", err)
		}
	})

	t.Run("token expiring while in use is rejected afterwards", func(t *testing.T) {
		short, err := Mint(ctx, c, MintOptions{Owner: testOwner, TTL: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		// It may or may not authenticate before it expires on a loaded
		// machine; what must hold is that after expiry it is rejected.
		eventually(t, time.Minute, "short-lived token rejected after expiry", func() error {
			_, err := whoAmI(ctx, cfg, short.Value())
			if time.Now().Before(short.Expiration.Add(time.Second)) {
				return errors.New("not expired yet")
			}
			if apierrors.IsUnauthorized(err) {
				return nil
			}
			return errors.New("still accepted after expiry")
		})
	})

	t.Run("refresh keeps a token valid and lookup finds the owner", func(t *testing.T) {
		exp, err := Refresh(ctx, c, tok.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if !exp.After(tok.Expiration) {
			t.Fatalf("refresh did not extend %v -> %v", tok.Expiration, exp)
		}
		inf, err := Lookup(ctx, c, tok.ID)
		if err != nil {
			t.Fatal(err)
		}
		if inf.Owner != testOwner {
			t.Fatalf("owner %+v", inf.Owner)
		}
		list, err := List(ctx, c, ListOptions{MachineUID: testOwner.Machine.UID})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, i := range list {
			found = found || i.ID == tok.ID
		}
		if !found || len(list) < 2 {
			t.Fatalf("List by machine: %+v", list)
		}
		none, err := List(ctx, c, ListOptions{MachineUID: "no-such-uid"})
		if err != nil || len(none) != 0 {
			t.Fatalf("List for another machine: %v %+v", err, none)
		}
		if _, err := whoAmI(ctx, cfg, tok.Value()); err != nil {
			t.Fatalf("refreshed token: %v", err)
		}
	})

	t.Run("revoked token gets 401", func(t *testing.T) {
		if err := Revoke(ctx, c, tok.ID); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "revoked token rejected", func() error {
			_, err := whoAmI(ctx, cfg, tok.Value())
			if apierrors.IsUnauthorized(err) {
				return nil
			}
			if err == nil {
				return errors.New("still authenticates")
			}
			return err
		})
	})

	t.Run("cache", func(t *testing.T) { testCache(ctx, t, c) })
}
