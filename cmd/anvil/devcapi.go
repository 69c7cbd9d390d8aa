//go:build dev

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/capi/inplace"
	"anvil.dev/anvil/controlplane"
	"anvil.dev/anvil/test/capitest"
	"anvil.dev/anvil/test/redfishsim"
	"anvil.dev/anvil/test/simhost"
)

// The objects `anvil dev --capi` makes for deploy/examples/capi: a pool of
// simulated hosts and two cloud-init classes (Cluster API's kubeadm
// bootstrap provider writes cloud-config), in the default namespace.
const (
	devCAPINamespace = "default"
	devCAPIPool      = "capi-demo"
	devCAPIHosts     = 4
)

var devCAPIVersions = []string{"v1.36.1", "v1.36.3", "v1.37.2"}

// runDevCAPI is `anvil dev --capi`: the local control plane; Cluster API
// v1.14's core and kubeadm bootstrap managers from bin/capi (feature gates
// InPlaceUpdates and RuntimeSDK) with their webhooks; both `anvil serve`
// processes as production runs them, the controllers with --capi and the
// in-place update extension, which registers itself; and simulated hosts
// (test/simhost) behind a Redfish emulator. The simulated kubelets
// register their Nodes in this same API server, so it is the workload
// cluster as well as the management cluster. The QEMU lab's hosts run no
// kubeadm yet, so this mode never starts the lab.
func runDevCAPI(cmd *cobra.Command, cfg devConfig, dir, bin string) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	log := newLogger(cfg.serve.LogFormat, cfg.serve.LogLevel)
	ctrl.SetLogger(log) // the simulated hosts' clients
	self, err := os.Executable()
	if err != nil {
		return err
	}
	start := time.Now()
	cp, c, err := startDevControlPlane(ctx, cfg, dir, bin, capitest.Scheme(), log)
	if err != nil {
		return err
	}
	defer cp.Stop()
	work := filepath.Join(dir, "capi")
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	fmt.Fprintf(out, "Starting Cluster API's managers from %s...\n", filepath.Join(bin, "capi"))
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	capi, err := capitest.Run(sctx, capitest.RunOptions{Bin: filepath.Join(bin, "capi"), Dir: work, Client: c, Kubeconfig: cp.Kubeconfig})
	cancel()
	if capi != nil {
		defer func() {
			if err := capi.Stop(); err != nil {
				fmt.Fprintln(out, err)
			}
		}()
	}
	if err != nil {
		return fmt.Errorf("cluster API: %w", err)
	}

	artifacts := filepath.Join(work, "artifacts")
	for _, name := range []string{"capi-a", "capi-b"} {
		class, err := simhost.Class(simhost.ClassOptions{Name: name, Namespace: devCAPINamespace, ArtifactDir: artifacts,
			Versions: devCAPIVersions, Format: "cloud-init"})
		if err != nil {
			return err
		}
		if err := createOrKeep(ctx, c, class); err != nil {
			return err
		}
	}
	bmc, err := redfishsim.New(redfishsim.Options{Systems: devCAPISystems(), PowerDelay: 500 * time.Millisecond,
		Logger: log.WithName("capi-redfish")})
	if err != nil {
		return fmt.Errorf("redfish emulator: %w", err)
	}
	defer bmc.Close()
	// The emulator's credentials change with every run: the Secret follows.
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "capi-demo-bmc", Namespace: devCAPINamespace}}
	if err := applySecret(ctx, c, sec, map[string][]byte{metalv1.CredentialsUsernameKey: []byte(bmc.Username()), metalv1.CredentialsPasswordKey: []byte(bmc.Password())}); err != nil {
		return err
	}
	hosts := simhost.Hosts(simhost.HostsOptions{Namespace: devCAPINamespace, Prefix: "capi-host-", Count: devCAPIHosts, CredentialsName: sec.Name,
		BMCAddress: func(i int) string { return "redfish+" + bmc.URL() + bmc.SystemPath(fmt.Sprintf("sys-%d", i)) },
		Labels:     func(int) map[string]string { return map[string]string{"pool": devCAPIPool} }})
	for _, h := range hosts {
		if err := applyHostBMC(ctx, c, h); err != nil {
			return err
		}
	}

	extPort, err := freeLoopbackPort()
	if err != nil {
		return err
	}
	anvil, err := simhost.StartAnvil(ctx, simhost.AnvilOptions{Binary: self, Kubeconfig: cp.Kubeconfig, Dir: filepath.Join(dir, "logs"), ArtifactDir: artifacts,
		ControllerArgs: []string{"--capi",
			"--capi-extension-bind-address", "127.0.0.1:" + strconv.Itoa(extPort),
			"--capi-extension-cert-secret", devCAPINamespace + "/anvil-capi-extension-cert",
			"--capi-extension-url", "https://127.0.0.1:" + strconv.Itoa(extPort)}})
	if err != nil {
		return err
	}
	defer anvil.Stop()
	fleet, err := simhost.New(simhost.Options{Config: cp.Config, Namespace: devCAPINamespace, BootURL: anvil.BootURL,
		Selector: labels.SelectorFromSet(labels.Set{"pool": devCAPIPool}),
		// Slow enough to watch, fast enough to wait for.
		POSTDelay: 2 * time.Second, KernelBootDelay: 2 * time.Second, KubeletStartDelay: time.Second,
		PollInterval: 2 * time.Second, IgnorePollHint: true, ApplyDelay: 5 * time.Second, WipeDelay: 2 * time.Second,
		// kubeadm starts the kubelet the CAPI Machine asked for.
		KubeletVersionFor: simhost.MachineVersion(c),
		FailUpgrade: func(_ types.NamespacedName, version string) string {
			if version == "v1.37.2" {
				return "kubelet v1.37.2 did not become healthy: the simulated hosts fail every upgrade to it (rolled back)"
			}
			return ""
		},
		Logger: log.WithName("simhosts")})
	if err != nil {
		return err
	}
	fctx, stopFleet := context.WithCancel(ctx)
	fleetErr, fleetExited := make(chan error, 1), make(chan struct{})
	go func() { fleetErr <- fleet.Run(fctx); close(fleetExited) }()
	defer func() { stopFleet(); <-fleetExited }()

	if err := waitDiscovered(ctx, c); err != nil {
		return fmt.Errorf("%w; see %s", err, anvil.Controllers.Log)
	}
	printCAPIHelp(out, cp, anvil, work, time.Since(start))
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "stopping")
			return nil
		case <-fleetExited:
			return fmt.Errorf("simulated hosts stopped: %v", <-fleetErr)
		case <-tick.C:
			err := errors.Join(cp.Exited(), capi.Alive())
			for _, p := range []*simhost.Process{anvil.Controllers, anvil.Netboot} {
				if p.Exited() {
					err = errors.Join(err, fmt.Errorf("anvil serve (%s) exited; see %s", p.Name, p.Log))
				}
			}
			if err != nil {
				return err
			}
		}
	}
}

// waitDiscovered waits until Cluster API has discovered the handlers of
// the ExtensionConfig Anvil registered (its CA injected from Anvil's
// Secret): before that, a MachineDeployment's version change would be
// rolled out by replacement.
func waitDiscovered(ctx context.Context, c client.Client) error {
	last := "not created yet"
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ec := &runtimev1.ExtensionConfig{}
		if err := c.Get(ctx, client.ObjectKey{Name: inplace.ExtensionConfigName}, ec); err != nil {
			last = err.Error()
			return false, nil
		}
		if len(ec.Status.Handlers) == 3 {
			return true, nil
		}
		last = fmt.Sprintf("conditions %v", ec.Status.Conditions)
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("cluster API did not discover the in-place update extension (ExtensionConfig %s): %s", inplace.ExtensionConfigName, last)
	}
	return nil
}

func devCAPISystems() []redfishsim.SystemOptions {
	s := make([]redfishsim.SystemOptions, devCAPIHosts)
	for i := range s {
		s[i] = redfishsim.SystemOptions{ID: fmt.Sprintf("sys-%d", i), PowerState: "Off", MACs: []string{simhost.MAC(i)}}
	}
	return s
}

// createOrKeep creates o unless it exists (a second run keeps the first's).
func createOrKeep(ctx context.Context, c client.Client, o client.Object) error {
	if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
	}
	return nil
}

func applySecret(ctx context.Context, c client.Client, sec *corev1.Secret, data map[string][]byte) error {
	live := sec.DeepCopy()
	if err := c.Get(ctx, client.ObjectKeyFromObject(sec), live); apierrors.IsNotFound(err) {
		sec.Data = data
		return c.Create(ctx, sec)
	} else if err != nil {
		return err
	}
	live.Data = data
	return c.Update(ctx, live)
}

// applyHostBMC creates the Host, or points an existing one at this run's
// emulator (its port changes with every run).
func applyHostBMC(ctx context.Context, c client.Client, h *metalv1.Host) error {
	live := &metalv1.Host{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(h), live); apierrors.IsNotFound(err) {
		return c.Create(ctx, h)
	} else if err != nil {
		return err
	}
	live.Spec.BMC = h.Spec.BMC
	return c.Update(ctx, live)
}

func printCAPIHelp(out io.Writer, cp *controlplane.ControlPlane, anvil *simhost.Anvil, work string, took time.Duration) {
	fmt.Fprintf(out, `
Cluster API and Anvil are up (%.0fs): %d simulated hosts (capi-host-0..%d, pool=%s) behind a
Redfish emulator, MachineClasses capi-a and capi-b (kubelets %v), the in-place update extension
registered and discovered as ExtensionConfig %q. This API server is also the workload cluster: the
simulated kubelets register their Nodes here. In another shell:

  export KUBECONFIG=%s
  kubectl create secret generic c1-kubeconfig --type=cluster.x-k8s.io/secret --from-file=value=$KUBECONFIG
  kubectl label secret c1-kubeconfig cluster.x-k8s.io/cluster-name=c1
  kubectl apply -f deploy/examples/capi/cluster.yaml
  kubectl get machines.cluster.x-k8s.io,anvilmachines -o wide -w

Logs: Cluster API's managers in %s, Anvil's in %s and %s. Ctrl-C stops everything.

`, took.Seconds(), devCAPIHosts, devCAPIHosts-1, devCAPIPool, devCAPIVersions, inplace.ExtensionConfigName,
		cp.Kubeconfig, work, anvil.Controllers.Log, anvil.Netboot.Log)
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
