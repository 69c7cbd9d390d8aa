package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/agent"
	"anvil.dev/anvil/internal/ratelimit"
)

// Errors a Backend returns; the Server maps them to status codes.
var (
	// ErrUnknownHost: no Host with that UID (401, like a wrong credential).
	ErrUnknownHost = errors.New("unknown host")
	// ErrUnknownAction: the action ID names nothing the host was given (404).
	ErrUnknownAction = errors.New("unknown action")
	// ErrStaleAction: the action was replaced or withdrawn (409); the agent
	// stops reporting on it.
	ErrStaleAction = errors.New("action no longer current")
	// ErrInvalid: the request is well-formed but makes no sense (400).
	ErrInvalid = errors.New("invalid request")
)

// HostInfo identifies the Host behind a credential.
type HostInfo struct {
	Namespace string
	Name      string
	UID       string
	// CredentialHash is Host.status.agent.credentialHash ("" = no agent
	// credential issued; every request is refused).
	CredentialHash string
}

func (h HostInfo) String() string { return h.Namespace + "/" + h.Name }

// Backend is what the Server needs from the rest of Anvil. Host is called
// on every request and must answer from memory (an informer cache); the
// others may write to the API. kube.Backend implements it.
type Backend interface {
	// Host returns the Host with the UID, or an error wrapping ErrUnknownHost.
	Host(ctx context.Context, uid string) (HostInfo, error)
	// Report records boot and hardware facts.
	Report(ctx context.Context, host HostInfo, r agent.Report) error
	// NextAction says what the host's agent should do now.
	NextAction(ctx context.Context, host HostInfo) (agent.Action, error)
	// ActionResult records progress or the outcome of the action id.
	ActionResult(ctx context.Context, host HostInfo, id string, r agent.Result) error
}

// HostRefresher is implemented by Backends whose Host answers from a cache
// that may lag behind writes (kube.Backend): a credential issued a moment
// ago may not be there yet. When a presented credential does not match the
// cached hash, the Server asks RefreshHost once; it must bound its own cost
// (kube.Backend re-reads a Host at most once per few seconds) and return
// the Host as the API server has it, or an error wrapping ErrUnknownHost.
// credentialHash is CredentialHash of the presented credential, for the
// backend's metrics only.
type HostRefresher interface {
	RefreshHost(ctx context.Context, host HostInfo, credentialHash string) (HostInfo, error)
}

// ActionWaiter is implemented by Backends that can say when a host's next
// action may have changed (kube.Backend, from its informers). With it the
// Server holds a GET PathActions that asks to wait (QueryWaitSeconds) and
// finds nothing to do, instead of having the agent ask again and again.
type ActionWaiter interface {
	// WatchActions returns a channel closed when anything NextAction reads
	// for host may have changed. Spurious closes are fine (the Server
	// asks NextAction again); a missed one delays an action until the wait
	// ends. ok=false: cannot watch (the request is answered at once).
	WatchActions(host HostInfo) (changed <-chan struct{}, ok bool)
}

// ServerOptions configure a Server.
type ServerOptions struct {
	// Backend is required.
	Backend Backend
	// Limiter counts authentication failures per client address. An
	// address out of tokens gets 429 unless its credential matches the
	// cached Host (constant-time, no re-read past the cache): a host
	// sharing its address with somebody guessing is not locked out, and
	// guesses stay throttled.
	// Default: ratelimit.New(ratelimit.Options{}).
	Limiter *ratelimit.Limiter
	// PollInterval is the hint returned with every action (default 30s).
	PollInterval time.Duration
	// MaxBodyBytes bounds request bodies (default MaxBodyBytes).
	MaxBodyBytes int64
	// Logger is used when the request context carries none.
	Logger logr.Logger
}

// Server is the agent API (http.Handler). Mount it with
// mux.Handle(PathPrefix, server).
type Server struct {
	opts ServerOptions
	mux  *http.ServeMux
}

// NewServer returns the handler.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Backend == nil {
		return nil, errors.New("agent server: Backend is required")
	}
	if opts.Limiter == nil {
		opts.Limiter = ratelimit.New(ratelimit.Options{})
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 30 * time.Second
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = agent.MaxBodyBytes
	}
	s := &Server{opts: opts, mux: http.NewServeMux()}
	s.mux.Handle("POST "+agent.PathReport, s.authenticated(s.report))
	s.mux.Handle("GET "+agent.PathActions, s.authenticated(s.actions))
	s.mux.Handle("POST "+agent.PathActions+"/{id}/result", s.authenticated(s.result))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}

type hostHandler func(w http.ResponseWriter, r *http.Request, host HostInfo, log logr.Logger)

// authenticated resolves the credential to a Host before h runs. Every
// refusal is a bare 401 (or 429 when the address failed too often), so a
// client cannot tell an unknown host from a wrong secret.
func (s *Server) authenticated(h hostHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := logr.FromContextOrDiscard(r.Context())
		if log.GetSink() == nil {
			log = s.opts.Logger
		}
		log = log.WithName("agent-api").WithValues("path", r.URL.Path)
		addr := clientAddr(r)
		if addr.IsValid() && !s.opts.Limiter.Allow(addr) {
			host, ok := s.cachedMatch(r.Context(), r)
			if !ok {
				w.Header().Set("Retry-After", "10")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			h(w, r, host, log.WithValues("host", host.String()))
			return
		}
		deny := func(why string) {
			if addr.IsValid() {
				s.opts.Limiter.Failure(addr)
			}
			// Never the credential: only why and from where.
			log.V(1).Info("agent request refused", "reason", why, "remote", addr.String())
			w.Header().Set("WWW-Authenticate", `Bearer realm="anvil-agent"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
		cred, err := agent.CredentialFromRequest(r)
		if err != nil {
			deny("malformed")
			return
		}
		host, why, err := s.verify(r.Context(), cred)
		if err != nil {
			log.Error(err, "checking the credential")
			unavailable(w)
			return
		}
		if why != "" {
			deny(why)
			return
		}
		h(w, r, host, log.WithValues("host", host.String()))
	})
}

// cachedMatch resolves the request's credential from the backend's cache
// alone: the check an address over its failure budget gets.
func (s *Server) cachedMatch(ctx context.Context, r *http.Request) (HostInfo, bool) {
	cred, err := agent.CredentialFromRequest(r)
	if err != nil {
		return HostInfo{}, false
	}
	uid, _ := agent.HostUID(cred)
	host, err := s.opts.Backend.Host(ctx, uid)
	if err != nil || host.CredentialHash == "" || !agent.CredentialMatches(cred, host.CredentialHash) {
		return HostInfo{}, false
	}
	return host, true
}

// verify resolves a well-formed credential to its Host. A refused
// credential gives why ("unknown_host", "wrong_credential") and no error;
// err is a backend failure.
func (s *Server) verify(ctx context.Context, cred string) (host HostInfo, why string, err error) {
	uid, _ := agent.HostUID(cred)
	host, err = s.opts.Backend.Host(ctx, uid)
	if errors.Is(err, ErrUnknownHost) {
		// Hash anyway so an unknown UID costs what a known one does.
		agent.CredentialMatches(cred, "")
		return HostInfo{}, "unknown_host", nil
	}
	if err != nil {
		return HostInfo{}, "", fmt.Errorf("looking up host: %w", err)
	}
	if host.CredentialHash != "" && agent.CredentialMatches(cred, host.CredentialHash) {
		return host, "", nil
	}
	// The cache may not hold the credential issued a moment ago.
	rf, ok := s.opts.Backend.(HostRefresher)
	if !ok {
		return HostInfo{}, "wrong_credential", nil
	}
	fresh, err := rf.RefreshHost(ctx, host, agent.CredentialHash(cred))
	switch {
	case errors.Is(err, ErrUnknownHost):
		return HostInfo{}, "unknown_host", nil
	case err != nil:
		return HostInfo{}, "", fmt.Errorf("re-reading host: %w", err)
	case fresh.CredentialHash == "" || !agent.CredentialMatches(cred, fresh.CredentialHash):
		return HostInfo{}, "wrong_credential", nil
	}
	return fresh, "", nil
}

func (s *Server) report(w http.ResponseWriter, r *http.Request, host HostInfo, log logr.Logger) {
	var rep agent.Report
	if !s.decode(w, r, &rep) {
		return
	}
	if err := rep.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := s.opts.Backend.Report(r.Context(), host, rep); err != nil {
		s.backendError(w, log, "recording report", err)
		return
	}
	log.V(1).Info("agent report", "bootID", rep.BootID, "kubelet", rep.KubeletVersion, "agentVersion", rep.AgentVersion)
	w.WriteHeader(http.StatusNoContent)
}

// maxWakeups bounds the re-evaluations of one held request: a Host that
// changes this often gets "none" early (the agent's guard against early
// answers then slows it down).
const maxWakeups = 64

// actions answers GET PathActions. With QueryWaitSeconds and an
// ActionWaiter backend a request that finds nothing to do is held until
// the backend signals a change that yields an action, or the wait passes.
func (s *Server) actions(w http.ResponseWriter, r *http.Request, host HostInfo, log logr.Logger) {
	wait, err := waitParam(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	waiter, _ := s.opts.Backend.(ActionWaiter)
	if wait == 0 {
		waiter = nil
	}
	var (
		a      agent.Action
		timer  *time.Timer
		held   bool // Waited: the request was (or would have been) held
		wakeup bool // a change was signalled while holding
	)
hold:
	for i := 0; ; i++ {
		var changed <-chan struct{}
		if waiter != nil {
			// Subscribe before reading: a change between the read and the
			// wait then still wakes this request.
			if ch, ok := waiter.WatchActions(host); ok {
				changed, held = ch, true
			}
		}
		if a, err = s.opts.Backend.NextAction(r.Context(), host); err != nil {
			s.backendError(w, log, "choosing action", err)
			return
		}
		if (a.Type != "" && a.Type != agent.ActionNone) || changed == nil || i >= maxWakeups {
			break
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-changed:
			wakeup = true
		case <-timer.C:
			break hold
		case <-r.Context().Done():
			// The client went away (the answer is written to no one) or
			// the server is shutting down: "none" without Waited makes an
			// agent that is still there pause as usual, not ask at once.
			a, held = agent.Action{Type: agent.ActionNone}, false
			break hold
		}
	}
	if a.Type == "" {
		a.Type = agent.ActionNone
	}
	if wakeup && a.Type != agent.ActionNone && !s.stillValid(w, r, log) {
		return // the credential was rotated or revoked during the hold
	}
	a.Waited = held
	if a.PollAfterSeconds == 0 {
		a.PollAfterSeconds = int32(s.opts.PollInterval / time.Second)
	}
	if a.Type != agent.ActionNone {
		log.V(1).Info("agent action", "type", a.Type, "id", a.ID)
	}
	writeJSON(w, http.StatusOK, a)
}

// stillValid checks the request's credential again before a held request
// hands out an action; on refusal it answers (bare 401 or 503).
func (s *Server) stillValid(w http.ResponseWriter, r *http.Request, log logr.Logger) bool {
	cred, err := agent.CredentialFromRequest(r)
	if err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return false
	}
	_, why, err := s.verify(r.Context(), cred)
	switch {
	case err != nil:
		log.Error(err, "checking the credential after a hold")
		unavailable(w)
		return false
	case why != "":
		log.V(1).Info("agent request refused after a hold", "reason", why)
		w.Header().Set("WWW-Authenticate", `Bearer realm="anvil-agent"`)
		w.WriteHeader(http.StatusUnauthorized)
		return false
	}
	return true
}

// waitParam parses QueryWaitSeconds: absent means 0 (answer at once).
func waitParam(q url.Values) (time.Duration, error) {
	vs, ok := q[agent.QueryWaitSeconds]
	if !ok {
		return 0, nil
	}
	bad := fmt.Errorf("%s must be a whole number of seconds from 0 to %d", agent.QueryWaitSeconds, agent.MaxWaitSeconds)
	if len(vs) != 1 || vs[0] == "" || len(vs[0]) > 3 {
		return 0, bad
	}
	n := 0
	for _, c := range vs[0] {
		if c < '0' || c > '9' {
			return 0, bad
		}
		n = n*10 + int(c-'0')
	}
	if n > agent.MaxWaitSeconds {
		return 0, bad
	}
	return time.Duration(n) * time.Second, nil
}

func (s *Server) result(w http.ResponseWriter, r *http.Request, host HostInfo, log logr.Logger) {
	id := r.PathValue("id")
	if !agent.ValidActionID(id) {
		writeError(w, http.StatusBadRequest, "invalid action id")
		return
	}
	var res agent.Result
	if !s.decode(w, r, &res) {
		return
	}
	if err := res.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if res.Type == agent.ActionUpgrade && res.PlanID != "" && res.PlanID != id {
		writeError(w, http.StatusBadRequest, "planID differs from the action id")
		return
	}
	if err := s.opts.Backend.ActionResult(r.Context(), host, id, res); err != nil {
		s.backendError(w, log, "recording action result", err)
		return
	}
	if res.Result != agent.InProgress {
		log.Info("agent action finished", "type", res.Type, "id", id, "result", res.Result, "reason", res.Reason)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "body too large")
			return false
		}
		writeError(w, http.StatusBadRequest, "body is not valid JSON for this endpoint")
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, "trailing data after the JSON body")
		return false
	}
	return true
}

func (s *Server) backendError(w http.ResponseWriter, log logr.Logger, what string, err error) {
	switch {
	case errors.Is(err, ErrUnknownAction):
		writeError(w, http.StatusNotFound, "unknown action")
	case errors.Is(err, ErrStaleAction):
		writeError(w, http.StatusConflict, "action no longer current")
	case errors.Is(err, ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, ErrUnknownHost):
		w.WriteHeader(http.StatusUnauthorized)
	default:
		log.Error(err, what)
		unavailable(w)
	}
}

func unavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "5")
	writeError(w, http.StatusServiceUnavailable, "temporarily unavailable")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, agent.ErrorResponse{Error: msg})
}

// clientAddr is the TCP peer; X-Forwarded-For is ignored (the service runs
// with host networking, not behind a proxy).
func clientAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// Errorf wraps ErrInvalid with a message for the client. The message must
// not contain secrets.
func Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
