package redfishsim

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const maxBody = 1 << 20

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("OData-Version", "4.0")
	w.Header().Set("Cache-Control", "no-cache")
	s.opts.Logger.V(1).Info("request", "method", r.Method, "path", r.URL.Path)

	delay, f := s.decide()
	if f == faultTimeout {
		s.hang(w, r)
		return
	}
	fail := f == faultError
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if fail {
		if s.opts.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(s.opts.RetryAfter.Seconds()))))
		}
		secs := strconv.Itoa(int(math.Ceil(s.opts.RetryAfter.Seconds())))
		writeError(w, s.opts.ErrorStatus, s.reg.msg("ServiceTemporarilyUnavailable", nil, secs))
		return
	}

	if s.redirect(w, r) {
		return
	}
	p := strings.TrimRight(r.URL.Path, "/")
	if p == "" {
		p = "/"
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if s.servePublic(w, p) {
			return
		}
	}
	if p == s.sessionsPath() && r.Method == http.MethodPost && !s.opts.NoSessionService {
		s.login(w, r, p)
		return
	}
	if !s.authorized(w, r) {
		return
	}
	s.route(w, r, p)
}

// chaos decides the injected latency and whether to fail this request
// with ErrorStatus.
func (s *Server) chaos() (time.Duration, bool) {
	d, f := s.decide()
	return d, f == faultError
}

type fault int

const (
	faultNone fault = iota
	faultError
	faultTimeout
)

// decide draws the injected latency and fault of one request. The draws
// of Latency/Jitter and ErrorRate come first and in the same order as
// always, so a seed gives the same sequence as before the log-normal
// latency and timeouts existed (when those are off).
func (s *Server) decide() (time.Duration, fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests++
	d := s.opts.Latency
	if s.opts.Jitter > 0 {
		d += time.Duration(s.rnd.Int63n(int64(s.opts.Jitter)))
	}
	f := faultNone
	if s.failNext > 0 {
		s.failNext--
		f = faultError
	} else if s.opts.ErrorRate > 0 && s.rnd.Float64() < s.opts.ErrorRate {
		f = faultError
	}
	if s.opts.LatencyMedian > 0 {
		d += logNormal(s.rnd, s.opts.LatencyMedian, s.opts.LatencyP99)
	}
	if f == faultNone && s.opts.TimeoutRate > 0 && s.rnd.Float64() < s.opts.TimeoutRate {
		f = faultTimeout
	}
	switch f {
	case faultError:
		s.stats.InjectedErrors++
	case faultTimeout:
		s.stats.InjectedTimeouts++
	}
	return d, f
}

// redirect answers a request under one of Options.Redirects, before any
// authentication, as a front end would.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request) bool {
	for _, rd := range s.opts.Redirects {
		if rd.From == "" || !strings.HasPrefix(r.URL.Path, rd.From) || (strings.HasPrefix(rd.To, "/") && strings.HasPrefix(r.URL.Path, rd.To)) {
			continue
		}
		loc := rd.To + strings.TrimPrefix(r.URL.Path, rd.From)
		if r.URL.RawQuery != "" {
			loc += "?" + r.URL.RawQuery
		}
		status := rd.Status
		if status == 0 {
			status = http.StatusTemporaryRedirect
		}
		s.mu.Lock()
		s.stats.Redirected++
		s.mu.Unlock()
		w.Header().Set("Location", loc)
		w.WriteHeader(status)
		return true
	}
	return false
}

// hang holds a request without answering for TimeoutHold (or until the
// client goes away), then drops the connection.
func (s *Server) hang(w http.ResponseWriter, r *http.Request) {
	t := time.NewTimer(s.opts.TimeoutHold)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
	}
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	// Not hijackable (HTTP/2): the closest thing to no answer.
	panic(http.ErrAbortHandler)
}

// servePublic answers the resources a client may read without credentials.
func (s *Server) servePublic(w http.ResponseWriter, p string) bool {
	switch p {
	case "/redfish":
		writeJSON(w, http.StatusOK, map[string]any{"v1": "/redfish/v1/"})
	case rootPath:
		s.serveDoc(w, s.mock.docs[rootPath])
	case rootPath + "/odata":
		s.serveDoc(w, s.odataDoc())
	case rootPath + "/$metadata":
		f, ok := s.mock.files[p]
		if !ok {
			return false
		}
		w.Header().Set("Content-Type", f.contentType)
		_, _ = w.Write(f.body)
	default:
		return false
	}
	return true
}

func (s *Server) odataDoc() map[string]any {
	var values []any
	root := s.mock.docs[rootPath]
	for _, k := range sortedKeys(root) {
		if l, ok := root[k].(map[string]any); ok {
			if id, ok := l["@odata.id"].(string); ok {
				values = append(values, map[string]any{"name": k, "kind": "Singleton", "url": id})
			}
		}
	}
	return map[string]any{"@odata.context": rootPath + "/$metadata", "value": values}
}

// authorized checks the session token or basic credentials and writes a 401
// when neither is valid.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	now := time.Now()
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		// Only this session's idle time matters here; sweeping every
		// session per request would cost O(sessions) with thousands of
		// clients (login and the Sessions collection still sweep).
		s.mu.Lock()
		sess, ok := s.sessions[tok]
		if ok && now.Sub(sess.lastUsed) > s.opts.SessionTimeout {
			delete(s.sessions, tok)
			ok = false
		}
		if ok {
			sess.lastUsed = now
		}
		s.mu.Unlock()
		if ok {
			return true
		}
		s.unauthorized(w, s.reg.msg("NoValidSession", nil))
		return false
	}
	if user, pass, ok := r.BasicAuth(); ok && !s.opts.DisableBasicAuth {
		if s.credentialsOK(user, pass) {
			return true
		}
		s.unauthorized(w, s.reg.msg("ResourceAtUriUnauthorized", nil, r.URL.Path, "Unauthorized"))
		return false
	}
	s.unauthorized(w, s.reg.msg("NoValidSession", nil))
	return false
}

func (s *Server) unauthorized(w http.ResponseWriter, m message) {
	s.mu.Lock()
	s.stats.Unauthorized++
	s.mu.Unlock()
	if !s.opts.DisableBasicAuth {
		w.Header().Set("WWW-Authenticate", `Basic realm="redfishsim"`)
	}
	writeError(w, http.StatusUnauthorized, m)
}

func (s *Server) credentialsOK(user, pass string) bool {
	s.mu.Lock()
	wantUser, wantPass := s.opts.Username, s.opts.Password
	s.mu.Unlock()
	u := subtle.ConstantTimeCompare([]byte(user), []byte(wantUser))
	p := subtle.ConstantTimeCompare([]byte(pass), []byte(wantPass))
	return u&p == 1
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, p string) {
	sessions := s.sessionsPath()
	switch {
	case !s.opts.NoSessionService && p == sessions:
		s.allow(w, r, "GET", "HEAD", "POST")
		if isRead(r) {
			s.serveDoc(w, s.sessionsDoc())
		}
	case !s.opts.NoSessionService && strings.HasPrefix(p, sessions+"/"):
		s.serveSession(w, r, p, strings.TrimPrefix(p, sessions+"/"))
	case s.opts.EventStream && p == ssePath:
		s.serveEvents(w, r)
	case p == s.sysPaths:
		if s.allow(w, r, "GET", "HEAD") {
			s.serveDoc(w, s.systemsDoc())
		}
	case s.systemByResetTarget(p) != nil:
		if s.allow(w, r, "POST") {
			s.reset(w, r, s.systemByResetTarget(p))
		}
	case strings.HasPrefix(p, s.sysPaths+"/"):
		s.routeSystem(w, r, p)
	case s.mgrMedia != "" && (p == s.mgrMedia || strings.HasPrefix(p, s.mgrMedia+"/")):
		s.serveMedia(w, r, s.systems[0], strings.TrimPrefix(p, s.mgrMedia))
	case s.mock.docs[p] != nil:
		if s.allow(w, r, "GET", "HEAD") {
			s.serveDoc(w, s.mock.docs[p])
		}
	case s.mock.files[p].body != nil:
		if s.allow(w, r, "GET", "HEAD") {
			f := s.mock.files[p]
			w.Header().Set("Content-Type", f.contentType)
			_, _ = w.Write(f.body)
		}
	default:
		writeError(w, http.StatusNotFound, s.reg.msg("ResourceMissingAtURI", nil, r.URL.Path))
	}
}

func isRead(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// allow answers 405 (with Allow) unless r.Method is one of methods.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	m := s.reg.msg("GeneralError", nil)
	m.Resolution = fmt.Sprintf("The %s method is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, strings.Join(methods, ", "))
	writeError(w, http.StatusMethodNotAllowed, m)
	return false
}

// etag is a strong ETag over a representation.
func etag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

func marshalDoc(doc map[string]any) []byte {
	b, _ := json.MarshalIndent(doc, "", "  ")
	return b
}

// serveDoc writes a resource with its ETag.
func (s *Server) serveDoc(w http.ResponseWriter, doc map[string]any) {
	b := marshalDoc(doc)
	w.Header().Set("ETag", etag(b))
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// requireJSON enforces Content-Type: application/json on bodies and decodes
// the body into an object. It writes the error response itself.
func (s *Server) requireJSON(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		m := s.reg.msg("GeneralError", nil)
		m.Resolution = "Send the request body as JSON with the header Content-Type: application/json."
		writeError(w, http.StatusUnsupportedMediaType, m)
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, s.reg.msg("MalformedJSON", nil))
		return nil, false
	}
	doc, err := decodeJSONObject(b)
	if err != nil || doc == nil {
		writeError(w, http.StatusBadRequest, s.reg.msg("MalformedJSON", nil))
		return nil, false
	}
	// Trailing garbage is malformed too.
	dec := json.NewDecoder(bytes.NewReader(b))
	var tmp any
	_ = dec.Decode(&tmp)
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, s.reg.msg("MalformedJSON", nil))
		return nil, false
	}
	return doc, true
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// login handles POST to the Sessions collection.
func (s *Server) login(w http.ResponseWriter, r *http.Request, p string) {
	s.mu.Lock()
	s.stats.LoginAttempts++
	s.mu.Unlock()
	body, ok := s.requireJSON(w, r)
	if !ok {
		return
	}
	var msgs []message
	for _, k := range sortedKeys(body) {
		if k != "UserName" && k != "Password" {
			msgs = append(msgs, s.reg.msg("PropertyUnknown", []string{"#/" + k}, k))
		}
	}
	user, uok := body["UserName"].(string)
	pass, pok := body["Password"].(string)
	if !uok {
		msgs = append(msgs, s.reg.msg("PropertyMissing", []string{"#/UserName"}, "UserName"))
	}
	if !pok {
		msgs = append(msgs, s.reg.msg("PropertyMissing", []string{"#/Password"}, "Password"))
	}
	if len(msgs) > 0 {
		writeError(w, http.StatusBadRequest, msgs...)
		return
	}
	if !s.credentialsOK(user, pass) {
		s.mu.Lock()
		s.stats.FailedLogins++
		s.stats.Unauthorized++
		s.mu.Unlock()
		writeError(w, http.StatusUnauthorized, s.reg.msg("ResourceAtUriUnauthorized", nil, p, "Unauthorized"))
		return
	}
	now := time.Now()
	s.mu.Lock()
	s.expireLocked(now)
	if s.opts.MaxSessions > 0 && len(s.sessions) >= s.opts.MaxSessions {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, s.reg.msg("SessionLimitExceeded", nil))
		return
	}
	sess := &session{id: randomHex(8), token: randomHex(24), user: user, lastUsed: now}
	s.sessions[sess.token] = sess
	s.stats.SessionsCreated++
	s.mu.Unlock()
	loc := p + "/" + sess.id
	w.Header().Set("X-Auth-Token", sess.token)
	w.Header().Set("Location", loc)
	writeJSON(w, http.StatusCreated, s.sessionDoc(sess))
}

func (s *Server) sessionDoc(sess *session) map[string]any {
	return map[string]any{
		"@odata.id":   s.sessionsPath() + "/" + sess.id,
		"@odata.type": "#Session.v1_6_0.Session",
		"Id":          sess.id,
		"Name":        "User Session",
		"Description": "Manager User Session",
		"UserName":    sess.user,
	}
}

func (s *Server) sessionsDoc() map[string]any {
	s.mu.Lock()
	s.expireLocked(time.Now())
	ids := make([]string, 0, len(s.sessions))
	for _, sess := range s.sessions {
		ids = append(ids, sess.id)
	}
	s.mu.Unlock()
	return collectionDoc(s.sessionsPath(), "#SessionCollection.SessionCollection", "Session Collection", prefixAll(s.sessionsPath()+"/", ids))
}

func prefixAll(prefix string, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = prefix + id
	}
	return out
}

func collectionDoc(id, typ, name string, members []string) map[string]any {
	ms := make([]any, 0, len(members))
	for _, m := range members {
		ms = append(ms, map[string]any{"@odata.id": m})
	}
	return map[string]any{
		"@odata.id":           id,
		"@odata.type":         typ,
		"Name":                name,
		"Members@odata.count": len(ms),
		"Members":             ms,
	}
}

func (s *Server) serveSession(w http.ResponseWriter, r *http.Request, p, id string) {
	s.mu.Lock()
	var found *session
	for _, sess := range s.sessions {
		if sess.id == id {
			found = sess
		}
	}
	s.mu.Unlock()
	if found == nil {
		writeError(w, http.StatusNotFound, s.reg.msg("ResourceMissingAtURI", nil, p))
		return
	}
	if !s.allow(w, r, "GET", "HEAD", "DELETE") {
		return
	}
	if r.Method == http.MethodDelete {
		s.mu.Lock()
		delete(s.sessions, found.token)
		s.endSessionStreamsLocked(found.token)
		s.stats.SessionsDeleted++
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.serveDoc(w, s.sessionDoc(found))
}

func (s *Server) systemsDoc() map[string]any {
	doc := copyDoc(s.mock.docs[s.sysPaths])
	var ids []string
	for _, sys := range s.systems {
		ids = append(ids, sys.path)
	}
	c := collectionDoc(s.sysPaths, "#ComputerSystemCollection.ComputerSystemCollection", "Computer System Collection", ids)
	doc["Members"], doc["Members@odata.count"] = c["Members"], c["Members@odata.count"]
	return doc
}

// systemDoc renders a system with its live state.
func (s *Server) systemDoc(sys *system) map[string]any {
	doc, _ := s.render(sys, "")
	s.mu.Lock()
	defer s.mu.Unlock()
	doc["PowerState"] = sys.power
	doc["AssetTag"] = sys.assetTag
	boot, _ := doc["Boot"].(map[string]any)
	if boot == nil {
		boot = map[string]any{}
		doc["Boot"] = boot
	}
	set := func(k, v string) {
		if v != "" {
			boot[k] = v
		}
	}
	set("BootSourceOverrideTarget", sys.bootTarget)
	set("BootSourceOverrideEnabled", sys.bootEnabled)
	set("BootSourceOverrideMode", sys.bootMode)
	set("UefiTargetBootSourceOverride", sys.uefiTarget)
	if sys.allowedTargets != nil {
		boot["BootSourceOverrideTarget@Redfish.AllowableValues"] = slices.Clone(sys.allowedTargets)
	}
	return doc
}

// ifMatch checks If-Match against the current representation's ETag.
func ifMatch(r *http.Request, current string) bool {
	h := r.Header.Get("If-Match")
	if h == "" {
		return true
	}
	for _, t := range strings.Split(h, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || t == current {
			return true
		}
	}
	return false
}
