// Package configserver serves rendered provisioning configs to booting hosts
// against one-time boot credentials.
//
// Endpoints (below Options.PathPrefix, default "/config/"):
//
//	GET /config/<mac>/ignition?cred=<credential>
//	GET /config/<mac>/nocloud/<credential>/meta-data
//	GET /config/<mac>/nocloud/<credential>/user-data
//	GET /config/<mac>/nocloud/<credential>/vendor-data
//	GET /config/<mac>/nocloud/<credential>/network-config
//	POST /config/<mac>/install?cred=<credential>         (agent.InstallRequest -> agent.InstallPlan)
//	POST /config/<mac>/install/result?cred=<credential>  (agent.InstallResult)
//
// The install routes are the installer's (agent/install.go): they check the
// credential without spending it (InstallVerifier), so that the OS the
// installer writes can still fetch its NoCloud seed with it once.
//
// Where the credential goes:
//   - Ignition: the "cred" query parameter, as the iPXE script puts it on the
//     kernel command line: ignition.config.url=http://srv/config/<mac>/ignition?cred=...
//     A client that can set headers may instead send "Authorization: Bearer
//     <credential>" (or X-Anvil-Boot-Credential); a header wins over the query.
//   - NoCloud: a path segment. cloud-init's NoCloud "seedfrom" URL
//     (ds=nocloud-net;s=http://srv/config/<mac>/nocloud/<credential>/) is a base
//     to which cloud-init appends the file names, so a query parameter would
//     end up in front of the file name. The trailing slash is required.
//     NoCloudSeedURL and IgnitionURL build these URLs.
//
// A NoCloud class without vendor-data or network-config templates answers
// those files with 200 and an empty body (cloud-init treats that as absent;
// a 404 would make it retry ten times). A host without a config of the
// requested kind (ConfigSource returns ErrNoConfig) gets 404.
//
// A request is served only if the credential verifies for that MAC
// (bootcred), and the requester's address is the one the MAC is bound to
// (AddressBinding: the DHCP lease or the static address). Where no address
// is known, a RequiredBinding decides: refused (full DHCP mode: a MAC we
// leased nothing to), or served to the address that uses the credential
// first (proxy DHCP without static addresses, if so configured). Every
// refusal is a 403 with an empty body, counted by reason, and costs the
// address a token of the failure rate limiter. An address out of tokens
// gets 429, unless it presents a credential the Verifier knows for the MAC
// (Checker): a host sharing its address with somebody guessing still gets
// its config. Credentials are never logged, only a short prefix of their
// SHA-256. Responses carry Cache-Control: no-store.
//
// HEAD is answered 405 without looking at the credential: verifying
// consumes it, and rendering mints a bootstrap token.
//
// The client address is the TCP peer address; X-Forwarded-For is ignored
// because the service runs with host networking on the provisioning segment.
package configserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/internal/ratelimit"
	"anvil.dev/anvil/render"
)

// DefaultPathPrefix is where the handler expects its routes.
const DefaultPathPrefix = "/config/"

// CredentialQueryParam and CredentialHeader carry the credential for Ignition.
const (
	CredentialQueryParam = "cred"
	CredentialHeader     = "X-Anvil-Boot-Credential"
)

// ErrNoConfig is returned by a ConfigSource when the host has no config of
// the requested kind (for example NoCloud asked of an Ignition class, or no
// Machine is using the host). The handler answers 404.
var ErrNoConfig = errors.New("no config of this kind for the host")

// ConfigSource renders a host's config. The handler calls it only after the
// credential verified; host and mac are the verified ones.
type ConfigSource interface {
	Ignition(ctx context.Context, host bootcred.HostKey, mac string) ([]byte, error)
	NoCloud(ctx context.Context, host bootcred.HostKey, mac string) (*render.NoCloud, error)
}

// InstallSource answers an installer (see agent/install.go); the handler
// calls it only after the credential checked out for host and mac.
type InstallSource interface {
	// InstallPlan picks the root device among req.Disks and says what to
	// write. cred is the checked credential, for the plan's seed URL. An
	// error wrapping ErrNoConfig is a 404, an *InstallRefusal a 422.
	InstallPlan(ctx context.Context, host bootcred.HostKey, mac, cred string, req agent.InstallRequest) (*agent.InstallPlan, error)
	// InstallResult records how the install ended.
	InstallResult(ctx context.Context, host bootcred.HostKey, mac string, res agent.InstallResult) error
}

// InstallRefusal is an InstallSource's answer that the install cannot
// happen for a reason the installer should print (no disk matches the
// Host's spec.rootDeviceHints). Message must hold no secret.
type InstallRefusal struct {
	Reason  agent.InstallFailure
	Message string
}

func (e *InstallRefusal) Error() string { return e.Message }

// InstallVerifier checks a credential without consuming it;
// *bootcred.Manager implements it.
type InstallVerifier interface {
	Check(ctx context.Context, req bootcred.Request) (bootcred.Record, error)
}

// Verifier checks credentials; *bootcred.Manager implements it.
type Verifier interface {
	Verify(ctx context.Context, req bootcred.Request) (bootcred.Record, error)
}

// AddressBinding tells which address the DHCP service leased to a MAC.
type AddressBinding interface {
	// LeasedAddress returns the address leased to mac (normalized, lower
	// case with colons) in the request's family (v6: DHCPv6's, else
	// DHCPv4's), and false if none is known, as in proxy-DHCP mode.
	LeasedAddress(mac string, v6 bool) (netip.Addr, bool)
}

// RequiredBinding is an AddressBinding that also says whether a MAC with no
// known address may be served at all.
type RequiredBinding interface {
	AddressBinding
	// AddressRequired reports whether mac's config needs a known address
	// (true: refused without one).
	AddressRequired(mac string, v6 bool) bool
}

// Checker is implemented by Verifiers that can tell cheaply, without
// consuming it or reading past a cache, that a credential is one they hold
// for mac. An address over its failure budget gets only this check before
// its 429, so that guesses stay throttled while the host's own credential
// still works. A *bootcred.Manager needs none: its Store is asked.
type Checker interface {
	Known(ctx context.Context, cred, mac string) bool
}

// Options configure the handler.
type Options struct {
	// Verifier checks credentials (required).
	Verifier Verifier
	// Source renders configs (required).
	Source ConfigSource
	// Installs answers installers; nil: the install routes are 404. It
	// needs a Verifier that is also an InstallVerifier.
	Installs InstallSource
	// Binding, if set, restricts each MAC's config to its leased address.
	Binding AddressBinding
	// Limiter counts failures per address; a default ratelimit.Limiter if nil.
	Limiter *ratelimit.Limiter
	// PathPrefix defaults to DefaultPathPrefix; it must end in "/".
	PathPrefix string
	// Registerer, if set, gets the handler's metrics registered.
	Registerer prometheus.Registerer
	// Logger is used when the request context carries none.
	Logger logr.Logger
}

// Denial reasons, the values of the "reason" label.
const (
	ReasonMissing      = "missing_credential"
	ReasonInvalid      = "invalid"
	ReasonExpired      = "expired"
	ReasonReplayed     = "replayed"
	ReasonWrongHost    = "wrong_host"
	ReasonWrongAddress = "wrong_address"
	ReasonRateLimited  = "rate_limited"
)

// Handler is the config endpoint http.Handler.
type Handler struct {
	opts    Options
	denied  *prometheus.CounterVec
	served  *prometheus.CounterVec
	failed  *prometheus.CounterVec
	limiter *ratelimit.Limiter
}

// New returns a Handler. It fails if required options are missing or the
// metrics cannot be registered.
func New(opts Options) (*Handler, error) {
	if opts.Verifier == nil || opts.Source == nil {
		return nil, errors.New("configserver: Verifier and Source are required")
	}
	if _, ok := opts.Verifier.(InstallVerifier); opts.Installs != nil && !ok {
		return nil, errors.New("configserver: Installs needs a Verifier that can Check without consuming (bootcred.Manager)")
	}
	if opts.PathPrefix == "" {
		opts.PathPrefix = DefaultPathPrefix
	}
	if !strings.HasPrefix(opts.PathPrefix, "/") || !strings.HasSuffix(opts.PathPrefix, "/") {
		return nil, errors.New("configserver: PathPrefix must start and end with /")
	}
	h := &Handler{
		opts:    opts,
		limiter: opts.Limiter,
		denied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_config_requests_denied_total",
			Help: "Config requests refused, by reason.",
		}, []string{"reason"}),
		served: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_config_requests_served_total",
			Help: "Configs served, by kind (ignition, nocloud, install, install_result).",
		}, []string{"kind"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_config_requests_failed_total",
			Help: "Config requests with a verified credential that could not be answered, by cause.",
		}, []string{"cause"}),
	}
	if h.limiter == nil {
		h.limiter = ratelimit.New(ratelimit.Options{})
	}
	// Pre-create the series so that dashboards see zeros, not gaps.
	for _, r := range []string{ReasonMissing, ReasonInvalid, ReasonExpired, ReasonReplayed, ReasonWrongHost, ReasonWrongAddress, ReasonRateLimited} {
		h.denied.WithLabelValues(r)
	}
	for _, k := range []string{"ignition", "nocloud", kindInstall, kindInstallResult} {
		h.served.WithLabelValues(k)
	}
	if opts.Registerer != nil {
		for _, c := range []prometheus.Collector{h.denied, h.served, h.failed} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// Collectors returns the handler's metrics, for callers that register them
// themselves.
func (h *Handler) Collectors() []prometheus.Collector {
	return []prometheus.Collector{h.denied, h.served, h.failed}
}

// route is a parsed request path.
type route struct {
	mac  string
	kind string // "ignition", "nocloud", kindInstall or kindInstallResult
	file string // NoCloud file name
	cred string
}

// Kinds of the installer's routes (and values of the "kind" label).
const (
	kindInstall       = "install"
	kindInstallResult = "install_result"
)

// method is the one HTTP method a route's kind answers.
func (rt route) method() string {
	if rt.kind == kindInstall || rt.kind == kindInstallResult {
		return http.MethodPost
	}
	return http.MethodGet
}

// credential is the Ignition and installer routes' credential: a header
// wins over the query parameter.
func credential(r *http.Request) string {
	cred := r.Header.Get(CredentialHeader)
	if a := r.Header.Get("Authorization"); cred == "" && strings.HasPrefix(a, "Bearer ") {
		cred = strings.TrimPrefix(a, "Bearer ")
	}
	if cred == "" {
		cred = r.URL.Query().Get(CredentialQueryParam)
	}
	return cred
}

var nocloudFiles = map[string]bool{
	render.FileMetaData: true, render.FileUserData: true,
	render.FileVendorData: true, render.FileNetworkConfig: true,
}

func (h *Handler) parse(r *http.Request) (route, bool) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), h.opts.PathPrefix)
	if !ok {
		return route{}, false
	}
	parts := strings.Split(rest, "/")
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil {
			return route{}, false
		}
		parts[i] = u
	}
	if len(parts) < 2 {
		return route{}, false
	}
	mac, err := bootcred.NormalizeMAC(parts[0])
	if err != nil {
		return route{}, false
	}
	switch {
	case len(parts) == 2 && parts[1] == "ignition":
		return route{mac: mac, kind: "ignition", cred: credential(r)}, true
	case len(parts) == 2 && parts[1] == "install":
		return route{mac: mac, kind: kindInstall, cred: credential(r)}, true
	case len(parts) == 3 && parts[1] == "install" && "/"+parts[2] == agent.InstallResultSuffix:
		return route{mac: mac, kind: kindInstallResult, cred: credential(r)}, true
	case len(parts) == 4 && parts[1] == "nocloud" && nocloudFiles[parts[3]]:
		return route{mac: mac, kind: "nocloud", file: parts[3], cred: parts[2]}, true
	}
	return route{}, false
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	log := h.opts.Logger
	if l, err := logr.FromContext(r.Context()); err == nil {
		log = l
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	remote := ap.Addr().Unmap().WithZone("")
	log = log.WithValues("remote", remote.String())

	limited := !h.limiter.Allow(remote)
	tooMany := func() {
		h.denied.WithLabelValues(ReasonRateLimited).Inc()
		log.Info("config request refused", "reason", ReasonRateLimited)
		w.Header().Set("Retry-After", "10")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	rt, ok := h.parse(r)
	if limited {
		// Over budget: only a credential the Verifier holds for the MAC
		// goes on (to the full checks below), guesses stop here.
		if !ok || rt.cred == "" || !h.known(r.Context(), rt.cred, rt.mac) {
			tooMany()
			return
		}
	}
	if !ok {
		// Unknown paths are not credential failures, but probing them
		// still costs: otherwise the 404/403 split is a free oracle.
		h.limiter.Failure(remote)
		http.NotFound(w, r)
		return
	}
	if want := rt.method(); r.Method != want {
		// Not even HEAD on the config routes: it would consume the
		// credential and mint a token for a response nobody reads.
		w.Header().Set("Allow", want)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if (rt.kind == kindInstall || rt.kind == kindInstallResult) && h.opts.Installs == nil {
		h.limiter.Failure(remote)
		http.NotFound(w, r)
		return
	}
	log = log.WithValues("mac", rt.mac, "kind", rt.kind, "credHash", credHashPrefix(rt.cred))
	deny := func(reason string) {
		h.denied.WithLabelValues(reason).Inc()
		h.limiter.Failure(remote)
		log.Info("config request refused", "reason", reason)
		w.WriteHeader(http.StatusForbidden)
	}
	if rt.cred == "" {
		deny(ReasonMissing)
		return
	}
	// Check the address before the credential, so a request from the wrong
	// address cannot burn the real host's one-time credential.
	if h.opts.Binding != nil {
		leased, ok := h.opts.Binding.LeasedAddress(rt.mac, remote.Is6())
		required := false
		if rb, isRB := h.opts.Binding.(RequiredBinding); isRB {
			required = rb.AddressRequired(rt.mac, remote.Is6())
		}
		if (ok && leased.Unmap() != remote) || (!ok && required) {
			deny(ReasonWrongAddress)
			return
		}
	}
	breq := bootcred.Request{Credential: rt.cred, MAC: rt.mac, RemoteAddr: remote}
	var rec bootcred.Record
	if rt.kind == kindInstall || rt.kind == kindInstallResult {
		rec, err = h.opts.Verifier.(InstallVerifier).Check(r.Context(), breq)
	} else {
		rec, err = h.opts.Verifier.Verify(r.Context(), breq)
	}
	switch {
	case err == nil:
	case errors.Is(err, bootcred.ErrInvalid):
		deny(ReasonInvalid)
		return
	case errors.Is(err, bootcred.ErrExpired):
		deny(ReasonExpired)
		return
	case errors.Is(err, bootcred.ErrReplayed):
		deny(ReasonReplayed)
		return
	case errors.Is(err, bootcred.ErrWrongHost):
		deny(ReasonWrongHost)
		return
	case errors.Is(err, bootcred.ErrWrongAddress):
		deny(ReasonWrongAddress)
		return
	default:
		h.failed.WithLabelValues("verify").Inc()
		log.Error(err, "verifying boot credential")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	log = log.WithValues("host", rec.Host.String())

	if rt.kind == kindInstall || rt.kind == kindInstallResult {
		h.serveInstall(w, r, rt, rec, log)
		return
	}
	var body []byte
	contentType := "text/plain; charset=utf-8"
	switch rt.kind {
	case "ignition":
		body, err = h.opts.Source.Ignition(r.Context(), rec.Host, rt.mac)
		contentType = "application/vnd.coreos.ignition+json"
	case "nocloud":
		var nc *render.NoCloud
		nc, err = h.opts.Source.NoCloud(r.Context(), rec.Host, rt.mac)
		if err == nil {
			var ok bool
			if body, ok = nc.File(rt.file); !ok {
				// An optional file the class does not define: answer
				// empty rather than 404, because cloud-init retries a 404
				// ten times a second apart before giving up on it, and
				// treats an empty vendor-data/network-config as absent.
				body = []byte{}
			}
		}
	}
	if err != nil {
		var te *render.TemplateError
		switch {
		case errors.Is(err, ErrNoConfig):
			h.failed.WithLabelValues("not_found").Inc()
			log.V(1).Info("no config for request", "file", rt.file)
			http.NotFound(w, r)
		case errors.As(err, &te):
			h.failed.WithLabelValues("template").Inc()
			log.Error(err, "rendering config")
			w.WriteHeader(http.StatusInternalServerError)
		default:
			h.failed.WithLabelValues("source").Inc()
			log.Error(err, "getting config")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		return
	}
	h.served.WithLabelValues(rt.kind).Inc()
	log.Info("config served", "file", rt.file, "bytes", len(body))
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// known is the over-budget check: the Verifier's Checker, or a lookup by
// hash in the store of a bootcred.Manager (from memory or a cache: Stores
// that read further do it in Refresh, which this does not call).
func (h *Handler) known(ctx context.Context, cred, mac string) bool {
	switch v := h.opts.Verifier.(type) {
	case Checker:
		return v.Known(ctx, cred, mac)
	case interface{ Store() bootcred.Store }:
		hash := bootcred.HashCredential(cred)
		if hash == "" {
			return false
		}
		rec, err := v.Store().Get(ctx, hash)
		if err != nil || subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(hash)) != 1 {
			return false
		}
		return slices.Contains(rec.MACs, mac)
	}
	return false
}

// credHashPrefix identifies a credential in logs without revealing it.
func credHashPrefix(cred string) string {
	if cred == "" {
		return ""
	}
	h := bootcred.HashCredential(cred)
	if h == "" { // malformed: still never log it
		sum := sha256.Sum256([]byte(cred))
		h = hex.EncodeToString(sum[:])
	}
	return h[:12]
}

// IgnitionURL returns the ignition.config.url for a host: base is the
// server's URL including PathPrefix (e.g. "http://10.0.0.1:8080/config/").
func IgnitionURL(base, mac, cred string) string {
	return strings.TrimSuffix(base, "/") + "/" + mac + "/ignition?" + CredentialQueryParam + "=" + url.QueryEscape(cred)
}

// NoCloudSeedURL returns the NoCloud seedfrom URL (with the trailing slash
// cloud-init needs to append file names), for ds=nocloud-net;s=<url>.
func NoCloudSeedURL(base, mac, cred string) string {
	return strings.TrimSuffix(base, "/") + "/" + mac + "/nocloud/" + url.PathEscape(cred) + "/"
}

// InstallPlanURL returns the installer's plan URL for a host (the value of
// agent.InstallArg); agent.InstallResultURL derives the result URL from it.
func InstallPlanURL(base, mac, cred string) string {
	return strings.TrimSuffix(base, "/") + "/" + mac + "/install?" + CredentialQueryParam + "=" + url.QueryEscape(cred)
}
