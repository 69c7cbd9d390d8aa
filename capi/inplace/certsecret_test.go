package inplace_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/capi/inplace"
)

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "certs-"}}
	must(t, c.Create(context.Background(), ns))
	return ns.Name
}

// verify checks that the Secret's ca.crt verifies its tls.crt for name
// at that time and returns the serving certificate.
func verify(t *testing.T, sec *corev1.Secret, name string, at time.Time) *x509.Certificate {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(sec.Data["ca.crt"]) {
		t.Fatalf("Secret %s: ca.crt holds no PEM certificate", sec.Name)
	}
	b, _ := pem.Decode(sec.Data["tls.crt"])
	if b == nil {
		t.Fatalf("Secret %s: tls.crt holds no PEM certificate", sec.Name)
	}
	leaf, err := x509.ParseCertificate(b.Bytes)
	must(t, err)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, CurrentTime: at}); err != nil {
		t.Fatalf("Secret %s: ca.crt does not verify tls.crt for %s: %v", sec.Name, name, err)
	}
	return leaf
}

func certCount(p []byte) int { return bytes.Count(p, []byte("BEGIN CERTIFICATE")) }

// An absent Secret is created with a CA and a serving certificate for the
// Service's names; another replica uses it as it is; a change of names, a
// serving certificate near its end and a CA near its end renew what is
// due, the old CA kept in ca.crt beside the new one; every step serves
// what the Secret holds.
func TestCertSecretCreatesAndRenews(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "anvil-capi-extension-cert"}
	var logged bytes.Buffer
	log := logr.New(funcr.New(func(p, a string) { logged.WriteString(p + " " + a + "\n") }, funcr.Options{}).GetSink())
	newReplica := func(names ...string) *inplace.CertSecret {
		return &inplace.CertSecret{Key: key, DNSNames: names, Reader: c, Client: c, Logger: log}
	}
	get := func() *corev1.Secret {
		t.Helper()
		sec := &corev1.Secret{}
		must(t, c.Get(ctx, key, sec))
		return sec
	}
	served := func(s *inplace.CertSecret) []byte {
		t.Helper()
		crt, err := s.GetCertificate(&tls.ClientHelloInfo{})
		must(t, err)
		return crt.Certificate[0]
	}

	a := newReplica("ext.ns.svc")
	if _, err := a.GetCertificate(&tls.ClientHelloInfo{}); err == nil || !strings.Contains(err.Error(), "no serving certificate read yet from Secret "+key.String()) {
		t.Fatalf("before the first read: %v", err)
	}
	must(t, a.Sync(ctx))
	first := get()
	if first.Type != corev1.SecretTypeTLS || first.Annotations[inplace.GeneratedByAnnotation] == "" {
		t.Fatalf("created Secret: type %q, annotations %v; want %s and %s", first.Type, first.Annotations, corev1.SecretTypeTLS, inplace.GeneratedByAnnotation)
	}
	leaf := verify(t, first, "ext.ns.svc", time.Now())
	if !bytes.Equal(served(a), leaf.Raw) {
		t.Fatal("replica a does not serve the Secret's certificate")
	}

	b := newReplica("ext.ns.svc")
	must(t, b.Sync(ctx))
	if got := get(); got.ResourceVersion != first.ResourceVersion || !bytes.Equal(served(b), leaf.Raw) {
		t.Fatalf("a second replica rewrote the Secret (resourceVersion %s, was %s) or serves another certificate", got.ResourceVersion, first.ResourceVersion)
	}

	// The Service was renamed: a new serving certificate, the same CA.
	c2 := newReplica("ext2.ns.svc")
	must(t, c2.Sync(ctx))
	renamed := get()
	verify(t, renamed, "ext2.ns.svc", time.Now())
	if !bytes.Equal(renamed.Data["ca.crt"], first.Data["ca.crt"]) || !bytes.Equal(renamed.Data["ca.key"], first.Data["ca.key"]) {
		t.Fatal("renaming replaced the CA")
	}
	if !strings.Contains(logged.String(), "renewed the serving certificate") || !strings.Contains(logged.String(), "ext2.ns.svc") {
		t.Errorf("renewal not logged with its reason:\n%s", logged.String())
	}
	d := newReplica("ext2.ns.svc") // a replica with the new name
	must(t, d.Sync(ctx))

	// 340 days on: the serving certificate is within 30 days of its end.
	later := time.Now().Add(340 * 24 * time.Hour)
	inplace.SetNow(c2, func() time.Time { return later })
	must(t, c2.Sync(ctx))
	renewed := get()
	if bytes.Equal(renewed.Data["tls.crt"], renamed.Data["tls.crt"]) || !bytes.Equal(renewed.Data["ca.crt"], first.Data["ca.crt"]) {
		t.Fatal("340 days on: want a new serving certificate from the same CA")
	}
	l := verify(t, renewed, "ext2.ns.svc", later)
	if l.NotAfter.Before(later.Add(300 * 24 * time.Hour)) {
		t.Fatalf("renewed serving certificate ends %s, want a year after %s", l.NotAfter, later)
	}
	// The other replica's next resync serves the renewal without writing.
	must(t, d.Sync(ctx))
	if !bytes.Equal(served(d), l.Raw) || get().ResourceVersion != renewed.ResourceVersion {
		t.Fatal("after its resync, replica d does not serve the renewed certificate, or wrote the Secret")
	}

	// Nine and a half years on: the CA itself is renewed, the old one
	// still valid stays second in ca.crt so that Cluster API's copy of
	// the bundle keeps verifying until it has the new one.
	caEnd := time.Now().Add(9*365*24*time.Hour + 180*24*time.Hour)
	inplace.SetNow(c2, func() time.Time { return caEnd })
	must(t, c2.Sync(ctx))
	rolled := get()
	if certCount(rolled.Data["ca.crt"]) != 2 || !bytes.HasSuffix(rolled.Data["ca.crt"], first.Data["ca.crt"]) || bytes.Equal(rolled.Data["ca.key"], first.Data["ca.key"]) {
		t.Fatalf("CA renewal: ca.crt holds %d certificates (want the new CA then the old), CA key changed: %v",
			certCount(rolled.Data["ca.crt"]), !bytes.Equal(rolled.Data["ca.key"], first.Data["ca.key"]))
	}
	verify(t, rolled, "ext2.ns.svc", caEnd)
	if strings.Contains(logged.String(), "PRIVATE KEY") {
		t.Error("a private key was logged")
	}
}

// A Secret Anvil did not make (cert-manager's) is served as it is and
// never written, even when its certificate is near its end; one that holds
// no certificate is an error naming the Secret and its keys, without
// quoting them.
func TestCertSecretOfSomeoneElse(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	// A certificate ending in ten days, made by "cert-manager".
	maker := &inplace.CertSecret{Key: types.NamespacedName{Namespace: ns, Name: "scratch"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Reader: c, Client: c, Logger: logr.Discard()}
	inplace.SetNow(maker, func() time.Time { return time.Now().Add(-355 * 24 * time.Hour) })
	must(t, maker.Sync(ctx))
	scratch := &corev1.Secret{}
	must(t, c.Get(ctx, maker.Key, scratch))

	theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cert-manager-made", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": scratch.Data["tls.crt"], "tls.key": scratch.Data["tls.key"], "ca.crt": scratch.Data["ca.crt"]}}
	must(t, c.Create(ctx, theirs))
	s := &inplace.CertSecret{Key: client.ObjectKeyFromObject(theirs), DNSNames: []string{"ext.ns.svc"}, Reader: c, Client: c, Logger: logr.Discard()}
	must(t, s.Sync(ctx))
	got := &corev1.Secret{}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(theirs), got))
	if got.ResourceVersion != theirs.ResourceVersion {
		t.Fatal("Anvil wrote a certificate Secret it did not make")
	}
	crt, err := s.GetCertificate(&tls.ClientHelloInfo{})
	must(t, err)
	if b, _ := pem.Decode(theirs.Data["tls.crt"]); b == nil || !bytes.Equal(crt.Certificate[0], b.Bytes) {
		t.Fatal("not serving the Secret's certificate")
	}

	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns},
		Data: map[string][]byte{"tls.crt": []byte("secret-looking-bytes"), "tls.key": []byte("more-secret-bytes")}}
	must(t, c.Create(ctx, bad))
	s = &inplace.CertSecret{Key: client.ObjectKeyFromObject(bad), DNSNames: []string{"ext.ns.svc"}, Reader: c, Client: c, Logger: logr.Discard()}
	err = s.Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), "serving certificate Secret "+ns+"/broken: tls.crt and tls.key are not a PEM certificate and its key") || strings.Contains(err.Error(), "secret-looking") {
		t.Fatalf("unreadable Secret: %v", err)
	}
}

// The extension registers itself: an ExtensionConfig "anvil" at the
// Service with Cluster API's CA injection from the Secret, applied again
// unchanged, and an admin's namespaceSelector on it kept.
func TestRegistration(t *testing.T) {
	ctx := context.Background()
	port := int32(9443)
	r := &inplace.Registration{Service: &runtimev1.ServiceReference{Namespace: "anvil-system", Name: "anvil-capi-extension", Port: &port},
		CASecret: types.NamespacedName{Namespace: "anvil-system", Name: "anvil-capi-extension-cert"}, Client: c, Logger: logr.Discard()}
	must(t, r.Apply(ctx))
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: inplace.ExtensionConfigName}})
	})
	ec := &runtimev1.ExtensionConfig{}
	must(t, c.Get(ctx, client.ObjectKey{Name: inplace.ExtensionConfigName}, ec))
	svc := ec.Spec.ClientConfig.Service
	if ec.Annotations[runtimev1.InjectCAFromSecretAnnotation] != "anvil-system/anvil-capi-extension-cert" || svc.Name != "anvil-capi-extension" ||
		svc.Namespace != "anvil-system" || svc.Port == nil || *svc.Port != 9443 || ec.Spec.ClientConfig.URL != "" {
		t.Fatalf("ExtensionConfig: annotations %v, clientConfig %+v", ec.Annotations, ec.Spec.ClientConfig)
	}
	ec.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"capi": "anvil"}}
	must(t, c.Update(ctx, ec, client.FieldOwner("admin")))
	rv := ec.ResourceVersion
	must(t, r.Apply(ctx))
	must(t, c.Get(ctx, client.ObjectKey{Name: inplace.ExtensionConfigName}, ec))
	if ec.ResourceVersion != rv || ec.Spec.NamespaceSelector == nil || ec.Spec.NamespaceSelector.MatchLabels["capi"] != "anvil" {
		t.Fatalf("applying again changed the ExtensionConfig (resourceVersion %s, was %s) or dropped the admin's namespaceSelector %v", ec.ResourceVersion, rv, ec.Spec.NamespaceSelector)
	}

	// Running, it puts back an ExtensionConfig deleted by hand.
	r.Reapply = 200 * time.Millisecond
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Start(rctx) }()
	defer func() { stop(); <-done }()
	must(t, c.Delete(ctx, ec))
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &runtimev1.ExtensionConfig{}
		err := c.Get(ctx, client.ObjectKey{Name: inplace.ExtensionConfigName}, got)
		return err == nil && got.UID != ec.UID, nil
	})
	if err != nil {
		t.Fatalf("a deleted ExtensionConfig was not applied again: %v", err)
	}
}
