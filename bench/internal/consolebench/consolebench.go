// Package consolebench measures the admin console's racks page with
// thousands of Hosts (the issue "admin console"): a fresh kube-apiserver
// (bench/internal/scale's) holding Hosts with realistic status written
// through the status subresource (no BMCs, no controllers: the console only
// reads), `anvil console` against it, and headless Chromium driven by
// chromedp: time to first render of the first and second page, latency from
// a Host status patch to its tile changing in the DOM, a burst of patches,
// and the browser's and the console's memory. Beside it, in the same run,
// the peer an admin has without a console: kubectl get and kubectl get
// --watch, timed from the same patches.
package consolebench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bench/internal/results"
	"anvil.dev/anvil/bench/internal/scale"
	"anvil.dev/anvil/test/envtest"
)

// Namespace holds the Hosts.
const Namespace = "racks"

// Options of the benchmark.
type Options struct {
	Hosts       int
	RackSize    int // Hosts per rack
	Domains     int // failure domains the racks are spread over
	ProblemRate float64
	Runs        int
	Updates     int // single-Host patches timed per run
	BurstHosts  int
	// Anvil binary (built from ./cmd/anvil into Dir when empty), Kubectl
	// binary (built from bench/kubectl into RepoRoot/bin when empty),
	// Chromium (looked up as chromium or chromium-browser when empty).
	Anvil, Kubectl, Chromium string
	RepoRoot, Dir            string
	Logf                     func(string, ...any)
}

// DefaultOptions: the 5,000 Hosts.
func DefaultOptions() Options {
	return Options{Hosts: 5000, RackSize: 40, Domains: 5, ProblemRate: 0.03, Runs: 3, Updates: 20, BurstHosts: 500}
}

// SmokeOptions: 200 Hosts, a few updates.
func SmokeOptions() Options {
	return Options{Hosts: 200, RackSize: 40, Domains: 2, ProblemRate: 0.03, Runs: 1, Updates: 3, BurstHosts: 50}
}

// Run measures; failures are recorded in the result.
func Run(ctx context.Context, o Options) *results.Console {
	res := &results.Console{Hosts: o.Hosts, Updates: o.Updates, BurstHosts: o.BurstHosts}
	if err := run(ctx, o, res); err != nil {
		res.Error = err.Error()
		o.Logf("console: %v", err)
	}
	return res
}

func run(ctx context.Context, o Options, res *results.Console) error {
	if o.Dir == "" || o.RepoRoot == "" {
		return fmt.Errorf("console benchmark: Dir and RepoRoot are required")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Join(o.Dir, "chromium"))
	if o.Chromium == "" {
		for _, n := range []string{"chromium", "chromium-browser"} {
			if p, err := exec.LookPath(n); err == nil {
				o.Chromium = p
				break
			}
		}
		if o.Chromium == "" {
			return fmt.Errorf("chromium is not installed: apt-get install chromium (or give its path)")
		}
	}
	if o.Anvil == "" {
		o.Anvil = filepath.Join(o.Dir, "anvil")
		if err := scale.BuildAnvil(ctx, o.RepoRoot, o.Anvil, o.Logf); err != nil {
			return fmt.Errorf("building ./cmd/anvil (or give --anvil): %w", err)
		}
	}
	if o.Kubectl == "" {
		var err error
		if o.Kubectl, err = BuildKubectl(ctx, o.RepoRoot, o.Logf); err != nil {
			return err
		}
	}
	o.Logf("console: starting kube-apiserver and etcd")
	api, err := scale.StartAPIServer(o.Dir)
	if err != nil {
		return err
	}
	defer api.Stop()
	cfg := rest.CopyConfig(api.Config)
	cfg.QPS, cfg.Burst = -1, 0
	c, err := client.New(cfg, client.Options{Scheme: envtest.Scheme()})
	if err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); err != nil {
		return err
	}
	start := time.Now()
	racks, problems, err := createHosts(ctx, c, o)
	if err != nil {
		return err
	}
	res.Racks, res.Problems = racks, problems
	o.Logf("console: %d Hosts in %d racks (%d with BMCReachable=False) written in %s", o.Hosts, racks, problems, time.Since(start).Round(time.Second))
	token, err := viewerToken(ctx, c)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(o.Dir, "kubeconfig-viewer")
	if err := writeKubeconfig(kubeconfig, api.Config, token); err != nil {
		return err
	}
	res.Setup = fmt.Sprintf("kube-apiserver %s (test/envtest), Hosts in namespace %s, %d per rack over %d failure domains; `anvil console` (default page size and 250 ms debounce); %s headless, window 1400x1000; kubectl %s built from k8s.io/kubectl v0.37.2 (bench/kubectl), the same ServiceAccount token (get/list/watch on metal.anvil.dev and events)",
		version(api.Config), Namespace, o.RackSize, o.Domains, chromiumVersion(o.Chromium), "v1.37.2")
	for i := range o.Runs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.Logf("console: run %d of %d", i+1, o.Runs)
		r := runOnce(ctx, o, c, api.Kubeconfig, kubeconfig, token, i)
		if r.Error != "" {
			o.Logf("console: run %d: %s", i+1, r.Error)
		}
		res.Runs = append(res.Runs, r)
	}
	return nil
}

// rackOf places Host i: racks of RackSize, racks spread evenly over the
// failure domains.
func rackOf(o Options, i int) (rack, domain string) {
	r := i / o.RackSize
	racks := (o.Hosts + o.RackSize - 1) / o.RackSize
	d := r * o.Domains / max(racks, 1)
	return fmt.Sprintf("r%03d", r), fmt.Sprintf("fd-%c", 'a'+d)
}

func hostName(i int) string { return fmt.Sprintf("node-%04d", i) }

// createHosts writes the Hosts and their status: about 75% Provisioned
// (power on, held by a Machine), 17% Available (off), 3% Provisioning, 2%
// Claimed, and ProblemRate of them with BMCReachable=False and power
// Unknown (red tiles).
func createHosts(ctx context.Context, c client.Client, o Options) (racks, problems int, err error) {
	rng := rand.New(rand.NewPCG(1, 2))
	type item struct {
		h      *metalv1.Host
		status metalv1.HostStatus
	}
	items := make([]item, o.Hosts)
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	seen := map[string]bool{}
	for i := range items {
		rack, fd := rackOf(o, i)
		seen[rack] = true
		h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: hostName(i), Namespace: Namespace,
			Labels: map[string]string{metalv1.LabelRack: rack, metalv1.LabelFailureDomain: fd}},
			Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: fmt.Sprintf("redfish+https://10.%d.%d.%d/redfish/v1/Systems/1", i>>16&255, i>>8&255, i&255),
				CredentialsName: "bmc"}, BootMACs: []string{fmt.Sprintf("02:b0:00:%02x:%02x:%02x", i>>16&255, i>>8&255, i&255)}}}
		st := metalv1.HostStatus{LastPowerCheck: &now}
		reach := metav1.Condition{Type: metalv1.ConditionBMCReachable, Status: metav1.ConditionTrue, Reason: "Reachable", LastTransitionTime: now}
		switch x := rng.Float64(); {
		case x < 0.75:
			st.State, st.PowerState = metalv1.HostProvisioned, metalv1.PowerOn
			h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Namespace: Namespace, Name: fmt.Sprintf("worker-%04d", i)}
		case x < 0.92:
			st.State, st.PowerState = metalv1.HostAvailable, metalv1.PowerOff
		case x < 0.95:
			st.State, st.PowerState = metalv1.HostProvisioning, metalv1.PowerOn
			h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Namespace: Namespace, Name: fmt.Sprintf("worker-%04d", i)}
		default:
			st.State, st.PowerState = metalv1.HostClaimed, metalv1.PowerOff
			h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Namespace: Namespace, Name: fmt.Sprintf("worker-%04d", i)}
		}
		if rng.Float64() < o.ProblemRate {
			problems++
			st.PowerState = metalv1.PowerUnknown
			reach.Status, reach.Reason = metav1.ConditionFalse, metalv1.ReasonUnreachable
			reach.Message = "dial tcp " + strings.TrimPrefix(strings.Split(h.Spec.BMC.Address, "/redfish")[0], "redfish+https://") + ":443: i/o timeout"
		}
		st.Conditions = []metav1.Condition{reach}
		items[i] = item{h, st}
	}
	var g errgroup.Group // every Host is tried; Wait returns the first error
	g.SetLimit(16)
	for _, it := range items {
		g.Go(func() error {
			if err := c.Create(ctx, it.h); err != nil {
				return fmt.Errorf("creating Host %s: %w", it.h.Name, err)
			}
			it.h.Status = it.status
			if err := c.Status().Update(ctx, it.h); err != nil {
				return fmt.Errorf("writing the status of Host %s: %w", it.h.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	return len(seen), problems, nil
}

// viewerToken is what `kubectl create token` gives a read-only admin: a
// ServiceAccount with get/list/watch on metal.anvil.dev and Events.
func viewerToken(ctx context.Context, c client.Client) (string, error) {
	const name = "viewer"
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{metalv1.GroupVersion.Group}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: Namespace}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return "", fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}}
	if err := c.SubResource("token").Create(ctx, objs[0], tr); err != nil {
		return "", fmt.Errorf("TokenRequest for ServiceAccount %s/%s: %w", Namespace, name, err)
	}
	return tr.Status.Token, nil
}

// writeKubeconfig writes the API server's address and CA with token.
func writeKubeconfig(path string, cfg *rest.Config, token string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["viewer"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "viewer", Namespace: Namespace}
	kc.CurrentContext = "bench"
	return clientcmd.WriteToFile(*kc, path)
}

func version(cfg *rest.Config) string {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "?"
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "?"
	}
	return v.GitVersion
}

func chromiumVersion(path string) string {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return filepath.Base(path)
	}
	return strings.TrimSpace(string(out))
}

// BuildKubectl builds bench/kubectl (its own module) into RepoRoot/bin/kubectl
// unless bin/kubectl.inputs holds the hash of its inputs (go.mod, go.sum,
// main.go and the Go version): a cache on the inputs, not on file times,
// which a fresh clone resets.
func BuildKubectl(ctx context.Context, root string, logf func(string, ...any)) (string, error) {
	out := filepath.Join(root, "bin", "kubectl")
	src := filepath.Join(root, "bench", "kubectl")
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", fmt.Errorf("bench/kubectl: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	if v, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output(); err == nil {
		h.Write(v)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	stamp := out + ".inputs"
	if b, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(b)) == sum {
		if _, err := os.Stat(out); err == nil {
			return out, nil
		}
	}
	logf("console: building kubectl (bench/kubectl, k8s.io/kubectl v0.37.2) into %s; a few minutes the first time", out)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/client-go/pkg/version.gitVersion=v1.37.2", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building kubectl in bench/kubectl (or give --kubectl BIN): %v: %s", err, b)
	}
	if err := os.WriteFile(stamp, []byte(sum+"\n"), 0o644); err != nil {
		return "", err
	}
	return out, nil
}
