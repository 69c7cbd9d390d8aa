package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const sessionCookie = "anvil_console"

// session is one signed-in person. Their token stays in this process's
// memory: the browser holds only a random session ID (an HttpOnly,
// SameSite=Strict cookie) and a CSRF token for its actions.
type session struct {
	id, csrf string
	user     string
	groups   []string
	created  time.Time

	rest *rest.Config // the API server with the person's token, nothing of Anvil's
	c    client.WithWatch

	mu       sync.Mutex
	lastSeen time.Time
	stores   map[string]*store // by namespace ("" all)
	ctx      context.Context
	cancel   context.CancelFunc
}

func (s *session) seen(now time.Time) {
	s.mu.Lock()
	s.lastSeen = now
	s.mu.Unlock()
}

// store of a namespace, started on first use.
func (s *session) store(ns string) *store {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stores[ns]
	if st == nil {
		st = newStore(s.ctx, s.c, ns)
		s.stores[ns] = st
	}
	st.touch(0)
	return st
}

// dropIdleStores stops the informers nobody looked at for idle.
func (s *session) dropIdleStores(now time.Time, idle time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ns, st := range s.stores {
		if t := st.idleSince(); !t.IsZero() && now.Sub(t) > idle {
			st.stop()
			delete(s.stores, ns)
		}
	}
}

func (s *session) end() { s.cancel() }

// apiVersion is the API server's version, read as the person.
func (s *session) apiVersion() (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(s.rest)
	if err != nil {
		return "", err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// sessions holds the signed-in people, bounded in number and age.
type sessions struct {
	mu   sync.Mutex
	byID map[string]*session
	cfg  *Config
}

func randomID() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// errBadToken is a token the API server did not accept.
var errBadToken = errors.New("the API server did not accept this token (expired, revoked or mistyped)")

// signIn checks the token with the API server (a SelfSubjectReview, which
// every authenticated user may create) and opens a session for whoever it
// names.
func (ss *sessions) signIn(ctx context.Context, token string) (*session, error) {
	cfg := rest.CopyConfig(ss.cfg.API)
	cfg.BearerToken = token
	cfg.QPS, cfg.Burst = 50, 100
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: ss.cfg.Scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		if apierrors.IsUnauthorized(err) {
			return nil, errBadToken
		}
		return nil, fmt.Errorf("asking the API server who this token is: %w", err)
	}
	now := ss.cfg.Now()
	sctx, cancel := context.WithCancel(context.Background())
	s := &session{id: randomID(), csrf: randomID(), user: review.Status.UserInfo.Username, groups: review.Status.UserInfo.Groups,
		created: now, lastSeen: now, rest: cfg, c: c, stores: map[string]*store{}, ctx: sctx, cancel: cancel}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.byID) >= ss.cfg.MaxSessions {
		ss.evictOldestLocked()
	}
	ss.byID[s.id] = s
	return s, nil
}

func (ss *sessions) evictOldestLocked() {
	var oldest *session
	for _, s := range ss.byID {
		if oldest == nil || s.created.Before(oldest.created) {
			oldest = s
		}
	}
	if oldest != nil {
		oldest.end()
		delete(ss.byID, oldest.id)
	}
}

// get returns the live session of a request (nil if none or expired).
func (ss *sessions) get(r *http.Request) *session {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	ss.mu.Lock()
	s := ss.byID[ck.Value]
	ss.mu.Unlock()
	if s == nil {
		return nil
	}
	now := ss.cfg.Now()
	s.mu.Lock()
	expired := now.Sub(s.lastSeen) > ss.cfg.SessionIdle || now.Sub(s.created) > ss.cfg.SessionMax
	s.mu.Unlock()
	if expired {
		ss.remove(s)
		return nil
	}
	s.seen(now)
	return s
}

func (ss *sessions) remove(s *session) {
	ss.mu.Lock()
	delete(ss.byID, s.id)
	ss.mu.Unlock()
	s.end()
}

// sweep ends expired sessions and stops idle stores.
func (ss *sessions) sweep() {
	now := ss.cfg.Now()
	ss.mu.Lock()
	var all []*session
	for _, s := range ss.byID {
		all = append(all, s)
	}
	ss.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		expired := now.Sub(s.lastSeen) > ss.cfg.SessionIdle || now.Sub(s.created) > ss.cfg.SessionMax
		s.mu.Unlock()
		if expired {
			ss.remove(s)
			continue
		}
		s.dropIdleStores(now, ss.cfg.StoreIdle)
	}
}

// validCSRF compares the request's CSRF token with the session's.
func validCSRF(s *session, r *http.Request) bool {
	got := r.Header.Get("X-CSRF-Token")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}
