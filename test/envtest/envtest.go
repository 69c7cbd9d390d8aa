// Package envtest starts a real etcd and kube-apiserver (the binaries that
// hack/tools builds into bin/) for tests, with Anvil's CRDs installed and
// bootstrap-token authentication on. One API server per test binary.
package envtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/test/need"
)

// Env is a running control plane.
type Env struct {
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme
	// BinDir is where kube-apiserver and etcd were found.
	BinDir string

	env *crenvtest.Environment

	mu      sync.Mutex
	removed [][]byte // JSON of what namespace cleanups deleted
}

// Removed returns the JSON of every object a namespace cleanup deleted, so
// a test that scans the whole server for leaked secrets still sees them.
func (e *Env) Removed() [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][]byte(nil), e.removed...)
}

// Scheme has the built-in types, Anvil's types (both API groups) and CRDs.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, metalv1.AddToScheme, infrav1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// RepoRoot is the repository root (the directory with go.mod and hack/tools).
func RepoRoot() (string, error) { return need.RepoRoot() }

// Start brings up the control plane. Call Stop when done (TestMain).
func Start() (*Env, error) { return StartWith(nil) }

// StartWith is Start with more kube-apiserver flags (name without dashes:
// value), e.g. an --authentication-config for an OIDC issuer.
func StartWith(apiServerFlags map[string]string) (*Env, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(root, "bin")
	if _, err := os.Stat(filepath.Join(bin, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("bin/kube-apiserver missing: run `make tools` (make test does it)")
	}
	crds, err := deploy.CRDs()
	if err != nil {
		return nil, err
	}
	e := &crenvtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDs:                  crds,
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme(),
	}
	api := e.ControlPlane.GetAPIServer()
	api.Configure().Set("enable-bootstrap-token-auth", "true")
	for k, v := range apiServerFlags {
		api.Configure().Set(k, v)
	}
	api.StartTimeout = 90 * time.Second
	e.ControlPlaneStartTimeout = 90 * time.Second
	cfg, err := e.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		_ = e.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Client: c, Scheme: e.Scheme, BinDir: bin, env: e}, nil
}

// Stop terminates the control plane.
func (e *Env) Stop() error { return e.env.Stop() }

// Run is a TestMain body: start, run the tests, stop. It exits the process.
func Run(m *testing.M, env **Env) { RunWith(m, env, nil, nil) }

// RunWith is Run with more kube-apiserver flags (StartWith); cleanup, if
// set, runs after the control plane stopped (os.Exit skips defers).
func RunWith(m *testing.M, env **Env, apiServerFlags map[string]string, cleanup func()) {
	code := func() int {
		if cleanup != nil {
			defer cleanup()
		}
		e, err := StartWith(apiServerFlags)
		if err != nil {
			fmt.Fprintln(os.Stderr, "envtest:", err)
			return 1
		}
		*env = e
		code := m.Run()
		if err := e.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "envtest stop:", err)
		}
		return code
	}()
	os.Exit(code)
}

// Namespace creates a fresh namespace for one test and deletes it after,
// with Anvil's objects in it: no namespace controller runs here, so a
// deleted namespace would keep its Hosts and Machines for the rest of the
// test binary, and a later test's controllers would reconcile them (and
// dial their made-up BMC addresses).
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.deleteAnvilObjects(ctx, ns.Name); err != nil {
			t.Logf("cleaning namespace %s: %v", ns.Name, err)
		}
		_ = e.Client.Delete(ctx, ns)
	})
	return ns.Name
}

// deleteAnvilObjects deletes every Anvil object in ns, finalizers dropped:
// the test that owned them is over, so nothing is left to finalize.
func (e *Env) deleteAnvilObjects(ctx context.Context, ns string) error {
	lists := []client.ObjectList{&infrav1.AnvilMachineList{}, &infrav1.AnvilClusterList{}, &metalv1.MachineSetList{}, &metalv1.MachineList{}, &metalv1.HostList{},
		&metalv1.MachineClassList{}, &metalv1.TicketDeliveryList{}, &metalv1.TicketEndpointList{}}
	for _, l := range lists {
		if err := e.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
			return err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return err
		}
		for _, it := range items {
			o := it.(client.Object)
			if b, err := json.Marshal(o); err == nil {
				e.mu.Lock()
				e.removed = append(e.removed, b)
				e.mu.Unlock()
			}
			// A claimed Host is released first: with deploy/policy
			// installed, the API server refuses to delete it.
			h, claimed := o.(*metalv1.Host)
			claimed = claimed && h.Spec.ConsumerRef != nil
			if len(o.GetFinalizers()) > 0 || claimed {
				p := `{"metadata":{"finalizers":null}}`
				if claimed {
					p = `{"metadata":{"finalizers":null},"spec":{"consumerRef":null}}`
				}
				if err := e.Client.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(p))); client.IgnoreNotFound(err) != nil {
					return err
				}
			}
			if err := e.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

// WriteKubeconfig writes an admin kubeconfig for the control plane into dir
// and returns its path, for tests that run the CLI or kubectl.
func (e *Env) WriteKubeconfig(dir string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: e.Config.CertData, ClientKeyData: e.Config.KeyData, Token: e.Config.BearerToken}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "envtest"
	p := filepath.Join(dir, "kubeconfig")
	return p, clientcmd.WriteToFile(*cfg, p)
}
