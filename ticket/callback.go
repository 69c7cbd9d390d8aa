package ticket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
)

// PathPrefix is where the callback handler is mounted:
// POST /tickets/v1/{namespace}/{endpoint}, signed with that endpoint's
// secret, body {"type": ..., "timestamp": ..., "data": {...}}. The target
// objects are named in the body, so the signature covers them.
const PathPrefix = "/tickets/v1/"

// HandlerOptions configure the callback handler.
type HandlerOptions struct {
	// Client reads endpoints (cache) and patches Machines and Hosts.
	Client client.Client
	// APIReader reads the targets live, and a signing Secret when its
	// resourceVersion in Client's metadata cache differs from the one
	// remembered (default Client).
	APIReader client.Reader
	// Tolerance of webhook-timestamp (default 5 minutes).
	Tolerance time.Duration
	// Logger (default discard).
	Logger logr.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// FailureBurst refused (401) callbacks a source address may send
	// before it is answered 429, regaining one per FailureEvery (defaults
	// DefaultFailureBurst, DefaultFailureEvery). Behind a proxy every
	// client is the proxy: keep the budget generous there.
	FailureBurst int
	FailureEvery time.Duration
}

// Handler serves ticket callbacks.
type Handler struct {
	o       HandlerOptions
	seen    *replayCache
	secrets signingSecrets
	limit   *failureLimiter
	// decoy is verified against for an unknown endpoint, so that costs
	// what a wrong signature for a known one does.
	decoy Secret
}

// NewHandler returns the callback handler; mount it at PathPrefix.
func NewHandler(o HandlerOptions) *Handler {
	if o.APIReader == nil {
		o.APIReader = o.Client
	}
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FailureBurst <= 0 {
		o.FailureBurst = DefaultFailureBurst
	}
	if o.FailureEvery <= 0 {
		o.FailureEvery = DefaultFailureEvery
	}
	decoy, err := ParseSecret(NewSecret())
	if err != nil {
		panic(err) // NewSecret always makes a valid one
	}
	return &Handler{o: o, seen: &replayCache{ids: map[string]time.Time{}}, limit: newFailureLimiter(o.FailureEvery, o.FailureBurst), decoy: decoy}
}

// maxCallbackBody bounds a callback's body.
const maxCallbackBody = 64 << 10

// callbackError is an answer other than 200.
type callbackError struct {
	code int
	msg  string
}

func (e *callbackError) Error() string { return e.msg }

func fail(code int, format string, args ...any) error {
	return &callbackError{code: code, msg: fmt.Sprintf(format, args...)}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	log := h.o.Logger
	src := source(req)
	if h.limit.limited(src, h.o.Now()) {
		// Before any lookup: a source sending forged callbacks costs
		// nothing more until its budget refills.
		w.Header().Set("Retry-After", strconv.Itoa(int(h.o.FailureEvery.Seconds())+1))
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "too many refused callbacks from this address; retry later"})
		return
	}
	res, err := h.serve(req)
	var ce *callbackError
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, res)
		return
	case errors.As(err, &ce):
	default:
		ce = &callbackError{code: http.StatusInternalServerError, msg: "internal error; see Anvil's log"}
		log.Error(err, "ticket callback failed", "path", req.URL.Path)
	}
	if ce.code == http.StatusUnauthorized {
		h.limit.charge(src, h.o.Now())
		// One answer for every authentication failure (a missing endpoint
		// included): which part failed is for the log, not for whoever is
		// probing.
		log.Info("ticket callback refused", "path", req.URL.Path, "reason", ce.msg, "remote", req.RemoteAddr)
		writeJSON(w, ce.code, map[string]string{"error": "unauthorized"})
		return
	}
	log.Info("ticket callback not done", "path", req.URL.Path, "code", ce.code, "reason", ce.msg)
	writeJSON(w, ce.code, map[string]string{"error": ce.msg})
}

// callback is the body of a callback.
type callback struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

func (h *Handler) serve(req *http.Request) (any, error) {
	if req.Method != http.MethodPost {
		return nil, fail(http.StatusMethodNotAllowed, "only POST")
	}
	ns, name, ok := strings.Cut(strings.TrimPrefix(req.URL.Path, PathPrefix), "/")
	if !ok || !strings.HasPrefix(req.URL.Path, PathPrefix) || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil, fail(http.StatusNotFound, "callbacks go to %s{namespace}/{endpoint}", PathPrefix)
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, req.Body, maxCallbackBody))
	if err != nil {
		return nil, fail(http.StatusRequestEntityTooLarge, "body larger than %d bytes", maxCallbackBody)
	}
	if req.Header.Get(HeaderID) == "" || req.Header.Get(HeaderTimestamp) == "" || req.Header.Get(HeaderSignature) == "" {
		return nil, fail(http.StatusUnauthorized, "%s", ErrUnsigned.Error())
	}
	ctx := req.Context()
	now := h.o.Now()
	ep := &metalv1.TicketEndpoint{}
	if err := h.o.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep); err != nil {
		if apierrors.IsNotFound(err) {
			// The same work and answer as a wrong signature for an
			// endpoint that exists: nobody learns which names exist.
			_ = h.decoy.Verify(req.Header, body, now, h.o.Tolerance)
			return nil, fail(http.StatusUnauthorized, "no TicketEndpoint %s/%s", ns, name)
		}
		return nil, err
	}
	// From the memo: an unauthenticated request costs no API request.
	sec, err := h.secrets.get(ctx, h.o.Client, h.o.APIReader, ep, now)
	if err != nil {
		_ = h.decoy.Verify(req.Header, body, now, h.o.Tolerance)
		return nil, fail(http.StatusUnauthorized, "cannot verify: %v", err)
	}
	if err := sec.Verify(req.Header, body, now, h.o.Tolerance); err != nil {
		return nil, fail(http.StatusUnauthorized, "TicketEndpoint %s/%s: %v", ns, name, err)
	}
	id := req.Header.Get(HeaderID)
	if h.seen.has(ns+"/"+name+"/"+id, now) {
		return map[string]any{"ok": true, "duplicate": true}, nil
	}
	var cb callback
	if err := json.Unmarshal(body, &cb); err != nil {
		return nil, fail(http.StatusBadRequest, "body is not a JSON callback {type, timestamp, data}: %v", err)
	}
	log := h.o.Logger.WithValues("endpoint", ns+"/"+name, "type", cb.Type, "webhookID", id)
	ctx = logr.NewContext(ctx, log)
	var res any
	switch cb.Type {
	case CallbackPowerDone:
		res, err = h.powerDone(ctx, ep, cb.Data)
	case CallbackHardwareRejected:
		res, err = h.reject(ctx, ep, cb.Data)
	case CallbackHardwareAssigned:
		res, err = h.assign(ctx, ep, cb.Data)
	default:
		return nil, fail(http.StatusBadRequest, "unknown callback type %q (known: %s, %s, %s)", cb.Type, CallbackPowerDone, CallbackHardwareRejected, CallbackHardwareAssigned)
	}
	if err != nil {
		return nil, err
	}
	h.seen.add(ns+"/"+name+"/"+id, now.Add(2*h.o.Tolerance))
	log.Info("ticket callback done")
	return res, nil
}

// allowed checks that the endpoint may act on obj: it takes the events
// the action answers, and its selector matches.
func allowed(ep *metalv1.TicketEndpoint, answers string, obj client.Object) error {
	if !subscribes(ep, answers) {
		return fail(http.StatusForbidden, "TicketEndpoint %s does not take %s events, so it cannot answer them", ep.Name, answers)
	}
	if !selects(ep, obj) {
		return fail(http.StatusForbidden, "TicketEndpoint %s's selector does not match %s %s", ep.Name, obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName())
	}
	return nil
}

func decodeData(raw json.RawMessage, v any, required ...string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fail(http.StatusBadRequest, "data: %v", err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, k := range required {
		if s, _ := m[k].(string); s == "" {
			return fail(http.StatusBadRequest, "data.%s is required", k)
		}
	}
	return nil
}

// powerDone acknowledges a manual power action the same way
// `anvil hosts ack-power` does: the ack-power annotation.
func (h *Handler) powerDone(ctx context.Context, ep *metalv1.TicketEndpoint, raw json.RawMessage) (any, error) {
	var d struct {
		Host     string `json:"host"`
		ActionID string `json:"actionID"`
	}
	if err := decodeData(raw, &d, "host", "actionID"); err != nil {
		return nil, err
	}
	host := &metalv1.Host{}
	if err := h.getTarget(ctx, ep.Namespace, d.Host, host); err != nil {
		return nil, err
	}
	if err := allowed(ep, PowerActionRequested, host); err != nil {
		return nil, err
	}
	p := host.Status.PendingPowerAction
	if host.Annotations[inventory.AnnotationAckPower] == d.ActionID {
		// Already acknowledged: a retry of a callback whose answer was
		// lost (Anvil restarted mid-request) must not look like a
		// failure to the ticketing system.
		return map[string]any{"ok": true, "host": host.Name, "acknowledged": d.ActionID, "already": true}, nil
	}
	if p == nil {
		return nil, fail(http.StatusConflict, "Host %s has no pending power action", host.Name)
	}
	if id := inventory.PendingActionID(p); id != d.ActionID {
		return nil, fail(http.StatusConflict, "Host %s's pending power action is %s (power %s), not %s", host.Name, id, p.Action, d.ActionID)
	}
	if err := h.annotate(ctx, host, inventory.AnnotationAckPower, d.ActionID); err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "host": host.Name, "acknowledged": d.ActionID}, nil
}

// reject records a person's refusal in the Machine's hardware request.
func (h *Handler) reject(ctx context.Context, ep *metalv1.TicketEndpoint, raw json.RawMessage) (any, error) {
	var d struct {
		Machine string `json:"machine"`
		Reason  string `json:"reason"`
	}
	if err := decodeData(raw, &d, "machine", "reason"); err != nil {
		return nil, err
	}
	m := &metalv1.Machine{}
	if err := h.getTarget(ctx, ep.Namespace, d.Machine, m); err != nil {
		return nil, err
	}
	if err := allowed(ep, HardwareRequested, m); err != nil {
		return nil, err
	}
	if hr := m.Status.HardwareRequest; hr == nil || hwRank(hr.State) >= hwRank(metalv1.HardwareRequestFulfilled) {
		return nil, fail(http.StatusConflict, "Machine %s has no open hardware request", m.Name)
	}
	reason := clip(excerpt([]byte(d.Reason)), 1024)
	err := setHardwareRequest(ctx, h.o.Client, h.o.APIReader, m.Namespace, m.Name, m.UID, hwUpdate{state: metalv1.HardwareRequestRejected, lastError: reason})
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "machine": m.Name, "state": metalv1.HardwareRequestRejected}, nil
}

// assign points a waiting Machine at one Host; the Machine controller
// claims it if it can.
func (h *Handler) assign(ctx context.Context, ep *metalv1.TicketEndpoint, raw json.RawMessage) (any, error) {
	var d struct {
		Machine string `json:"machine"`
		Host    string `json:"host"`
	}
	if err := decodeData(raw, &d, "machine", "host"); err != nil {
		return nil, err
	}
	m := &metalv1.Machine{}
	if err := h.getTarget(ctx, ep.Namespace, d.Machine, m); err != nil {
		return nil, err
	}
	if err := allowed(ep, HardwareRequested, m); err != nil {
		return nil, err
	}
	switch m.Status.Phase {
	case metalv1.MachinePending, metalv1.MachineWaitingForHardware:
	default:
		return nil, fail(http.StatusConflict, "Machine %s is %s, not waiting for hardware", m.Name, m.Status.Phase)
	}
	host := &metalv1.Host{}
	if err := h.getTarget(ctx, ep.Namespace, d.Host, host); err != nil {
		return nil, err
	}
	if c := host.Spec.ConsumerRef; c != nil && c.UID != m.UID {
		return nil, fail(http.StatusConflict, "Host %s is held by Machine %s", host.Name, c.Name)
	}
	if err := h.annotate(ctx, m, metalv1.AnnotationAssignedHost, host.Name); err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "machine": m.Name, "host": host.Name}, nil
}

// getTarget reads a Machine or Host live.
func (h *Handler) getTarget(ctx context.Context, ns, name string, obj client.Object) error {
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return fail(http.StatusBadRequest, "%q is not an object name", name)
	}
	if err := h.o.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return fail(http.StatusNotFound, "%s %s/%s not found", kindName(obj), ns, name)
		}
		return err
	}
	obj.GetObjectKind().SetGroupVersionKind(metalv1.GroupVersion.WithKind(kindName(obj)))
	return nil
}

func kindName(obj client.Object) string {
	if _, ok := obj.(*metalv1.Host); ok {
		return "Host"
	}
	return "Machine"
}

// annotate sets one annotation with a merge patch guarded by the UID read.
func (h *Handler) annotate(ctx context.Context, obj client.Object, key, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": obj.GetUID(), "annotations": map[string]string{key: value}}})
	if err != nil {
		return err
	}
	if err := h.o.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return fail(http.StatusConflict, "%s %s changed while being updated; try again", kindName(obj), obj.GetName())
		}
		return err
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// replayCache remembers webhook-ids acted on while their timestamps are
// still acceptable, so a replayed callback does nothing twice.
type replayCache struct {
	mu  sync.Mutex
	ids map[string]time.Time
}

const maxReplayIDs = 100000

func (c *replayCache) has(id string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	exp, ok := c.ids[id]
	return ok && now.Before(exp)
}

func (c *replayCache) add(id string, exp time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids) >= maxReplayIDs {
		now := time.Now()
		for k, e := range c.ids {
			if now.After(e) {
				delete(c.ids, k)
			}
		}
	}
	c.ids[id] = exp
}
