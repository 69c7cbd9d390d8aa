package console

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"anvil.dev/anvil/internal/ratelimit"
)

//go:embed web/templates/*.html web/static/*
var webFS embed.FS

// Config of the console. New fills the zero values with the defaults noted.
type Config struct {
	// API reaches the API server: its address and the CA to trust, and
	// nothing else. Every request carries the signed-in person's own
	// token; New drops any credentials from it.
	API *rest.Config
	// Scheme with Anvil's types and the built-in ones. Required.
	Scheme *runtime.Scheme
	// Namespace shown by default ("" all namespaces, which needs
	// cluster-wide read access; ?ns= chooses another).
	Namespace string
	// Secure marks the session cookie Secure (the console is served over
	// TLS, directly or behind a proxy that terminates it).
	Secure bool
	// SessionIdle ends a session unused this long (default 1h);
	// SessionMax ends any session this long after sign-in (default 12h).
	SessionIdle, SessionMax time.Duration
	// StoreIdle stops the watches of a namespace no page or live stream
	// read for this long (default 5m).
	StoreIdle time.Duration
	// MaxSessions bounds the signed-in sessions; the oldest is ended
	// first (default 500).
	MaxSessions int
	// PageSize is about how many Host tiles one racks page holds (whole
	// racks; default 1000).
	PageSize int
	// Debounce is the least time between two live updates of a page: the
	// first change after a quiet spell goes out at once, a burst is
	// gathered (default 250ms).
	Debounce time.Duration
	Log      logr.Logger
	Now      func() time.Time
}

func (c *Config) defaults() error {
	if c.API == nil || c.API.Host == "" {
		return errors.New("console: Config.API (the API server's address) is required")
	}
	if c.Scheme == nil {
		return errors.New("console: Config.Scheme is required")
	}
	c.API = rest.AnonymousClientConfig(c.API)
	c.API.RateLimiter = nil // each person's client gets its own (session.go), not Anvil's
	if c.SessionIdle <= 0 {
		c.SessionIdle = time.Hour
	}
	if c.SessionMax <= 0 {
		c.SessionMax = 12 * time.Hour
	}
	if c.StoreIdle <= 0 {
		c.StoreIdle = 5 * time.Minute
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 500
	}
	if c.PageSize <= 0 {
		c.PageSize = 1000
	}
	if c.Debounce <= 0 {
		c.Debounce = 250 * time.Millisecond
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Server is the console: an http.Handler and a sweeper of old sessions.
type Server struct {
	cfg      Config
	sessions *sessions
	// failed sign-ins per address: each one costs the API server a review.
	failed *ratelimit.Limiter
	tmpl   *template.Template
	mux    *http.ServeMux
}

// New builds the console.
func New(cfg Config) (*Server, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	tmpl, err := template.New("").Funcs(funcs).ParseFS(webFS, "web/templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console templates: %w", err)
	}
	s := &Server{cfg: cfg, tmpl: tmpl, mux: http.NewServeMux(), failed: ratelimit.New(ratelimit.Options{Now: cfg.Now})}
	s.sessions = &sessions{byID: map[string]*session{}, cfg: &s.cfg}
	static, _ := fs.Sub(webFS, "web/static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static))))
	s.mux.HandleFunc("GET /login", s.loginPage)
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("POST /logout", s.logout)
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/racks", http.StatusSeeOther) })
	s.mux.HandleFunc("GET /racks", s.page(viewRacks))
	s.mux.HandleFunc("GET /hosts/{ns}/{name}", s.page(viewHost))
	s.mux.HandleFunc("GET /machines", s.page(viewMachines))
	s.mux.HandleFunc("GET /tickets", s.page(viewTickets))
	s.mux.HandleFunc("GET /live", s.live)
	s.mux.HandleFunc("POST /actions/{kind}/{ns}/{name}/{action}", s.action)
	return s, nil
}

// Run ends expired sessions until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.sessions.mu.Lock()
			for _, ss := range s.sessions.byID {
				ss.end()
			}
			s.sessions.mu.Unlock()
			return nil
		case <-t.C:
			s.sessions.sweep()
		}
	}
}

// csp allows nothing but this origin's own files: no inline script or
// style, no frames, forms only to the console.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP adds the security headers every answer carries.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer browsers send "Origin:
	// null" on form posts, which sameOrigin must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// sameOrigin refuses writes another site's page sends: a browser names
// the origin of every POST (Origin, or Sec-Fetch-Site).
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return o == ""
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

func cacheStatic(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		h.ServeHTTP(w, r)
	})
}

func (s *Server) execute(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		s.cfg.Log.Error(err, "rendering a console page", "template", name)
		http.Error(w, "the console could not render this page; its log says why", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

type loginData struct {
	Error string
	Next  string
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.execute(w, http.StatusOK, "login.html", loginData{Next: safeNext(r.URL.Query().Get("next"))})
}

// safeNext keeps a post-login redirect on this console.
func safeNext(n string) string {
	if !strings.HasPrefix(n, "/") || strings.HasPrefix(n, "//") || strings.HasPrefix(n, "/\\") {
		return "/racks"
	}
	return n
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.execute(w, http.StatusBadRequest, "login.html", loginData{Error: "the sign-in form could not be read"})
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	token := strings.TrimSpace(r.PostForm.Get("token"))
	token = strings.TrimPrefix(token, "Bearer ")
	if token == "" {
		s.execute(w, http.StatusBadRequest, "login.html", loginData{Error: "paste a bearer token (kubectl create token NAME, or your OIDC ID token)", Next: next})
		return
	}
	addr := remoteAddr(r)
	if !s.failed.Allow(addr) {
		s.execute(w, http.StatusTooManyRequests, "login.html", loginData{Error: "too many failed sign-ins from your address; wait a minute and try again", Next: next})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	sess, err := s.sessions.signIn(ctx, token)
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, errBadToken) {
			status = http.StatusUnauthorized
			s.failed.Failure(addr)
		}
		s.cfg.Log.Info("console sign-in refused", "remote", r.RemoteAddr, "reason", err.Error())
		s.execute(w, status, "login.html", loginData{Error: err.Error(), Next: next})
		return
	}
	s.cfg.Log.Info("console sign-in", "user", sess.user, "remote", r.RemoteAddr)
	// Start reading the default namespace now: the first page is next.
	go func() {
		ctx, cancel := context.WithTimeout(sess.ctx, time.Minute)
		defer cancel()
		_ = sess.store(s.cfg.Namespace).ensure(ctx, kindHosts, kindMachines)
	}()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sess.id, Path: "/", HttpOnly: true, Secure: s.cfg.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.cfg.SessionMax / time.Second)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if sess := s.sessions.get(r); sess != nil {
		if !validCSRF(sess, r) && r.PostFormValue("csrf") != sess.csrf {
			http.Error(w, "missing or wrong CSRF token", http.StatusForbidden)
			return
		}
		s.cfg.Log.Info("console sign-out", "user", sess.user)
		s.sessions.remove(sess)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: s.cfg.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func remoteAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// signedIn returns the request's session, or sends the person to sign in.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request) *session {
	sess := s.sessions.get(r)
	if sess == nil {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	}
	return sess
}

// namespace of a request: ?ns=, else the configured default.
func (s *Server) namespace(r *http.Request) string {
	if v, ok := r.URL.Query()["ns"]; ok {
		return v[0]
	}
	return s.cfg.Namespace
}

var funcs = template.FuncMap{
	"lower": strings.ToLower,
	"join":  strings.Join,
	"add":   func(a, b int) int { return a + b },
	"pct": func(a, b int) int {
		if b == 0 {
			return 0
		}
		return a * 100 / b
	},
}
