package redfish

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"anvil.dev/anvil/bmc"
)

// Events (bmc.EventSource): the EventService's server-sent event stream
// (Redfish spec, "Server-sent events"; EventService v1.3+ advertises it as
// ServerSentEventUri). The driver GETs that URI with the session it
// already has and reads "data:" fields, each an Event resource whose
// Events array holds the records. No $filter is sent: BMCs differ in what
// they accept, and a refused filter would cost the whole stream.

var _ bmc.EventSource = (*Driver)(nil)

// maxEventBytes bounds one event's data: a BMC (or something posing as
// one) cannot make the controller hold more than this per stream.
const maxEventBytes = 1 << 20

// SubscribeEvents implements bmc.EventSource.
func (d *Driver) SubscribeEvents(ctx context.Context) (bmc.EventStream, error) {
	cctx, cancel := d.callCtx(ctx)
	defer cancel()
	if _, _, err := d.connect(cctx); err != nil {
		return nil, d.fail("subscribe to events", err)
	}
	var es struct {
		ServiceEnabled     *bool
		ServerSentEventUri string
	}
	status, err := d.getJSON(cctx, serviceRoot+"/EventService", &es)
	switch {
	case err != nil:
		return nil, d.fail("subscribe to events", err)
	case status == http.StatusNotFound:
		return nil, &bmc.Error{Kind: bmc.ErrUnsupported, Op: "subscribe to events", Address: d.addr, Err: errors.New("the BMC has no EventService")}
	case status != http.StatusOK:
		return nil, d.fail("subscribe to events", &httpStatusError{Status: status, Path: serviceRoot + "/EventService"})
	case es.ServiceEnabled != nil && !*es.ServiceEnabled:
		return nil, &bmc.Error{Kind: bmc.ErrUnsupported, Op: "subscribe to events", Address: d.addr, Err: errors.New("the BMC's EventService is disabled (ServiceEnabled false)")}
	case es.ServerSentEventUri == "" || !strings.HasPrefix(es.ServerSentEventUri, "/"):
		return nil, &bmc.Error{Kind: bmc.ErrUnsupported, Op: "subscribe to events", Address: d.addr, Err: errors.New("the BMC's EventService offers no server-sent event stream (ServerSentEventUri)")}
	}

	// The stream lives past this call: its own context, not callCtx's
	// deadline; the dial and the answer's headers are bounded by hand.
	sctx, scancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, d.endpoint+es.ServerSentEventUri, nil)
	if err != nil {
		scancel()
		return nil, d.fail("subscribe to events", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", userAgent)
	type answer struct {
		resp *http.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := d.hc.Do(req)
		got <- answer{resp, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-cctx.Done():
		scancel()
		a = <-got
		if a.err == nil {
			drain(a.resp)
		}
		return nil, d.fail("subscribe to events", cctx.Err())
	}
	if a.err != nil {
		scancel()
		return nil, d.fail("subscribe to events", a.err)
	}
	resp := a.resp
	if resp.StatusCode != http.StatusOK {
		drain(resp)
		scancel()
		return nil, d.fail("subscribe to events", &httpStatusError{Status: resp.StatusCode, Path: es.ServerSentEventUri, Code: redfishCode(resp)})
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		drain(resp)
		scancel()
		return nil, &bmc.Error{Kind: bmc.ErrUnsupported, Op: "subscribe to events", Address: d.addr,
			Err: fmt.Errorf("%s answered %q, not text/event-stream", es.ServerSentEventUri, ct)}
	}
	r := bufio.NewReaderSize(resp.Body, 16<<10)
	return &sseStream{addr: d.addr, body: resp.Body, r: r, cancel: scancel}, nil
}

// sseStream reads a text/event-stream body (the WHATWG format Redfish
// uses): "data:" lines, joined by newlines, make one event at the blank
// line that ends it; "id:", "event:", "retry:" and ":" comments (keep-
// alives) are skipped.
type sseStream struct {
	addr    string
	body    io.ReadCloser
	r       *bufio.Reader
	cancel  context.CancelFunc
	pending []bmc.Event

	closeOnce sync.Once
}

func (s *sseStream) Next() (bmc.Event, error) {
	for len(s.pending) == 0 {
		data, err := s.readEvent()
		if err != nil {
			return bmc.Event{}, err
		}
		s.pending = parseEvents(data)
	}
	e := s.pending[0]
	s.pending = s.pending[1:]
	return e, nil
}

// readEvent returns the data of the next event that has any.
func (s *sseStream) readEvent() ([]byte, error) {
	var data []byte
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if len(data) > 0 {
				return data, nil
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if string(field) != "data" {
			continue // id, event, retry, comments
		}
		if len(data)+len(value)+1 > maxEventBytes {
			return nil, &bmc.Error{Kind: bmc.ErrUnsupported, Op: "read events", Address: s.addr, Err: fmt.Errorf("an event larger than %d bytes", maxEventBytes)}
		}
		if len(data) > 0 {
			data = append(data, '\n')
		}
		data = append(data, value...)
	}
}

// readLine reads one line without its CR, LF or CRLF, bounded in length.
func (s *sseStream) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxEventBytes {
			return nil, &bmc.Error{Kind: bmc.ErrUnsupported, Op: "read events", Address: s.addr, Err: fmt.Errorf("a line longer than %d bytes", maxEventBytes)}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

func (s *sseStream) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		_ = s.body.Close()
	})
	return nil
}

// parseEvents reads an Event resource's records. Data that is not one (a
// vendor's keep-alive, a metric report) yields none.
func parseEvents(data []byte) []bmc.Event {
	var doc struct {
		Events []struct {
			MessageID         string `json:"MessageId"`
			OriginOfCondition *odataLink
		}
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	out := make([]bmc.Event, 0, len(doc.Events))
	for _, e := range doc.Events {
		ev := bmc.Event{MessageID: e.MessageID}
		if e.OriginOfCondition != nil {
			ev.Origin = e.OriginOfCondition.ID
		}
		out = append(out, ev)
	}
	return out
}
