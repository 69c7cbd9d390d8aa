// Package httpboot is the HTTP side of network boot: iPXE scripts per MAC
// (GET /boot/<mac>.ipxe), sha256-verified boot artifacts (GET/HEAD
// /artifacts/<path>, with Range and ETag), optionally the iPXE binaries for
// UEFI HTTP boot (/ipxe/<file>), and whatever other packages mount with
// Handle (config delivery, the agent API). Every request gets one access
// log line and per-endpoint Prometheus metrics.
package httpboot

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/internal/safepath"
)

// Options configures a Server.
type Options struct {
	// ListenAddr for ListenAndServe, default ":80".
	ListenAddr string
	// Scripts answers /boot/<mac>.ipxe. Nil: that endpoint returns 404.
	Scripts ScriptSource
	// ArtifactDir holds artifacts served under /artifacts/. Artifacts
	// gives the expected sha256 per path; nothing without one is served.
	ArtifactDir string
	Artifacts   ArtifactSource
	// OnArtifactMismatch is called (synchronously, keep it short) once per
	// version of a file under ArtifactDir that does not match its digest
	// (requests for it are refused), so the caller can set a condition.
	OnArtifactMismatch func(ArtifactMismatch)
	// CacheDir enables artifacts with an Artifact.URL that are not in
	// ArtifactDir: WantUpstream fetches them into <CacheDir>/<sha256>, and
	// they are served only once verified (Upstream tunes it).
	CacheDir string
	Upstream UpstreamOptions
	// UpstreamClient for those fetches; default: dials and redirects
	// checked by Upstream.Guard (a client set here must guard itself).
	// FetchTimeout bounds one download (default 10m) and
	// MaxArtifactSize its size (default 4 GiB).
	UpstreamClient  *http.Client
	FetchTimeout    time.Duration
	MaxArtifactSize int64
	// IPXEDir, if set, is served read-only under /ipxe/ (no digests; the
	// same iPXE binaries TFTP serves, for UEFI HTTP boot clients).
	IPXEDir string
	// IPXE6Dir, if set, is served read-only under /ipxe6/: the iPXE builds
	// with IPv6 that DHCPv6 hands UEFI HTTP boot clients (IPXEDir's, such
	// as Debian 12's, may have none).
	IPXE6Dir string
	// Registerer receives the metrics; nil keeps them private.
	Registerer prometheus.Registerer
	// Logger for the access log (one line per request) and errors.
	Logger logr.Logger
	// ReadHeaderTimeout (default 10s) and IdleTimeout (default 2m, between
	// requests on a kept-alive connection).
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// WriteStallTimeout (default 30s): a write to a client that moves no
	// byte for this long fails and closes the connection, and so does a
	// read of a request body that gets no byte for this long. There is no
	// deadline for a whole response: artifacts are large and firmware on
	// a slow link is slow, but it keeps reading. A held long poll writes
	// nothing while it waits and is not affected.
	WriteStallTimeout time.Duration
	// MaxConns open connections (default 16384, and at most half of
	// RLIMIT_NOFILE, one descriptor each; the files open to serve
	// downloads are capped apart at a quarter, fileShare) and
	// MaxConnsPerSource from one IP address (default 16). A connection over either gets a 503 and is closed. Every
	// agent holds one connection in its long poll: keep MaxConns above
	// the number of hosts, and MaxConnsPerSource above what one address
	// opens (raise it if clients come through NAT or a proxy).
	MaxConns          int
	MaxConnsPerSource int
	// MaxRanges in a Range header (default 16); more get a 416.
	MaxRanges int
	// TLS, if set, makes Serve speak HTTPS only (its Certificates carry
	// the chain to send; see tlsconf.go). CAInitrd (CAInitrd(caPEM)) is
	// then served at CAInitrdPath and added to boot scripts by
	// WithCAInitrd.
	TLS      *tls.Config
	CAInitrd []byte
}

// Server is the boot HTTP server.
type Server struct {
	opts    Options
	log     logr.Logger
	metrics *metrics
	mux     *http.ServeMux
	verify  *verifier
	fetcher *upstream
	files   fileSlots // files open to serve them (fileShare)

	artifactRoot *os.Root
	cacheRoot    *os.Root
	ipxeRoot     *os.Root
	ipxe6Root    *os.Root

	mu      sync.Mutex
	started bool
}

// New validates opts, opens the configured directories and registers the
// built-in endpoints.
func New(opts Options) (*Server, error) {
	if opts.ListenAddr == "" {
		opts.ListenAddr = ":80"
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = 10 * time.Second
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 2 * time.Minute
	}
	if opts.WriteStallTimeout <= 0 {
		opts.WriteStallTimeout = DefaultWriteStallTimeout
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.MaxConnsPerSource <= 0 {
		opts.MaxConnsPerSource = DefaultMaxConnsPerSource
	}
	if opts.MaxRanges <= 0 {
		opts.MaxRanges = DefaultMaxRanges
	}
	if opts.FetchTimeout <= 0 {
		opts.FetchTimeout = 10 * time.Minute
	}
	if opts.MaxArtifactSize <= 0 {
		opts.MaxArtifactSize = 4 << 30
	}
	s := &Server{opts: opts, log: opts.Logger.WithName("http"), metrics: newMetrics(opts.Registerer), mux: http.NewServeMux(), verify: newVerifier(),
		files: make(fileSlots, fileShare(opts.MaxConns))}
	var err error
	openRoot := func(dir string) *os.Root {
		if dir == "" || err != nil {
			return nil
		}
		var r *os.Root
		r, err = os.OpenRoot(dir)
		return r
	}
	s.artifactRoot = openRoot(opts.ArtifactDir)
	s.cacheRoot = openRoot(opts.CacheDir)
	s.ipxeRoot = openRoot(opts.IPXEDir)
	s.ipxe6Root = openRoot(opts.IPXE6Dir)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("httpboot: %w", err)
	}
	if s.cacheRoot != nil {
		s.fetcher = newUpstream(opts, s.verify, s.log.WithName("upstream"), s.metrics.mismatches.Inc)
	}
	s.mux.HandleFunc("GET /boot/{file}", s.serveScript)
	s.mux.HandleFunc("GET /artifacts/{path...}", s.serveArtifact)
	if s.ipxeRoot != nil {
		s.mux.HandleFunc("GET /ipxe/{path...}", func(w http.ResponseWriter, r *http.Request) { s.serveIPXE(w, r, s.ipxeRoot) })
	}
	if s.ipxe6Root != nil {
		s.mux.HandleFunc("GET /ipxe6/{path...}", func(w http.ResponseWriter, r *http.Request) { s.serveIPXE(w, r, s.ipxe6Root) })
	}
	if opts.TLS != nil && opts.CAInitrd != nil {
		s.mux.HandleFunc("GET "+CAInitrdPath, s.serveCAInitrd)
	}
	return s, nil
}

// Close releases the directories opened by New (Serve does it on return).
func (s *Server) Close() {
	if s.fetcher != nil {
		s.fetcher.close()
	}
	for _, r := range []*os.Root{s.artifactRoot, s.cacheRoot, s.ipxeRoot, s.ipxe6Root} {
		if r != nil {
			r.Close()
		}
	}
}

// Handle mounts another handler on the same server, e.g.
// Handle("GET /config/{token}", h). Patterns follow net/http.ServeMux.
// It must be called before Serve; the handler gets the same access log
// and metrics (endpoint label = pattern).
func (s *Server) Handle(pattern string, h http.Handler) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("httpboot: Handle(%q) after the server started", pattern)
	}
	defer func() {
		if r := recover(); r != nil { // ServeMux panics on bad or conflicting patterns
			err = fmt.Errorf("httpboot: Handle(%q): %v", pattern, r)
		}
	}()
	s.mux.Handle(pattern, h)
	return nil
}

// Handler returns the complete handler (routes, access log, metrics). After
// it is called, Handle fails.
func (s *Server) Handler() http.Handler {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	return s.instrument(s.mux)
}

// Serve serves on ln until ctx is done, then shuts down gracefully (10s).
// Connections are limited as Options says (MaxConns, MaxConnsPerSource,
// WriteStallTimeout).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.Close()
	ln = newLimitListener(ln, fdShare(s.opts.MaxConns, s.log), s.opts.MaxConnsPerSource, s.opts.WriteStallTimeout, s.metrics)
	if s.opts.TLS != nil {
		ln = tls.NewListener(ln, s.opts.TLS)
	}
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return s.baseContext(ctx) },
		ConnContext:       connContext,
		// net/http's own errors (a TLS handshake a client refused: a
		// host whose iPXE trusts another CA) go to our log, not stderr.
		ErrorLog: slog.NewLogLogger(logr.ToSlogHandler(s.log.WithName("server")), slog.LevelInfo),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-errc
	return err
}

// ListenAndServe listens on Options.ListenAddr and calls Serve.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.ListenAddr)
	if err != nil {
		s.Close()
		return fmt.Errorf("httpboot: %w", err)
	}
	return s.Serve(ctx, ln)
}

func (s *Server) serveScript(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		// A script may carry a one-time credential: never render one
		// that is not going to be read.
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	macStr, ok := strings.CutSuffix(r.PathValue("file"), ".ipxe")
	mac, err := net.ParseMAC(macStr)
	if !ok || err != nil || len(mac) != 6 {
		http.NotFound(w, r)
		return
	}
	if s.opts.Scripts == nil {
		http.NotFound(w, r)
		return
	}
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	body, err := s.opts.Scripts.Script(r.Context(), ScriptRequest{MAC: mac, RemoteAddr: remote})
	if errors.Is(err, ErrRateLimited) {
		w.Header().Set("Retry-After", "10")
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
	if err != nil {
		s.log.Error(err, "render boot script", "mac", mac.String())
		http.Error(w, "no boot script", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func (s *Server) serveIPXE(w http.ResponseWriter, r *http.Request, root *os.Root) {
	if !s.files.take(w, s.metrics) {
		return
	}
	defer s.files.release()
	f, fi, name, err := safepath.Open(root, r.PathValue("path"))
	if err != nil {
		if errors.Is(err, safepath.ErrInvalid) {
			http.Error(w, "invalid path", http.StatusBadRequest)
			return
		}
		s.log.V(1).Info("ipxe file refused", "path", r.URL.Path, "error", err.Error())
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	ct := "application/octet-stream"
	if strings.EqualFold(path.Ext(name), ".efi") {
		// The UEFI spec's type for an EFI binary: HTTP boot firmware
		// checks it before it falls back to the URL's extension.
		ct = "application/efi"
	}
	w.Header().Set("Content-Type", ct)
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// instrument wraps the mux with the access log and metrics.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &recorder{ResponseWriter: w, status: http.StatusOK}
		li := &logInfo{}
		r = r.WithContext(context.WithValue(r.Context(), logInfoKey{}, li))
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &stallBody{ReadCloser: r.Body, rc: http.NewResponseController(rw), stall: s.opts.WriteStallTimeout}
		}
		if tooManyRanges(rw, r, s.opts.MaxRanges) {
			_, r.Pattern = s.mux.Handler(r) // for the endpoint label
		} else {
			next.ServeHTTP(rw, r)
		}
		d := time.Since(start)
		endpoint := r.Pattern // set by the mux on this request
		if endpoint == "" {
			endpoint = "unmatched"
		}
		code := strconv.Itoa(rw.status)
		s.metrics.requests.WithLabelValues(endpoint, code).Inc()
		s.metrics.bytes.WithLabelValues(endpoint).Add(float64(rw.bytes))
		s.metrics.latency.WithLabelValues(endpoint).Observe(d.Seconds())
		// Only the path is logged: query strings may carry credentials, and
		// handlers whose paths do replace them with SetLogPath.
		path := r.URL.Path
		if li.path != "" {
			path = li.path
		}
		s.log.Info("request", "method", r.Method, "path", path, "status", rw.status,
			"bytes", rw.bytes, "duration", d.String(), "remote", r.RemoteAddr, "tls", r.TLS != nil)
	})
}

type logInfoKey struct{}

// logInfo is what a handler tells the access log about its request.
type logInfo struct{ path string }

// SetLogPath makes the access log write path instead of the request's own,
// for handlers whose URL paths carry a secret (a NoCloud seed URL cannot
// carry it in a query string). Without the access log it does nothing.
func SetLogPath(r *http.Request, path string) {
	if li, ok := r.Context().Value(logInfoKey{}).(*logInfo); ok {
		li.path = path
	}
}

// recorder captures status and body bytes. It forwards ReadFrom so
// http.ServeContent keeps using sendfile, and Unwrap for
// http.ResponseController.
type recorder struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wroteHeader = true
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) ReadFrom(src io.Reader) (int64, error) {
	r.wroteHeader = true
	if rf, ok := r.ResponseWriter.(io.ReaderFrom); ok {
		n, err := rf.ReadFrom(src)
		r.bytes += n
		return n, err
	}
	n, err := io.Copy(struct{ io.Writer }{r.ResponseWriter}, src)
	r.bytes += n
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

type metrics struct {
	requests   *prometheus.CounterVec
	bytes      *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	mismatches prometheus.Counter
	conns      prometheus.Gauge
	refused    *prometheus.CounterVec
	stalls     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_http_requests_total", Help: "HTTP requests by endpoint (route pattern) and status code.",
		}, []string{"endpoint", "code"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_http_response_bytes_total", Help: "HTTP response body bytes by endpoint.",
		}, []string{"endpoint"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "anvil_http_request_duration_seconds", Help: "HTTP request duration by endpoint.",
			// 0.5 ms to 524 s: the agent's held long polls (up to 300 s)
			// land in a bucket, not in +Inf.
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 11),
		}, []string{"endpoint"}),
		mismatches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "anvil_http_artifact_digest_mismatches_total", Help: "Artifact requests refused because the content did not match its sha256.",
		}),
		conns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "anvil_http_open_connections", Help: "Open HTTP connections (at most --http-max-conns).",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "anvil_http_connections_refused_total", Help: "HTTP connections refused with a 503, by the cap they were over (total, per_source), and requests for a file refused with a 503 while a quarter of the open-file limit is serving files (files).",
		}, []string{"reason"}),
		stalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "anvil_http_write_stalls_total", Help: "HTTP connections closed because a write made no progress for --http-write-stall-timeout.",
		}),
	}
	if reg != nil {
		m.requests = pxe.Register(reg, m.requests)
		m.bytes = pxe.Register(reg, m.bytes)
		m.latency = pxe.Register(reg, m.latency)
		m.mismatches = pxe.Register(reg, m.mismatches)
		m.conns = pxe.Register(reg, m.conns)
		m.refused = pxe.Register(reg, m.refused)
		m.stalls = pxe.Register(reg, m.stalls)
	}
	return m
}
