package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/boot/hoststore"
	"anvil.dev/anvil/internal/ratelimit"
	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts;machines;machineclasses,verbs=get;list;watch,roleName=anvil-pxe
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts/status,verbs=patch,roleName=anvil-pxe

// Config formats of a MachineClass (spec.config.format).
const (
	FormatButane    = "butane"
	FormatCloudInit = "cloud-init"
)

// Kernel arguments Scripts adds.
const (
	// IgnitionPlatformArg tells Ignition it runs on bare metal.
	IgnitionPlatformArg = "ignition.platform.id=metal"
	ignitionURLArg      = "ignition.config.url="
	// noCloudArg: cloud-init before 24.1 (Debian 12 has 22.4) reads an
	// http seed only as nocloud-net; later versions accept both spellings.
	noCloudArg = "ds=nocloud-net;s="
)

// Results of a script request for a Host being provisioned: the values of
// the "result" label of anvil_boot_script_credentials_total.
const (
	// ResultIssued: the script carries a new credential.
	ResultIssued = "issued"
	// ResultSecondRequest: the boot's credential went out with an earlier
	// script; this one has none.
	ResultSecondRequest = "second_request"
	// ResultWrongAddress: the request came from another address than the
	// one the MAC is bound to (or the MAC is bound to none); it got the
	// outsider's script, which is ExitScript.
	ResultWrongAddress = "wrong_address"
	// ResultRateLimited: the source address asked too often (any MAC);
	// it got 429.
	ResultRateLimited = "rate_limited"
	// ResultBootChanged: the API server showed the Host in another boot
	// than the informer did (or its status kept changing); no credential
	// was issued, and the host got BootChangedScript, which asks again.
	ResultBootChanged = "boot_changed"
)

// Defaults of ScriptRate: a host asks for its script a few times per boot
// at most, so 20 in a row and then one a second holds up no host, even a
// thousand booting at once (each has its own address), while one address
// walking the MAC space gets one MAC a second.
const (
	DefaultScriptBurst  = 20
	DefaultScriptRefill = time.Second
)

// ScriptRate limits script requests per source address (IPv6 per /64).
type ScriptRate struct {
	// Burst is how many requests an address may make in a row
	// (DefaultScriptBurst if 0; negative: no limit).
	Burst int
	// Refill is how long it takes to earn one more (DefaultScriptRefill
	// if 0).
	Refill time.Duration
}

func (r ScriptRate) limiter() *ratelimit.Limiter {
	if r.Burst < 0 {
		return nil
	}
	if r.Burst == 0 {
		r.Burst = DefaultScriptBurst
	}
	if r.Refill <= 0 {
		r.Refill = DefaultScriptRefill
	}
	return ratelimit.New(ratelimit.Options{Burst: r.Burst, Refill: r.Refill})
}

// HostIndex is what Scripts needs of the boot index; *index.Index
// implements it.
type HostIndex interface {
	// Host returns the cached Host owning mac (read-only).
	Host(mac net.HardwareAddr) (*metalv1.Host, bool)
	// BootSpec returns the kernel, initrds and arguments of the Host's class.
	BootSpec(ctx context.Context, host pxe.HostRecord) (httpboot.BootSpec, error)
}

// AddressSource tells which address a MAC is bound to (its static address
// or its DHCP lease); *index.LeaseStore implements it.
type AddressSource interface {
	AddressOf(mac net.HardwareAddr) (netip.Addr, bool)
}

// CredentialOptions tune the boot credentials (bootcred defaults if zero).
type CredentialOptions struct {
	// TTL of an unused credential (bootcred.DefaultTTL).
	TTL time.Duration
	// Grace is how long the first user's address may present it again
	// (bootcred.DefaultGrace): Ignition retries, cloud-init's four files.
	Grace time.Duration
}

// ScriptsOptions configure Scripts.
type ScriptsOptions struct {
	// Index answers which Host owns a MAC and what it boots. Required.
	Index HostIndex
	// Leases, if set, binds each MAC to its address (full DHCP mode): a
	// script request from elsewhere, or for a MAC without an address, gets
	// the outsider's script. Nil in proxy-DHCP mode, where Hosts' static
	// addresses bind, and Binding says what happens without one.
	Leases AddressSource
	// Leases6, if set, binds each MAC's IPv6 requests to its DHCPv6
	// address (the DHCPv6 server's, in memory).
	Leases6 AddressSource
	// Binding is BindAddress (default) or BindFirstRequest.
	Binding string
	// Rate limits requests per source address.
	Rate ScriptRate
	// Client reads Machines and MachineClasses (the manager's cache) and
	// patches Host status. Required.
	Client client.Client
	// APIReader re-reads a Host when the cache is behind (default Client).
	APIReader client.Reader
	// BaseURL is the HTTP boot server as hosts reach it, e.g.
	// "http://10.0.0.1". Empty: taken from the local address the script
	// request came in on.
	BaseURL string
	// Credentials tune the boot credentials.
	Credentials CredentialOptions
	// RetryDelay for hosts that are unknown or not accepted (default 10s).
	RetryDelay time.Duration
	// Registerer receives anvil_boot_script_credentials_total; nil keeps
	// it private. Registering it twice reuses the first.
	Registerer prometheus.Registerer
	// Logger, unless the request context carries one.
	Logger logr.Logger
	// Now returns the current time (time.Now if nil).
	Now func() time.Time
}

// Scripts is the httpboot.ScriptSource that puts a Host's config URL, with
// a one-time boot credential, on the kernel command line. See the package
// documentation for the rules.
type Scripts struct {
	o       ScriptsOptions
	bind    binding
	limiter *ratelimit.Limiter // nil: no limit
	results *prometheus.CounterVec
}

var _ httpboot.ScriptSource = (*Scripts)(nil)

// NewScripts returns Scripts.
func NewScripts(o ScriptsOptions) (*Scripts, error) {
	if o.Index == nil || o.Client == nil {
		return nil, errors.New("delivery: ScriptsOptions needs Index and Client")
	}
	if o.APIReader == nil {
		o.APIReader = o.Client
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	mode, err := ParseBinding(o.Binding)
	if err != nil {
		return nil, fmt.Errorf("delivery: %w", err)
	}
	o.Binding = mode
	s := &Scripts{o: o, limiter: o.Rate.limiter(), results: scriptResults(o.Registerer)}
	s.bind = binding{leases: o.Leases, leases6: o.Leases6, hosts: o.Index.Host, mode: mode}
	return s, nil
}

// scriptResults returns the counter, registered once per registry.
func scriptResults(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "anvil_boot_script_credentials_total",
		Help: "iPXE script requests for Hosts being provisioned, by result: issued (with a new boot credential), second_request or wrong_address (without one); and rate_limited requests (429) for any MAC.",
	}, []string{"result"})
	for _, r := range []string{ResultIssued, ResultSecondRequest, ResultWrongAddress, ResultRateLimited} {
		c.WithLabelValues(r) // zeros, not gaps
	}
	if reg != nil {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
					return existing
				}
			}
		}
	}
	return c
}

// Script implements httpboot.ScriptSource.
func (s *Scripts) Script(ctx context.Context, req httpboot.ScriptRequest) ([]byte, error) {
	log := s.o.Logger
	if l, err := logr.FromContext(ctx); err == nil {
		log = l
	}
	remote := req.RemoteAddr.Addr().Unmap().WithZone("")
	// Before anything depends on the MAC, so that the limit says nothing
	// about it.
	if s.limiter != nil && !s.limiter.Take(remote) {
		s.results.WithLabelValues(ResultRateLimited).Inc()
		log.V(1).Info("boot script request refused: too many from this address", "remote", remote.String())
		return nil, httpboot.ErrRateLimited
	}
	h, ok := s.o.Index.Host(req.MAC)
	var known *metalv1.Host
	if ok {
		known = h
	}
	// Whoever is not at the MAC's address gets one answer, whatever the
	// MAC's state (unknown, idle, provisioning): an outsider learns
	// nothing, and an idle host, whose answer it is anyway, still boots
	// from disk. Without an address, only BindFirstRequest in proxy mode
	// goes on.
	if bound, hasAddr, required := s.bind.bound(req.MAC, known, remote.Is6()); (hasAddr && bound != remote) || (!hasAddr && required) {
		b := "none"
		if hasAddr {
			b = bound.String()
		}
		return s.outsider(known, log.WithValues("mac", pxe.MACKey(req.MAC), "remote", remote.String(), "bound", b))
	}
	if !ok {
		return httpboot.UnknownHostScript(req.MAC, s.o.RetryDelay), nil
	}
	d := index.Decide(h)
	switch {
	case !d.Accepted:
		return httpboot.UnknownHostScript(req.MAC, s.o.RetryDelay), nil
	case !d.PXE:
		return httpboot.ExitScript(), nil
	}
	mac := pxe.MACKey(req.MAC)
	key := types.NamespacedName{Namespace: h.Namespace, Name: h.Name}
	log = log.WithValues("host", key.String(), "mac", mac)
	spec, err := s.o.Index.BootSpec(ctx, pxe.HostRecord{Namespace: h.Namespace, Name: h.Name})
	if err != nil {
		return nil, fmt.Errorf("boot spec for %s: %w", key, err)
	}
	spec = httpboot.WithCAInitrd(ctx, spec) // HTTPS: the OS trusts the boot server's CA
	if remote.Is6() {
		spec.Args = ipv6BootArgs(spec.Args, req.MAC)
	}
	if !credentialed(h) {
		return httpboot.BootScript(spec)
	}
	if installed(h) {
		// The image is on the disk and the OS there has yet to use this
		// boot's credential: boot it, and issue nothing that would void it.
		log.V(1).Info("boot script: image installed in this boot; exit to the disk", "bootRequest", h.Status.BootRequestID)
		return httpboot.ExitScript(), nil
	}
	class, err := s.classOf(ctx, h)
	if err != nil {
		return nil, err
	}
	if rejoining(h) && class.Spec.Image != nil {
		// An installed Host boots its disk; only diskless classes rejoin
		// by network boot (the Machine controller arms no other).
		log.V(1).Info("boot script: rejoin of a class with spec.image; exit to the disk", "bootRequest", h.Status.BootRequestID)
		return httpboot.ExitScript(), nil
	}
	format := class.Spec.Config.Format
	if wiping(h) {
		format = wipeFormat(class)
	}
	if format != FormatButane && format != FormatCloudInit {
		return nil, fmt.Errorf("MachineClass %s/%s: unknown config format %q", class.Namespace, class.Name, format)
	}
	bootID := h.Status.BootRequestID
	log = log.WithValues("bootRequest", bootID)

	base, err := baseURL(ctx, s.o.BaseURL)
	if err != nil {
		return nil, err
	}
	host := bootcred.HostKey{Namespace: h.Namespace, Name: h.Name, UID: string(h.UID)}
	cred, rec, err := s.issue(ctx, host, h.Spec.BootMACs, bootID, remote)
	switch {
	case errors.Is(err, errAlreadyServed):
		return s.withheld(spec, format, ResultSecondRequest, log.WithValues("remote", remote.String()))
	case errors.Is(err, errBootChanged), errors.Is(err, errConflict):
		// What this answer was decided on is stale: the host asks again,
		// by then answered from an informer that has caught up. (A 500
		// ended the boot, and the Machine waited out its boot timeout.)
		s.results.WithLabelValues(ResultBootChanged).Inc()
		log.Info("boot script: the Host's boot changed while answering; the host will ask again", "reason", err.Error(),
			"retryAfter", bootChangedRetry)
		return httpboot.BootChangedScript(req.MAC, bootChangedRetry), nil
	case err != nil:
		return nil, err
	}
	args := configArgs(format, base+configserver.DefaultPathPrefix, mac, cred)
	if installing(h, class) {
		// The installer checks in with the credential and hands the seed
		// (with it, unused) to the OS it writes.
		args = []string{agent.InstallArg + "=" + configserver.InstallPlanURL(base+configserver.DefaultPathPrefix, mac, cred)}
	}
	spec.Args = append(slices.Clone(spec.Args), args...)
	script, err := httpboot.BootScript(spec)
	if err != nil {
		// The credential is spent (the script was recorded as served)
		// but never sent: this boot fails, loudly, in the log.
		return nil, fmt.Errorf("boot script for %s: %w", key, err)
	}
	s.results.WithLabelValues(ResultIssued).Inc()
	log.Info("boot script with credential served", "credHash", rec.HashPrefix(), "expires", rec.ExpiresAt, "remote", remote.String())
	return script, nil
}

// ipv6BootArgs adds, for a host that network-booted over IPv6, dracut's
// ip=dhcp6 (the OS configures the boot NIC by DHCPv6 and router
// advertisements, as its firmware and iPXE did, and gets the same address:
// Anvil's DHCPv6 leases by MAC) and pxelinux's BOOTIF=01-<mac> naming that
// NIC, unless the class's arguments already say how (an ip= or BOOTIF=).
func ipv6BootArgs(args []string, mac net.HardwareAddr) []string {
	hasIP, hasBootIf := false, false
	for _, a := range args {
		hasIP = hasIP || strings.HasPrefix(a, "ip=")
		hasBootIf = hasBootIf || strings.HasPrefix(a, "BOOTIF=")
	}
	args = slices.Clone(args)
	if !hasIP {
		args = append(args, "ip=dhcp6")
	}
	if !hasBootIf && len(mac) > 0 {
		args = append(args, "BOOTIF=01-"+strings.ReplaceAll(mac.String(), ":", "-"))
	}
	return args
}

// provisioning reports whether the Host's network boot is the install of
// its Machine (not a wipe).
func provisioning(h *metalv1.Host) bool {
	if h.Status.State != metalv1.HostProvisioning {
		return false
	}
	br := h.Spec.BootRequest
	return br != nil && (br.Purpose == "" || br.Purpose == metalv1.BootPurposeProvision)
}

// rejoining reports whether the Host is a provisioned diskless Host whose
// next network boot is armed (a Rejoin request): it gets its Machine's
// config again, with a new credential per request ID.
func rejoining(h *metalv1.Host) bool {
	br := h.Spec.BootRequest
	return h.Status.State == metalv1.HostProvisioned && br != nil && br.Purpose == metalv1.BootPurposeRejoin
}

// credentialed reports whether the Host's network boot gets a credential.
func credentialed(h *metalv1.Host) bool { return provisioning(h) || wiping(h) || rejoining(h) }

// wiping reports whether the Host network-boots to wipe its disks: it gets
// a config too, holding only what its agent needs to fetch the wipe action
// (no join secrets).
func wiping(h *metalv1.Host) bool {
	br := h.Spec.BootRequest
	return h.Status.State == metalv1.HostDeprovisioning && br != nil && br.Purpose == metalv1.BootPurposeWipe
}

// configArgs are the kernel arguments that point the OS at its config.
func configArgs(format, configBase, mac, cred string) []string {
	switch format {
	case FormatButane:
		return []string{ignitionURLArg + configserver.IgnitionURL(configBase, mac, cred), IgnitionPlatformArg}
	case FormatCloudInit:
		return []string{noCloudArg + configserver.NoCloudSeedURL(configBase, mac, cred)}
	}
	return nil
}

// outsider answers a request that is not from the MAC's address: the
// script of an idle Host, byte for byte. A Host in a credentialed boot is
// counted and logged (that is someone else asking for its script, or a
// Host whose address Anvil does not know).
func (s *Scripts) outsider(h *metalv1.Host, log logr.Logger) ([]byte, error) {
	if h != nil && index.Decide(h).PXE && credentialed(h) {
		s.results.WithLabelValues(ResultWrongAddress).Inc()
		log = log.WithValues("host", h.Namespace+"/"+h.Name, "bootRequest", h.Status.BootRequestID)
		if s.o.Leases == nil && s.o.Binding == BindAddress {
			log.Info("boot script served WITHOUT credential: not from the Host's address; in proxy DHCP mode only a Host with spec.network.address gets one (or run with --boot-credential-binding=first-request)", "reason", ResultWrongAddress)
		} else {
			log.Info("boot script served WITHOUT credential: not from the address the MAC is bound to", "reason", ResultWrongAddress)
		}
	} else {
		log.V(1).Info("boot script request not from the MAC's address; answered as for an idle host")
	}
	return httpboot.ExitScript(), nil
}

// withheld is the script of a request that gets no credential: the boot
// spec without a config URL, and a line on the console saying why.
func (s *Scripts) withheld(spec httpboot.BootSpec, format, result string, log logr.Logger) ([]byte, error) {
	s.results.WithLabelValues(result).Inc()
	log.Info("boot script served WITHOUT credential; this boot gets no config", "reason", result)
	if format == FormatButane && !slices.Contains(spec.Args, IgnitionPlatformArg) {
		spec.Args = append(slices.Clone(spec.Args), IgnitionPlatformArg)
	}
	script, err := httpboot.BootScript(spec)
	if err != nil {
		return nil, err
	}
	note := "echo Anvil: no boot credential in this script (" + result + "), the OS will get no config\n"
	return append([]byte("#!ipxe\n"+note), bytes.TrimPrefix(script, []byte("#!ipxe\n"))...), nil
}

// classOf returns the MachineClass of the Machine holding h, from the cache.
func (s *Scripts) classOf(ctx context.Context, h *metalv1.Host) (*metalv1.MachineClass, error) {
	ref := h.Spec.ConsumerRef
	if ref == nil || ref.Name == "" {
		return nil, fmt.Errorf("host %s/%s is held by no Machine", h.Namespace, h.Name)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = h.Namespace
	}
	m := &metalv1.Machine{}
	if err := s.o.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, m); err != nil {
		return nil, fmt.Errorf("machine of host %s/%s: %w", h.Namespace, h.Name, err)
	}
	c := &metalv1.MachineClass{}
	if err := s.o.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.MachineClassRef.Name}, c); err != nil {
		return nil, fmt.Errorf("MachineClass of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	return c, nil
}

// issue creates the boot's credential with bootcred, through a Store that
// records it, bound to bootID and marked served, in one conditional write.
func (s *Scripts) issue(ctx context.Context, host bootcred.HostKey, macs []string, bootID string, to netip.Addr) (string, bootcred.Record, error) {
	m := bootcred.New(bootcred.Options{
		Store: &bootStore{client: s.o.Client, apiReader: s.o.APIReader, bootID: bootID, servedTo: to.String()},
		TTL:   s.o.Credentials.TTL, Grace: s.o.Credentials.Grace, Now: s.o.Now,
	})
	return m.Issue(ctx, host, macs, bootcred.IssueOptions{})
}

var (
	// errAlreadyServed: the boot's credential went out with an earlier script.
	errAlreadyServed = errors.New("the boot credential of this boot was already served")
	// errBootChanged: the Host is no longer in the boot the request was for.
	errBootChanged = errors.New("host is no longer in this network boot")
	errConflict    = errors.New("host status kept changing; giving up")
	errUnsupported = errors.New("delivery: the issuing store only writes")
)

// bootChangedRetry is how soon a host asks again after BootChangedScript:
// the informer is seldom more than a moment behind.
const bootChangedRetry = 2 * time.Second

// maxAttempts bounds the conditional write under conflicts.
const maxAttempts = 8

// bootStore is the bootcred.Store that Scripts issues through. Put writes
// the record into Host.status.bootCredential in the format of
// boot/hoststore (which reads and consumes it on the config path), plus
// BootRequestID and ScriptServedAt, and only if the Host is still in boot
// bootID and that boot's credential has not been served yet. The write is a
// merge patch with the resourceVersion it was decided on, so two requests
// racing (on one replica or two) cannot both succeed.
type bootStore struct {
	client    client.Client
	apiReader client.Reader
	bootID    string
	// servedTo is the address the script goes to: the config is bound to
	// it (the strictest binding where no lease or static address is known).
	servedTo string
}

func (b *bootStore) Put(ctx context.Context, rec bootcred.Record) error {
	key := types.NamespacedName{Namespace: rec.Host.Namespace, Name: rec.Host.Name}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		// The cache first; after a conflict, or when the cached copy says
		// no, the API server, since the cache may be behind.
		var r client.Reader = b.client
		if attempt > 0 {
			r = b.apiReader
		}
		h := &metalv1.Host{}
		if err := r.Get(ctx, key, h); err != nil {
			if apierrors.IsNotFound(err) && attempt == 0 {
				continue
			}
			return fmt.Errorf("reading host %s: %w", key, err)
		}
		if err := b.check(h, rec); err != nil {
			if attempt == 0 {
				continue
			}
			return err
		}
		before := h.DeepCopy()
		served := metav1.NewTime(rec.IssuedAt)
		h.Status.BootCredential = &metalv1.BootCredentialStatus{
			Hash:           rec.Hash,
			IssuedAt:       metav1.NewTime(rec.IssuedAt),
			ExpiresAt:      metav1.NewTime(rec.ExpiresAt),
			GraceSeconds:   rec.GraceSeconds,
			ScriptServedAt: &served,
			ScriptServedTo: b.servedTo,
			BootRequestID:  b.bootID,
		}
		err := b.client.Status().Patch(ctx, h, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(hoststore.FieldManager))
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("writing boot credential of host %s: %w", key, err)
		}
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("host %s: %w", key, errConflict)
}

// check decides on one version of the Host whether rec may be written.
func (b *bootStore) check(h *metalv1.Host, rec bootcred.Record) error {
	if rec.Host.UID != "" && string(h.UID) != rec.Host.UID {
		return fmt.Errorf("host %s/%s was replaced: %w", h.Namespace, h.Name, errBootChanged)
	}
	if !index.Decide(h).PXE || !credentialed(h) || h.Status.BootRequestID != b.bootID {
		return errBootChanged
	}
	if bc := h.Status.BootCredential; bc != nil && bc.BootRequestID == b.bootID && bc.ScriptServedAt != nil {
		return errAlreadyServed
	}
	return nil
}

func (b *bootStore) Get(context.Context, string) (bootcred.Record, error) {
	return bootcred.Record{}, errUnsupported
}

func (b *bootStore) Consume(context.Context, string, time.Time, string) (bootcred.Record, bool, error) {
	return bootcred.Record{}, false, errUnsupported
}

func (b *bootStore) Delete(context.Context, bootcred.HostKey) error { return errUnsupported }

// baseURL is explicit, or http://<the local address the request came in on>.
func baseURL(ctx context.Context, explicit string) (string, error) {
	if explicit != "" {
		return strings.TrimSuffix(explicit, "/"), nil
	}
	a, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return "", errors.New("delivery: no BaseURL configured and the request carries no local address")
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return "", fmt.Errorf("delivery: local address %q: %w", a.String(), err)
	}
	ip := ap.Addr().Unmap().WithZone("")
	if ip.IsUnspecified() {
		return "", errors.New("delivery: no BaseURL configured and the local address is unspecified")
	}
	// Same scheme as the request: an HTTPS boot never hands out http://.
	scheme, port := "http://", uint16(80)
	if httpboot.IsTLS(ctx) {
		scheme, port = "https://", 443
	}
	if ap.Port() == port {
		if ip.Is6() {
			return scheme + "[" + ip.String() + "]", nil
		}
		return scheme + ip.String(), nil
	}
	return scheme + netip.AddrPortFrom(ip, ap.Port()).String(), nil
}
