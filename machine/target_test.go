package machine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/test/clustertest"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
)

// targetEnv is a machineEnv whose manager also runs the CSR approver and
// shares one target registry with the Machine controller, as anvil serve
// does, plus the config source the boot service would use.
type targetEnv struct {
	*machineEnv
	target  *envtest.Env
	tcs     kubernetes.Interface
	configs *delivery.Configs
}

func newTargetEnv(t *testing.T) *targetEnv {
	t.Helper()
	e := newMachineEnv(t, 1, fastOptions())
	e.stop() // replaced by a manager with the approver and a shared registry
	tgt, err := clustertest.Start()
	if err != nil {
		need.OrSkip(t, "second API server not available: %v", err)
	}
	t.Cleanup(func() { _ = tgt.Stop() })
	te := &targetEnv{machineEnv: e, target: tgt}
	if te.tcs, err = kubernetes.NewForConfig(tgt.Config); err != nil {
		t.Fatal(err)
	}
	// Anvil's bootstrap tokens may ask for certificates in the target too.
	if err := tgt.Client.Create(context.Background(), csr.BootstrapClusterRoleBinding()); err != nil {
		t.Fatal(err)
	}
	e.stop = te.startManager(t)
	t.Cleanup(func() { e.stop() }) // before the target stops
	mgmt := apiServer(t)
	secrets, err := cluster.New(cluster.Options{Secrets: e.c})
	if err != nil {
		t.Fatal(err)
	}
	te.configs, err = delivery.NewConfigs(delivery.ConfigsOptions{Client: e.c, Writer: e.c, Clientset: e.cs,
		CACertPEM: mgmt.Config.CAData, APIServerEndpoint: mgmt.Config.Host, BaseURL: "http://192.0.2.1:8080", Targets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	return te
}

func (te *targetEnv) startManager(t *testing.T) func() {
	t.Helper()
	e, env := te.machineEnv, apiServer(t)
	skip := true
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		Controller: config.Controller{SkipNameValidation: &skip},
		Logger:     logr.FromSlogHandler(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.Level(-2)})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	targets, err := cluster.New(cluster.Options{Secrets: mgr.GetAPIReader(), Classes: mgr.GetClient(), Logger: mgr.GetLogger().WithName("targets")})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(targets); err != nil {
		t.Fatal(err)
	}
	pool := bmc.NewPool(bmc.PoolOptions{Guard: netguard.Guard{AllowLoopback: true}}) // the emulated BMC is on loopback
	hosts := &inventory.HostReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("anvil-host"),
		Power: inventory.PowerOptions{Pool: pool, CallTimeout: 10 * time.Second, PollInterval: time.Second, BackoffBase: 200 * time.Millisecond, BackoffMax: 2 * time.Second}}
	classes := &machine.ClassReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("anvil-machineclass")}
	machines := &machine.MachineReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clientset: e.cs,
		Recorder: mgr.GetEventRecorder("anvil-machine"), Options: e.opts, Targets: targets}
	approver := &csr.Approver{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Kube: e.cs, Targets: targets, RetryInterval: time.Second}
	for _, s := range []interface {
		SetupWithManager(context.Context, ctrl.Manager) error
	}{hosts, classes, machines, approver} {
		if err := s.SetupWithManager(ctx, mgr); err != nil {
			t.Fatal(err)
		}
	}
	done := startManager(ctx, t, mgr, "manager")
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			pool.Close(context.Background())
		})
	}
}

// addTargetClass is the Flatcar example class joining the target cluster
// through the kubeconfig Secret named secret.
func (te *targetEnv) addTargetClass(t *testing.T, name, secret, extraTemplate string) {
	t.Helper()
	mc := loadExample(t, "machineclass-flatcar.yaml")
	mc.Namespace, mc.Name = te.ns, name
	wipe := false
	mc.Spec.Wipe = &wipe
	mc.Spec.Join.KubeconfigSecretRef = &metalv1.LocalObjectReference{Name: secret}
	mc.Spec.Config.Template += extraTemplate
	mustCreate(t, te.c, mc)
	waitConfigValid(t, te.c, client.ObjectKeyFromObject(mc), metav1.ConditionTrue)
}

// provisioning creates a Host and a Machine of class and waits until the
// Host took the Machine's network boot.
func (te *targetEnv) provisioning(t *testing.T, class string, hostLabels map[string]string) (*metalv1.Machine, *metalv1.Host) {
	t.Helper()
	labels := map[string]string{"role": "worker"}
	for k, v := range hostLabels {
		labels[k] = v
	}
	te.addHost(t, 0, labels)
	te.waitHostState(t, "host-0", metalv1.HostAvailable)
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: te.ns}, Spec: metalv1.MachineSpec{
		MachineClassRef: metalv1.LocalObjectReference{Name: class},
		HostSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}},
		Version:         kubeletVersion,
	}}
	mustCreate(t, te.c, m)
	m = te.waitPhase(t, "m1", metalv1.MachineProvisioning, 30*time.Second)
	var h *metalv1.Host
	eventually(t, 30*time.Second, "Host took the boot", func(ctx context.Context) (bool, string) {
		var err error
		if m, err = te.machine(ctx, "m1"); err != nil || m.Status.Boot == nil {
			return false, "no boot yet"
		}
		if h, err = te.host(ctx, "host-0"); err != nil {
			return false, err.Error()
		}
		return h.Status.BootRequestID == m.Status.Boot.RequestID, "took " + h.Status.BootRequestID
	})
	return m, h
}

func hostKey(h *metalv1.Host) bootcred.HostKey {
	return bootcred.HostKey{Namespace: h.Namespace, Name: h.Name, UID: string(h.UID)}
}

// bearer is a client of env's API server with only a bearer token.
func bearer(t *testing.T, env *envtest.Env, tok string) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: env.Config.Host, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// kubeletCSR is the CSR a kubelet's TLS bootstrap creates for node.
func kubeletCSR(t *testing.T, name, node string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.CertificateSigningRequestSpec{
		Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
		Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
	}}
}

// TestTargetCluster: a class whose Machines join a second cluster. The
// config's token is minted there (and works only there), Anvil approves
// the kubelet's CSR there, the Node registered there makes the Machine
// Running, the token is revoked there, and deleting the Machine drains and
// deletes the Node there.
func TestTargetCluster(t *testing.T) {
	te := newTargetEnv(t)
	ctx := context.Background()
	if _, err := clustertest.CreateSecret(ctx, te.c, te.ns, "target-kubeconfig", te.target.Config); err != nil {
		t.Fatal(err)
	}
	te.addTargetClass(t, "remote", "target-kubeconfig", "")
	m, h := te.provisioning(t, "remote", nil)

	// The host fetches its config.
	vars, err := te.configs.Vars(ctx, hostKey(h))
	if err != nil {
		t.Fatalf("config vars: %v", err)
	}
	if vars.Join.APIServerEndpoint != te.target.Config.Host {
		t.Errorf("join endpoint %q, want the target's %q", vars.Join.APIServerEndpoint, te.target.Config.Host)
	}
	wantHash, _ := token.CACertHash(te.target.Config.CAData)
	if vars.Join.CACertHash != wantHash || vars.Join.CACertPEM != string(te.target.Config.CAData) {
		t.Errorf("join CA hash %q, want the target's %q", vars.Join.CACertHash, wantHash)
	}
	id, _, _ := strings.Cut(vars.Join.Token, ".")
	// The target's token authenticator reads Secrets through an informer:
	// a token minted a moment ago may 401 until it has been delivered.
	var rev *authenticationv1.SelfSubjectReview
	eventually(t, 10*time.Second, "the token authenticates against the target", func(ctx context.Context) (bool, string) {
		var err error
		rev, err = bearer(t, te.target, vars.Join.Token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err)
	})
	if got := rev.Status.UserInfo.Username; got != "system:bootstrap:"+id {
		t.Fatalf("target says the token is %q", got)
	}
	if _, err := bearer(t, apiServer(t), vars.Join.Token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("the token against the management cluster: %v, want Unauthorized", err)
	}
	if l, _ := token.List(ctx, te.cs, token.ListOptions{MachineUID: m.UID}); len(l) != 0 {
		t.Fatalf("a token was minted in the management cluster: %v", l)
	}

	// The kubelet's TLS bootstrap, in the target.
	node := csr.NodeNameFor(m)
	req, err := bearer(t, te.target, vars.Join.Token).CertificatesV1().CertificateSigningRequests().Create(ctx, kubeletCSR(t, "csr-"+te.ns, node), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the CSR with the token in the target: %v", err)
	}
	eventually(t, 30*time.Second, "Anvil approves the CSR in the target", func(ctx context.Context) (bool, string) {
		c, err := te.tcs.CertificatesV1().CertificateSigningRequests().Get(ctx, req.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == certificatesv1.CertificateApproved && cond.Reason == csr.ReasonApproved {
				return true, ""
			}
		}
		return false, "conditions " + describeCSR(c)
	})

	// The host consumed its boot credential; its kubelet registers in the target.
	orig := h.DeepCopy()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	h.Status.BootCredential = &metalv1.BootCredentialStatus{Hash: "sha256:test", IssuedAt: now, ExpiresAt: metav1.NewTime(now.Add(5 * time.Minute)),
		ConsumedAt: &now, ConsumedFrom: "10.0.0.50", BootRequestID: m.Status.Boot.RequestID}
	if err := te.c.Status().Patch(ctx, h, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: corev1.NodeSpec{ProviderID: m.Status.ProviderID}}
	if err := te.target.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
	n.Status.NodeInfo.KubeletVersion = kubeletVersion
	if err := te.target.Client.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	m = te.waitPhase(t, "m1", metalv1.MachineRunning, 30*time.Second)
	if m.Status.NodeRef == nil || m.Status.NodeRef.Name != node {
		t.Fatalf("nodeRef %v, want %s", m.Status.NodeRef, node)
	}
	eventually(t, 30*time.Second, "the token is revoked in the target", func(ctx context.Context) (bool, string) {
		l, err := token.List(ctx, te.tcs, token.ListOptions{MachineUID: m.UID})
		return err == nil && len(l) == 0, "tokens left"
	})

	// Delete: the Node in the target is cordoned, drained and deleted.
	if err := te.c.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the Machine is gone", func(ctx context.Context) (bool, string) {
		m, err := te.machine(ctx, "m1")
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, describe(m)
	})
	if err := te.target.Client.Get(ctx, client.ObjectKeyFromObject(n), &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Node in the target after the Machine's deletion: %v, want NotFound", err)
	}
	if _, secret, _ := strings.Cut(vars.Join.Token, "."); strings.Contains(te.logs.String(), secret) {
		t.Error("the bootstrap token's secret appears in the manager's logs")
	}
}

func describeCSR(c *certificatesv1.CertificateSigningRequest) string {
	var b strings.Builder
	for _, cond := range c.Status.Conditions {
		b.WriteString(string(cond.Type) + "/" + cond.Reason + " ")
	}
	return b.String()
}

// TestConfigRenderErrorShowsOnMachine: errors that only show when a host
// fetches its config (a per-host value the template refuses; a target
// cluster Secret that is missing) reach the Machine, not only the boot
// service's log.
func TestConfigRenderErrorShowsOnMachine(t *testing.T) {
	te := newTargetEnv(t)
	ctx := context.Background()
	tests := []struct {
		name, class, secret, template string
		hostLabels                    map[string]string
		reason                        string // of the Machine's InfrastructureReady=False
		want                          []string
	}{
		{name: "per-host template value", class: "rack-check", secret: "target-kubeconfig",
			template:   "{{ if index .Labels \"broken\" }}{{ required \"Host label broken must not be set\" \"\" }}{{ end }}\n",
			hostLabels: map[string]string{"broken": "yes"}, reason: metalv1.ReasonConfigRenderFailed,
			want: []string{"Host label broken must not be set", "template"}},
		// The Machine controller sees this one itself.
		{name: "missing kubeconfig Secret", class: "no-secret", secret: "does-not-exist", reason: metalv1.ReasonTargetUnavailable,
			want: []string{"Secret " + te.ns + "/does-not-exist", "not found"}},
	}
	if _, err := clustertest.CreateSecret(ctx, te.c, te.ns, "target-kubeconfig", te.target.Config); err != nil {
		t.Fatal(err)
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if i > 0 { // one Host: the previous case's Machine must give it back
				_ = te.c.Delete(ctx, &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: te.ns, Name: "m1"}})
				_ = te.c.Delete(ctx, &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: te.ns, Name: "host-0"}})
				eventually(t, 60*time.Second, "previous Machine and Host gone", func(ctx context.Context) (bool, string) {
					_, errM := te.machine(ctx, "m1")
					_, errH := te.host(ctx, "host-0")
					return apierrors.IsNotFound(errM) && apierrors.IsNotFound(errH), "still there"
				})
			}
			te.addTargetClass(t, tc.class, tc.secret, tc.template)
			_, h := te.provisioning(t, tc.class, tc.hostLabels)
			if _, err := te.configs.Ignition(ctx, hostKey(h), h.Spec.BootMACs[0]); err == nil {
				t.Fatal("the config rendered")
			}
			eventually(t, 30*time.Second, "the Host records the failed render", func(ctx context.Context) (bool, string) {
				h, err := te.host(ctx, "host-0")
				if err != nil {
					return false, err.Error()
				}
				c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionConfigRendered)
				return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, tc.want[0]), fmt.Sprintf("%v", c)
			})
			eventually(t, 30*time.Second, "InfrastructureReady=False "+tc.reason+" on the Machine", func(ctx context.Context) (bool, string) {
				m, err := te.machine(ctx, "m1")
				if err != nil {
					return false, err.Error()
				}
				c := meta.FindStatusCondition(m.Status.Conditions, metalv1.ConditionInfrastructureReady)
				if c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.reason {
					return false, describe(m)
				}
				for _, w := range tc.want {
					if !strings.Contains(c.Message, w) {
						return false, "message lacks " + w + ": " + c.Message
					}
				}
				return true, ""
			})
		})
	}
}
