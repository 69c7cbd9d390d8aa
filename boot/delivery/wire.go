package delivery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"anvil.dev/anvil/inventory/reread"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/boot/hoststore"
	"anvil.dev/anvil/boot/media"
	"anvil.dev/anvil/internal/ratelimit"
	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/ipxebin"
	"anvil.dev/anvil/pxe/netboot"
	"anvil.dev/anvil/render"
)

// WireOptions configure Wire.
type WireOptions struct {
	// Client is the manager's client: cached reads, Host status writes.
	// Required.
	Client client.Client
	// APIReader reads around the cache after conflicts (mgr.GetAPIReader();
	// default Client).
	APIReader client.Reader
	// Indexer, if set (mgr.GetFieldIndexer()), gets hoststore's index on
	// the credential hash, which the config endpoint looks credentials up
	// by. Wire must then run before the manager starts. Leave it nil if
	// something else registered hoststore.AddIndex already.
	Indexer client.FieldIndexer
	// Clientset mints and reads bootstrap tokens. Required.
	Clientset kubernetes.Interface
	// Tokens finds bootstrap tokens (ConfigsOptions.Tokens): a
	// token.NewCache(Clientset, ...) the caller starts; nil lists directly.
	Tokens token.Lister
	// CACertPEM is the cluster CA bundle handed to kubelets. Required.
	CACertPEM []byte
	// APIServerEndpoint for classes without spec.join.apiServerEndpoint.
	APIServerEndpoint string
	// BaseURL is the HTTP boot server as hosts reach it (netboot's
	// HTTPBaseURL); empty: the local address each request came in on.
	BaseURL string
	// BootCA is the boot server's CA (DER) when it serves HTTPS
	// (netboot's --http-tls-ca-file): the virtual media ISOs' iPXE trusts
	// it, as the iPXE served by TFTP does. Nil: plain HTTP.
	BootCA []byte
	// Renderer is shared with the MachineClass controller; new if nil.
	Renderer *render.Renderer
	// Credentials tune boot credentials; TokenTTL is the default token
	// lifetime for classes without spec.join.tokenTTL.
	Credentials  CredentialOptions
	TokenTTL     time.Duration
	KubeadmGroup bool
	// Targets resolves classes with spec.join.kubeconfigSecretRef. If nil
	// and APIReader is set, Wire makes one that reads the kubeconfig
	// Secrets through APIReader (get only, no watch on Secrets).
	Targets *cluster.Registry
	// Limiter of failed config requests per address (configserver's
	// default if nil).
	Limiter *ratelimit.Limiter
	// Binding of credentials to addresses: BindAddress (default) or
	// BindFirstRequest (proxy DHCP only).
	Binding string
	// ScriptRate limits boot script requests per source address.
	ScriptRate ScriptRate
	// Registerer receives the config endpoint's and the scripts' metrics;
	// nil keeps them private.
	Registerer prometheus.Registerer
	Logger     logr.Logger
	// Now returns the current time (time.Now if nil); credentials and
	// tokens are issued and checked against it.
	Now func() time.Time
	// RereadInterval: a boot credential the cache does not hold makes the
	// config endpoint re-read its MAC's Host from APIReader at most once
	// per Host per interval (reread.DefaultInterval). Without
	// APIReader there is no re-read.
	RereadInterval time.Duration
}

// Wiring is what Wire builds: hooks for netboot.Options, and the parts
// for callers that mount them elsewhere.
type Wiring struct {
	// Scripts is netboot.Options.Scripts.
	Scripts func(netboot.Components) (httpboot.ScriptSource, error)
	// HTTPHook is netboot.Options.HTTPHook: it mounts the config endpoint
	// at configserver.DefaultPathPrefix, bound to the DHCP leases when
	// DHCP runs in full mode, else to the Hosts' static addresses.
	HTTPHook func(netboot.Components, *httpboot.Server) error
	// Configs renders the configs; Verifier checks credentials against Host
	// status; Handler is the config endpoint.
	Configs  *Configs
	Verifier *bootcred.Manager
	Handler  *configserver.Handler
	// Media serves /media/<token>.iso and .ipxe (spec.bootMethod
	// VirtualMedia).
	Media *media.Handler
}

// Wire builds the config delivery for netboot:
//
//	w, err := delivery.Wire(ctx, delivery.WireOptions{...})
//	pxeOpts.Scripts, pxeOpts.HTTPHook = w.Scripts, w.HTTPHook
func Wire(ctx context.Context, o WireOptions) (*Wiring, error) {
	if o.Client == nil || o.Clientset == nil {
		return nil, errors.New("delivery: WireOptions needs Client and Clientset")
	}
	if o.Targets == nil && o.APIReader != nil {
		t, err := cluster.New(cluster.Options{Secrets: o.APIReader, Logger: o.Logger.WithName("targets")})
		if err != nil {
			return nil, err
		}
		o.Targets = t
	}
	// A credential the cache does not hold yet (its watch lags) is looked
	// up past it, rate-limited per Host (hoststore.Store.Refresh; AddIndex
	// registers the MAC index it needs).
	var rr *reread.Rereader
	if o.APIReader != nil {
		r, err := reread.New(reread.Options{APIReader: o.APIReader, Interval: o.RereadInterval, Now: o.Now})
		if err != nil {
			return nil, err
		}
		rr = r
	}
	if o.APIReader == nil {
		o.APIReader = o.Client
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Indexer != nil {
		if err := hoststore.AddIndex(ctx, o.Indexer); err != nil {
			return nil, fmt.Errorf("delivery: boot credential index: %w", err)
		}
	}
	var configs *Configs
	store, err := hoststore.New(hoststore.Options{
		Client: o.Client, APIReader: o.APIReader, Reread: rr, Misses: reread.MissCounter(o.Registerer),
		// The agent credential goes out in the patch that consumes the
		// boot credential: one Host status write per config fetch.
		OnConsume: func(h *metalv1.Host) func() { return configs.issueAgentCredential(h) },
	})
	if err != nil {
		return nil, err
	}
	mode, err := ParseBinding(o.Binding)
	if err != nil {
		return nil, fmt.Errorf("delivery: %w", err)
	}
	verifier := bootcred.New(bootcred.Options{Store: store, TTL: o.Credentials.TTL, Grace: o.Credentials.Grace, Now: o.Now})
	configs, err = NewConfigs(ConfigsOptions{
		Client: o.Client, Writer: o.Client, APIReader: o.APIReader, Clientset: o.Clientset, Tokens: o.Tokens, Renderer: o.Renderer,
		CACertPEM: o.CACertPEM, APIServerEndpoint: o.APIServerEndpoint, BaseURL: o.BaseURL,
		TokenTTL: o.TokenTTL, KubeadmGroup: o.KubeadmGroup, Targets: o.Targets,
		Logger: o.Logger.WithName("config"), Now: o.Now,
	})
	if err != nil {
		return nil, err
	}
	bound := &configBinding{}
	handler, err := configserver.New(configserver.Options{
		Verifier: verifier, Source: configs, Installs: configs, Binding: bound, Limiter: o.Limiter,
		Registerer: o.Registerer, Logger: o.Logger.WithName("config"),
	})
	if err != nil {
		return nil, fmt.Errorf("delivery: config endpoint: %w", err)
	}
	w := &Wiring{Configs: configs, Verifier: verifier, Handler: handler}
	// Virtual media ISOs: their Hosts are found by token hash through
	// the index AddMediaIndex registers (with Indexer; else whoever made
	// the cache must have).
	var mediaScripts *Scripts
	if o.Indexer != nil {
		if err := AddMediaIndex(ctx, o.Indexer); err != nil {
			return nil, fmt.Errorf("delivery: virtual media index: %w", err)
		}
	}
	efi, err := mediaIPXE(o.BootCA)
	if err != nil {
		return nil, err
	}
	mediaHandler, err := media.NewHandler(media.HandlerOptions{
		Source: &lazyMediaSource{reader: o.Client, scripts: &mediaScripts}, BaseURL: o.BaseURL, IPXE: efi,
		Logger: o.Logger.WithName("media"),
	})
	if err != nil {
		return nil, err
	}
	w.Media = mediaHandler
	go mediaHandler.SweepEvery(ctx, time.Minute) // ISOs of finished boots
	w.Scripts = func(c netboot.Components) (httpboot.ScriptSource, error) {
		if c.Index == nil {
			return nil, errors.New("delivery: netboot gave no index")
		}
		so := ScriptsOptions{
			Index: c.Index, Client: o.Client, APIReader: o.APIReader, BaseURL: o.BaseURL,
			Credentials: o.Credentials, Registerer: o.Registerer, Logger: o.Logger.WithName("scripts"), Now: o.Now,
			Binding: mode, Rate: o.ScriptRate,
		}
		if c.Leases != nil { // a nil *LeaseStore in the interface would not be nil
			so.Leases = c.Leases
		}
		if c.Leases6 != nil {
			so.Leases6 = c.Leases6
		}
		s, err := NewScripts(so)
		mediaScripts = s // the virtual media ISOs carry this script
		return s, err
	}
	w.HTTPHook = func(c netboot.Components, s *httpboot.Server) error {
		if c.Index == nil {
			return errors.New("delivery: netboot gave no index")
		}
		b := binding{hosts: c.Index.Host, mode: mode}
		if c.Leases != nil { // a nil *LeaseStore in the interface would not be nil
			b.leases = c.Leases
		}
		if c.Leases6 != nil {
			b.leases6 = c.Leases6
		}
		bound.set(b)
		if err := s.Handle("GET "+configserver.DefaultPathPrefix, redactPath{handler}); err != nil {
			return err
		}
		if err := s.Handle(media.Pattern, mediaHandler); err != nil {
			return err
		}
		// The installer's check-in and result (the handler answers each
		// route's one method, 405 otherwise).
		return s.Handle("POST "+configserver.DefaultPathPrefix, redactPath{handler})
	}
	return w, nil
}

// redactPath keeps NoCloud credentials, which are a path segment, out of
// the HTTP boot server's access log: it logs a hash prefix instead.
type redactPath struct{ next http.Handler }

func (h redactPath) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p, ok := redactNoCloud(r.URL.Path); ok {
		httpboot.SetLogPath(r, p)
	}
	h.next.ServeHTTP(w, r)
}

// redactNoCloud replaces the credential segment of a NoCloud path.
func redactNoCloud(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, configserver.DefaultPathPrefix)
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 3 || parts[1] != "nocloud" {
		return "", false
	}
	tag := "redacted"
	if hash := bootcred.HashCredential(parts[2]); hash != "" {
		tag = "cred-sha256-" + hash[:12]
	}
	parts[2] = tag
	return configserver.DefaultPathPrefix + strings.Join(parts, "/"), true
}

// mediaIPXE is the iPXE EFI build the virtual media ISOs boot: patched to
// run the ISO's autoexec.ipxe and, with HTTPS, to trust the boot server's
// CA (else it could not fetch its script from an https:// base URL).
func mediaIPXE(bootCA []byte) ([]byte, error) {
	efi, err := ipxebin.Autoexec(ipxebin.EFI.Data)
	if err != nil {
		return nil, fmt.Errorf("delivery: virtual media: %w", err)
	}
	if bootCA == nil {
		return efi, nil
	}
	efi, err = ipxebin.Trust(ipxebin.Build{Name: ipxebin.EFI.Name, Data: efi}, bootCA)
	if err != nil {
		return nil, fmt.Errorf("delivery: virtual media with HTTPS: %w", err)
	}
	return efi, nil
}
