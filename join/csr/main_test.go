package csr_test

import (
	"anvil.dev/anvil/test/logs"
	"anvil.dev/anvil/test/need"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"anvil.dev/anvil/controlplane"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/test/envtest"
)

// The package's tests share one real control plane: etcd, kube-apiserver
// (Node authorizer, NodeRestriction, bootstrap tokens) and
// kube-controller-manager (csrsigning signs what the Approver approves).
var (
	cp          *controlplane.ControlPlane
	admin       client.Client
	kube        kubernetes.Interface
	setupErr    error // why the control plane is missing; tests skip or fail on it
	managerLogs logs.Buffer
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "anvil-csr-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	stop, err := setup(ctx, dir)
	if err != nil {
		setupErr = err
		return m.Run() // every test skips (or fails under CI=true)
	}
	code := m.Run()
	cancel()
	stop()
	return code
}

func setup(ctx context.Context, dir string) (stop func(), err error) {
	root, err := envtest.RepoRoot()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(root, "bin")
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return nil, fmt.Errorf("%s not built in %s: run hack/tools/build.sh", b, bin)
		}
	}
	sctx, scancel := context.WithTimeout(ctx, 4*time.Minute)
	defer scancel()
	c, err := controlplane.Start(sctx, controlplane.Options{
		Dir: dir, BinDir: bin, RandomPorts: true,
		ControllerManager: &controlplane.ControllerManagerOptions{},
	})
	if err != nil {
		return nil, err
	}
	cp = c
	scheme := envtest.Scheme()
	admin, err = client.New(cp.Config, client.Options{Scheme: scheme})
	if err == nil {
		kube, err = kubernetes.NewForConfig(cp.Config)
	}
	if err == nil {
		err = deploy.InstallCRDs(sctx, admin)
	}
	if err == nil {
		err = csr.ApplyBootstrapClusterRoleBinding(sctx, admin)
	}
	if err != nil {
		cp.Stop()
		return nil, err
	}

	// The Approver runs with exactly the rights its RBAC markers ask for,
	// not as an admin, so a missing marker fails these tests.
	mgrCfg, err := limitedIdentity(sctx)
	if err != nil {
		cp.Stop()
		return nil, err
	}
	mgrKube, err := kubernetes.NewForConfig(mgrCfg)
	if err != nil {
		cp.Stop()
		return nil, err
	}

	log := logr.FromSlogHandler(slog.NewTextHandler(&managerLogs, &slog.HandlerOptions{Level: slog.Level(-4)}))
	ctrl.SetLogger(log)
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: log})
	if err != nil {
		cp.Stop()
		return nil, err
	}
	a := &csr.Approver{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Kube: mgrKube,
		Recorder:      mgr.GetEventRecorder("anvil-csr"),
		RetryInterval: time.Second,
	}
	if err := a.SetupWithManager(ctx, mgr); err != nil {
		cp.Stop()
		return nil, err
	}
	mctx, mcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(mctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return func() {
		mcancel()
		<-done
		cp.Stop()
	}, nil
}

// needControlPlane skips (or under CI=true fails) when setup failed.
func needControlPlane(t *testing.T) {
	t.Helper()
	if setupErr == nil {
		return
	}
	need.OrSkip(t, "control plane not available: %v", setupErr)
}

// caPEM is the cluster CA, as a kubelet gets it in its config.
func caPEM(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(cp.CACert)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bearerConfig is what a kubelet's bootstrap kubeconfig amounts to.
func bearerConfig(t *testing.T, bearer string) *rest.Config {
	return &rest.Config{Host: cp.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM(t)}, BearerToken: bearer, Timeout: 15 * time.Second}
}

// waitLog waits until one line of the manager's log contains every part.
func waitLog(t *testing.T, parts ...string) string {
	t.Helper()
	var found string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		for _, line := range strings.Split(managerLogs.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				found = line
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no log line with %q", parts)
	}
	return found
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// approverRules mirror the +kubebuilder:rbac markers of approver.go.
var approverRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests/approval"}, Verbs: []string{"update"}},
	{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving"}, Verbs: []string{"approve"}},
	{APIGroups: []string{"metal.anvil.dev"}, Resources: []string{"machines"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// limitedIdentity creates a ClusterRole with approverRules bound to a user
// and returns a client config authenticating as that user with a
// certificate from the control plane's CA.
func limitedIdentity(ctx context.Context) (*rest.Config, error) {
	const user = "anvil-csr-approver-test"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: approverRules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := admin.Create(ctx, role); err != nil {
		return nil, err
	}
	if err := admin.Create(ctx, binding); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caCerts, err := certutil.CertsFromFile(cp.CACert)
	if err != nil {
		return nil, err
	}
	caKey, err := keyutil.PrivateKeyFromFile(cp.CAKey)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: user},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCerts[0], key.Public(), caKey.(crypto.Signer))
	if err != nil {
		return nil, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(cp.CACert)
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: cp.Config.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: caPEM, CertData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), KeyData: keyPEM,
	}}, nil
}
