//go:build dev

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/controlplane"
	"anvil.dev/anvil/deploy"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/redfishsim"
)

// devConfig is `anvil dev`: a local control plane plus `anvil serve`.
type devConfig struct {
	serve    serveConfig
	DataDir  string
	BinDir   string
	APIPort  int
	EtcdPort int
	// DemoBMCs starts emulated BMCs for the examples in deploy/examples:
	// a Redfish BMC (from the DMTF mockup) and, when installed, ipmi_sim.
	DemoBMCs      bool
	RedfishMockup string
	// Lab runs the QEMU lab: "auto" (when root, QEMU and the lab's
	// binaries are present), "on" or "off".
	Lab string
}

func newDevCommand() *cobra.Command {
	cfg := devConfig{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run etcd, kube-apiserver and anvil serve locally (data kept in --data-dir); with --capi, Cluster API's managers and simulated hosts too",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDev(cmd, cfg)
		},
	}
	fs := cmd.Flags()
	cfg.serve.bind(fs)
	fs.StringVar(&cfg.DataDir, "data-dir", ".anvil", "where etcd data, PKI, logs and the kubeconfig live")
	fs.StringVar(&cfg.BinDir, "bin-dir", "bin", "where etcd and kube-apiserver are (make tools builds them)")
	fs.IntVar(&cfg.APIPort, "api-port", 6443, "port of the local kube-apiserver")
	fs.IntVar(&cfg.EtcdPort, "etcd-port", 2379, "client port of the local etcd (the peer port is the next one)")
	fs.BoolVar(&cfg.DemoBMCs, "demo-bmcs", true, "run emulated BMCs for deploy/examples (Redfish on 127.0.0.1:8443, ipmi_sim on 127.0.0.1:9623)")
	fs.StringVar(&cfg.Lab, "lab", "auto", "QEMU lab of three VMs behind real BMCs: auto (when root, QEMU and bin/kubelet are present), on or off")
	fs.StringVar(&cfg.RedfishMockup, "redfish-mockup", "", "DMTF mockup directory the demo Redfish BMC serves (default: the embedded public-rackmount1)")
	// Local defaults: one replica, readable logs, ports that rarely clash.
	_ = fs.Set("leader-elect", "false")
	_ = fs.Set("log-format", "text")
	_ = fs.Set("metrics-bind-address", "127.0.0.1:18080")
	_ = fs.Set("health-probe-bind-address", "127.0.0.1:18081")
	// Ticket receivers on this machine call back here; they may be on loopback.
	_ = fs.Set("ticket-callback-addr", "127.0.0.1:18082")
	_ = fs.Set("ticket-callback-url", "http://127.0.0.1:18082")
	_ = fs.Set("ticket-allow-loopback", "true")
	// The demo BMCs and the lab's BMC emulators listen on 127.0.0.1.
	_ = fs.Set("bmc-allow-cidrs", "127.0.0.1/32")
	// The admin console, on loopback.
	_ = fs.Set("console-listen", "127.0.0.1:18443")
	for _, n := range []string{"leader-elect", "log-format", "metrics-bind-address", "health-probe-bind-address",
		"ticket-callback-addr", "ticket-callback-url", "ticket-allow-loopback", "bmc-allow-cidrs", "console-listen"} {
		fs.Lookup(n).Changed = false
		fs.Lookup(n).DefValue = fs.Lookup(n).Value.String()
	}
	return cmd
}

func runDev(cmd *cobra.Command, cfg devConfig) error {
	ctx := cmd.Context()
	log := newLogger(cfg.serve.LogFormat, cfg.serve.LogLevel)
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	bin, err := filepath.Abs(cfg.BinDir)
	if err != nil {
		return err
	}
	if cfg.serve.CAPI {
		if cfg.Lab == "on" {
			return errors.New("--capi runs simulated hosts: the QEMU lab's hosts have no kubeadm yet (drop --lab=on)")
		}
		return runDevCAPI(cmd, cfg, dir, bin)
	}
	switch missing := labMissing(bin); {
	case cfg.Lab == "on" || (cfg.Lab == "auto" && missing == ""):
		if missing != "" {
			return fmt.Errorf("--lab=on: the lab cannot run: %s", missing)
		}
		return runDevLab(cmd, cfg, dir, bin)
	case cfg.Lab == "auto":
		fmt.Fprintf(cmd.OutOrStdout(), "Running without the QEMU lab: %s.\n", missing)
	case cfg.Lab != "off":
		return fmt.Errorf("--lab must be auto, on or off, not %q", cfg.Lab)
	}
	start := time.Now()
	cp, c, err := startDevControlPlane(ctx, cfg, dir, bin, newScheme(), log)
	if err != nil {
		return err
	}
	defer cp.Stop()
	out := cmd.OutOrStdout()
	if err := devConsoleAdmin(ctx, out, cfg.serve.Console, c); err != nil {
		return err
	}
	if cfg.DemoBMCs {
		stop := startDemoBMCs(out, cfg.RedfishMockup, filepath.Join(dir, "demo-bmcs"), log)
		defer stop()
	}
	fmt.Fprintf(out, "\nAnvil's local control plane is up at %s (%.1fs). In another shell:\n\n", cp.Endpoint, time.Since(start).Seconds())
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n", cp.Kubeconfig)
	fmt.Fprintf(out, "  kubectl apply -f deploy/examples/host-redfish.yaml\n")
	fmt.Fprintf(out, "  kubectl get hosts\n\nData: %s (logs in %s). Ctrl-C stops everything.\n\n", dir, filepath.Join(dir, "logs"))

	errc := make(chan error, 1)
	go func() { errc <- runServe(ctx, cfg.serve, cp.Config) }()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-errc:
			return err
		case <-tick.C:
			if err := cp.Exited(); err != nil {
				return fmt.Errorf("local control plane failed: %w; see %s", err, filepath.Join(dir, "logs"))
			}
		}
	}
}

// startDevControlPlane starts etcd, kube-apiserver and
// kube-controller-manager and installs what an install with deploy/ has:
// Anvil's CRDs, the policy refusing to delete a claimed Host, and the
// binding that lets kubelets with Anvil's bootstrap tokens file CSRs. It
// returns a client with scheme; the caller stops the control plane.
func startDevControlPlane(ctx context.Context, cfg devConfig, dir, bin string, scheme *runtime.Scheme, log logr.Logger) (*controlplane.ControlPlane, client.Client, error) {
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: dir, BinDir: bin, APIServerPort: cfg.APIPort,
		EtcdClientPort: cfg.EtcdPort, EtcdPeerPort: cfg.EtcdPort + 1, Logger: log.WithName("controlplane"),
		// It signs the kubelet certificates Anvil's CSR approver approves.
		ControllerManager: &controlplane.ControllerManagerOptions{Port: cfg.EtcdPort + 2}})
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err == nil {
		err = installDevBasics(ctx, c)
	}
	if err != nil {
		cp.Stop()
		return nil, nil, err
	}
	return cp, c, nil
}

func installDevBasics(ctx context.Context, c client.Client) error {
	if err := deploy.InstallCRDs(ctx, c); err != nil {
		return err
	}
	if err := deploy.InstallPolicies(ctx, c); err != nil {
		return err
	}
	if err := csr.ApplyBootstrapClusterRoleBinding(ctx, c); err != nil {
		return fmt.Errorf("binding the node bootstrapper role: %w", err)
	}
	return nil
}

// startDemoBMCs runs the emulated BMCs the examples point at. Each is
// optional: what cannot start is reported and skipped.
func startDemoBMCs(out io.Writer, mockup, dir string, log logr.Logger) func() {
	var stops []func()
	if sim, err := redfishsim.New(redfishsim.Options{MockupDir: mockup, Addr: "127.0.0.1:8443", TLS: true, Username: "admin", Password: "change-me",
		Latency: 200 * time.Millisecond, Logger: log.WithName("demo-redfish")}); err != nil {
		fmt.Fprintf(out, "demo Redfish BMC: not started: %v\n", err)
	} else {
		fmt.Fprintf(out, "demo Redfish BMC: %s (for deploy/examples/host-redfish.yaml)\n", sim.BMCAddress())
		stops = append(stops, func() { sim.Close() })
	}
	if _, err := bmctest.FindIPMISim(""); err != nil {
		fmt.Fprintf(out, "demo IPMI BMC: not started (%v; apt-get install openipmi)\n", err)
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintf(out, "demo IPMI BMC: not started: %v\n", err)
	} else if sim, err := bmctest.NewIPMISim(bmctest.IPMISimOptions{Port: 9623, Dir: filepath.Join(dir, "ipmi"), Username: "admin", Password: "change-me"}); err != nil {
		fmt.Fprintf(out, "demo IPMI BMC: not started: %v\n", err)
	} else {
		fmt.Fprintf(out, "demo IPMI BMC: %s (for deploy/examples/host-ipmi.yaml)\n", sim.Address())
		stops = append(stops, func() { sim.Close() })
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
