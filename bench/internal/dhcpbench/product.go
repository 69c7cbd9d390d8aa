package dhcpbench

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bench/internal/harness"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/simhost"
	"anvil.dev/anvil/test/tcprelay"
)

// product is the product path's fixed part: a kube-apiserver and etcd
// (test/envtest, bin/'s binaries) holding one Host per reservation, and a
// TCP relay that makes the API server reachable inside the server
// namespace at its own address. It lives for the whole DHCP benchmark;
// only `anvil serve` restarts per run, as every other subject does.
type product struct {
	env        *envtest.Env
	kubeconfig string
	relay      *tcprelay.Relay
	anvil      string
	setup      string
}

const productNamespace = "default"

func startProduct(ctx context.Context, env *harness.Env, o Options, rs []Reservation) (p *product, err error) {
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	p = &product{anvil: o.Anvil}
	defer func() {
		if err != nil {
			p.stop()
			p = nil
		}
	}()
	if p.anvil == "" {
		p.anvil = filepath.Join(env.Dir, "anvil")
		env.Logf("dhcp: building ./cmd/anvil for the product path (--anvil BIN skips it)")
		if err := simhost.BuildAnvil(ctx, o.RepoRoot, p.anvil); err != nil {
			return p, fmt.Errorf("build anvil (or pass --anvil): %w", err)
		}
	}
	t0 := time.Now()
	if p.env, err = envtest.Start(); err != nil {
		return p, err
	}
	if p.kubeconfig, err = p.env.WriteKubeconfig(env.Dir); err != nil {
		return p, err
	}
	u, err := url.Parse(p.env.Config.Host)
	if err != nil {
		return p, fmt.Errorf("API server URL %q: %w", p.env.Config.Host, err)
	}
	var ln net.Listener
	if err := (&netnstest.NS{Name: env.Pair.Srv}).Do(func() (err error) { ln, err = net.Listen("tcp4", u.Host); return err }); err != nil {
		return p, fmt.Errorf("forwarding the API server into %s: %w", env.Pair.Srv, err)
	}
	p.relay = tcprelay.Start(ln, u.Host, tcprelay.Options{MaxConns: 256})
	if err := createHosts(ctx, p.env, rs, env.Pair.Prefix.Bits()); err != nil {
		return p, err
	}
	env.Logf("dhcp: product path: kube-apiserver up and %d Hosts created in %s", len(rs), time.Since(t0).Round(time.Second))
	p.setup = fmt.Sprintf("a fresh kube-apiserver and etcd (test/envtest, unpinned, idle during the steps: the Hosts do not change) "+
		"holding %d Hosts as `anvil hosts import` makes them (manual:// BMC, one boot MAC, spec.network.address a static /%d), "+
		"created once for all runs; no controllers run (the DHCP answer depends on the Host's spec only); "+
		"`anvil serve --controllers none --dhcp --dhcp-interface IF` (%s) restarted for every run, pinned like every subject, "+
		"reaching the API server through a TCP relay", len(rs), env.Pair.Prefix.Bits(), filepath.Base(p.anvil))
	return p, nil
}

// createHosts creates one Host per reservation, 32 requests at a time.
func createHosts(ctx context.Context, e *envtest.Env, rs []Reservation, bits int) error {
	cfg := rest.CopyConfig(e.Config)
	cfg.QPS, cfg.Burst = 2000, 4000 // the bench's client must not be the slow part
	c, err := client.New(cfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for _, r := range rs {
		g.Go(func() error {
			h := &metalv1.Host{
				ObjectMeta: metav1.ObjectMeta{Name: r.Hostname, Namespace: productNamespace},
				Spec: metalv1.HostSpec{
					BMC:      metalv1.BMC{Address: "manual://" + r.Hostname},
					BootMACs: []string{r.MAC.String()},
					Network:  &metalv1.HostNetwork{Address: netip.PrefixFrom(r.IP, bits).String()},
				},
			}
			if err := c.Create(gctx, h); err != nil {
				return fmt.Errorf("create Host %s: %w", r.Hostname, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// start runs `anvil serve` with DHCP only, in the server namespace.
func (p *product) start(env *harness.Env, dir string) (*harness.Proc, error) {
	return env.Start("anvil-serve", p.anvil, "serve", "--kubeconfig", p.kubeconfig, "--leader-elect=false",
		"--controllers", "none", "--dhcp", "--dhcp-interface", env.Pair.SrvIf,
		"--metrics-bind-address", "127.0.0.1:9090", "--health-probe-bind-address", "127.0.0.1:9091")
}

func (p *product) stop() {
	if p == nil {
		return
	}
	if p.relay != nil {
		p.relay.Close()
	}
	if p.env != nil {
		_ = p.env.Stop()
	}
}

// productConfig is the product subject's configuration for the report.
func productConfig(n int) string {
	return fmt.Sprintf("the product: `anvil serve --controllers none --dhcp`, %d Host objects (boot MAC, static address) "+
		"read through its informer, JSON info log to stderr", n)
}
