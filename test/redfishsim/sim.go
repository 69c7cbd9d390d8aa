// Package redfishsim is a Redfish BMC emulator for tests and labs. Nothing
// real runs on the test machines, so this is the one emulator Anvil allows
// itself: it serves a DMTF mockup (for example public-rackmount1) and adds the
// behaviour a BMC driver depends on, as strictly as real BMCs do:
//
//   - sessions (POST SessionService/Sessions → 201, X-Auth-Token, Location;
//     DELETE; idle expiry; a session limit) and HTTP basic auth; 401 with a
//     Redfish error body otherwise;
//   - ComputerSystem.Reset with every ResetType the mockup allows, changing
//     PowerState (optionally after a delay, as real servers do: the request
//     is answered at once, a Reset during the delay restarts it or is
//     refused with 409, and every Reset request is counted by ResetType);
//   - redirects (307/308 or others) of path prefixes, within the BMC or to
//     another URL;
//   - PATCH of Boot (BootSourceOverrideTarget/Enabled/Mode) validated against
//     @Redfish.AllowableValues, ETag/If-Match, unknown or read-only
//     properties rejected, Content-Type required; 404 and 405 with Allow;
//   - a "Once" boot override is consumed by the next power-on;
//   - injected latency (fixed + uniform jitter, or log-normal with a given
//     median and p99), injected 503s and hung requests (all seeded),
//     counters for tests, and a power hook so a lab can start a VM;
//   - virtual media (media.go): each system's CD and removable drive from
//     the mockup, under the system or (VirtualMediaOptions.UnderManager)
//     the Manager, with InsertMedia/EjectMedia validated as a BMC does (or
//     PATCH of Image for older BMCs), a media hook (OnMedia) and the state
//     in the Go API; BootSourceOverrideTarget Cd boots the inserted image;
//   - server-sent events (events.go, Options.EventStream): the
//     EventService's ServerSentEventUri streams every power transition;
//   - many systems at their own paths (/redfish/v1/Systems/<id>), rendered
//     from the mockup's system on request, so one simulator stands in for
//     the BMCs of thousands of Hosts.
//
// New starts a server for a lab binary; Start does the same for a test and
// closes it on cleanup.
package redfishsim

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"maps"
	"math/rand"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// Options configure a simulated BMC.
type Options struct {
	// MockupDir is a DMTF mockup directory tree (index.json files); empty
	// serves the embedded public-rackmount1 (PublicRackmount1).
	MockupDir string
	// Addr to listen on; default "127.0.0.1:0".
	Addr string
	// TLS serves https with a self-signed certificate (see Server.CertPool).
	TLS bool
	// Username and Password accepted; defaults "admin" and "password".
	Username, Password string
	// DisableBasicAuth accepts only session tokens.
	DisableBasicAuth bool
	// NoSessionService hides the SessionService (like old BMCs), so clients
	// must use basic auth.
	NoSessionService bool
	// SessionTimeout expires sessions idle this long; default 30 minutes.
	SessionTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long; default 60
	// seconds. Real BMCs' web servers close idle connections within a
	// minute or so, so a client polling every few minutes connects (and,
	// over TLS, handshakes) again for each poll.
	IdleTimeout time.Duration
	// MaxSessions limits concurrent sessions (503 SessionLimitExceeded beyond
	// it); default 16, negative means unlimited.
	MaxSessions int
	// Systems describes the computer systems; default one system as in the
	// mockup. Further systems are clones of the mockup's first system.
	Systems []SystemOptions
	// PowerDelay is how long after a reset request PowerState changes. The
	// request is answered at once (204), as real BMCs do; PowerState keeps
	// the old value until the delay has passed.
	PowerDelay time.Duration
	// RefuseResetWhileChanging answers a Reset that arrives while an
	// earlier one has not taken effect with 409 Conflict, as some BMCs do;
	// by default the new Reset replaces the pending one and restarts its
	// delay, as others do. Either way the request is counted (ResetTypes).
	RefuseResetWhileChanging bool
	// Redirects answer requests under a path prefix with a redirect, as a
	// BMC behind a front end or one whose service moved does.
	Redirects []Redirect
	// Latency is added to every response, plus a uniform random duration in
	// [0, Jitter).
	Latency, Jitter time.Duration
	// LatencyMedian and LatencyP99, when both are set, add a log-normal
	// latency with that median and 99th percentile to every response (real
	// BMCs answer most calls in a few hundred milliseconds, with a tail of
	// seconds). LatencyP99 must be at least LatencyMedian.
	LatencyMedian, LatencyP99 time.Duration
	// ErrorRate is the fraction of requests answered with ErrorStatus instead
	// of being processed.
	ErrorRate float64
	// TimeoutRate is the fraction of requests that get no answer at all: the
	// connection is held for TimeoutHold (or until the client gives up) and
	// then closed, as a hung BMC web server does.
	TimeoutRate float64
	// TimeoutHold defaults to 30s.
	TimeoutHold time.Duration
	// ErrorStatus for injected errors; default 503.
	ErrorStatus int
	// RetryAfter, when set, is sent as Retry-After (whole seconds) on injected
	// errors.
	RetryAfter time.Duration
	// Seed makes latency jitter and error injection deterministic; zero seeds
	// from the clock.
	Seed int64
	// VirtualMedia shapes (or turns off) the systems' virtual media.
	VirtualMedia VirtualMediaOptions
	// OnMedia is called after every virtual media insert or eject, outside
	// the server's locks. A lab uses it to change the medium of a VM's CD
	// drive (QMP blockdev-change-medium).
	OnMedia func(MediaEvent)
	// OnPower is called after every power transition, outside the server's
	// locks. A lab uses it to start or stop a VM.
	OnPower func(PowerEvent)
	// EventStream serves Redfish server-sent events (events.go): the
	// EventService advertises ServerSentEventUri and every power
	// transition is pushed to the open streams. Off, the EventService is
	// the mockup's, without a stream, as on many BMCs.
	EventStream bool
	// EventKeepAlive is how often an idle stream gets a comment line;
	// default 30 seconds.
	EventKeepAlive time.Duration
	// MaxEventStreams bounds the open streams (503 beyond); default 10.
	MaxEventStreams int
	// Logger logs requests at V(1).
	Logger logr.Logger
}

// Redirect sends requests whose path starts with From elsewhere: to To
// (a path on this server or an absolute URL, e.g. another BMC's) followed by
// the rest of the path and the query. A request already under To (when To
// is a path) is not redirected again, so From ".../Reset" and To
// ".../Reset/" redirect once.
type Redirect struct {
	From, To string
	// Status is the redirect status; default 307 Temporary Redirect.
	Status int
}

// SystemOptions describe one simulated computer system.
type SystemOptions struct {
	// ID of the system; default the mockup's ID for the first system and
	// "<mockup ID>-<n>" for the others.
	ID string
	// PowerState at start, "On" or "Off"; default the mockup's.
	PowerState string
	// UUID overrides the system UUID.
	UUID string
	// MACs override the MAC addresses of the system's EthernetInterfaces, in
	// collection order.
	MACs []string
	// BootTargets, when set, replace the mockup's
	// BootSourceOverrideTarget@Redfish.AllowableValues (served and
	// enforced), e.g. a BMC without UefiHttp.
	BootTargets []string
}

// PowerEvent describes a power transition.
type PowerEvent struct {
	SystemID string
	// On is the new state.
	On bool
	// Restart is set when the system went off and on in one action.
	Restart bool
	// ResetType that caused the transition.
	ResetType string
	// BootTarget is the boot override used by a power-on ("Pxe", "Hdd", ...),
	// or "" when the system boots by its normal boot order.
	BootTarget string
	// BootMode is the override's BootSourceOverrideMode ("UEFI", "Legacy").
	BootMode string
	// CDImage is the image in the system's virtual CD at a power-on ("" for
	// none); with BootTarget "Cd" the system boots it.
	CDImage string
}

// Stats are counters for tests.
type Stats struct {
	Requests       int // all requests, including injected failures
	InjectedErrors int
	// InjectedTimeouts counts requests left without an answer (TimeoutRate).
	InjectedTimeouts int
	LoginAttempts    int // POSTs to the Sessions collection
	SessionsCreated  int
	FailedLogins     int
	Unauthorized     int // 401 responses
	SessionsDeleted  int
	Resets           int // accepted ComputerSystem.Reset actions
	// ResetRequests counts every ComputerSystem.Reset request with a valid
	// ResetType, accepted or refused, by ResetType.
	ResetRequests map[string]int
	// Redirected counts requests answered with a redirect (Redirects).
	Redirected int
	Patches    int // accepted PATCHes
	// MediaInserts and MediaEjects count virtual media changes.
	MediaInserts, MediaEjects int
	// TLSHandshakes counts completed TLS handshakes, TLSResumed those that
	// resumed an earlier session (no certificate, no signature).
	TLSHandshakes, TLSResumed int
	// EventStreamsOpened counts accepted event stream subscriptions,
	// EventsSent the events queued to them, EventStreamsDropped the
	// streams ended because their client did not keep up.
	EventStreamsOpened, EventsSent, EventStreamsDropped int
}

// Server is a running simulated BMC.
type Server struct {
	opts     Options
	ln       net.Listener
	srv      *http.Server
	url      string
	certPEM  []byte
	mock     *mockup
	reg      *registry
	sysPaths string // Systems collection path
	tmpl     systemTemplate
	byID     map[string]*system // read-only after New
	byReset  map[string]*system // by Reset action target
	mgrMedia string             // the Manager's VirtualMedia collection (UnderManager), or ""

	mu       sync.Mutex
	rnd      *rand.Rand
	failNext int
	sessions map[string]*session // by token
	systems  []*system
	stats    Stats
	events   []PowerEvent
	// mediaEvents are the virtual media inserts and ejects.
	mediaEvents []MediaEvent
	// subs are the open event streams (events.go), eventSeq the last
	// event's ID.
	subs     map[*eventSub]struct{}
	eventSeq int
	closed   bool
}

type session struct {
	id, token, user string
	lastUsed        time.Time
}

type system struct {
	id, path       string
	resetTarget    string
	power          string
	bootTarget     string
	bootEnabled    string
	bootMode       string
	uefiTarget     string
	assetTag       string
	allowedTargets []string
	allowedResets  []string
	pending        *time.Timer
	media          []*mediaDev // virtual media devices, in collection order
	// patches are the properties of template resources (by path relative
	// to the system) that differ for this system.
	patches map[string]map[string]any
}

// Start starts a server for a test and closes it when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatalf("redfishsim: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// New loads the mockup and starts serving.
func New(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Username == "" {
		opts.Username = "admin"
	}
	if opts.Password == "" {
		opts.Password = "password"
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = time.Minute
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = 16
	}
	if opts.ErrorStatus == 0 {
		opts.ErrorStatus = http.StatusServiceUnavailable
	}
	if opts.TimeoutHold <= 0 {
		opts.TimeoutHold = 30 * time.Second
	}
	if opts.EventKeepAlive <= 0 {
		opts.EventKeepAlive = 30 * time.Second
	}
	if opts.MaxEventStreams <= 0 {
		opts.MaxEventStreams = 10
	}
	if (opts.LatencyMedian > 0) != (opts.LatencyP99 > 0) || opts.LatencyP99 < opts.LatencyMedian {
		return nil, errors.New("redfishsim: LatencyMedian and LatencyP99 go together, with LatencyP99 >= LatencyMedian")
	}
	seed := opts.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	mockFS, mockName := PublicRackmount1(), "public-rackmount1 (embedded)"
	if opts.MockupDir != "" {
		mockFS, mockName = os.DirFS(opts.MockupDir), opts.MockupDir
	}
	m, err := loadMockup(mockFS, mockName)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:     opts,
		mock:     m,
		reg:      newRegistry(m),
		rnd:      rand.New(rand.NewSource(seed)),
		sessions: map[string]*session{},
		subs:     map[*eventSub]struct{}{},
	}
	if err := s.setupSystems(); err != nil {
		return nil, err
	}
	if err := s.setupMedia(); err != nil {
		return nil, err
	}
	s.setupServiceDocs()
	s.setupEvents()

	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("redfishsim: listen: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: opts.IdleTimeout,
		// Clients that probe and hang up (TLS handshake EOFs) are normal;
		// keep them out of test output unless a logger wants them.
		ErrorLog: log.New(logWriter{opts.Logger}, "", 0)}
	scheme := "http"
	if opts.TLS {
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		cert, certPEM, err := selfSigned([]string{host, "127.0.0.1", "::1", "localhost"})
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("redfishsim: certificate: %w", err)
		}
		s.certPEM = certPEM
		s.ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
			VerifyConnection: func(cs tls.ConnectionState) error { // every handshake, full or resumed
				s.mu.Lock()
				s.stats.TLSHandshakes++
				if cs.DidResume {
					s.stats.TLSResumed++
				}
				s.mu.Unlock()
				return nil
			}})
		scheme = "https"
	}
	s.url = scheme + "://" + ln.Addr().String()
	go func() { _ = s.srv.Serve(s.ln) }()
	return s, nil
}

// setupServiceDocs adjusts the root and the SessionService to what the
// simulator implements.
func (s *Server) setupServiceDocs() {
	root := s.mock.docs[rootPath]
	// The simulator does not implement $expand and friends; say so, so that
	// clients do not rely on them.
	root["ProtocolFeaturesSupported"] = map[string]any{
		"ExpandQuery":     map[string]any{"ExpandAll": false, "Levels": false, "Links": false, "NoLinks": false},
		"SelectQuery":     false,
		"FilterQuery":     false,
		"OnlyMemberQuery": false,
		"ExcerptQuery":    false,
	}
	if s.opts.NoSessionService {
		delete(root, "SessionService")
		if links, ok := root["Links"].(map[string]any); ok {
			delete(links, "Sessions")
		}
		s.mock.removeSubtree(s.mock.linkFromRoot("SessionService"))
		return
	}
	if ss := s.mock.docs[s.sessionServicePath()]; ss != nil {
		ss["SessionTimeout"] = int(s.opts.SessionTimeout / time.Second)
	}
}

type logWriter struct{ l logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.V(1).Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

func stringList(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// URL is the base URL, e.g. "https://127.0.0.1:40123".
func (s *Server) URL() string { return s.url }

// BMCAddress is the address to give a bmc driver: "redfish+https://..." or
// "redfish+http://...".
func (s *Server) BMCAddress() string { return "redfish+" + s.url }

// CertPEM is the server certificate (PEM) when TLS is on.
func (s *Server) CertPEM() []byte { return s.certPEM }

// CertPool trusts the server certificate (nil without TLS).
func (s *Server) CertPool() *x509.CertPool {
	if s.certPEM == nil {
		return nil
	}
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(s.certPEM)
	return p
}

// Username accepted by the server.
func (s *Server) Username() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.Username
}

// Password accepted by the server.
func (s *Server) Password() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.Password
}

// SetCredentials changes the accepted credentials, like an administrator
// rotating the BMC password. Existing sessions stay valid until they expire
// or ExpireSessions is called, as on real BMCs.
func (s *Server) SetCredentials(username, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Username, s.opts.Password = username, password
}

// SystemIDs lists the systems' IDs.
func (s *Server) SystemIDs() []string {
	out := make([]string, len(s.systems))
	for i, sys := range s.systems {
		out[i] = sys.id
	}
	return out
}

// SystemPath returns the URL path of a system, e.g. /redfish/v1/Systems/1.
func (s *Server) SystemPath(id string) string { return s.sysPaths + "/" + id }

// BootOverride is a system's boot override settings.
type BootOverride struct {
	Target, Enabled, Mode string
}

// PowerState returns "On" or "Off" for a system ("" if unknown ID).
func (s *Server) PowerState(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sys := s.system(id); sys != nil {
		return sys.power
	}
	return ""
}

// Boot returns a system's boot override settings.
func (s *Server) Boot(id string) BootOverride {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sys := s.system(id); sys != nil {
		return BootOverride{Target: sys.bootTarget, Enabled: sys.bootEnabled, Mode: sys.bootMode}
	}
	return BootOverride{}
}

// Events returns the power transitions so far, oldest first.
func (s *Server) Events() []PowerEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PowerEvent(nil), s.events...)
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.ResetRequests = maps.Clone(s.stats.ResetRequests)
	return st
}

// Sessions returns the number of live sessions.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(time.Now())
	return len(s.sessions)
}

// ExpireSessions invalidates every session, like a BMC reboot or idle
// timeout; clients must log in again.
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions = map[string]*session{}
	s.endSessionStreamsLocked("")
}

// FailNext makes the next n requests fail with the injected error status.
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = n
}

// SetErrorRate changes the injected error rate while running.
func (s *Server) SetErrorRate(rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.ErrorRate = rate
}

// Close stops the server and pending power transitions.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, sys := range s.systems {
		if sys.pending != nil {
			sys.pending.Stop()
		}
	}
	for sub := range s.subs {
		s.endSubLocked(sub)
	}
	s.mu.Unlock()
	return s.srv.Close()
}

func (s *Server) sessionServicePath() string { return s.mock.linkFromRoot("SessionService") }

// sessionsPath is the Sessions collection path.
func (s *Server) sessionsPath() string {
	if ss := s.mock.docs[s.sessionServicePath()]; ss != nil {
		if l, ok := ss["Sessions"].(map[string]any); ok {
			if id, ok := l["@odata.id"].(string); ok {
				return strings.TrimRight(id, "/")
			}
		}
	}
	return s.sessionServicePath() + "/Sessions"
}

func (s *Server) expireLocked(now time.Time) {
	for tok, sess := range s.sessions {
		if now.Sub(sess.lastUsed) > s.opts.SessionTimeout {
			delete(s.sessions, tok)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
