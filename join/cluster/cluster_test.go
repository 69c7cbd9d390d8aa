package cluster_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/test/clustertest"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
)

// The management cluster (where the Secrets are) and a target.
var mgmt, target *envtest.Env
var startErr error

func TestMain(m *testing.M) {
	mgmt, startErr = envtest.Start()
	if startErr == nil {
		target, startErr = clustertest.Start()
	}
	code := m.Run()
	for _, e := range []*envtest.Env{target, mgmt} {
		if e != nil {
			_ = e.Stop()
		}
	}
	os.Exit(code)
}

func need2(t *testing.T) {
	t.Helper()
	if startErr != nil {
		need.OrSkip(t, "API servers not available: %v", startErr)
	}
}

func kubeconfig(t *testing.T, rc *rest.Config) []byte {
	t.Helper()
	b, err := clustertest.Kubeconfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A closed loopback port: nothing answers there.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestBadSecrets(t *testing.T) {
	need2(t)
	ctx := context.Background()
	ns := mgmt.Namespace(t)
	good := kubeconfig(t, target.Config)
	wrongCreds := rest.CopyConfig(target.Config)
	wrongCreds.CertData, wrongCreds.KeyData, wrongCreds.BearerToken = nil, nil, "abcdef.0123456789abcdef-not-a-real-token"
	down := rest.CopyConfig(target.Config)
	down.Host = "https://" + closedPort(t)
	withFile := func() []byte {
		cfg, _ := clientcmd.Load(good)
		cfg.AuthInfos["admin"].TokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
		b, _ := clientcmd.Write(*cfg)
		return b
	}()
	noCA := func() []byte {
		cfg, _ := clientcmd.Load(good)
		cfg.Clusters["target"].CertificateAuthorityData = nil
		b, _ := clientcmd.Write(*cfg)
		return b
	}()
	tests := []struct {
		name   string
		data   map[string][]byte // nil: no Secret
		kind   error
		want   string
		secret string // must not appear in the error
	}{
		{name: "missing", kind: cluster.ErrSecret, want: "not found"},
		{name: "no-key", data: map[string][]byte{"config": good}, kind: cluster.ErrSecret, want: `has no key "kubeconfig" (keys: config)`},
		{name: "garbage", data: map[string][]byte{"kubeconfig": []byte("apiVersion: v1\nkind: Config\nclusters: [ {cluster: supersecretvalue123456789\n")}, kind: cluster.ErrSecret,
			want: "is not a kubeconfig", secret: "supersecretvalue123456789"},
		{name: "token-file", data: map[string][]byte{"kubeconfig": withFile}, kind: cluster.ErrSecret, want: "tokenFile points at a file"},
		{name: "no-ca", data: map[string][]byte{"kubeconfig": noCA}, kind: cluster.ErrSecret, want: "needs certificate-authority-data"},
		{name: "wrong-credentials", data: map[string][]byte{"kubeconfig": kubeconfig(t, wrongCreds)}, kind: cluster.ErrUnreachable,
			want: "does not answer with these credentials", secret: "0123456789abcdef-not-a-real-token"},
		{name: "unreachable", data: map[string][]byte{"kubeconfig": kubeconfig(t, down)}, kind: cluster.ErrUnreachable, want: down.Host},
	}
	r, err := cluster.New(cluster.Options{Secrets: mgmt.Client})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data != nil {
				if err := mgmt.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}, Data: tc.data}); err != nil {
					t.Fatal(err)
				}
			}
			class := &metalv1.MachineClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}}
			class.Spec.Join.KubeconfigSecretRef = &metalv1.LocalObjectReference{Name: tc.name}
			_, err := r.For(ctx, class)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !errors.Is(err, tc.kind) || !strings.Contains(msg, "Secret "+ns+"/"+tc.name) || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "MachineClass "+ns+"/c") {
				t.Errorf("error %q: want %v naming the class, the Secret and %q", msg, tc.kind, tc.want)
			}
			if tc.secret != "" && strings.Contains(msg, tc.secret) {
				t.Errorf("error %q quotes the kubeconfig's secret", msg)
			}
			if strings.Contains(msg, string(target.Config.KeyData)) {
				t.Errorf("error quotes the client key")
			}
		})
	}
}

// A good Secret gives the target's endpoint, CA hash and clients; the same
// content gives the same Target, new content a new one, and a Sweep drops
// targets no class refers to.
func TestTargetLifecycle(t *testing.T) {
	need2(t)
	ctx := context.Background()
	ns := mgmt.Namespace(t)
	if _, err := clustertest.CreateSecret(ctx, mgmt.Client, ns, "kc", target.Config); err != nil {
		t.Fatal(err)
	}
	hooked := 0
	r, err := cluster.New(cluster.Options{Secrets: mgmt.Client, Classes: mgmt.Client, Hooks: []cluster.Hook{
		func(ctx context.Context, tt *cluster.Target) error {
			hooked++
			_, err := tt.Cache.GetInformer(ctx, &corev1.Node{})
			return err
		}}})
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "kc"}
	tt, err := r.ForSecret(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := token.CACertHash(target.Config.CAData)
	if !tt.Remote() || tt.Server != target.Config.Host || tt.CACertHash != hash || tt.Cache == nil || hooked != 1 {
		t.Fatalf("target %s: server %q hash %q cache %v hooks %d", tt, tt.Server, tt.CACertHash, tt.Cache != nil, hooked)
	}
	if _, err := tt.ServerVersion(); err != nil {
		t.Fatal(err)
	}
	// It reaches the target, not the management cluster.
	if err := target.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-in-target"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tt.Clientset.CoreV1().Namespaces().Get(ctx, "only-in-target", metav1.GetOptions{}); err != nil {
		t.Fatalf("the target's clientset does not see the target: %v", err)
	}
	if again, _ := r.ForSecret(ctx, key); again != tt {
		t.Fatal("same Secret content, new Target")
	}
	s := &corev1.Secret{}
	if err := mgmt.Client.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	s.Data["unrelated"] = []byte("x") // content of the kubeconfig key unchanged
	if err := mgmt.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if again, _ := r.ForSecret(ctx, key); again != tt {
		t.Fatal("kubeconfig unchanged, new Target")
	}
	s.Data[cluster.KubeconfigKey] = append(s.Data[cluster.KubeconfigKey], '\n')
	if err := mgmt.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := r.ForSecret(ctx, key)
	if err != nil || rebuilt == tt || hooked != 2 {
		t.Fatalf("changed kubeconfig: rebuilt=%v err=%v hooks=%d", rebuilt != tt, err, hooked)
	}
	if n := len(r.Targets()); n != 1 {
		t.Fatalf("%d targets, want 1", n)
	}
	r.Sweep(ctx) // no MachineClass refers to the Secret
	if n := len(r.Targets()); n != 0 {
		t.Fatalf("%d targets after a sweep with no class using them, want 0", n)
	}
}

// A Machine naming its own cluster (spec.bootstrap.kubeconfigSecretRef,
// Cluster API's <cluster>-kubeconfig with key value): the given key is
// read with the same checks, errors name the Machine, the Secret and the
// key and quote no kubeconfig content, and a Sweep keeps the target while
// the Machine refers to it.
func TestMachineKubeconfigSecretRef(t *testing.T) {
	need2(t)
	ctx := context.Background()
	ns := mgmt.Namespace(t)
	r, err := cluster.New(cluster.Options{Secrets: mgmt.Client, Classes: mgmt.Client})
	if err != nil {
		t.Fatal(err)
	}
	machine := func(name, secret, key string) *metalv1.Machine {
		return &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: metalv1.MachineSpec{
			MachineClassRef: metalv1.LocalObjectReference{Name: "c"}, Version: "v1.31.0",
			Bootstrap: &metalv1.MachineBootstrap{DataSecretName: name + "-bootstrap",
				KubeconfigSecretRef: &metalv1.KubeconfigSecretReference{Name: secret, Key: key}}}}
	}
	const leak = "supersecretvalue123456789"
	tests := []struct {
		name string
		key  string
		data map[string][]byte // nil: no Secret
		kind error
		want string
	}{
		{name: "missing", key: "value", kind: cluster.ErrSecretNotFound, want: `not found (create it with the target's kubeconfig under key "value")`},
		{name: "other-key", key: "value", data: map[string][]byte{"kubeconfig": kubeconfig(t, target.Config)}, kind: cluster.ErrSecret,
			want: `has no key "value" (keys: kubeconfig)`},
		{name: "garbage", key: "value", data: map[string][]byte{"value": []byte("apiVersion: v1\nkind: Config\nclusters: [ {cluster: " + leak + "\n")},
			kind: cluster.ErrSecret, want: `key "value" is not a kubeconfig`},
		{name: "default-key", data: map[string][]byte{"value": kubeconfig(t, target.Config)}, kind: cluster.ErrSecret, want: `has no key "kubeconfig"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data != nil {
				if err := mgmt.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name}, Data: tc.data}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := r.ForMachine(ctx, machine("m", tc.name, tc.key))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !errors.Is(err, tc.kind) || !strings.Contains(msg, "Secret "+ns+"/"+tc.name) || !strings.Contains(msg, tc.want) ||
				!strings.Contains(msg, "machine "+ns+"/m spec.bootstrap.kubeconfigSecretRef") {
				t.Errorf("error %q: want %v naming the Machine, the Secret and %q", msg, tc.kind, tc.want)
			}
			if strings.Contains(msg, leak) {
				t.Errorf("error %q quotes the kubeconfig", msg)
			}
		})
	}

	if _, err := clustertest.CreateSecret(ctx, mgmt.Client, ns, "work-kubeconfig", target.Config); err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{}
	if err := mgmt.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "work-kubeconfig"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{"value": s.Data[cluster.KubeconfigKey]} // as Cluster API writes it
	if err := mgmt.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	m := machine("w1", "work-kubeconfig", "value")
	tt, err := r.ForMachine(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if tt.Server != target.Config.Host || tt.SecretKey != "value" || !strings.Contains(tt.String(), "key value") {
		t.Fatalf("target %s: server %q key %q", tt, tt.Server, tt.SecretKey)
	}
	if err := mgmt.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	r.Sweep(ctx)
	if n := len(r.Targets()); n != 1 {
		t.Fatalf("%d targets after a sweep with a Machine using one, want 1", n)
	}
	if err := mgmt.Client.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	r.Sweep(ctx)
	if n := len(r.Targets()); n != 0 {
		t.Fatalf("%d targets after the Machine is gone, want 0", n)
	}
}

func TestMachineSecretOf(t *testing.T) {
	m := func(b *metalv1.MachineBootstrap) *metalv1.Machine {
		return &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m"}, Spec: metalv1.MachineSpec{Bootstrap: b}}
	}
	nn := types.NamespacedName{Namespace: "ns", Name: "c-kubeconfig"}
	tests := []struct {
		name string
		m    *metalv1.Machine
		want cluster.SecretRef
		ok   bool
	}{
		{"no bootstrap", m(nil), cluster.SecretRef{}, false},
		{"bootstrap without ref", m(&metalv1.MachineBootstrap{DataSecretName: "d"}), cluster.SecretRef{}, false},
		{"empty name", m(&metalv1.MachineBootstrap{DataSecretName: "d", KubeconfigSecretRef: &metalv1.KubeconfigSecretReference{}}), cluster.SecretRef{}, false},
		{"default key", m(&metalv1.MachineBootstrap{DataSecretName: "d", KubeconfigSecretRef: &metalv1.KubeconfigSecretReference{Name: "c-kubeconfig"}}),
			cluster.SecretRef{NamespacedName: nn, Key: cluster.KubeconfigKey}, true},
		{"Cluster API's key", m(&metalv1.MachineBootstrap{DataSecretName: "d", KubeconfigSecretRef: &metalv1.KubeconfigSecretReference{Name: "c-kubeconfig", Key: "value"}}),
			cluster.SecretRef{NamespacedName: nn, Key: "value"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := cluster.MachineSecretOf(tc.m)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("MachineSecretOf = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
