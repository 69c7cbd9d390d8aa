package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/ignition/ratelimit"
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
	Report(ctx context.Context, host HostInfo, r Report) error
	// NextAction says what the host's agent should do now.
	NextAction(ctx context.Context, host HostInfo) (Action, error)
	// ActionResult records progress or the outcome of the action id.
	ActionResult(ctx context.Context, host HostInfo, id string, r Result) error
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

// ServerOptions configure a Server.
type ServerOptions struct {
	// Backend is required.
	Backend Backend
	// Limiter counts authentication failures per client address; an
	// address out of tokens gets 429 before its credential is looked at.
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
		opts.MaxBodyBytes = MaxBodyBytes
	}
	s := &Server{opts: opts, mux: http.NewServeMux()}
	s.mux.Handle("POST "+PathReport, s.authenticated(s.report))
	s.mux.Handle("GET "+PathActions, s.authenticated(s.actions))
	s.mux.Handle("POST "+PathActions+"/{id}/result", s.authenticated(s.result))
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
			w.Header().Set("Retry-After", "10")
			w.WriteHeader(http.StatusTooManyRequests)
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
		cred, err := CredentialFromRequest(r)
		if err != nil {
			deny("malformed")
			return
		}
		uid, _ := HostUID(cred)
		host, err := s.opts.Backend.Host(r.Context(), uid)
		if errors.Is(err, ErrUnknownHost) {
			// Hash anyway so an unknown UID costs what a known one does.
			CredentialMatches(cred, "")
			deny("unknown_host")
			return
		}
		if err != nil {
			log.Error(err, "looking up host")
			unavailable(w)
			return
		}
		if host.CredentialHash == "" || !CredentialMatches(cred, host.CredentialHash) {
			// The cache may not hold the credential issued a moment ago.
			rf, ok := s.opts.Backend.(HostRefresher)
			if !ok {
				deny("wrong_credential")
				return
			}
			fresh, err := rf.RefreshHost(r.Context(), host, CredentialHash(cred))
			switch {
			case errors.Is(err, ErrUnknownHost):
				deny("unknown_host")
				return
			case err != nil:
				log.Error(err, "re-reading host")
				unavailable(w)
				return
			case fresh.CredentialHash == "" || !CredentialMatches(cred, fresh.CredentialHash):
				deny("wrong_credential")
				return
			}
			host = fresh
		}
		h(w, r, host, log.WithValues("host", host.String()))
	})
}

func (s *Server) report(w http.ResponseWriter, r *http.Request, host HostInfo, log logr.Logger) {
	var rep Report
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

func (s *Server) actions(w http.ResponseWriter, r *http.Request, host HostInfo, log logr.Logger) {
	a, err := s.opts.Backend.NextAction(r.Context(), host)
	if err != nil {
		s.backendError(w, log, "choosing action", err)
		return
	}
	if a.Type == "" {
		a.Type = ActionNone
	}
	if a.PollAfterSeconds == 0 {
		a.PollAfterSeconds = int32(s.opts.PollInterval / time.Second)
	}
	if a.Type != ActionNone {
		log.V(1).Info("agent action", "type", a.Type, "id", a.ID)
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) result(w http.ResponseWriter, r *http.Request, host HostInfo, log logr.Logger) {
	id := r.PathValue("id")
	if !ValidActionID(id) {
		writeError(w, http.StatusBadRequest, "invalid action id")
		return
	}
	var res Result
	if !s.decode(w, r, &res) {
		return
	}
	if err := res.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if res.Type == ActionUpgrade && res.PlanID != "" && res.PlanID != id {
		writeError(w, http.StatusBadRequest, "planID differs from the action id")
		return
	}
	if err := s.opts.Backend.ActionResult(r.Context(), host, id, res); err != nil {
		s.backendError(w, log, "recording action result", err)
		return
	}
	if res.Result != InProgress {
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
	writeJSON(w, code, ErrorResponse{Error: msg})
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

// String forms used in logs and messages.
func (a ActionType) String() string { return string(a) }

// Errorf wraps ErrInvalid with a message for the client. The message must
// not contain secrets.
func Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
