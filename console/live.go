package console

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// patch is one live update: an element to replace by ID.
type patch struct {
	ID   string `json:"id"`
	HTML string `json:"html"`
}

// live streams a page's changes as server-sent events: the store's
// watches wake it, it renders the view again (at most once per Debounce,
// so a burst of changes becomes a few updates) and
// sends the regions whose HTML changed ("patch"), or the whole list when
// regions came or went. The browser only swaps elements: no polling.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	sess := s.sessions.get(r)
	if sess == nil {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, "event: signedout\ndata: {}\n\n")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	v := view(q.Get("view"))
	if kindsOf(v) == nil {
		http.Error(w, "unknown view "+strconv.Quote(string(v)), http.StatusBadRequest)
		return
	}
	ns := q.Get("ns")
	req := request{ns: ns, q: q}
	st := sess.store(ns)
	st.touch(1)
	defer st.touch(-1)
	ctx := r.Context()
	if err := st.ensure(ctx, kindsOf(v)...); err != nil {
		http.Error(w, "reading the API server failed: "+apiMessage(err), http.StatusBadGateway)
		return
	}
	extra := make(chan struct{}, 1)
	if v == viewHost {
		req.hostNS, req.hostName = ns, q.Get("host")
		ew, err := st.watchEvents(ctx, "Host", req.hostNS, req.hostName, func() {
			select {
			case extra <- struct{}{}:
			default:
			}
		})
		if err == nil {
			defer ew.cancel()
			req.events = func() ([]*corev1.Event, error) { return ew.events(), nil }
		} else {
			req.events = func() ([]*corev1.Event, error) { return nil, err }
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()

	sent := map[string][32]byte{}
	var order []string
	pageGen, _ := strconv.ParseUint(q.Get("gen"), 10, 64)
	first := true
	heartbeat := time.NewTicker(25 * time.Second)
	defer heartbeat.Stop()
	for {
		gen, changed := st.generation()
		lastRender := time.Now()
		req.now = s.cfg.Now()
		out, err := s.render(st, v, req)
		if err != nil {
			s.cfg.Log.Error(err, "console: rendering a live update", "view", v)
			return
		}
		ids := make([]string, 0, len(out.Regions))
		for _, rg := range out.Regions {
			ids = append(ids, rg.ID)
		}
		// The whole list when the page is older than the store (first
		// render) or regions came or went; else the regions that changed.
		whole := first && gen != pageGen || !first && !slices.Equal(ids, order)
		var patches []patch
		var all strings.Builder
		all.WriteString(`<div id="regions">`)
		for _, rg := range out.Regions {
			sum := sha256.Sum256([]byte(rg.HTML))
			if old, ok := sent[rg.ID]; !whole && !first && (!ok || old != sum) {
				patches = append(patches, patch{ID: rg.ID, HTML: string(rg.HTML)})
			}
			sent[rg.ID] = sum
			all.WriteString(string(rg.HTML))
		}
		all.WriteString(`</div>`)
		if whole {
			patches = []patch{{ID: "regions", HTML: all.String()}}
		}
		order, first = ids, false
		if len(patches) > 0 {
			b, _ := json.Marshal(patches)
			if _, err := fmt.Fprintf(w, "event: patch\ndata: %s\n\n", b); err != nil {
				return
			}
			fl.Flush()
		}
		if !s.waitChange(ctx, sess, w, fl, heartbeat.C, changed, extra) {
			return
		}
		// The first change after a quiet spell goes out at once; within
		// Debounce of the last render the rest of a burst is gathered.
		st.touch(0)
		if wait := s.cfg.Debounce - time.Since(lastRender); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// waitChange waits for the store or the extra watch to change, keeping
// the stream alive meanwhile. false: the stream is over.
func (s *Server) waitChange(ctx context.Context, sess *session, w http.ResponseWriter, fl http.Flusher, heartbeat <-chan time.Time, changed, extra <-chan struct{}) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-sess.ctx.Done():
			_, _ = fmt.Fprint(w, "event: signedout\ndata: {}\n\n")
			fl.Flush()
			return false
		case <-heartbeat:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return false
			}
			fl.Flush()
		case <-changed:
			return true
		case <-extra:
			return true
		}
	}
}
