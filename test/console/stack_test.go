package console_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/redfishsim"
	"anvil.dev/anvil/test/simhost"
)

const (
	oldVersion = "v1.36.4"
	newVersion = "v1.37.2" // the envtest API server's version
)

var (
	env    *envtest.Env
	issuer *oidcIssuer // an OIDC issuer the API server trusts (TestConsoleOIDC)
)

func TestMain(m *testing.M) {
	if _, err := os.Stat("../../bin/kube-apiserver"); err != nil {
		os.Exit(m.Run())
	}
	flags := map[string]string{}
	dir, err := os.MkdirTemp("", "anvil-console-oidc-")
	if err == nil {
		if issuer, err = startOIDCIssuer(); err == nil {
			var path string
			if path, err = issuer.authenticationConfig(dir); err == nil {
				flags["authentication-config"] = path
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "OIDC issuer:", err)
		issuer = nil
	}
	envtest.RunWith(m, &env, flags, func() {
		if issuer != nil {
			issuer.srv.Close()
		}
		if dir != "" {
			os.RemoveAll(dir)
		}
	})
}

// stack is the console's world: the API server, a Redfish emulator for
// the Hosts' BMCs, `anvil serve` with the console on (controllers) and
// the network services, and simulated hosts that boot, join and upgrade.
type stack struct {
	ns         string
	c          client.Client
	anvil      *simhost.Anvil
	console    string // http://127.0.0.1:PORT
	bmcs       *redfishsim.Server
	screenshot string // where screenshots go
}

// racks: r1 (failure domain fd-a) holds sim-0..2, r2 (fd-b) sim-3..5 and
// dead-bmc, whose BMC address answers nothing.
func rackOf(i int) map[string]string {
	r, fd := "r1", "fd-a"
	if i >= 3 {
		r, fd = "r2", "fd-b"
	}
	return map[string]string{metalv1.LabelRack: r, metalv1.LabelFailureDomain: fd}
}

func newStack(t *testing.T, hosts int, simulate bool) *stack {
	t.Helper()
	if env == nil {
		need.OrSkip(t, "bin/kube-apiserver missing: run `make tools`")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{ns: env.Namespace(t), c: env.Client, screenshot: filepath.Join(root, "bin", "test-logs", "console")}
	if d := os.Getenv("ANVIL_SCREENSHOT_DIR"); d != "" {
		s.screenshot = d
	}
	if err := os.MkdirAll(s.screenshot, 0o755); err != nil {
		t.Fatal(err)
	}
	tb := simhost.NewTestbed(t, ctx, simhost.TestbedOptions{Client: s.c, Namespace: s.ns, WriteKubeconfig: env.WriteKubeconfig, Hosts: hosts})
	s.bmcs = tb.BMCs
	class, err := simhost.Class(simhost.ClassOptions{Namespace: s.ns, ArtifactDir: tb.Artifacts, Versions: []string{oldVersion, newVersion}})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s.c, class)
	port := freePort(t)
	s.console = "http://127.0.0.1:" + strconv.Itoa(port)
	s.anvil = tb.StartAnvil(t, ctx, "--bmc-call-timeout", "5s", "--machine-boot-timeout", "3m", "--machine-join-timeout", "3m",
		"--console-listen", "127.0.0.1:"+strconv.Itoa(port), "--console-namespace", s.ns)
	if simulate {
		s.startFleet(ctx, t, cancel)
	}
	for _, h := range simhost.Hosts(simhost.HostsOptions{Namespace: s.ns, Count: hosts, Labels: rackOf, BMCAddress: func(i int) string {
		return tb.BMCAddress(i)
	}}) {
		mustCreate(t, s.c, h)
	}
	// A Host whose BMC answers nothing (port 1 on loopback is closed).
	dead := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: "dead-bmc", Namespace: s.ns, Labels: rackOf(5)},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", CredentialsName: "bmc", AllowPlainHTTP: true},
			BootMACs: []string{"02:ff:00:00:00:01"}}}
	mustCreate(t, s.c, dead)
	waitHTTP(t, s.console+"/login")
	return s
}

// startFleet runs simulated hosts: they boot, join and upgrade as the
// Host and Machine objects ask.
func (s *stack) startFleet(ctx context.Context, t *testing.T, cancel context.CancelFunc) {
	fleet, err := simhost.New(simhost.Options{Config: env.Config, Namespace: s.ns, BootURL: s.anvil.BootURL,
		POSTDelay: 300 * time.Millisecond, KernelBootDelay: 300 * time.Millisecond, KubeletStartDelay: 200 * time.Millisecond,
		PollInterval: time.Second, IgnorePollHint: true, ApplyDelay: 4 * time.Second, WipeDelay: 200 * time.Millisecond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fleet.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fleet: %v", err)
		}
	})
}

// token signs a ServiceAccount in (TokenRequest): what `kubectl create
// token` gives an admin, bound in the test namespace to one of the roles
// deploy/rbac/console.yaml ships (anvil-operator, anvil-viewer).
func (s *stack) token(t *testing.T, name, clusterRole string) string {
	t.Helper()
	ctx := context.Background()
	if err := deploy.InstallUserRoles(ctx, s.c); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns}}
	mustCreate(t, s.c, sa)
	mustCreate(t, s.c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: s.ns}}})
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := s.c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("token for ServiceAccount %s: %v", name, err)
	}
	return tr.Status.Token
}

func mustCreate(t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), o); err != nil {
		t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitHTTP(t *testing.T, url string) {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Second}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("the console does not serve %s", url)
	}
}

// eventually is need.Eventually.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	need.Eventually(t, timeout, what, cond)
}

// noSecrets fails when a page, a log or an answer carries a secret.
func noSecrets(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s contains a secret (%d characters, starting %.4q)", where, len(s), s)
		}
	}
}
