package redfishsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Server-sent events (Options.EventStream): the EventService advertises
// ServerSentEventUri, and a GET there (authenticated, like any other
// resource) is held open as a text/event-stream. Every power transition is
// sent to every open stream as an Event resource with one record,
// ResourceEvent.1.3.ResourcePoweredOn or ResourcePoweredOff, whose
// OriginOfCondition is the system. As on real BMCs:
//   - only events after the subscription are sent (no replay);
//   - a $filter the service does not support is refused (400);
//   - a stream opened with a session ends when the session does
//     (ExpireSessions, DELETE of the session);
//   - a subscriber that does not keep up is dropped (its buffer is full);
//   - at most MaxEventStreams are open at once (503 beyond).

const ssePath = "/redfish/v1/EventService/SSE"

type eventSub struct {
	token string // the session it was opened with, "" for basic auth
	ch    chan []byte
	done  chan struct{} // closed to end the stream from the server side
}

func (s *Server) setupEvents() {
	es := s.mock.docs[rootPath+"/EventService"]
	if es == nil || !s.opts.EventStream {
		return
	}
	es["ServerSentEventUri"] = ssePath
	es["@odata.type"] = "#EventService.v1_9_0.EventService"
}

// serveEvents holds the stream open until the client goes, the server
// closes or the stream is ended.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	if !s.allow(w, r, "GET") {
		return
	}
	if r.URL.RawQuery != "" {
		writeError(w, http.StatusBadRequest, s.reg.msg("QueryNotSupported", nil))
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, s.reg.msg("InternalError", nil))
		return
	}
	sub := &eventSub{token: r.Header.Get("X-Auth-Token"), ch: make(chan []byte, 64), done: make(chan struct{})}
	s.mu.Lock()
	if s.closed || len(s.subs) >= s.opts.MaxEventStreams {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, s.reg.msg("ServiceTemporarilyUnavailable", nil, "60"))
		return
	}
	s.subs[sub] = struct{}{}
	s.stats.EventStreamsOpened++
	s.mu.Unlock()
	defer s.dropSub(sub)

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": anvil redfishsim event stream\n\n")
	fl.Flush()
	keepAlive := time.NewTicker(s.opts.EventKeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.done:
			return
		case b := <-sub.ch:
			if _, err := w.Write(b); err != nil {
				return
			}
			fl.Flush()
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ":\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

func (s *Server) dropSub(sub *eventSub) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endSubLocked(sub)
}

func (s *Server) endSubLocked(sub *eventSub) {
	if _, ok := s.subs[sub]; ok {
		delete(s.subs, sub)
		close(sub.done)
	}
}

// publishPowerLocked sends a system's power transition to every stream.
// The caller holds s.mu.
func (s *Server) publishPowerLocked(sys *system, on bool) {
	if len(s.subs) == 0 {
		return
	}
	s.eventSeq++
	id := strconv.Itoa(s.eventSeq)
	msgID, text := "ResourceEvent.1.3.ResourcePoweredOff", "The resource '%s' has powered off."
	if on {
		msgID, text = "ResourceEvent.1.3.ResourcePoweredOn", "The resource '%s' has powered on."
	}
	doc := map[string]any{
		"@odata.type": "#Event.v1_7_0.Event",
		"Id":          id,
		"Name":        "Event Array",
		"Context":     "",
		"Events": []map[string]any{{
			"EventId":           id,
			"EventTimestamp":    time.Now().UTC().Format(time.RFC3339),
			"MessageId":         msgID,
			"Message":           fmt.Sprintf(text, sys.path),
			"MessageArgs":       []string{sys.path},
			"MessageSeverity":   "OK",
			"OriginOfCondition": map[string]any{"@odata.id": sys.path},
		}},
	}
	body, _ := json.Marshal(doc)
	frame := []byte("id: " + id + "\ndata: " + string(body) + "\n\n")
	for sub := range s.subs {
		select {
		case sub.ch <- frame:
			s.stats.EventsSent++
		default:
			// A client that does not read is dropped, not waited for.
			s.stats.EventStreamsDropped++
			s.endSubLocked(sub)
		}
	}
}

// endSessionStreamsLocked ends the streams opened with token ("" for
// every stream opened with a session).
func (s *Server) endSessionStreamsLocked(token string) {
	for sub := range s.subs {
		if sub.token != "" && (token == "" || sub.token == token) {
			s.endSubLocked(sub)
		}
	}
}

// EventStreams is the number of open event streams.
func (s *Server) EventStreams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

// EndEventStreams closes every open event stream, as a BMC whose web
// server restarts does; clients must subscribe again.
func (s *Server) EndEventStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs {
		s.endSubLocked(sub)
	}
}

// PushPowerButton toggles a system's power at once, as someone at the
// server would: the change Anvil did not make (a power poll or an event
// finds it).
func (s *Server) PushPowerButton(id string) error {
	s.mu.Lock()
	sys := s.system(id)
	s.mu.Unlock()
	if sys == nil {
		return fmt.Errorf("redfishsim: no system %q", id)
	}
	s.applyReset(sys, "PushPowerButton")
	return nil
}
