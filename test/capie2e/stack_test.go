package capie2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/capi/inplace"
	"anvil.dev/anvil/test/capitest"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
	"anvil.dev/anvil/test/simhost"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	if _, err := os.Stat("../../bin/kube-apiserver"); err != nil {
		// Let the test itself skip (or fail under CI) with the reason.
		os.Exit(m.Run())
	}
	envtest.Run(m, &env)
}

// hostLabels select the test's Hosts (AnvilCluster, AnvilMachineTemplates).
var hostLabels = map[string]string{"pool": "capi-e2e"}

// stack is one test's namespace with Cluster API's managers, both anvil
// processes (controllers with --capi and the in-place extension; network
// services), Redfish BMCs and the simulated hosts behind them.
type stack struct {
	ns        string
	c         client.Client // with Cluster API's types
	capi      *capitest.CAPI
	anvil     *simhost.Anvil
	fleet     *simhost.Fleet
	artifacts string
	// apiHost and apiPort are the envtest API server's: the "workload
	// cluster" is the same API server.
	apiHost string
	apiPort int32
	// kubeconfig is an admin kubeconfig of that API server.
	kubeconfig []byte

	mu          sync.Mutex
	failVersion string // the agent fails (and rolls back) upgrades to this version
	failReason  string
	events      []simhost.Event
	secrets     map[string]string // secret strings from the namespace's Secrets: what each is
}

// newStack starts the stack with hosts simulated hosts (labelled
// hostLabels) and the MachineClasses classes, cloud-init ones (the kubeadm
// bootstrap provider writes cloud-config) with kubelets of versions. It
// skips (fails under CI) without the API server's or Cluster API's
// binaries.
func newStack(t *testing.T, hosts int, versions []string, classes ...string) *stack {
	t.Helper()
	if env == nil {
		need.OrSkip(t, "bin/kube-apiserver missing: run `make tools`")
	}
	capitest.Dir(t) // skips (fails under CI) before anything is built
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &stack{ns: env.Namespace(t)}
	var err error
	if s.c, err = client.New(env.Config, client.Options{Scheme: capitest.Scheme()}); err != nil {
		t.Fatal(err)
	}
	s.capi = capitest.Start(t, env, capitest.Options{})

	tb := simhost.NewTestbed(t, ctx, simhost.TestbedOptions{Client: s.c, Namespace: s.ns, WriteKubeconfig: env.WriteKubeconfig, Hosts: hosts, KeepLogsEnv: "CAPIE2E_KEEP_LOGS"})
	if s.kubeconfig, err = os.ReadFile(tb.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatalf("API server address %q: %v", env.Config.Host, err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("API server address %q: no port", env.Config.Host)
	}
	s.apiHost, s.apiPort = u.Hostname(), int32(p)
	s.artifacts = tb.Artifacts
	for _, name := range classes {
		class, err := simhost.Class(simhost.ClassOptions{Name: name, Namespace: s.ns, ArtifactDir: s.artifacts, Versions: versions, Format: "cloud-init"})
		if err != nil {
			t.Fatal(err)
		}
		s.create(t, class)
	}

	extPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s.anvil = tb.StartAnvil(t, ctx, "--capi",
		"--capi-extension-bind-address", "127.0.0.1:"+strconv.Itoa(extPort),
		// Anvil makes its certificate in this Secret and registers
		// itself; Cluster API injects the CA from the Secret.
		"--capi-extension-cert-secret", s.ns+"/anvil-capi-extension-cert",
		"--capi-extension-url", "https://127.0.0.1:"+strconv.Itoa(extPort),
		"--bmc-call-timeout", "10s", "--machine-boot-timeout", "3m", "--machine-join-timeout", "3m")

	s.fleet, err = simhost.New(simhost.Options{Config: env.Config, Namespace: s.ns, BootURL: s.anvil.BootURL,
		POSTDelay: 300 * time.Millisecond, KernelBootDelay: 500 * time.Millisecond, KubeletStartDelay: 200 * time.Millisecond,
		PollInterval: time.Second, IgnorePollHint: true, ApplyDelay: 500 * time.Millisecond, WipeDelay: 200 * time.Millisecond, Seed: 1,
		FailUpgrade: func(_ types.NamespacedName, version string) string {
			s.mu.Lock()
			defer s.mu.Unlock()
			if version == s.failVersion {
				return s.failReason
			}
			return ""
		},
		// kubeadm starts the kubelet of the image, here the Anvil
		// Machine's version (its CAPI Machine's when it was created).
		KubeletVersionFor: simhost.MachineVersion(s.c),
		OnEvent: func(e simhost.Event) {
			s.mu.Lock()
			s.events = append(s.events, e)
			s.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.fleet.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fleet: %v", err)
		}
		if t.Failed() {
			t.Logf("fleet stats: %+v", s.fleet.Stats())
		}
	})
	for _, h := range simhost.Hosts(simhost.HostsOptions{Namespace: s.ns, Prefix: "capie2e-", Count: hosts,
		BMCAddress: tb.BMCAddress,
		Labels:     func(int) map[string]string { return hostLabels }}) {
		s.create(t, h)
	}
	s.registerExtension(t)
	return s
}

// registerExtension waits until Cluster API has discovered the handlers
// of the ExtensionConfig Anvil applied for itself, with the CA Cluster API
// injected from Anvil's certificate Secret.
func (s *stack) registerExtension(t *testing.T) {
	t.Helper()
	key := client.ObjectKey{Name: inplace.ExtensionConfigName}
	t.Cleanup(func() {
		ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name}}
		if err := s.c.Delete(context.Background(), ec); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting ExtensionConfig %s: %v", ec.Name, err)
		}
	})
	s.eventually(t, 2*time.Minute, "Cluster API to discover the handlers of the ExtensionConfig Anvil registered", func(ctx context.Context) (bool, string) {
		got := &runtimev1.ExtensionConfig{}
		if err := s.c.Get(ctx, key, got); err != nil {
			return false, err.Error()
		}
		sec := &corev1.Secret{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "anvil-capi-extension-cert"}, sec); err != nil {
			return false, err.Error()
		}
		if len(got.Spec.ClientConfig.CABundle) == 0 || !bytes.Equal(got.Spec.ClientConfig.CABundle, sec.Data["ca.crt"]) {
			return false, "Cluster API has not injected the CA of Anvil's Secret"
		}
		return capitest.AnvilHandlersDiscovered(got)
	})
}

func (s *stack) create(t *testing.T, o client.Object) {
	t.Helper()
	if err := s.c.Create(context.Background(), o); err != nil {
		t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

// alive reports a process of the stack that has exited.
func (s *stack) alive() error {
	err := s.capi.Alive()
	for _, p := range []*simhost.Process{s.anvil.Controllers, s.anvil.Netboot} {
		if p.Exited() {
			err = errors.Join(err, fmt.Errorf("anvil serve (%s) exited", p.Name))
		}
	}
	return err
}

// eventually polls cond until it holds, within timeout (bounded; never a
// timing assertion), failing early if a process of the stack exited.
func (s *stack) eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := s.alive(); err != nil {
			return false, err
		}
		ok, why := cond(ctx)
		if ctx.Err() == nil {
			last = why
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s (%v); last: %s", what, timeout, err, last)
	}
}

// setFailure makes the simulated agent fail upgrades to version with
// reason (rolled back on the host); "" stops it.
func (s *stack) setFailure(version, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failVersion, s.failReason = version, reason
}

// eventsOf returns the fleet's events of kind.
func (s *stack) eventsOf(kind simhost.EventKind) []simhost.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []simhost.Event
	for _, e := range s.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Secrets Cluster API keeps for the cluster hold private keys (the
// cluster's CA and service-account keys, in <cluster>-ca and the
// control-plane Machine's bootstrap data) and bootstrap tokens (in the
// workers' join data).
var (
	privateKeyRe = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----([\s\S]*?)-----END`)
	tokenRe      = regexp.MustCompile(`\b[a-z0-9]{6}\.[a-z0-9]{16}\b`)
)

// collectSecrets remembers the private key lines and bootstrap tokens in
// the namespace's Secrets, for noSecretsInLogs.
func (s *stack) collectSecrets(t *testing.T) {
	t.Helper()
	var l corev1.SecretList
	if err := s.c.List(context.Background(), &l, client.InNamespace(s.ns)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secrets == nil {
		s.secrets = map[string]string{}
	}
	for _, sec := range l.Items {
		for k, v := range sec.Data {
			where := sec.Name + "/" + k
			for _, m := range privateKeyRe.FindAllSubmatch(v, -1) {
				for _, line := range strings.Fields(string(m[1])) {
					if len(line) >= 32 {
						s.secrets[line] = "a private key line of Secret " + where
					}
				}
			}
			for _, tok := range tokenRe.FindAll(v, -1) {
				s.secrets[string(tok)] = "a bootstrap token in Secret " + where
			}
		}
	}
}

// noSecretsInLogs fails the test if a collected secret appears in a log
// of anvil serve.
func (s *stack) noSecretsInLogs(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.secrets) == 0 {
		t.Fatal("no private keys or bootstrap tokens found in the namespace's Secrets: the check would prove nothing")
	}
	keys, tokens := 0, 0
	for _, what := range s.secrets {
		if strings.HasPrefix(what, "a bootstrap token") {
			tokens++
		} else {
			keys++
		}
	}
	t.Logf("checking the anvil logs for %d private key lines and %d bootstrap tokens", keys, tokens)
	for _, p := range []*simhost.Process{s.anvil.Controllers, s.anvil.Netboot} {
		b, err := os.ReadFile(p.Log)
		if err != nil {
			t.Fatal(err)
		}
		for needle, what := range s.secrets {
			if strings.Contains(string(b), needle) {
				t.Errorf("the anvil serve (%s) log contains %s", p.Name, what)
			}
		}
	}
}
