package delivery

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/join/csr"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/render"
)

// Bootstrap tokens live in kube-system: Mint creates them, reuse reads the
// Secret's token-secret, Refresh updates the expiration.
// Tokens.Cache watches them (list;watch).
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=secrets,verbs=get;list;watch;create;update,roleName=anvil-pxe-bootstrap-tokens

// ProviderIDPrefix starts every providerID Anvil hands out: anvil://<host-uid>.
const ProviderIDPrefix = metalv1.ProviderIDPrefix

// ConfigsOptions configure Configs.
type ConfigsOptions struct {
	// Client reads Hosts, Machines and MachineClasses (the manager's
	// cache). Required.
	Client client.Reader
	// Writer stores the agent credential's hash in Host status. Without
	// it configs carry no agent credential.
	Writer client.Client
	// APIReader re-reads a Host around the cache when a status write
	// conflicted (mgr.GetAPIReader()); default Client.
	APIReader client.Reader
	// Clientset lists, reads and mints bootstrap tokens. Required.
	Clientset kubernetes.Interface
	// Tokens finds the management cluster's tokens (a started
	// *token.Cache); nil: a LIST through Clientset per lookup. Tokens of
	// target clusters (spec.join.kubeconfigSecretRef) are always listed
	// directly. If it also has Remember(token.Token), freshly minted
	// tokens are reported to it.
	Tokens token.Lister
	// Renderer renders and caches configs (shared with the MachineClass
	// controller); a new one if nil.
	Renderer *render.Renderer
	// CACertPEM is the cluster CA bundle the kubelet trusts. Required; the
	// first certificate's hash becomes Join.CACertHash.
	CACertPEM []byte
	// APIServerEndpoint for classes without spec.join.apiServerEndpoint.
	APIServerEndpoint string
	// BaseURL is the HTTP boot server as hosts reach it; it becomes
	// Agent.Endpoint and the base of Join.KubeletURL. Empty: the local
	// address the config request came in on.
	BaseURL string
	// TokenTTL for classes without spec.join.tokenTTL (token.DefaultTTL).
	TokenTTL time.Duration
	// KubeadmGroup adds kubeadm's node token group to minted tokens, for
	// clusters whose bootstrap RBAC kubeadm set up.
	KubeadmGroup bool
	// Targets resolves classes with spec.join.kubeconfigSecretRef to the
	// cluster their Machines join: the token is minted there, and the
	// config carries that cluster's endpoint and CA. Without it such
	// classes get no config.
	Targets *cluster.Registry
	// Logger, unless the request context carries one.
	Logger logr.Logger
	// Now returns the current time (time.Now if nil).
	Now func() time.Time
}

// Configs implements configserver.ConfigSource for Hosts held by Machines.
type Configs struct {
	o      ConfigsOptions
	caHash string
	flight singleflight.Group // one token lookup-or-mint per Machine at a time
	agent  agentCreds         // the agent credential of each boot
}

var _ configserver.ConfigSource = (*Configs)(nil)

// NewConfigs returns Configs.
func NewConfigs(o ConfigsOptions) (*Configs, error) {
	if o.Client == nil || o.Clientset == nil {
		return nil, errors.New("delivery: ConfigsOptions needs Client and Clientset")
	}
	caHash, err := token.CACertHash(o.CACertPEM)
	if err != nil {
		return nil, fmt.Errorf("delivery: CACertPEM: %w", err)
	}
	if o.Renderer == nil {
		o.Renderer = render.NewRenderer(render.Options{})
	}
	if o.APIReader == nil {
		o.APIReader = o.Client
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = token.DefaultTTL
	}
	if o.Tokens == nil {
		o.Tokens = token.Direct{Clientset: o.Clientset}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Configs{o: o, caHash: caHash}, nil
}

// Ignition implements configserver.ConfigSource for Butane classes.
func (c *Configs) Ignition(ctx context.Context, host bootcred.HostKey, mac string) ([]byte, error) {
	t, err := c.target(ctx, host)
	if err != nil {
		return nil, err
	}
	cfg := t.class.Spec.Config
	if wiping(t.host) && (cfg.Format == FormatButane || wipeFormat(t.class) == FormatButane) {
		return c.wipeIgnition(ctx, t)
	}
	if cfg.Format != FormatButane {
		return nil, fmt.Errorf("MachineClass %s has format %q: %w", t.classKey(), cfg.Format, configserver.ErrNoConfig)
	}
	if bootstrapSecret(t.machine) != "" {
		out, err := c.bootstrapIgnition(ctx, t)
		c.recordRender(ctx, t.host, err)
		return out, err
	}
	out, err := func() ([]byte, error) {
		vars, err := c.vars(ctx, t)
		if err != nil {
			return nil, err
		}
		return c.o.Renderer.Ignition(ctx, cfg.Template, render.Variant(cfg.Variant), vars)
	}()
	c.recordRender(ctx, t.host, err)
	return out, err
}

// NoCloud implements configserver.ConfigSource for cloud-init classes.
func (c *Configs) NoCloud(ctx context.Context, host bootcred.HostKey, mac string) (*render.NoCloud, error) {
	t, err := c.target(ctx, host)
	if err != nil {
		return nil, err
	}
	cfg := t.class.Spec.Config
	if cfg.Format != FormatCloudInit {
		return nil, fmt.Errorf("MachineClass %s has format %q: %w", t.classKey(), cfg.Format, configserver.ErrNoConfig)
	}
	if wiping(t.host) {
		return c.wipeNoCloud(ctx, t)
	}
	if bootstrapSecret(t.machine) != "" {
		out, err := c.bootstrapSeed(ctx, t)
		c.recordRender(ctx, t.host, err)
		return out, err
	}
	out, err := func() (*render.NoCloud, error) {
		vars, err := c.vars(ctx, t)
		if err != nil {
			return nil, err
		}
		return c.o.Renderer.NoCloud(ctx, render.NoCloudTemplates{
			UserData: cfg.Template, VendorData: cfg.VendorData, NetworkConfig: cfg.NetworkConfig,
		}, vars)
	}()
	c.recordRender(ctx, t.host, err)
	return out, err
}

// Vars returns the template variables of the Host's config, minting the
// bootstrap token if its Machine has no valid one and issuing the agent
// credential of this boot; a Machine with bootstrap data
// (spec.bootstrap.dataSecretName) has none, and gets an error. It is what
// Ignition and NoCloud render with, exported for callers that add their
// own values (copy, then render).
func (c *Configs) Vars(ctx context.Context, host bootcred.HostKey) (render.Vars, error) {
	t, err := c.target(ctx, host)
	if err != nil {
		return render.Vars{}, err
	}
	if name := bootstrapSecret(t.machine); name != "" {
		return render.Vars{}, fmt.Errorf("machine %s/%s boots with bootstrap data Secret %s (spec.bootstrap.dataSecretName): it has no template variables", t.machine.Namespace, t.machine.Name, name)
	}
	return c.vars(ctx, t)
}

// target is a Host with its Machine and MachineClass.
type target struct {
	host    *metalv1.Host
	machine *metalv1.Machine
	class   *metalv1.MachineClass
}

func (t target) classKey() types.NamespacedName {
	return types.NamespacedName{Namespace: t.class.Namespace, Name: t.class.Name}
}

// target reads the Host behind a verified credential, the Machine holding
// it and the Machine's class. A Host that was replaced or is held by no
// Machine has no config (ErrNoConfig: 404).
func (c *Configs) target(ctx context.Context, host bootcred.HostKey) (target, error) {
	var t target
	key := types.NamespacedName{Namespace: host.Namespace, Name: host.Name}
	t.host = &metalv1.Host{}
	if err := c.o.Client.Get(ctx, key, t.host); err != nil {
		return t, notFoundIsNoConfig(err, "host "+key.String())
	}
	if host.UID != "" && string(t.host.UID) != host.UID {
		return t, fmt.Errorf("host %s was replaced: %w", key, configserver.ErrNoConfig)
	}
	ref := t.host.Spec.ConsumerRef
	if ref == nil || ref.Name == "" || (ref.Kind != "" && ref.Kind != "Machine") {
		return t, fmt.Errorf("host %s is held by no Machine: %w", key, configserver.ErrNoConfig)
	}
	mkey := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
	if mkey.Namespace == "" {
		mkey.Namespace = t.host.Namespace
	}
	t.machine = &metalv1.Machine{}
	if err := c.o.Client.Get(ctx, mkey, t.machine); err != nil {
		return t, notFoundIsNoConfig(err, "machine "+mkey.String())
	}
	if ref.UID != "" && ref.UID != t.machine.UID {
		return t, fmt.Errorf("machine %s was replaced: %w", mkey, configserver.ErrNoConfig)
	}
	ckey := types.NamespacedName{Namespace: t.machine.Namespace, Name: t.machine.Spec.MachineClassRef.Name}
	t.class = &metalv1.MachineClass{}
	if err := c.o.Client.Get(ctx, ckey, t.class); err != nil {
		return t, notFoundIsNoConfig(err, "MachineClass "+ckey.String())
	}
	return t, nil
}

func notFoundIsNoConfig(err error, what string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s not found: %w", what, configserver.ErrNoConfig)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

// vars builds the template variables. Everything that can be wrong with
// the class is checked before a token is minted.
func (c *Configs) vars(ctx context.Context, t target) (render.Vars, error) {
	h, m, class := t.host, t.machine, t.class
	kubelet, err := c.machineKubelet(ctx, t)
	if err != nil {
		return render.Vars{}, err
	}
	join, err := c.joinTarget(ctx, t)
	if err != nil {
		return render.Vars{}, err
	}
	base, err := baseURL(ctx, c.o.BaseURL)
	if err != nil {
		return render.Vars{}, err
	}
	ttl := c.o.TokenTTL
	if d := class.Spec.Join.TokenTTL; d != nil && d.Duration > 0 {
		ttl = d.Duration
	}
	tok, err := c.token(ctx, join, h, m, ttl)
	if err != nil {
		return render.Vars{}, err
	}
	agentCred, err := c.agentCredential(ctx, h)
	if err != nil {
		return render.Vars{}, err
	}
	labels := make(map[string]string, len(h.Labels))
	for k, v := range h.Labels {
		labels[k] = v
	}
	return render.Vars{
		Hostname:      hostname(h),
		MACs:          bootMACs(h),
		Addresses:     addresses(h, c.o.Now()),
		FailureDomain: h.Labels[metalv1.LabelFailureDomain],
		Labels:        labels,
		Join: render.Join{
			APIServerEndpoint: join.endpoint,
			Token:             tok,
			CACertHash:        join.caHash,
			CACertPEM:         string(join.caPEM),
			NodeName:          csr.NodeNameFor(m),
			ProviderID:        ProviderIDPrefix + string(h.UID),
			KubeletVersion:    kubelet.version,
			KubeletURL:        kubelet.url,
			KubeletSHA256:     kubelet.sha256,
		},
		Agent:       render.Agent{Endpoint: base, Credential: agentCred},
		Extra:       map[string]string{},
		SecretExtra: map[string]string{},
	}, nil
}

// hostKubelet is the kubelet a Host's config installs: its version and
// where Anvil serves it.
type hostKubelet struct{ version, url, sha256 string }

// machineKubelet is the kubelet of t's Machine (kubeletVersion) from its
// class; an error names the class and the version it lacks.
func (c *Configs) machineKubelet(ctx context.Context, t target) (hostKubelet, error) {
	version := kubeletVersion(t.host, t.machine)
	k, ok := kubeletFor(t.class, version)
	if !ok {
		return hostKubelet{}, fmt.Errorf("MachineClass %s has no kubelet for version %s (spec.kubelets) for Machine %s/%s", t.classKey(), version, t.machine.Namespace, t.machine.Name)
	}
	base, err := baseURL(ctx, c.o.BaseURL)
	if err != nil {
		return hostKubelet{}, err
	}
	return hostKubelet{version: version, url: base + index.ArtifactURLPrefix + index.KubeletPath(t.classKey(), k), sha256: k.SHA256}, nil
}

// kubeletVersion is the kubelet the Host's config installs: spec.version
// for a first boot; for a rejoin, the version the Machine's Node last ran
// (status.version): an in-place upgrade moved it there, and a failed one
// rolled back from spec.version, which the host must not boot into.
func kubeletVersion(h *metalv1.Host, m *metalv1.Machine) string {
	if rejoining(h) && m.Status.Version != "" {
		return m.Status.Version
	}
	return m.Spec.Version
}

func kubeletFor(c *metalv1.MachineClass, version string) (metalv1.KubeletArtifact, bool) {
	for _, k := range c.Spec.Kubelets {
		if k.Version == version {
			return k, true
		}
	}
	return metalv1.KubeletArtifact{}, false
}

// hostname is what DHCP hands out too (pxe/index): spec.network.hostname,
// else the Host's name.
func hostname(h *metalv1.Host) string { return h.NodeHostname() }

func bootMACs(h *metalv1.Host) []string {
	out := make([]string, 0, len(h.Spec.BootMACs))
	for _, m := range h.Spec.BootMACs {
		if n, err := bootcred.NormalizeMAC(m); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// addresses are the Host's static addresses (IPv4, then IPv6), else the
// unexpired DHCP leases of its boot MACs, in boot MAC order.
func addresses(h *metalv1.Host, now time.Time) []string {
	out := []string{}
	if n := h.Spec.Network; n != nil {
		for _, a := range []string{n.Address, n.Address6} {
			if p, err := netip.ParsePrefix(strings.TrimSpace(a)); err == nil {
				out = append(out, p.Addr().String())
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, mac := range bootMACs(h) {
		for _, l := range h.Status.Leases {
			if n, err := bootcred.NormalizeMAC(l.MAC); err != nil || n != mac || !l.ExpiresAt.After(now) {
				continue
			}
			if ip, err := netip.ParseAddr(l.IP); err == nil {
				out = append(out, ip.String())
			}
		}
	}
	return out
}

// token returns the Machine's valid Anvil bootstrap token minted for this
// Host, or mints one. Concurrent calls for one Machine (cloud-init fetching
// its files) share one lookup and at most one mint.
func (c *Configs) token(ctx context.Context, join joinParams, h *metalv1.Host, m *metalv1.Machine, ttl time.Duration) (string, error) {
	v, err, _ := c.flight.Do(string(m.UID)+"/"+string(h.UID), func() (any, error) {
		return c.tokenOnce(ctx, join, h, m, ttl)
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func (c *Configs) tokenOnce(ctx context.Context, join joinParams, h *metalv1.Host, m *metalv1.Machine, ttl time.Duration) (string, error) {
	cs := join.clientset
	log := c.o.Logger
	if l, err := logr.FromContext(ctx); err == nil {
		log = l
	}
	log = log.WithValues("machine", m.Namespace+"/"+m.Name, "host", h.Namespace+"/"+h.Name)
	infos, err := join.tokens.List(ctx, token.ListOptions{MachineUID: m.UID, HostUID: h.UID})
	if err != nil {
		return "", err
	}
	now := c.o.Now()
	var best *token.Info
	for i := range infos {
		inf := &infos[i]
		if inf.Expiration.After(now) && (best == nil || inf.Expiration.After(best.Expiration)) {
			best = inf
		}
	}
	if best != nil {
		value, err := readToken(ctx, cs, best.ID, m.UID)
		switch {
		case err == nil:
			if best.Expiration.Sub(now) < ttl/2 {
				// Not much left of it: give the host the full TTL to join.
				if _, err := token.Refresh(ctx, cs, best.ID, ttl); err != nil {
					if !errors.Is(err, token.ErrExpired) && !errors.Is(err, token.ErrNotFound) {
						return "", err
					}
					break // gone or expired meanwhile: mint a new one
				}
			}
			log.V(1).Info("reusing bootstrap token", "tokenID", best.ID)
			return value, nil
		case errors.Is(err, token.ErrNotFound):
			// revoked meanwhile: mint
		default:
			return "", err
		}
	}
	tok, err := token.Mint(ctx, cs, token.MintOptions{
		Owner: token.Owner{
			Host:    token.ObjectRef{Namespace: h.Namespace, Name: h.Name, UID: h.UID},
			Machine: token.ObjectRef{Namespace: m.Namespace, Name: m.Name, UID: m.UID},
		},
		TTL:          ttl,
		KubeadmGroup: c.o.KubeadmGroup,
		Now:          c.o.Now,
	})
	if err != nil {
		return "", err
	}
	if r, ok := join.tokens.(interface{ Remember(token.Token) }); ok {
		r.Remember(tok) // the next lookup finds it even if the informer lags
	}
	log.Info("minted bootstrap token", "token", tok, "expires", tok.Expiration)
	return tok.Value(), nil
}

// readToken returns "<id>.<secret>" of an Anvil token owned by the Machine.
// token.List reports tokens without their secret; the config needs it.
func readToken(ctx context.Context, cs kubernetes.Interface, id string, machineUID types.UID) (string, error) {
	s, err := cs.CoreV1().Secrets(token.Namespace).Get(ctx, bootstraputil.BootstrapTokenSecretName(id), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", token.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("reading bootstrap token %s: %w", id, err)
	}
	if s.Type != bootstrapapi.SecretTypeBootstrapToken || s.Labels[token.LabelManagedBy] != token.ManagedByValue ||
		s.Labels[token.LabelMachineUID] != string(machineUID) {
		return "", fmt.Errorf("bootstrap token %s: %w", id, token.ErrNotManaged)
	}
	v := bootstraputil.TokenFromIDAndSecret(string(s.Data[bootstrapapi.BootstrapTokenIDKey]), string(s.Data[bootstrapapi.BootstrapTokenSecretKey]))
	if !bootstraputil.IsValidBootstrapToken(v) || string(s.Data[bootstrapapi.BootstrapTokenIDKey]) != id {
		return "", fmt.Errorf("bootstrap token %s is malformed", id)
	}
	return v, nil
}

// joinParams are what a config needs of the cluster its Machine joins.
type joinParams struct {
	clientset kubernetes.Interface
	tokens    token.Lister
	endpoint  string
	caHash    string
	caPEM     []byte
}

// joinTarget is the management cluster, or the class's target cluster
// (spec.join.kubeconfigSecretRef): a token minted anywhere else would be
// valid in the wrong cluster. The class's apiServerEndpoint wins over the
// kubeconfig's server, which may not be the address hosts reach.
func (c *Configs) joinTarget(ctx context.Context, t target) (joinParams, error) {
	class := t.class
	p := joinParams{clientset: c.o.Clientset, tokens: c.o.Tokens, endpoint: class.Spec.Join.APIServerEndpoint, caHash: c.caHash, caPEM: c.o.CACertPEM}
	if _, remote := cluster.SecretOf(class); remote {
		if c.o.Targets == nil {
			return p, fmt.Errorf("MachineClass %s: spec.join.kubeconfigSecretRef (another target cluster) is not configured in this anvil process", t.classKey())
		}
		tc, err := c.o.Targets.For(ctx, class)
		if err != nil {
			return p, err
		}
		// Another cluster: no informer runs there, list directly.
		p.clientset, p.tokens, p.caHash, p.caPEM = tc.Clientset, token.Direct{Clientset: tc.Clientset}, tc.CACertHash, tc.CACertPEM
		if p.endpoint == "" {
			p.endpoint = tc.Server
		}
		return p, nil
	}
	if p.endpoint == "" {
		p.endpoint = c.o.APIServerEndpoint
	}
	if p.endpoint == "" {
		return p, fmt.Errorf("MachineClass %s has no spec.join.apiServerEndpoint and no default is configured", t.classKey())
	}
	return p, nil
}
