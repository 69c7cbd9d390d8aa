package console

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
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
	var lastRender time.Time
	heartbeat := time.NewTicker(25 * time.Second)
	defer heartbeat.Stop()
	for {
		gen, changed := st.generation()
		lastRender = time.Now()
		req.now = s.cfg.Now()
		out, err := s.render(st, v, req)
		if err != nil {
			s.cfg.Log.Error(err, "console: rendering a live update", "view", v)
			return
		}
		var patches []patch
		ids := make([]string, 0, len(out.Regions))
		for _, rg := range out.Regions {
			ids = append(ids, rg.ID)
		}
		switch {
		case first && gen == pageGen:
			// The page holds this generation already.
			for _, rg := range out.Regions {
				sent[rg.ID] = sha256.Sum256([]byte(rg.HTML))
			}
		case !first && strings.Join(ids, "\x00") != strings.Join(order, "\x00"):
			// Regions came or went: the whole list.
			var b strings.Builder
			b.WriteString(`<div id="regions">`)
			for _, rg := range out.Regions {
				b.WriteString(string(rg.HTML))
				sent[rg.ID] = sha256.Sum256([]byte(rg.HTML))
			}
			b.WriteString(`</div>`)
			patches = append(patches, patch{ID: "regions", HTML: b.String()})
		default:
			for _, rg := range out.Regions {
				sum := sha256.Sum256([]byte(rg.HTML))
				if old, ok := sent[rg.ID]; ok && old == sum {
					continue
				}
				sent[rg.ID] = sum
				patches = append(patches, patch{ID: rg.ID, HTML: string(rg.HTML)})
			}
			if first && strings.Join(ids, "\x00") != "" {
				// The page is older than the store: replace everything,
				// region list included.
				var b strings.Builder
				b.WriteString(`<div id="regions">`)
				for _, rg := range out.Regions {
					b.WriteString(string(rg.HTML))
				}
				b.WriteString(`</div>`)
				patches = []patch{{ID: "regions", HTML: b.String()}}
			}
		}
		order, first = ids, false
		if len(patches) > 0 {
			b, _ := json.Marshal(patches)
			if _, err := fmt.Fprintf(w, "event: patch\ndata: %s\n\n", b); err != nil {
				return
			}
			fl.Flush()
		}
		// Wait for a change. The first after a quiet spell goes out at
		// once; within Debounce of the last render, the rest of a burst
		// is gathered until Debounce has passed.
		select {
		case <-ctx.Done():
			return
		case <-sess.ctx.Done():
			_, _ = fmt.Fprint(w, "event: signedout\ndata: {}\n\n")
			fl.Flush()
			return
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
			continue
		case <-changed:
		case <-extra:
		}
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
