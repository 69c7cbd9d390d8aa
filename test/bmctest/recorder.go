package bmctest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Recorder is an HTTP listener standing where a refused BMC address
// points (an API server, a metadata service): it records every connection
// and request, and answers like a Redfish service without sessions, so a
// driver that got through would go on to send basic-auth credentials.
type Recorder struct {
	srv *httptest.Server

	mu    sync.Mutex
	conns int
	reqs  []RecordedRequest
}

// RecordedRequest is one request a Recorder got.
type RecordedRequest struct {
	Method, Path  string
	Authorization string // the header, as sent
	Body          string
}

// StartRecorder listens on addr (e.g. "127.0.0.2:0") until the test ends.
func StartRecorder(t testing.TB, addr string) *Recorder {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &Recorder{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Listener.Close()
	r.srv.Listener = ln
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.mu.Lock()
			r.conns++
			r.mu.Unlock()
		}
	}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *Recorder) serve(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(req.Body, 64<<10))
	r.mu.Lock()
	r.reqs = append(r.reqs, RecordedRequest{Method: req.Method, Path: req.URL.Path, Authorization: req.Header.Get("Authorization"), Body: string(b)})
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if req.URL.Path == "/redfish/v1/" || req.URL.Path == "/redfish/v1" {
		_, _ = io.WriteString(w, `{"@odata.id":"/redfish/v1/","Systems":{"@odata.id":"/redfish/v1/Systems"}}`)
		return
	}
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, `{"error":{"code":"Forbidden","message":"forbidden"}}`)
}

// Port is the listening port.
func (r *Recorder) Port() int { return r.srv.Listener.Addr().(*net.TCPAddr).Port }

// HostPort is "ip:port" of the listener.
func (r *Recorder) HostPort() string { return r.srv.Listener.Addr().String() }

// PortString is Port as a string.
func (r *Recorder) PortString() string { return strconv.Itoa(r.Port()) }

// Conns is how many connections were accepted.
func (r *Recorder) Conns() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns
}

// Requests are the requests received so far.
func (r *Recorder) Requests() []RecordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RecordedRequest(nil), r.reqs...)
}

// String shows the request without the credentials it carried.
func (r RecordedRequest) String() string {
	s := r.Method + " " + r.Path
	if r.Authorization != "" {
		scheme, _, _ := strings.Cut(r.Authorization, " ")
		s += " with Authorization: " + scheme + " [redacted]"
	}
	if r.Body != "" {
		s += fmt.Sprintf(" and a %d-byte body", len(r.Body))
	}
	return s
}
