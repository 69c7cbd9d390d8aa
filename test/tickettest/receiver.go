// Package tickettest is a ticketing system for tests: a real HTTP server on
// loopback that verifies Standard Webhooks signatures with its own
// implementation of the scheme, records every delivery, answers with a
// ticket, injects faults (503s, Retry-After, 410, answers too late, down
// for a while) and sends signed callbacks back to Anvil.
package tickettest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options configure a Receiver.
type Options struct {
	// Secret is the endpoint's whsec_ secret. Required.
	Secret string
	// Tolerance of webhook-timestamp (default 5 minutes).
	Tolerance time.Duration
}

// Faults are injected into the receiver's answers.
type Faults struct {
	// FailRate is the share of requests answered 503 (0..1).
	FailRate float64
	// RetryAfter is sent with those 503s when set.
	RetryAfter string
	// Status, when set, answers every request with it (410, 400, ...) and
	// Body.
	Status int
	Body   string
	// LateRate is the share of requests accepted (a ticket is filed) but
	// answered only after Late, past the sender's timeout.
	LateRate float64
	Late     time.Duration
}

// Delivery is one verified request.
type Delivery struct {
	Seq       int // arrival order among all verified requests
	ID        string
	Timestamp int64
	Type      string
	// Object is data.object as "Kind/name".
	Object string
	Data   map[string]any
	Body   []byte
	// Status is what the receiver answered; Accepted is true when it
	// filed the ticket (2xx, or accepted but answered late).
	Status   int
	Accepted bool
	Ticket   string
}

// Receiver is a running test ticketing system.
type Receiver struct {
	// URL receives webhooks; point a TicketEndpoint's spec.url at it.
	URL string

	o    Options
	addr string

	mu       sync.Mutex
	srv      *http.Server
	faults   Faults
	rnd      *mrand.Rand
	got      []Delivery
	invalid  []string
	tickets  map[string]string // webhook-id -> ticket id: a retry gets the same ticket
	inFlight sync.WaitGroup
}

// Start listens on a free loopback port.
func Start(o Options) (*Receiver, error) {
	if o.Secret == "" {
		return nil, errors.New("tickettest: Options.Secret is required")
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 5 * time.Minute
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var seed [16]byte
	_, _ = rand.Read(seed[:])
	r := &Receiver{o: o, addr: ln.Addr().String(), tickets: map[string]string{},
		rnd: mrand.New(mrand.NewPCG(uint64(seed[0])<<56|uint64(seed[1]), uint64(seed[2])<<8|uint64(seed[3])))}
	r.URL = "http://" + r.addr + "/hooks/anvil"
	r.serve(ln)
	return r, nil
}

func (r *Receiver) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(r.handle), ReadHeaderTimeout: 10 * time.Second}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// Close stops the server.
func (r *Receiver) Close() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	r.inFlight.Wait()
}

// SetDown takes the server off the network (connections refused) or puts
// it back on the same address.
func (r *Receiver) SetDown(down bool) error {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	if down {
		if srv != nil {
			r.mu.Lock()
			r.srv = nil
			r.mu.Unlock()
			return srv.Close()
		}
		return nil
	}
	if srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		return fmt.Errorf("tickettest: listening on %s again: %w", r.addr, err)
	}
	r.serve(ln)
	return nil
}

// SetFaults replaces the injected faults.
func (r *Receiver) SetFaults(f Faults) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = f
}

// Received returns every verified request, in arrival order.
func (r *Receiver) Received() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.got...)
}

// Accepted returns the requests that filed a ticket, in arrival order.
func (r *Receiver) Accepted() []Delivery {
	var out []Delivery
	for _, d := range r.Received() {
		if d.Accepted {
			out = append(out, d)
		}
	}
	return out
}

// Invalid returns why each request that failed verification failed.
func (r *Receiver) Invalid() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.invalid...)
}

func (r *Receiver) handle(w http.ResponseWriter, req *http.Request) {
	r.inFlight.Add(1)
	defer r.inFlight.Done()
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "read error", http.StatusBadRequest)
		return
	}
	if err := SpecVerify(r.o.Secret, req.Header, body, time.Now(), r.o.Tolerance); err != nil || req.Method != http.MethodPost {
		r.mu.Lock()
		r.invalid = append(r.invalid, fmt.Sprintf("%s %s: %v", req.Method, req.URL.Path, err))
		r.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var p struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		r.mu.Lock()
		r.invalid = append(r.invalid, "body is not JSON: "+err.Error())
		r.mu.Unlock()
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	d := Delivery{ID: req.Header.Get("Webhook-Id"), Type: p.Type, Data: p.Data, Body: body}
	fmt.Sscan(req.Header.Get("Webhook-Timestamp"), &d.Timestamp)
	if obj, ok := p.Data["object"].(map[string]any); ok {
		d.Object = fmt.Sprintf("%v/%v", obj["kind"], obj["name"])
	}

	r.mu.Lock()
	f := r.faults
	var late time.Duration
	switch {
	case f.Status != 0:
		d.Status = f.Status
	case f.FailRate > 0 && r.rnd.Float64() < f.FailRate:
		d.Status = http.StatusServiceUnavailable
	default:
		d.Status, d.Accepted = http.StatusOK, true
		if f.LateRate > 0 && r.rnd.Float64() < f.LateRate {
			late = f.Late
		}
		t, ok := r.tickets[d.ID]
		if !ok {
			t = fmt.Sprintf("T-%d", len(r.tickets)+1)
			r.tickets[d.ID] = t
		}
		d.Ticket = t
	}
	d.Seq = len(r.got) + 1
	r.got = append(r.got, d)
	r.mu.Unlock()

	if !d.Accepted {
		if d.Status == http.StatusServiceUnavailable && f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		w.WriteHeader(d.Status)
		_, _ = io.WriteString(w, f.Body)
		return
	}
	if late > 0 {
		select {
		case <-time.After(late):
		case <-req.Context().Done():
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ticket": map[string]string{"id": d.Ticket, "url": "http://" + r.addr + "/tickets/" + d.Ticket}})
}

// CallbackResult is Anvil's answer to a callback.
type CallbackResult struct {
	Status int
	Body   string
}

// Callback sends a callback {type, timestamp, data} to url, signed with
// the receiver's secret at now.
func (r *Receiver) Callback(ctx context.Context, url, typ string, data any) (CallbackResult, error) {
	return r.CallbackAt(ctx, url, typ, data, time.Now(), "")
}

// CallbackAt signs with timestamp ts and message id (random when empty).
func (r *Receiver) CallbackAt(ctx context.Context, url, typ string, data any, ts time.Time, id string) (CallbackResult, error) {
	body, err := json.Marshal(map[string]any{"type": typ, "timestamp": ts.UTC().Format(time.RFC3339), "data": data})
	if err != nil {
		return CallbackResult{}, err
	}
	if id == "" {
		id = NewMessageID()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return CallbackResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if err := SignRequest(req, r.o.Secret, id, ts, body); err != nil {
		return CallbackResult{}, err
	}
	return Do(req)
}

// Do sends a request and reads the answer.
func Do(req *http.Request) (CallbackResult, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return CallbackResult{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return CallbackResult{Status: resp.StatusCode, Body: string(b)}, nil
}

// NewMessageID returns a random webhook-id.
func NewMessageID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "msg_" + hex.EncodeToString(b)
}
