package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
)

// serviceAccount is what the API server authenticates a pod's token as.
func serviceAccount(name string) rest.ImpersonationConfig {
	return rest.ImpersonationConfig{UserName: "system:serviceaccount:anvil-system:" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:anvil-system", "system:authenticated"}}
}

// kubeconfigAs writes a kubeconfig that acts as the service account.
func kubeconfigAs(t *testing.T, sa rest.ImpersonationConfig) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData,
		Token: env.Config.BearerToken, Impersonate: sa.UserName, ImpersonateGroups: sa.Groups}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "sa"}
	cfg.CurrentContext = "envtest"
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// applyDeployRBAC creates the service accounts, roles and bindings of
// `kubectl apply -k deploy/` (the CRDs are installed already; nothing runs
// the workloads here).
func applyDeployRBAC(ctx context.Context, t *testing.T) {
	t.Helper()
	var applied []map[string]any
	for _, u := range envtest.DeployObjects(t) {
		switch u.GetKind() {
		case "Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding":
		default:
			continue
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("test"), client.ForceOwnership); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		applied = append(applied, u.Object)
	}
	kube, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := deploy.WaitForRBAC(ctx, kube, applied); err != nil {
		t.Fatal(err)
	}
}

// runAnvilEnv makes this test binary run `anvil` instead of the tests:
// each `anvil serve` below is its own process (as in the pods), with its
// own metrics registry and its logs on its stderr.
const runAnvilEnv = "RBAC_TEST_RUN_ANVIL"

func init() {
	if os.Getenv(runAnvilEnv) == "1" {
		main()
		os.Exit(0)
	}
}

// forbidden returns the log lines that report a denied API call, but
// those that mention allow (an expected denial).
func forbidden(logs string, allow string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(strings.ToLower(l), "forbidden") && (allow == "" || !strings.Contains(l, allow)) {
			out = append(out, l)
		}
	}
	return out
}

func poll(t *testing.T, what string, logs *lockedBuffer, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true, cond); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, logs.String())
	}
}

// serve runs `anvil serve args...` until the test ends; it returns its logs.
func serve(t *testing.T, args ...string) *lockedBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), runAnvilEnv+"=1")
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second // then killed
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if st := cmd.ProcessState; st == nil || !st.Success() {
			t.Errorf("anvil serve %v: %v\n%s", args, st, logs.String())
		}
	})
	return logs
}

// With only the roles deploy/ grants, `anvil serve` as the controller
// Deployment's service account runs every controller (each one's informers
// sync and it writes what it must), and as the DaemonSet's it serves boots;
// neither logs a denied call but the one the test provokes. The bootstrap
// token calls each side makes succeed as its account, and the controller
// cannot mint.
func TestServeWithDeployedRoles(t *testing.T) {
	ctx := context.Background()
	applyDeployRBAC(ctx, t)

	// In a namespace of --secret-namespaces: a Host whose Secret lacks the
	// password (read, so judged), a TicketEndpoint whose Secret is missing,
	// a Machine. Outside: a Host whose Secret the controller may not read.
	const ns = "default"
	suffix := fmt.Sprint(time.Now().UnixNano())
	bmc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac-bmc-" + suffix}, Data: map[string][]byte{"username": []byte("admin")}}
	host := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac-h-" + suffix},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "redfish+https://127.0.0.1:1/redfish/v1/Systems/1", CredentialsName: bmc.Name}, BootMACs: []string{"52:54:00:ee:01:01"}}}
	other := env.Namespace(t)
	elsewhere := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "h"},
		Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "redfish+https://127.0.0.1:1/redfish/v1/Systems/1", CredentialsName: "bmc"}, BootMACs: []string{"52:54:00:ee:01:02"}}}
	ep := &metalv1.TicketEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac-ep-" + suffix},
		Spec: metalv1.TicketEndpointSpec{URL: "https://tickets.example.test/hook", SecretRef: metalv1.SecretKeyReference{Name: "rbac-missing-" + suffix}}}
	zero := strings.Repeat("0", 64)
	class := &metalv1.MachineClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac-c-" + suffix},
		Spec: metalv1.MachineClassSpec{
			Kernel:   metalv1.Artifact{URL: "kernel", SHA256: zero},
			Initrds:  []metalv1.Artifact{{URL: "initrd", SHA256: zero}},
			Config:   metalv1.ConfigTemplate{Format: "cloud-init", Template: "#cloud-config\n"},
			Kubelets: []metalv1.KubeletArtifact{{Version: "v1.37.2", Artifact: metalv1.Artifact{URL: "kubelet", SHA256: zero}}},
		}}
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rbac-m-" + suffix},
		Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: class.Name}, Version: "v1.37.2"}}
	for _, o := range []client.Object{bmc, host, elsewhere, ep, class, m} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}

	logs := serve(t, "--kubeconfig", kubeconfigAs(t, serviceAccount("anvil")), "--leader-elect=true", "--leader-election-namespace=anvil-system",
		"--secret-namespaces=anvil-system,default", "--bmc-allow-cidrs=127.0.0.1/32", // the Hosts' BMC is a closed loopback port
		"--metrics-bind-address=0", fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", need.FreePort(t)))

	poll(t, "the Host's Secret is read and judged", logs, func(ctx context.Context) (bool, error) {
		h := &metalv1.Host{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(host), h); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionValid)
		return c != nil && c.Reason == metalv1.ReasonSecretInvalid, nil
	})
	poll(t, "the TicketEndpoint's Secret is looked up", logs, func(ctx context.Context) (bool, error) {
		e := &metalv1.TicketEndpoint{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ep), e); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(e.Status.Conditions, metalv1.ConditionReady)
		return c != nil && c.Reason == metalv1.ReasonSecretMissing, nil
	})
	poll(t, "the Machine and MachineClass controllers write status", logs, func(ctx context.Context) (bool, error) {
		got, c := &metalv1.Machine{}, &metalv1.MachineClass{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), got); err != nil {
			return false, err
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(class), c); err != nil {
			return false, err
		}
		return len(got.Status.Conditions) > 0 && len(c.Status.Conditions) > 0, nil
	})
	poll(t, "outside --secret-namespaces the Secret is refused, by name", logs, func(context.Context) (bool, error) {
		for _, l := range forbidden(logs.String(), "") {
			if strings.Contains(l, other) && strings.Contains(l, "secrets") {
				return true, nil
			}
		}
		return false, nil
	})

	// The boot services as the DaemonSet's account.
	// Metrics as the manifest binds them, [$(POD_IP)]:port, with the pod IP
	// the kubelet substitutes.
	httpPort, metricsPort := need.FreePort(t), need.FreePort(t)
	pxeLogs := serve(t, "--kubeconfig", kubeconfigAs(t, serviceAccount("anvil-pxe")), "--leader-elect=false", "--controllers=none",
		fmt.Sprintf("--metrics-bind-address=[127.0.0.1]:%d", metricsPort), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", need.FreePort(t)),
		"--http-boot", "--http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort), "--artifact-dir", t.TempDir())
	poll(t, "HTTP boot answers as anvil-pxe", pxeLogs, func(context.Context) (bool, error) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/boot/52-54-00-ee-00-02.ipxe", httpPort))
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics on [127.0.0.1]:%d: %v %v", metricsPort, err, resp)
	}
	resp.Body.Close()

	// Bootstrap tokens, through the calls each side makes.
	as := func(name string) kubernetes.Interface {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = serviceAccount(name)
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	pxe, ctl := as("anvil-pxe"), as("anvil")
	owner := token.Owner{Host: token.ObjectRef{Namespace: ns, Name: host.Name, UID: types.UID("h-" + suffix[len(suffix)-8:])},
		Machine: token.ObjectRef{Namespace: ns, Name: m.Name, UID: types.UID("m-" + suffix[len(suffix)-8:])}}
	tok, err := token.Mint(ctx, pxe, token.MintOptions{Owner: owner, TTL: time.Minute})
	if err != nil {
		t.Fatalf("anvil-pxe mints a token: %v", err)
	}
	if l, err := token.List(ctx, pxe, token.ListOptions{MachineUID: owner.Machine.UID}); err != nil || len(l) != 1 {
		t.Fatalf("anvil-pxe finds its token: %v %v", l, err)
	}
	if _, err := pxe.CoreV1().Secrets(token.Namespace).Get(ctx, tok.SecretName(), metav1.GetOptions{}); err != nil {
		t.Fatalf("anvil-pxe reads its token again: %v", err)
	}
	if _, err := token.Refresh(ctx, pxe, tok.ID, time.Hour); err != nil {
		t.Fatalf("anvil-pxe refreshes its token: %v", err)
	}
	if _, err := token.Lookup(ctx, ctl, tok.ID); err != nil {
		t.Fatalf("the CSR approver looks the token up: %v", err)
	}
	if _, err := token.Refresh(ctx, ctl, tok.ID, 2*time.Hour); err != nil {
		t.Fatalf("the Machine controller refreshes the token: %v", err)
	}
	if err := token.Revoke(ctx, pxe, tok.ID); !apierrors.IsForbidden(err) {
		t.Errorf("anvil-pxe revokes a token: %v, want Forbidden", err)
	}
	if err := token.Revoke(ctx, ctl, tok.ID); err != nil {
		t.Fatalf("the Machine controller revokes the token: %v", err)
	}
	if _, err := token.Mint(ctx, ctl, token.MintOptions{Owner: owner}); !apierrors.IsForbidden(err) {
		t.Errorf("the controller mints a token: %v, want Forbidden", err)
	}

	// Nothing else was refused, to either account.
	if lines := forbidden(logs.String(), other); len(lines) > 0 {
		t.Errorf("denied API calls of the controller:\n%s", strings.Join(lines, "\n"))
	}
	if lines := forbidden(pxeLogs.String(), ""); len(lines) > 0 {
		t.Errorf("denied API calls of the boot services:\n%s", strings.Join(lines, "\n"))
	}
}

// A bad --secret-namespaces entry is refused before anything starts, naming
// the flag.
func TestSecretNamespacesFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--secret-namespaces=anvil-system,default"}, ""},
		{[]string{"--secret-namespaces=Bad_NS"}, `--secret-namespaces: "Bad_NS" is not a namespace name`},
		{[]string{"--secret-namespaces=a,,b"}, `--secret-namespaces: "" is not a namespace name`},
	} {
		cfg := serveConfig{}
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		cfg.bind(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := cfg.validate()
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.err)
		}
		if tc.err == "" && len(cfg.cacheOptions().ByObject) != 1 {
			t.Errorf("%v: the Secret cache is not restricted: %+v", tc.args, cfg.cacheOptions())
		}
	}
	if o := (&serveConfig{}).cacheOptions(); len(o.ByObject) != 0 {
		t.Errorf("without the flag the Secret cache is restricted: %+v", o)
	}
}
