// Package capitest runs Cluster API's real managers (core, the kubeadm
// bootstrap provider and optionally the kubeadm control plane provider,
// built by hack/tools into bin/capi/) as processes against a test's API
// server (test/envtest), with their CRDs installed, and with their
// validating, defaulting and conversion webhooks served and registered:
// each manager's webhook server listens with a certificate from a CA made
// for the run, and the webhook configurations and CRD conversion
// clientConfigs point at https://127.0.0.1:<port>/<path> with that CA.
package capitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	"anvil.dev/anvil/capi/inplace"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
)

// DefaultFeatureGates are the managers' --feature-gates unless
// Options.FeatureGates says otherwise: in-place updates of Machines, which
// call runtime extensions (RuntimeSDK).
const DefaultFeatureGates = "InPlaceUpdates=true,RuntimeSDK=true"

// Names of the managers (their binaries in bin/capi).
const (
	Core         = "cluster-api-manager"
	Bootstrap    = "kubeadm-bootstrap-manager"
	ControlPlane = "kubeadm-control-plane-manager"
)

// config names a manager's CRD kustomization and webhook file in bin/capi.
var config = map[string]string{Core: "core", Bootstrap: "bootstrap-kubeadm", ControlPlane: "controlplane-kubeadm"}

// Options of Start.
type Options struct {
	// ControlPlane also runs the kubeadm control plane manager (KCP)
	// and installs its CRDs.
	ControlPlane bool
	// FeatureGates for every manager; empty: DefaultFeatureGates.
	FeatureGates string
	// Verbosity is the managers' klog -v; 0 keeps their default (2).
	Verbosity int
	// Args are extra flags per manager (Core, Bootstrap, ControlPlane).
	Args map[string][]string
}

// Manager is one running manager.
type Manager struct {
	Name string
	// WebhookPort serves its webhooks (TLS); HealthAddr /readyz and
	// /healthz; DiagnosticsAddr /metrics (plain HTTP, loopback).
	WebhookPort     int
	HealthAddr      string
	DiagnosticsAddr string
	// Log is the file its stdout and stderr go to (printed when the test
	// fails).
	Log string

	cmd      *exec.Cmd
	done     chan struct{} // closed when the process exited
	err      error         // its exit, once done
	reported bool          // its exit already failed the test
}

// CAPI is Cluster API running against a test's API server.
type CAPI struct {
	// Bin is bin/capi; Version the Cluster API release built there.
	Bin     string
	Version string
	// Managers by name (Core, Bootstrap, and ControlPlane if asked for).
	Managers map[string]*Manager

	ca     *ca
	client client.Client
	hooks  []*unstructured.Unstructured // webhook configurations, deleted by Stop
}

// Dir returns bin/capi, skipping the test (failing it in CI) when hack/tools
// has not built Cluster API there.
func Dir(t testing.TB) string {
	t.Helper()
	root, err := need.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "capi")
	for _, f := range []string{Core, Bootstrap, ControlPlane, "clusterctl", "VERSION"} {
		if _, err := os.Stat(filepath.Join(bin, f)); err != nil {
			need.OrSkip(t, "bin/capi/%s missing: run `make tools` (builds Cluster API's managers and clusterctl, hack/tools/capi)", f)
		}
	}
	return bin
}

// Scheme is envtest's with Cluster API's types (core, addons, runtime, the
// kubeadm bootstrap and control plane providers; all v1beta2).
func Scheme() *runtime.Scheme {
	s := envtest.Scheme()
	for _, add := range []func(*runtime.Scheme) error{clusterv1.AddToScheme, addonsv1.AddToScheme, runtimev1.AddToScheme, bootstrapv1.AddToScheme, controlplanev1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Start installs Cluster API's CRDs and webhook configurations into env's
// API server and runs the managers until the test ends; it returns once
// each one's webhook server is up. Leader election is off; health and
// metrics listen on loopback ports. When the test ends the webhook
// configurations are deleted and the managers stopped; a manager that
// exited on its own fails the test. The CRDs stay (their conversion then
// points at a closed port until the next Start). One Start at a time per
// API server: CRDs and webhook configurations are cluster-wide, so a
// second one running at once would take them over.
func Start(t testing.TB, env *envtest.Env, o Options) *CAPI {
	t.Helper()
	bin := Dir(t)
	dir := t.TempDir()
	kubeconfig, err := env.WriteKubeconfig(dir)
	if err != nil {
		t.Fatalf("kubeconfig for the managers: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Run(ctx, RunOptions{Options: o, Bin: bin, Dir: dir, Client: env.Client, Kubeconfig: kubeconfig})
	// A port taken between its pick and the manager's bind: again, with
	// other ports (Run installs the CRDs and webhooks for them).
	for try := 1; try < 3 && err != nil && strings.Contains(err.Error(), "address already in use"); try++ {
		t.Logf("Cluster API's managers, try %d: %v", try, firstLine(err.Error()))
		if c != nil {
			_ = c.Stop()
		}
		c, err = Run(ctx, RunOptions{Options: o, Bin: bin, Dir: dir, Client: env.Client, Kubeconfig: kubeconfig})
	}
	if c != nil {
		t.Cleanup(func() {
			if err := c.Stop(); err != nil {
				t.Error(err)
			}
			if t.Failed() {
				for _, m := range c.Managers {
					t.Logf("%s log (end):\n%s", m.Name, tail(m.Log))
				}
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// RunOptions are Run's: where Cluster API runs and against which API
// server.
type RunOptions struct {
	Options
	// Bin is bin/capi (Dir's answer in a test).
	Bin string
	// Dir takes the managers' logs, kubeconfig copy and webhook
	// certificates.
	Dir string
	// Client installs the CRDs and webhook configurations; Kubeconfig is
	// the managers' (an admin's of the same API server).
	Client     client.Client
	Kubeconfig string
}

// Run is Start for callers without a test (anvil dev): it returns a CAPI
// whose managers run until Stop, and on error one to Stop as well if any
// had started (nil if none).
func Run(ctx context.Context, o RunOptions) (*CAPI, error) {
	ver, err := os.ReadFile(filepath.Join(o.Bin, "VERSION"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (make tools builds Cluster API there)", o.Bin, err)
	}
	c := &CAPI{Bin: o.Bin, Version: strings.TrimSpace(string(ver)), Managers: map[string]*Manager{}, client: o.Client}
	if c.ca, err = newCA(); err != nil {
		return nil, fmt.Errorf("webhook CA: %w", err)
	}
	certDir := filepath.Join(o.Dir, "webhook-certs")
	if err := c.ca.issue(certDir, "tls.crt", "tls.key", "127.0.0.1", "localhost"); err != nil {
		return nil, fmt.Errorf("webhook serving certificate: %w", err)
	}
	names := []string{Core, Bootstrap}
	if o.ControlPlane {
		names = append(names, ControlPlane)
	}
	if err := c.allocate(names); err != nil {
		return nil, err
	}

	// CRDs first: the managers' caches need them, and their conversion
	// webhooks already point at the ports the managers will serve on.
	for _, n := range names {
		objs, err := crds(crdDir(o.Bin, config[n]), c.Managers[n].WebhookPort, c.ca.certPEM)
		if err == nil {
			err = apply(ctx, o.Client, objs)
		}
		if err == nil {
			err = established(ctx, o.Client, objs)
		}
		if err != nil {
			return nil, fmt.Errorf("installing %s's CRDs: %w", n, err)
		}
	}

	// The webhook configurations before the managers: the API server
	// loads them while the managers start, and every CAPI write goes
	// through them from the first one on (probed below). Stop deletes them
	// before it stops the managers: nothing calls a stopped manager's
	// webhooks.
	for _, n := range names {
		objs, err := webhookConfigs(webhookFile(o.Bin, config[n]), config[n], c.Managers[n].WebhookPort, c.ca.certPEM)
		if err != nil {
			return nil, fmt.Errorf("%s's webhook configurations: %w", n, err)
		}
		c.hooks = append(c.hooks, objs...)
	}
	// Validating first, core's mutating one last: the probe sees that one.
	slices.SortStableFunc(c.hooks, func(a, b *unstructured.Unstructured) int { return strings.Compare(b.GetKind(), a.GetKind()) })
	slices.SortStableFunc(c.hooks, func(a, b *unstructured.Unstructured) int {
		return cmpBool(a.GetName() == "capi-core-mutating-webhook-configuration", b.GetName() == "capi-core-mutating-webhook-configuration")
	})
	if err := apply(ctx, o.Client, c.hooks); err != nil {
		return c, fmt.Errorf("installing the webhook configurations: %w", err)
	}

	gates := o.FeatureGates
	if gates == "" {
		gates = DefaultFeatureGates
	}
	for _, n := range names {
		m := c.Managers[n]
		m.Log = filepath.Join(o.Dir, n+".log")
		args := []string{
			"--kubeconfig=" + o.Kubeconfig,
			"--leader-elect=false",
			"--feature-gates=" + gates,
			"--health-addr=" + m.HealthAddr,
			"--diagnostics-address=" + m.DiagnosticsAddr,
			"--insecure-diagnostics",
			"--webhook-port=" + strconv.Itoa(m.WebhookPort),
			"--webhook-cert-dir=" + certDir,
		}
		if o.Verbosity > 0 {
			args = append(args, "--v="+strconv.Itoa(o.Verbosity))
		}
		args = append(args, o.Args[n]...)
		if err := m.start(filepath.Join(o.Bin, n), args); err != nil {
			return c, fmt.Errorf("starting %s: %w", n, err)
		}
	}
	for _, n := range names {
		if err := c.Managers[n].ready(ctx); err != nil {
			c.Managers[n].reported = true
			return c, fmt.Errorf("%s: %w\n%s", n, err, tail(c.Managers[n].Log))
		}
	}
	if err := probeDefaulting(ctx, o.Client); err != nil {
		return c, err
	}
	return c, nil
}

// probeDefaulting waits until the API server calls core's defaulting
// webhook: a dry-run Machine gets its version's "v" prefix from it only.
func probeDefaulting(ctx context.Context, c client.Client) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "capitest-probe"},
			Spec: clusterv1.MachineSpec{ClusterName: "capitest-probe", Version: "1.0.0",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("capitest-probe")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Probe", Name: "capitest-probe"}}}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m)
		if err != nil {
			return false, err
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Machine"))
		if err := c.Create(ctx, u, client.DryRunAll); err != nil {
			if ctx.Err() == nil {
				last = err.Error()
			}
			return false, nil
		}
		v, _, _ := unstructured.NestedString(u.Object, "spec", "version")
		last = "spec.version " + v + " not defaulted"
		return v == "v1.0.0", nil
	})
	if err != nil {
		return fmt.Errorf("the API server does not call cluster-api-manager's defaulting webhook: %s", last)
	}
	return nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// allocate picks each manager's loopback ports.
func (c *CAPI) allocate(names []string) error {
	for _, n := range names {
		var ports [3]int
		for i := range ports {
			p, err := freePort()
			if err != nil {
				return err
			}
			ports[i] = p
		}
		c.Managers[n] = &Manager{Name: n, WebhookPort: ports[0],
			HealthAddr: "127.0.0.1:" + strconv.Itoa(ports[1]), DiagnosticsAddr: "127.0.0.1:" + strconv.Itoa(ports[2])}
	}
	return nil
}

func (m *Manager) start(path string, args []string) error {
	logf, err := os.OpenFile(m.Log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	m.cmd = exec.Command(path, args...)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	// Killed with the test binary, should it die before its cleanup.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	m.done = make(chan struct{})
	go func() {
		m.err = m.cmd.Wait()
		logf.Close()
		close(m.done)
	}()
	return nil
}

// ready waits until /readyz answers 200 (the webhook server has started),
// or the process exits.
func (m *Manager) ready(ctx context.Context) error {
	url := "http://" + m.HealthAddr + "/readyz"
	hc := &http.Client{Timeout: 2 * time.Second}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-m.done:
			return false, fmt.Errorf("exited before it was ready: %v", m.err)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// Stop deletes the webhook configurations, then ends every manager
// (SIGTERM, then SIGKILL after 20s). It reports a manager that had exited
// on its own, with its log's end.
func (c *CAPI) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for _, u := range c.hooks {
		if err := c.client.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting %s %s: %w", u.GetKind(), u.GetName(), err))
		}
	}
	for _, m := range c.Managers {
		if m.done == nil {
			continue
		}
		select {
		case <-m.done:
			if !m.reported {
				errs = append(errs, fmt.Errorf("%s exited before it was stopped: %v\n%s", m.Name, m.err, tail(m.Log)))
			}
			continue
		default:
		}
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.done:
		case <-time.After(20 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
	}
	return errors.Join(errs...)
}

// tail is the last lines of a log file.
func tail(path string) string {
	const lines = 150
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(log %s: %v)", path, err)
	}
	b = bytes.TrimRight(b, "\n")
	i := len(b)
	for n := 0; n < lines && i > 0; n++ {
		i = bytes.LastIndexByte(b[:i], '\n')
		if i < 0 {
			i = 0
		}
	}
	return string(b[i:])
}

// Alive reports an error for a manager that has exited.
func (c *CAPI) Alive() error {
	var errs []error
	for _, m := range c.Managers {
		select {
		case <-m.done:
			errs = append(errs, fmt.Errorf("%s exited: %v", m.Name, m.err))
		default:
		}
	}
	return errors.Join(errs...)
}

// InPlaceWorkers is a MachineDeployment of replicas workers on version,
// joined with the KubeadmConfigTemplate and on the AnvilMachineTemplate of
// the given names, rolled out one Machine at a time with none added
// (maxSurge 0, maxUnavailable 1): Cluster API updates in place only
// Machines it may take out.
func InPlaceWorkers(namespace, name, cluster string, replicas int32, version, kubeadmConfigTemplate, anvilMachineTemplate string) *clusterv1.MachineDeployment {
	return &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: clusterv1.MachineDeploymentSpec{
		ClusterName: cluster, Replicas: ptr.To(replicas),
		Rollout: clusterv1.MachineDeploymentRolloutSpec{Strategy: clusterv1.MachineDeploymentRolloutStrategy{
			Type: clusterv1.RollingUpdateMachineDeploymentStrategyType,
			RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{
				MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}}},
		Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{ClusterName: cluster, Version: version,
			Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfigTemplate", Name: kubeadmConfigTemplate}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AnvilMachineTemplate", Name: anvilMachineTemplate}}},
	}}
}

// JoinTemplate is a KubeadmConfigTemplate for workers (kubeadm join) whose
// Node is named by the host's meta-data, as in CAPM3's templates and
// deploy/examples/capi.
func JoinTemplate(namespace, name string) *bootstrapv1.KubeadmConfigTemplate {
	return &bootstrapv1.KubeadmConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: bootstrapv1.KubeadmConfigTemplateSpec{
		Template: bootstrapv1.KubeadmConfigTemplateResource{Spec: bootstrapv1.KubeadmConfigSpec{
			JoinConfiguration: bootstrapv1.JoinConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: "{{ ds.meta_data.local_hostname }}"}}}}}}
}

// AnvilHandlersDiscovered says whether Cluster API has discovered the
// three handlers of Anvil's extension in ec (named handler.<config>), and
// if not, what ec's status shows instead.
func AnvilHandlersDiscovered(ec *runtimev1.ExtensionConfig) (bool, string) {
	names := map[string]bool{}
	for _, h := range ec.Status.Handlers {
		names[h.Name] = true
	}
	for _, h := range []string{inplace.HandlerCanUpdateMachine, inplace.HandlerCanUpdateMachineSet, inplace.HandlerUpdateMachine} {
		if !names[h+"."+ec.Name] {
			return false, fmt.Sprintf("status.handlers %v, conditions %v", ec.Status.Handlers, ec.Status.Conditions)
		}
	}
	return true, ""
}
