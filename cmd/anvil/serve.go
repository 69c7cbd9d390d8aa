package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/agent/server"
	agentkube "anvil.dev/anvil/agent/server/kube"
	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
	_ "anvil.dev/anvil/bmc/drivers" // redfish, ipmi, manual
	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/internal/apigate"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/netboot"
	"anvil.dev/anvil/render"
	"anvil.dev/anvil/ticket"
)

// serveConfig is everything `anvil serve` reads from flags and ANVIL_* env.
type serveConfig struct {
	Kubeconfig              string
	MetricsAddr             string
	ProbeAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string

	// JoinCAFile overrides the kubeconfig's CA for what booted hosts trust.
	JoinCAFile string

	LogFormat         string
	LogLevel          int
	HostWorkers       int
	QPS               float32
	Burst             int
	BMCCallTimeout    time.Duration
	PowerPollInterval time.Duration
	// PowerPollMax bounds the poll's backoff for Hosts whose power stays put.
	PowerPollMax time.Duration
	// BMCEvents subscribes to the BMCs' Redfish event streams.
	BMCEvents       bool
	BMCConcurrency  int
	IPMICipherSuite int
	// BMCAllowCIDRs are BMC address ranges allowed although loopback,
	// link-local or metadata (emulated BMCs on 127.0.0.1 in labs);
	// validate parses them into bmcAllow.
	BMCAllowCIDRs    string
	bmcAllow         []netip.Prefix
	CSRAddressesOnly bool
	// Machine tunes the Machine controller's timeouts.
	Machine machine.Options
	// Ticket webhooks: the callback base URL receivers reach Anvil at, and
	// the SSRF guard's exceptions (loopback for tests and local labs).
	TicketCallbackURL    string
	TicketCallbackAddr   string
	TicketAllowLoopback  bool
	TicketAllowLinkLocal bool
	TicketRetry          ticket.Backoff
	// Controllers to run: "all", "none" (network services only, as in the
	// DaemonSet) or a comma list of host, csr, machineclass, machine,
	// machineset.
	Controllers []string
	Netboot     netboot.Options
	// JoinAPIServer is the API server URL booted hosts join, when the
	// manager's own (in-cluster service IP) is not reachable from them.
	JoinAPIServer string
	// PprofAddr serves net/http/pprof on its own listener; empty: off.
	PprofAddr string
	// BootCredentialBinding is delivery.BindAddress or BindFirstRequest;
	// BootScriptBurst and BootScriptRefill limit /boot/ per source address
	// (burst 0: no limit).
	BootCredentialBinding string
	BootScriptBurst       int
	BootScriptRefill      time.Duration
	// SecretNamespaces limits the manager's Secret cache (metadata of BMC
	// credential and ticket signing Secrets) to these namespaces, so RBAC
	// can grant Secrets per namespace instead of cluster-wide. Empty: all.
	SecretNamespaces []string
	// CAPI runs the Cluster API infrastructure provider (AnvilMachine and
	// AnvilCluster controllers, capi/infra). Off by default: it needs
	// Cluster API's Cluster and Machine CRDs, which most clusters lack.
	CAPI bool
	// CAPIExtension: Cluster API's in-place update hooks (serve_capi.go).
	CAPIExtension capiExtensionConfig
	// Console is the admin console (console.go); off unless --console-listen.
	Console consoleConfig
}

// runs reports whether a controller is enabled by --controllers.
func (c *serveConfig) runs(name string) bool {
	for _, n := range c.Controllers {
		if n == "all" || n == name {
			return true
		}
	}
	return false
}

var knownControllers = []string{"all", "none", "host", "csr", "machineclass", "machine", "machineset", "ticket"}

func (c *serveConfig) validate() error {
	for _, n := range c.Controllers {
		if !slices.Contains(knownControllers, n) {
			return fmt.Errorf("--controllers: unknown controller %q (known: %s)", n, strings.Join(knownControllers, ", "))
		}
	}
	if c.HostWorkers < 1 || c.Machine.MaxConcurrentReconciles < 1 {
		return fmt.Errorf("--host-workers (%d) and --machine-workers (%d) must be at least 1", c.HostWorkers, c.Machine.MaxConcurrentReconciles)
	}
	for _, n := range c.SecretNamespaces {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			return fmt.Errorf("--secret-namespaces: %q is not a namespace name: %s", n, strings.Join(errs, "; "))
		}
	}
	if err := validatePprofAddr(c.PprofAddr); err != nil {
		return err
	}
	allow, err := netguard.ParsePrefixes("bmc-allow-cidrs", c.BMCAllowCIDRs)
	if err != nil {
		return err
	}
	c.bmcAllow = allow
	if c.Netboot.TFTPMaxConcurrent < 1 {
		return fmt.Errorf("--tftp-max-concurrent (%d) must be at least 1 (firmware does not retry a refused transfer: keep it above the hosts booting at once)", c.Netboot.TFTPMaxConcurrent)
	}
	if _, err := delivery.ParseBinding(c.BootCredentialBinding); err != nil {
		return fmt.Errorf("--boot-credential-binding: %w", err)
	}
	if c.BootScriptBurst < 0 || c.BootScriptRefill <= 0 {
		return fmt.Errorf("--boot-script-burst (%d) must be at least 0 (0: no limit) and --boot-script-refill (%s) more than 0", c.BootScriptBurst, c.BootScriptRefill)
	}
	if err := c.CAPIExtension.validate(); err != nil {
		return err
	}
	if c.PowerPollInterval <= 0 || c.PowerPollMax < c.PowerPollInterval {
		return fmt.Errorf("--power-poll-interval (%s) must be positive and --power-poll-max-interval (%s) at least as long", c.PowerPollInterval, c.PowerPollMax)
	}
	if err := c.Console.validate(); err != nil {
		return err
	}
	if r := c.TicketRetry; r.Base <= 0 || r.Max < r.Base || r.GiveUpAfter < r.Max {
		return fmt.Errorf("--ticket-retry-base (%s) must be > 0, --ticket-retry-max (%s) at least the base and --ticket-give-up-after (%s) at least the max", r.Base, r.Max, r.GiveUpAfter)
	}
	return nil
}

func (c *serveConfig) bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to manage (default: in-cluster, then $KUBECONFIG)")
	fs.StringVar(&c.MetricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus /metrics endpoint (0 disables)")
	fs.StringVar(&c.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.BoolVar(&c.LeaderElect, "leader-elect", true, "elect a leader so only one replica reconciles")
	fs.StringVar(&c.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election Lease (default: the pod's; out of cluster the kubeconfig context's, else "+defaultLeaseNamespace+")")
	fs.StringVar(&c.LogFormat, "log-format", "json", "log format: json or text")
	fs.IntVar(&c.LogLevel, "v", 0, "log verbosity (higher logs more)")
	fs.IntVar(&c.HostWorkers, "host-workers", 64, "Hosts reconciled at once; a slow BMC holds one worker")
	fs.IntVar(&c.Machine.MaxConcurrentReconciles, "machine-workers", 32, "Machines reconciled at once (each reconcile is a few API round trips)")
	fs.DurationVar(&c.BMCCallTimeout, "bmc-call-timeout", 60*time.Second, "deadline of one BMC call (real BMCs take tens of seconds at first)")
	fs.DurationVar(&c.PowerPollInterval, "power-poll-interval", 10*time.Minute, "how often each BMC is asked for the power state (jittered)")
	fs.DurationVar(&c.PowerPollMax, "power-poll-max-interval", time.Hour, "each poll that finds a Host's power unchanged doubles the wait to its next, up to this (an action of Anvil's starts again from --power-poll-interval); set it to --power-poll-interval to poll at a fixed rate")
	fs.BoolVar(&c.BMCEvents, "bmc-events", true, "subscribe to each Redfish BMC's server-sent event stream where it offers one (EventService ServerSentEventUri): a power change outside Anvil is seen at once, and those Hosts are polled only every --power-poll-max-interval")
	fs.IntVar(&c.BMCConcurrency, "bmc-concurrency", 1, "calls in flight to one BMC at once")
	fs.StringVar(&c.BMCAllowCIDRs, "bmc-allow-cidrs", "", "comma-separated CIDRs BMC addresses may be in although loopback, link-local or cloud metadata (refused by default: a Host could send its BMC password there), e.g. 127.0.0.1/32 for emulated BMCs")
	fs.IntVar(&c.IPMICipherSuite, "ipmi-cipher-suite", 3, "RMCP+ cipher suite for ipmi:// BMCs (17 for SHA-256 where supported)")
	fs.StringSliceVar(&c.Controllers, "controllers", []string{"all"}, "controllers to run: all, none, or a list of host, csr, machineclass, machine, machineset, ticket")
	fs.StringVar(&c.TicketCallbackURL, "ticket-callback-url", "", "the --ticket-callback-addr server as ticket receivers reach it, for callback links in webhooks")
	fs.StringVar(&c.TicketCallbackAddr, "ticket-callback-addr", "", "where signed ticket callbacks (POST /tickets/v1/...) are served, e.g. :8082 (empty: not served)")
	fs.BoolVar(&c.TicketAllowLoopback, "ticket-allow-loopback", false, "allow TicketEndpoints on loopback addresses (tests, local labs)")
	fs.BoolVar(&c.TicketAllowLinkLocal, "ticket-allow-link-local", false, "allow TicketEndpoints on link-local addresses")
	fs.DurationVar(&c.TicketRetry.Base, "ticket-retry-base", 5*time.Second, "first wait before a failed webhook is retried (doubles per attempt, with jitter)")
	fs.DurationVar(&c.TicketRetry.Max, "ticket-retry-max", 2*time.Hour, "longest wait between two attempts of one webhook")
	fs.DurationVar(&c.TicketRetry.GiveUpAfter, "ticket-give-up-after", 72*time.Hour, "a webhook still failing this long after it was filed is marked Failed (anvil tickets redeliver sends it again)")
	fs.DurationVar(&c.Machine.BootTimeout, "machine-boot-timeout", 20*time.Minute, "how long a Host may take from the boot request to its first report (then reboot once, then fail)")
	fs.DurationVar(&c.Machine.JoinTimeout, "machine-join-timeout", 15*time.Minute, "how long a booted Host may take to become a Ready Node")
	fs.DurationVar(&c.Machine.DrainTimeout, "machine-drain-timeout", 10*time.Minute, "how long a deleted Machine's Node may take to drain before it is deleted anyway")
	fs.DurationVar(&c.Machine.WipeTimeout, "machine-wipe-timeout", 30*time.Minute, "how long a released Host may take to report its wipe (then it goes to Error)")
	fs.StringVar(&c.JoinCAFile, "join-ca-file", "", "PEM CA bundle booted hosts trust for the API server they join (default: the kubeconfig's certificate-authority-data or certificate-authority)")
	fs.StringVar(&c.JoinAPIServer, "join-api-server", "", "API server URL kubelets on booted hosts use (default: the MachineClass's, else the one anvil talks to)")
	c.Netboot = netboot.DefaultOptions()
	netboot.BindFlags(fs, &c.Netboot)
	fs.IntVar(&c.Netboot.TFTPMaxConcurrent, "tftp-max-concurrent", 1024, "TFTP transfers at once; beyond it a request gets an ERROR, and PXE firmware then fails the boot (it does not retry)")
	fs.StringSliceVar(&c.SecretNamespaces, "secret-namespaces", nil, "namespaces whose Secrets (BMC credentials, ticket signing keys) anvil watches; Hosts and TicketEndpoints elsewhere cannot use theirs (empty: every namespace, needs cluster-wide RBAC on Secrets)")
	fs.StringVar(&c.PprofAddr, "pprof-bind-address", "", "serve net/http/pprof here, e.g. 127.0.0.1:6060, on its own listener (empty: off)")
	fs.StringVar(&c.BootCredentialBinding, "boot-credential-binding", delivery.BindAddress, "what binds a boot credential: \"address\" (the MAC's DHCP lease, or its Host's spec.network.address; in proxy DHCP mode Hosts without a static address get no config) or \"first-request\" (proxy DHCP only: a Host without a static address gets its credential in the first script request of its boot, from wherever it comes)")
	fs.IntVar(&c.BootScriptBurst, "boot-script-burst", delivery.DefaultScriptBurst, "boot script requests (/boot/<mac>.ipxe) one source address may make in a row (0: no limit)")
	fs.DurationVar(&c.BootScriptRefill, "boot-script-refill", delivery.DefaultScriptRefill, "how long one source address waits for one more boot script request once its burst is used")
	fs.BoolVar(&c.CAPI, "capi", false, "run the Cluster API infrastructure provider (AnvilMachine, AnvilCluster); needs Cluster API's CRDs installed")
	c.CAPIExtension.bind(fs)
	c.Console.bind(fs, "console-", "")
	fs.BoolVar(&c.CSRAddressesOnly, "csr-machine-addresses-only", false, "approve kubelet serving certs only for the Machine's addresses, not those the Node reports")
	fs.Float32Var(&c.QPS, "kube-api-qps", 50, "sustained requests per second to the API server")
	fs.IntVar(&c.Burst, "kube-api-burst", 100, "burst of requests to the API server")
}

func newServeCommand() *cobra.Command {
	cfg := serveConfig{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the controllers against a cluster (the production path)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rc, err := loadRESTConfig(cfg.Kubeconfig)
			if err != nil {
				return err
			}
			if cfg.LeaderElect && cfg.LeaderElectionNamespace == "" && !inCluster() {
				cfg.LeaderElectionNamespace = kubeconfigNamespace(cfg.Kubeconfig)
			}
			return runServe(cmd.Context(), cfg, rc)
		},
	}
	cfg.bind(cmd.Flags())
	return cmd
}

// defaultLeaseNamespace holds the leader-election Lease of an anvil serve
// running out of cluster whose kubeconfig context names no namespace:
// kube-scheduler and kube-controller-manager keep theirs there too.
const defaultLeaseNamespace = "kube-system"

// inCluster: controller-runtime finds the pod's namespace itself.
func inCluster() bool {
	_, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	return err == nil
}

// kubeconfigNamespace is the current context's namespace, if it sets one
// (read from the raw config: ClientConfig.Namespace answers "default" both
// for a context that says so and for one that says nothing).
func kubeconfigNamespace(kubeconfig string) string {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).RawConfig()
	if err == nil {
		if c := raw.Contexts[raw.CurrentContext]; c != nil && c.Namespace != "" {
			return c.Namespace
		}
	}
	return defaultLeaseNamespace
}

func loadRESTConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return rc, nil
}

func newLogger(format string, level int) logr.Logger {
	opts := &slog.HandlerOptions{Level: slog.Level(-level)}
	var h slog.Handler = slog.NewJSONHandler(os.Stderr, opts)
	if format == "text" {
		h = slog.NewTextHandler(os.Stderr, opts)
	}
	return logr.FromSlogHandler(h)
}

// Scheme holds every type the manager reads or writes.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, metalv1.AddToScheme, apiextensionsv1.AddToScheme,
		infrav1.AddToScheme, clusterv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

func runServe(ctx context.Context, cfg serveConfig, rc *rest.Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	log := newLogger(cfg.LogFormat, cfg.LogLevel)
	ctrl.SetLogger(log)
	klog.SetLogger(log.WithName("client-go"))
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst = cfg.QPS, cfg.Burst
	rc.UserAgent = "anvil/" + version

	mgr, err := ctrl.NewManager(rc, ctrl.Options{
		Scheme:                  newScheme(),
		Metrics:                 metricsserver.Options{BindAddress: cfg.MetricsAddr},
		HealthProbeBindAddress:  cfg.ProbeAddr,
		LeaderElection:          cfg.LeaderElect,
		LeaderElectionID:        "anvil.metal.anvil.dev",
		LeaderElectionNamespace: cfg.LeaderElectionNamespace,
		Logger:                  log,
		// One process may run serve more than once (anvil dev restarts,
		// tests); controller names only need to be unique per manager.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:      cfg.cacheOptions(),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	// Bootstrap tokens from an informer, not a LIST per config fetch or per
	// reconcile of a joining Machine; one informer when both run here.
	var tokens *token.Cache
	if cfg.runs("machine") || cfg.Netboot.HTTPBoot {
		kube, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		tokens = token.NewCache(kube, token.CacheOptions{})
		if err := mgr.Add(tokens); err != nil {
			return err
		}
	}
	if err := setupControllers(ctx, mgr, cfg, tokens); err != nil {
		return err
	}
	// DHCP, TFTP and HTTP boot run on every replica, answered from the cache.
	// The HTTP boot server also carries the agent API.
	//
	// Their Host writes share one gate: DHCP's (leases, discovered Hosts)
	// go before the boot scripts' and configs', because firmware stops
	// retrying a REQUEST after about a minute and iPXE waits much longer
	// (internal/apigate).
	gate := apigate.New(apigate.Options{Registerer: ctrlmetrics.Registry})
	if cfg.Netboot.Client == nil {
		cfg.Netboot.Client = gate.Client(mgr.GetClient(), apigate.Urgent)
	}
	if cfg.Netboot.HTTPBoot {
		if err := mountAgentAPI(ctx, mgr, &cfg.Netboot, log); err != nil {
			return err
		}
		if err := mountConfigDelivery(ctx, mgr, rc, &cfg, gate.Client(mgr.GetClient(), apigate.Normal), tokens, log); err != nil {
			return err
		}
	}
	if err := netboot.AddToManager(mgr, cfg.Netboot); err != nil {
		return fmt.Errorf("network boot services: %w", err)
	}
	if cfg.Console.Listen != "" {
		if err := mgr.Add(consoleServer{cfg: cfg.Console, rc: rc, log: log}); err != nil {
			return err
		}
	}
	if cfg.PprofAddr != "" {
		p, err := newPprofServer(cfg.PprofAddr, log)
		if err != nil {
			return err
		}
		if err := mgr.Add(p); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	log.Info("starting anvil", "version", versionString(), "apiServer", rc.Host, "leaderElection", cfg.LeaderElect)
	return mgr.Start(ctx)
}

// cacheOptions restricts the Secret informers to --secret-namespaces.
func (c *serveConfig) cacheOptions() cache.Options {
	if len(c.SecretNamespaces) == 0 {
		return cache.Options{}
	}
	ns := map[string]cache.Config{}
	for _, n := range c.SecretNamespaces {
		ns[n] = cache.Config{}
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Namespaces: ns}}}
}

// setupControllers registers the controllers --controllers asks for.
func setupControllers(ctx context.Context, mgr ctrl.Manager, cfg serveConfig, tokens *token.Cache) error {
	if cfg.runs("host") {
		// A session outlives the longest jittered power poll (1.2x the
		// interval), so a poll is one read, not a login, a read and a
		// logout: at 5,000 idle Hosts that was most of the controllers'
		// idle CPU. A BMC that expires it sooner gets a new login (401).
		// Never below the pool's own 10 minutes (short test intervals).
		pool := bmc.NewPool(bmc.PoolOptions{MaxConcurrentPerBMC: cfg.BMCConcurrency, IdleTimeout: max(10*time.Minute, cfg.PowerPollInterval*3/2),
			Guard: netguard.Guard{Allow: cfg.bmcAllow}})
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			<-ctx.Done()
			return pool.Close(context.Background()) // log out of Redfish sessions
		})); err != nil {
			return err
		}
		hosts := &inventory.HostReconciler{
			Client:                  mgr.GetClient(),
			APIReader:               mgr.GetAPIReader(),
			Recorder:                mgr.GetEventRecorder("anvil-host"),
			MaxConcurrentReconciles: cfg.HostWorkers,
			Power: inventory.PowerOptions{
				Pool:            pool,
				CallTimeout:     cfg.BMCCallTimeout,
				PollInterval:    cfg.PowerPollInterval,
				PollMaxInterval: cfg.PowerPollMax,
				Events:          cfg.BMCEvents,
				IPMICipherSuite: cfg.IPMICipherSuite,
			},
			// The BMC fetches virtual media ISOs from the boot HTTP
			// server: it must be told where that is.
			Media: inventory.MediaOptions{BaseURL: cfg.Netboot.HTTPBaseURL},
		}
		if err := hosts.SetupWithManager(ctx, mgr); err != nil {
			return fmt.Errorf("setting up Host controller: %w", err)
		}
	}
	// Clusters other than this one that MachineClasses join
	// (spec.join.kubeconfigSecretRef): shared by the CSR approver (one per
	// target) and the Machine controller (Nodes, tokens, drains there).
	targets, err := cluster.New(cluster.Options{Secrets: mgr.GetAPIReader(), Classes: mgr.GetClient(),
		Logger: ctrl.Log.WithName("targets"), Mutate: func(rc *rest.Config) {
			rc.QPS, rc.Burst, rc.UserAgent = cfg.QPS, cfg.Burst, "anvil/"+version
		}})
	if err != nil {
		return err
	}
	if cfg.runs("csr") || cfg.runs("machine") {
		if err := mgr.Add(targets); err != nil {
			return err
		}
	}
	if cfg.runs("csr") {
		kube, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		approver := &csr.Approver{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Kube: kube,
			Recorder: mgr.GetEventRecorder("anvil-csr"), MachineAddressesOnly: cfg.CSRAddressesOnly, Targets: targets}
		if err := approver.SetupWithManager(ctx, mgr); err != nil {
			return fmt.Errorf("setting up CSR approver: %w", err)
		}
	}
	var notifier machine.Notifier // stays nil (not a typed nil) without tickets
	if cfg.runs("ticket") {
		callback := cfg.TicketCallbackURL
		out, err := ticket.Setup(mgr, ticket.SetupOptions{
			Delivery: ticket.Options{Guard: ticket.Guard{Guard: netguard.Guard{AllowLoopback: cfg.TicketAllowLoopback, AllowLinkLocal: cfg.TicketAllowLinkLocal}},
				Backoff: cfg.TicketRetry, UserAgent: "anvil/" + versionString()},
			CallbackBaseURL: callback,
		})
		if err != nil {
			return err
		}
		notifier = ticketNotifier{out}
		if cfg.TicketCallbackAddr != "" {
			if err := serveTicketCallbacks(mgr, cfg.TicketCallbackAddr, ctrl.Log.WithName("tickets")); err != nil {
				return err
			}
		}
	}
	if cfg.runs("machine") {
		kube, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		machines := &machine.MachineReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Clientset: kube,
			Recorder: mgr.GetEventRecorder("anvil-machine"), Options: cfg.Machine, Notifier: notifier, Targets: targets, Tokens: tokens}
		if err := machines.SetupWithManager(ctx, mgr); err != nil {
			return fmt.Errorf("setting up Machine controller: %w", err)
		}
	}
	if cfg.runs("machineset") {
		sets := &machine.MachineSetReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("anvil-machineset")}
		if err := sets.SetupWithManager(ctx, mgr); err != nil {
			return fmt.Errorf("setting up MachineSet controller: %w", err)
		}
	}
	if cfg.CAPI {
		if err := setupCAPI(mgr); err != nil {
			return err
		}
	}
	if cfg.CAPIExtension.Addr != "" {
		if err := setupCAPIExtension(mgr, cfg); err != nil {
			return err
		}
	}
	if cfg.runs("machineclass") {
		classes := &machine.ClassReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("anvil-machineclass"),
			Renderer: render.NewRenderer(render.Options{}), ArtifactGuard: netguard.Guard{Allow: cfg.Netboot.ArtifactAllow}}
		if err := classes.SetupWithManager(ctx, mgr); err != nil {
			return fmt.Errorf("setting up MachineClass controller: %w", err)
		}
	}
	return nil
}

// ticketNotifier files the Machine controller's hardware events as
// ticket webhooks.
type ticketNotifier struct{ out *ticket.Outbox }

func (n ticketNotifier) Notify(ctx context.Context, ev machine.Event) error {
	data := maps.Clone(ev.Data)
	if ev.Host != nil {
		if data == nil {
			data = map[string]any{}
		}
		data["host"] = ev.Host.Name
	}
	return n.out.Enqueue(ctx, ticket.Event{Type: ev.Type, Object: ev.Machine, Data: data})
}

// serveTicketCallbacks serves /tickets/v1/ (signed callbacks of the admins'
// ticketing system) on addr, on every replica: the process that files
// tickets answers them, so the network services keep their narrow role.
func serveTicketCallbacks(mgr ctrl.Manager, addr string, log logr.Logger) error {
	mux := http.NewServeMux()
	mux.Handle(ticket.PathPrefix, ticket.NewHandler(ticket.HandlerOptions{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Logger: log.WithName("ticket-callbacks")}))
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	return mgr.Add(callbackServer{srv: srv, log: log})
}

type callbackServer struct {
	srv *http.Server
	log logr.Logger
}

// NeedLeaderElection: callbacks are answered by every replica.
func (c callbackServer) NeedLeaderElection() bool { return false }

func (c callbackServer) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", c.srv.Addr)
	if err != nil {
		return fmt.Errorf("ticket callbacks: %w", err)
	}
	c.log.Info("serving ticket callbacks", "addr", ln.Addr().String(), "path", ticket.PathPrefix)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.srv.Shutdown(sctx)
	}()
	if err := c.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// mountAgentAPI adds /agent/v1/ (anvil-agent's reports, actions and results)
// to the HTTP boot server.
func mountAgentAPI(ctx context.Context, mgr ctrl.Manager, o *netboot.Options, log logr.Logger) error {
	if err := agentkube.AddIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	be, err := agentkube.New(agentkube.Options{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Logger: log.WithName("agent-api"),
		Registerer: ctrlmetrics.Registry})
	if err != nil {
		return err
	}
	// Informer events wake the agents' held action polls (long poll).
	if err := be.WatchEvents(ctx, mgr.GetCache()); err != nil {
		return err
	}
	srv, err := server.NewServer(server.ServerOptions{Backend: be, Logger: log.WithName("agent-api")})
	if err != nil {
		return err
	}
	if o.Handlers == nil {
		o.Handlers = map[string]http.Handler{}
	}
	o.Handlers[agent.PathPrefix] = srv
	return nil
}

// scriptRate maps the flags (burst 0: no limit) to delivery's.
func scriptRate(burst int, refill time.Duration) delivery.ScriptRate {
	if burst == 0 {
		return delivery.ScriptRate{Burst: -1}
	}
	return delivery.ScriptRate{Burst: burst, Refill: refill}
}

// mountConfigDelivery makes iPXE scripts carry a one-time boot credential and
// serves /config/ (Ignition or NoCloud with a freshly minted bootstrap token).
func mountConfigDelivery(ctx context.Context, mgr ctrl.Manager, rc *rest.Config, cfg *serveConfig, writer client.Client, tokens *token.Cache, log logr.Logger) error {
	caPEM, err := joinCA(rc, cfg)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	join := cfg.JoinAPIServer
	if join == "" {
		join = rc.Host
	}
	bootCA, err := cfg.Netboot.BootCA()
	if err != nil {
		return err
	}
	w, err := delivery.Wire(ctx, delivery.WireOptions{
		Client: writer, APIReader: mgr.GetAPIReader(), Indexer: mgr.GetFieldIndexer(), Clientset: kube, Tokens: tokens,
		CACertPEM: caPEM, APIServerEndpoint: join, BaseURL: cfg.Netboot.HTTPBaseURL, BootCA: bootCA,
		Binding:    cfg.BootCredentialBinding,
		ScriptRate: scriptRate(cfg.BootScriptBurst, cfg.BootScriptRefill),
		Registerer: ctrlmetrics.Registry, Logger: log.WithName("delivery"),
	})
	if err != nil {
		return fmt.Errorf("config delivery: %w", err)
	}
	prev := cfg.Netboot.HTTPHook
	cfg.Netboot.Scripts = w.Scripts
	cfg.Netboot.HTTPHook = func(c netboot.Components, s *httpboot.Server) error {
		if prev != nil {
			if err := prev(c, s); err != nil {
				return err
			}
		}
		return w.HTTPHook(c, s)
	}
	return nil
}

// joinCA is the CA bundle booted hosts pin for the API server they join
// (its hash goes into their config). A kubeconfig that trusts the system
// roots or skips verification has none: say so, and how to give one.
func joinCA(rc *rest.Config, cfg *serveConfig) ([]byte, error) {
	if cfg.JoinCAFile != "" {
		b, err := os.ReadFile(cfg.JoinCAFile)
		if err != nil {
			return nil, fmt.Errorf("--join-ca-file: %v", err)
		}
		if _, err := token.CACertHash(b); err != nil {
			return nil, fmt.Errorf("--join-ca-file %s: no PEM CERTIFICATE in it (%v)", cfg.JoinCAFile, err)
		}
		return b, nil
	}
	rc = rest.CopyConfig(rc)
	if err := rest.LoadTLSFiles(rc); err != nil { // CAData from CAFile when in-cluster
		return nil, fmt.Errorf("--http-boot: reading the kubeconfig's certificate-authority: %w", err)
	}
	if len(rc.CAData) == 0 {
		return nil, errors.New("--http-boot: the kubeconfig's cluster has no certificate-authority-data or certificate-authority, " +
			"so booted hosts could not verify the API server they join; add the cluster CA to the kubeconfig or pass --join-ca-file FILE (a PEM CA bundle)")
	}
	if _, err := token.CACertHash(rc.CAData); err != nil {
		return nil, fmt.Errorf("--http-boot: the kubeconfig's certificate-authority holds no PEM CERTIFICATE (%v); fix it or pass --join-ca-file FILE", err)
	}
	return rc.CAData, nil
}
