package controlplane

import (
	"anvil.dev/anvil/test/need"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
)

func binDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(dir), "bin")
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			need.OrSkip(t, "%s not built in %s: run hack/tools/build.sh", b, bin)
		}
	}
	return bin
}

// TestControllerManagerSignsApprovedCSR runs a control plane with
// kube-controller-manager on random ports and checks that a CSR approved by
// an admin is signed by the control plane's CA, and that the signed
// certificate authenticates.
func TestControllerManagerSignsApprovedCSR(t *testing.T) {
	bin := binDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{Dir: t.TempDir(), BinDir: bin, RandomPorts: true, ControllerManager: &ControllerManagerOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	if cp.APIServerPort == 6443 || cp.ControllerManagerPort == 0 || cp.ControllerManagerPort == 10257 {
		t.Fatalf("ports not randomized: api %d, kcm %d", cp.APIServerPort, cp.ControllerManagerPort)
	}
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	req, err := certutil.MakeCSR(key, &pkix.Name{CommonName: "alice", Organization: []string{"testers"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	name, uid, err := csr.RequestCertificateWithContext(ctx, admin, req, "", certificatesv1.KubeAPIServerClientSignerName, nil,
		[]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, key)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj.Status.Conditions = append(obj.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the test",
	})
	if _, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	certPEM, err := csr.WaitForCertificate(wctx, admin, name, uid)
	if err != nil {
		t.Fatalf("approved CSR was not signed (is csrsigning running? see %s): %v", filepath.Join(cp.opts.Dir, "logs"), err)
	}

	// Signed by our CA ...
	caPEM, err := os.ReadFile(cp.CACert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	blk, _ := pem.Decode(certPEM)
	if blk == nil {
		t.Fatal("no PEM certificate")
	}
	crt, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crt.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("signed certificate does not chain to the control plane CA: %v", err)
	}
	// ... and accepted by the API server as alice.
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	alice := &rest.Config{Host: cp.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM, CertData: certPEM, KeyData: keyPEM}, Timeout: 10 * time.Second}
	ac, err := kubernetes.NewForConfig(alice)
	if err != nil {
		t.Fatal(err)
	}
	ssr, err := ac.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ssr.Status.UserInfo.Username; got != "alice" {
		t.Fatalf("authenticated as %q, want alice", got)
	}
}
