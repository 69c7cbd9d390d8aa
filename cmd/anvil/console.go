package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"anvil.dev/anvil/console"
)

// The admin console: `anvil console`, or `anvil serve --console-listen`.
// Either way it acts as the person signed in (their own token on every
// API request), never as Anvil.

type consoleConfig struct {
	Listen    string
	TLSCert   string
	TLSKey    string
	BehindTLS bool
	Namespace string
	Idle      time.Duration
	// flag names, for errors: "console-listen" under serve, "listen" alone.
	prefix string
}

func (c *consoleConfig) bind(fs *pflag.FlagSet, prefix, defListen string) {
	c.prefix = prefix
	fs.StringVar(&c.Listen, prefix+"listen", defListen, "address of the admin console, e.g. 127.0.0.1:8443 (empty: off)")
	fs.StringVar(&c.TLSCert, prefix+"tls-cert-file", "", "PEM certificate the console serves (with --"+prefix+"tls-key-file)")
	fs.StringVar(&c.TLSKey, prefix+"tls-key-file", "", "PEM key of --"+prefix+"tls-cert-file")
	fs.BoolVar(&c.BehindTLS, prefix+"behind-tls-proxy", false, "serve plain HTTP on a non-loopback address because a proxy in front terminates TLS (cookies are marked Secure)")
	fs.StringVar(&c.Namespace, prefix+"namespace", "", "namespace shown by default (empty: all, which needs cluster-wide read access; the page's ?ns= picks another)")
	fs.DurationVar(&c.Idle, prefix+"session-idle", time.Hour, "sign a person out after this long without a request")
}

// validate refuses to take people's tokens over plain HTTP on a network.
func (c *consoleConfig) validate() error {
	if c.Listen == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("invalid --%slisten %q: want host:port, e.g. 127.0.0.1:8443", c.prefix, c.Listen)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("--%stls-cert-file and --%stls-key-file go together", c.prefix, c.prefix)
	}
	if c.TLSCert == "" && !c.BehindTLS {
		ip, err := netip.ParseAddr(host)
		if host == "localhost" {
			return nil
		}
		if err != nil || !ip.IsLoopback() {
			return fmt.Errorf("--%slisten %s is not a loopback address and the console takes bearer tokens: give --%stls-cert-file and --%stls-key-file, or --%sbehind-tls-proxy when a proxy terminates TLS",
				c.prefix, c.Listen, c.prefix, c.prefix, c.prefix)
		}
	}
	if c.Idle <= 0 {
		return fmt.Errorf("--%ssession-idle must be positive", c.prefix)
	}
	return nil
}

// consoleServer is the console's listener as a manager runnable (it runs
// on every replica, not only the leader).
type consoleServer struct {
	cfg consoleConfig
	rc  *rest.Config
	log logr.Logger
}

func (c consoleServer) NeedLeaderElection() bool { return false }

func (c consoleServer) Start(ctx context.Context) error {
	srv, err := console.New(console.Config{API: c.rc, Scheme: newScheme(), Namespace: c.cfg.Namespace, SessionIdle: c.cfg.Idle,
		Secure: c.cfg.TLSCert != "" || c.cfg.BehindTLS, Log: c.log.WithName("console")})
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: nil, BaseContext: func(net.Listener) context.Context { return ctx }}
	ln, err := net.Listen("tcp", c.cfg.Listen)
	if err != nil {
		return fmt.Errorf("console: --%slisten: %w", c.cfg.prefix, err)
	}
	if c.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.cfg.TLSCert, c.cfg.TLSKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("console: --%stls-cert-file/--%stls-key-file: %w", c.cfg.prefix, c.cfg.prefix, err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	scheme := "http"
	if c.cfg.TLSCert != "" {
		scheme = "https"
	}
	c.log.Info("admin console listening", "url", scheme+"://"+ln.Addr().String())
	go func() { _ = srv.Run(ctx) }()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func newConsoleCommand() *cobra.Command {
	var (
		kubeconfig, logFormat string
		level                 int
		cfg                   consoleConfig
	)
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Serve the admin console: racks, hosts, machines, rollouts and tickets, live in the browser",
		Long: "Serves the admin console on --listen. People sign in with their own Kubernetes token and every\n" +
			"request to the API server carries it: RBAC decides what they see and do. Anvil's own credentials\n" +
			"are never used: only the API server's address and CA are read from --kubeconfig.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.validate(); err != nil {
				return err
			}
			if cfg.Listen == "" {
				return errors.New("--listen is required, e.g. 127.0.0.1:8443")
			}
			rc, err := loadRESTConfig(kubeconfig)
			if err != nil {
				return err
			}
			log := newLogger(logFormat, level)
			return consoleServer{cfg: cfg, rc: rc, log: log}.Start(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig naming the API server and its CA (its credentials are not used; default: in-cluster, then $KUBECONFIG)")
	fs.StringVar(&logFormat, "log-format", "json", "log format: json or text")
	fs.IntVar(&level, "v", 0, "log verbosity")
	cfg.bind(fs, "", "127.0.0.1:8443")
	return cmd
}
