package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/deploy"
)

// consolePage signs in to the admin console the controllers' anvil serve
// runs (--console-listen) as a person bound to anvil-viewer, and returns
// the page at path. The browser's side is test/console's; here the lab's
// real hosts are what it shows.
func (e *e2e) consolePage(base, path string) string {
	e.t.Helper()
	ctx := context.Background()
	if err := deploy.InstallUserRoles(ctx, e.c); err != nil {
		e.t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "rack-viewer", Namespace: ns}}
	for _, o := range []client.Object{sa, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "rack-viewer", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "anvil-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "rack-viewer", Namespace: ns}}}} {
		if err := e.c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			e.t.Fatal(err)
		}
	}
	tr := &authenticationv1.TokenRequest{}
	if err := e.c.SubResource("token").Create(ctx, sa, tr); err != nil {
		e.t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: time.Minute}
	resp, err := hc.PostForm(base+"/login", url.Values{"token": {tr.Status.Token}, "next": {path}})
	if err != nil {
		e.t.Fatalf("console sign-in: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("console %s after sign-in: %d\n%.2000s", path, resp.StatusCode, b)
	}
	if strings.Contains(string(b), tr.Status.Token) {
		e.t.Error("the console's page carries the person's token")
	}
	return string(b)
}

// between is s from the first start to the next end after it ("" if none).
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], end)
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j]
}
