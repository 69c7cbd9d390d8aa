package inplace

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimecatalog "sigs.k8s.io/cluster-api/api/runtime/catalog"
	hooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxBodyBytes caps a request body. The largest request carries six
// objects (current and desired Machine, infrastructure and bootstrap
// object), each at most what etcd stores (1.5 MiB); anything beyond is
// refused unread.
const MaxBodyBytes = 10 << 20

// maxInFlight bounds the requests read and answered at once, so a flood
// of large bodies holds at most maxInFlight*MaxBodyBytes in memory.
const maxInFlight = 8

// requestTimeout bounds one answer, API calls included; Cluster API gives
// up after the handler's timeoutSeconds anyway.
const requestTimeout = 25 * time.Second

// Options configure a Server.
type Options struct {
	// Addr is where Start listens, e.g. ":9443".
	Addr string
	// CertDir holds tls.crt and tls.key (PEM), reread when they change
	// (cert-manager renews them in place).
	CertDir string
	// CertSecret, instead of CertDir, serves the certificate of a Secret,
	// made and renewed by Anvil unless someone else made it.
	CertSecret *CertSecret
	// Reader reads the objects UpdateMachine acts on; the manager's
	// APIReader, so that Cluster API's annotations are current.
	Reader client.Reader
	// Client patches the Anvil Machine.
	Client client.Client
	Logger logr.Logger
}

// Server is the runtime extension. It is a manager Runnable that runs on
// every replica (Cluster API calls whichever the Service picks).
type Server struct {
	opts     Options
	certs    certSource
	catalog  *runtimecatalog.Catalog
	up       *updater
	inFlight chan struct{}
	log      logr.Logger
	mux      *http.ServeMux
}

// certSource is where the serving certificate comes from: files
// (certwatcher) or a Secret (CertSecret). Start keeps it current.
type certSource interface {
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
	Start(context.Context) error
}

// New loads the certificate (an error names the file that is missing or
// bad; a CertSecret is read when the server starts) and builds the
// handlers.
func New(o Options) (*Server, error) {
	if o.Reader == nil || o.Client == nil {
		return nil, errors.New("capi/inplace: Reader and Client are required")
	}
	var certs certSource = o.CertSecret
	if o.CertSecret == nil {
		crt, key := filepath.Join(o.CertDir, "tls.crt"), filepath.Join(o.CertDir, "tls.key")
		w, err := certwatcher.New(crt, key)
		if err != nil {
			return nil, fmt.Errorf("loading the serving certificate %s and key %s: %w", crt, key, err)
		}
		certs = w
	}
	cat := runtimecatalog.New()
	if err := hooksv1.AddToCatalog(cat); err != nil {
		return nil, err
	}
	s := &Server{opts: o, certs: certs, catalog: cat, up: &updater{reader: o.Reader, writer: o.Client},
		inFlight: make(chan struct{}, maxInFlight), log: o.Logger, mux: http.NewServeMux()}
	s.mux.HandleFunc("POST "+s.path(hooksv1.Discovery, ""), s.serveDiscovery)
	s.mux.HandleFunc("POST "+s.path(hooksv1.CanUpdateMachine, HandlerCanUpdateMachine), s.serveCanUpdateMachine)
	s.mux.HandleFunc("POST "+s.path(hooksv1.CanUpdateMachineSet, HandlerCanUpdateMachineSet), s.serveCanUpdateMachineSet)
	s.mux.HandleFunc("POST "+s.path(hooksv1.UpdateMachine, HandlerUpdateMachine), s.serveUpdateMachine)
	return s, nil
}

// handlers is what discovery announces. Failure policy Fail everywhere:
// with Ignore, Cluster API would take an unreachable extension's silence
// for "nothing claimed" (a replacement instead of an in-place update) and,
// worse, for "UpdateMachine done".
var handlers = []struct {
	name    string
	hook    runtimecatalog.Hook
	timeout int32
}{
	{HandlerCanUpdateMachine, hooksv1.CanUpdateMachine, 10},       // pure: no API call
	{HandlerCanUpdateMachineSet, hooksv1.CanUpdateMachineSet, 10}, // pure: no API call
	{HandlerUpdateMachine, hooksv1.UpdateMachine, 20},             // three reads and a patch
}

func (s *Server) gvh(h runtimecatalog.Hook) runtimecatalog.GroupVersionHook {
	gvh, err := s.catalog.GroupVersionHook(h)
	if err != nil {
		panic(err) // the hooks are the catalog's own
	}
	return gvh
}

// path is where Cluster API's runtime client posts a hook's requests.
func (s *Server) path(h runtimecatalog.Hook, name string) string {
	return runtimecatalog.GVHToPath(s.gvh(h), name)
}

// NeedLeaderElection: every replica answers.
func (s *Server) NeedLeaderElection() bool { return false }

// Start listens on Options.Addr and serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("cluster API extension: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves HTTPS (TLS 1.2 or later, HTTP/2 and HTTP/1.1) on ln until
// ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		if err := s.certs.Start(ctx); err != nil {
			s.log.Error(err, "watching the serving certificate")
		}
	}()
	srv := &http.Server{
		Handler:           s.mux,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certs.GetCertificate},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      requestTimeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// TLS handshake noise from scanners goes to the debug log.
		ErrorLog: log.New(logWriter{s.log.V(1)}, "", 0),
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	s.log.Info("serving Cluster API in-place update hooks", "addr", ln.Addr().String(),
		"handlers", []string{HandlerCanUpdateMachine, HandlerCanUpdateMachineSet, HandlerUpdateMachine})
	if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	req, resp := &hooksv1.DiscoveryRequest{}, &hooksv1.DiscoveryResponse{}
	if s.read(w, r, hooksv1.Discovery, req, resp) {
		resp.Status = hooksv1.ResponseStatusSuccess
		fail := hooksv1.FailurePolicyFail
		for _, h := range handlers {
			gvh := s.gvh(h.hook)
			resp.Handlers = append(resp.Handlers, hooksv1.ExtensionHandler{
				Name:           h.name,
				RequestHook:    hooksv1.GroupVersionHook{APIVersion: gvh.GroupVersion().String(), Hook: gvh.Hook},
				TimeoutSeconds: &h.timeout,
				FailurePolicy:  &fail,
			})
		}
	}
	s.write(w, resp)
}

func (s *Server) serveCanUpdateMachine(w http.ResponseWriter, r *http.Request) {
	req, resp := &hooksv1.CanUpdateMachineRequest{}, &hooksv1.CanUpdateMachineResponse{}
	if s.read(w, r, hooksv1.CanUpdateMachine, req, resp) {
		c := canUpdateMachine(req, resp)
		s.log.Info("CanUpdateMachine", "machine", objName(req.Desired.Machine.Namespace, req.Desired.Machine.Name), "claimed", c.patch != nil, "message", c.why)
	}
	s.write(w, resp)
}

func (s *Server) serveCanUpdateMachineSet(w http.ResponseWriter, r *http.Request) {
	req, resp := &hooksv1.CanUpdateMachineSetRequest{}, &hooksv1.CanUpdateMachineSetResponse{}
	if s.read(w, r, hooksv1.CanUpdateMachineSet, req, resp) {
		c := canUpdateMachineSet(req, resp)
		s.log.Info("CanUpdateMachineSet", "machineSet", objName(req.Desired.MachineSet.Namespace, req.Desired.MachineSet.Name), "claimed", c.patch != nil, "message", c.why)
	}
	s.write(w, resp)
}

func (s *Server) serveUpdateMachine(w http.ResponseWriter, r *http.Request) {
	req, resp := &hooksv1.UpdateMachineRequest{}, &hooksv1.UpdateMachineResponse{}
	if s.read(w, r, hooksv1.UpdateMachine, req, resp) {
		// Only the name is taken from the request; the rest of it (the
		// desired spec, infrastructure and bootstrap objects) is ignored.
		key := types.NamespacedName{Namespace: req.Desired.Machine.Namespace, Name: req.Desired.Machine.Name}
		var o outcome
		if validation.IsDNS1123Label(key.Namespace) != nil || validation.IsDNS1123Subdomain(key.Name) != nil {
			o = failure("the request names no valid Machine (desired.machine.metadata.namespace and name)")
		} else {
			ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
			o = s.up.update(ctx, key)
			cancel()
		}
		resp.Status, resp.Message, resp.RetryAfterSeconds = o.status, o.message, o.retryAfter
		kv := []any{"machine", objName(key.Namespace, key.Name), "status", o.status, "retryAfterSeconds", o.retryAfter, "message", o.message}
		if o.patched {
			kv = append(kv, "setVersion", true)
		}
		s.log.Info("UpdateMachine", kv...)
	}
	s.write(w, resp)
}

// read decodes the request body into req; on any problem it sets a
// Failure on resp (never echoing the body) and returns false.
func (s *Server) read(w http.ResponseWriter, r *http.Request, hook runtimecatalog.Hook, req runtime.Object, resp hooksv1.ResponseObject) bool {
	gvh := s.gvh(hook)
	if gvk, err := s.catalog.Response(gvh); err == nil {
		resp.GetObjectKind().SetGroupVersionKind(gvk)
	}
	fail := func(msg string) bool {
		resp.SetStatus(hooksv1.ResponseStatusFailure)
		resp.SetMessage(msg)
		s.log.Info("refused a hook request", "hook", gvh.Hook, "reason", msg, "remote", r.RemoteAddr)
		return false
	}
	select {
	case s.inFlight <- struct{}{}:
		defer func() { <-s.inFlight }()
	case <-r.Context().Done():
		return fail("too many requests at once")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return fail(fmt.Sprintf("request body over %d bytes", int64(MaxBodyBytes)))
		}
		return fail("reading the request body failed")
	}
	if err := json.Unmarshal(body, req); err != nil {
		return fail("the request body is not a " + gvh.Hook + "Request in JSON")
	}
	if want, err := s.catalog.Request(gvh); err == nil {
		if got := req.GetObjectKind().GroupVersionKind(); !got.Empty() && got != want {
			return fail("the request's apiVersion and kind are not " + want.GroupVersion().String() + ", " + want.Kind)
		}
	}
	return true
}

func (s *Server) write(w http.ResponseWriter, resp hooksv1.ResponseObject) {
	b, err := json.Marshal(resp)
	if err != nil {
		http.Error(w, "encoding the response failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// objName is ns/name for the log, or a placeholder where the request's
// values are not Kubernetes names (they are the caller's, unchecked).
func objName(ns, name string) string {
	if validation.IsDNS1123Label(ns) != nil || validation.IsDNS1123Subdomain(name) != nil {
		return "<invalid name>"
	}
	return ns + "/" + name
}
