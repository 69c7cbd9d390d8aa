package ticket

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
)

// SetupOptions configure Setup.
type SetupOptions struct {
	// Delivery tunes sending (guard, backoff, timeouts).
	Delivery Options
	// CallbackBaseURL is Anvil's HTTP server as receivers reach it; when
	// set, payloads carry data.links.callback.
	CallbackBaseURL string
	// NoHostEvents leaves power.* and host.failed unfiled.
	NoHostEvents bool
}

// Setup registers the delivery, endpoint and Host-event controllers on mgr
// and returns the Outbox to file Machine events with. Mount the callback
// handler (NewHandler) on the HTTP server separately: it runs on every
// replica, not only the leader.
func Setup(mgr ctrl.Manager, o SetupOptions) (*Outbox, error) {
	rec := mgr.GetEventRecorder("anvil-tickets")
	d := &DeliveryReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: rec, Options: o.Delivery}
	if err := d.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up ticket delivery controller: %w", err)
	}
	e := &EndpointReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: rec, Guard: o.Delivery.Guard}
	if err := e.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up TicketEndpoint controller: %w", err)
	}
	out := NewOutbox(OutboxOptions{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), CallbackBaseURL: o.CallbackBaseURL, Now: o.Delivery.Now})
	if !o.NoHostEvents {
		h := &HostEventReconciler{Client: mgr.GetClient(), Outbox: out}
		if err := h.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("setting up ticket Host-event controller: %w", err)
		}
	}
	return out, nil
}
