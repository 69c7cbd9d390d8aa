// Package ticket files tickets with the people who rack servers: it sends
// signed webhooks (Standard Webhooks) about Machines waiting for hardware
// and manual:// Hosts needing a hand, keeps them in a durable outbox in the
// API (TicketDelivery objects) and serves the signed callbacks that close
// the loop (acknowledge a power action, reject a request, assign a Host).
//
// Wiring: Setup registers the controllers on a manager and returns the
// Outbox the Machine controller files events with; NewHandler serves
// POST /tickets/v1/{namespace}/{endpoint}.
package ticket

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// Event types, as the webhooks name them.
const (
	HardwareRequested    = "hardware.requested"
	HardwareFulfilled    = "hardware.fulfilled"
	HardwareCancelled    = "hardware.cancelled"
	PowerActionRequested = "power.action_requested"
	PowerActionCancelled = "power.action_cancelled"
	HostFailed           = "host.failed"
)

// EventTypes are every event type Anvil sends.
var EventTypes = []string{HardwareRequested, HardwareFulfilled, HardwareCancelled, PowerActionRequested, PowerActionCancelled, HostFailed}

// Callback types a receiver may send to POST /tickets/v1/{ns}/{endpoint}.
const (
	// CallbackPowerDone acknowledges a manual power action:
	// data {"host": NAME, "actionID": ID from power.action_requested}.
	CallbackPowerDone = "power.action_done"
	// CallbackHardwareRejected refuses a hardware request:
	// data {"machine": NAME, "reason": TEXT}.
	CallbackHardwareRejected = "hardware.rejected"
	// CallbackHardwareAssigned hands a waiting Machine a specific Host:
	// data {"machine": NAME, "host": NAME}.
	CallbackHardwareAssigned = "hardware.assigned"
)

// Labels on TicketDeliveries, so one object's deliveries to one endpoint
// are found with a label selector.
const (
	LabelObjectUID = "ticket.metal.anvil.dev/object-uid"
	LabelEndpoint  = "ticket.metal.anvil.dev/endpoint"
	LabelEventType = "ticket.metal.anvil.dev/event-type"
)

// Event is something a person should hear about.
type Event struct {
	// Type is one of EventTypes.
	Type string
	// Object is the *Machine (hardware.*) or *Host (power.*, host.failed)
	// the event is about. Its UID keys the event.
	Object client.Object
	// Instance tells repeated events of one type for one object apart:
	// each power action of a Host (inventory.PendingActionID), a Machine's
	// second request after its requirements changed. Empty for events that
	// happen once per object. Left empty on hardware.fulfilled/cancelled
	// (power.action_cancelled), it is the latest request's.
	Instance string
	// Data is added to the payload's data next to the object's names,
	// labels and links. Keep it thin; never put secrets in it.
	Data map[string]any
}

// opener is the request a follow-up event answers ("" for a request).
func opener(typ string) string {
	switch typ {
	case HardwareFulfilled, HardwareCancelled:
		return HardwareRequested
	case PowerActionCancelled:
		return PowerActionRequested
	}
	return ""
}

// canceller is the event that makes a request pointless ("" if none).
func canceller(typ string) string {
	switch typ {
	case HardwareRequested:
		return HardwareCancelled
	case PowerActionRequested:
		return PowerActionCancelled
	}
	return ""
}

func knownType(typ string) bool { return slices.Contains(EventTypes, typ) }

var shortTypes = map[string]string{
	HardwareRequested: "hw-req", HardwareFulfilled: "hw-ful", HardwareCancelled: "hw-can",
	PowerActionRequested: "pw-req", PowerActionCancelled: "pw-can", HostFailed: "failed",
}

// DeliveryName is the TicketDelivery name of an event for an endpoint:
// readable, and fixed by (object UID, type, instance, endpoint), so filing
// twice is an AlreadyExists from the API server, across restarts too.
func DeliveryName(objName, uid, typ, instance, endpoint string) string {
	sum := sha256.Sum256([]byte(uid + "\x00" + typ + "\x00" + instance + "\x00" + endpoint))
	prefix := objName
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-.")
	}
	return fmt.Sprintf("%s.%s.%s", prefix, shortTypes[typ], hex.EncodeToString(sum[:8]))
}

// WebhookID is the webhook-id of an event: the same for every attempt and
// every endpoint, so a receiver can deduplicate.
func WebhookID(uid, typ, instance string) string {
	sum := sha256.Sum256([]byte(uid + "\x00" + typ + "\x00" + instance))
	return "msg_" + hex.EncodeToString(sum[:16])
}

// labelValue fits s into a label value (63 characters at most).
func labelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "h-" + hex.EncodeToString(sum[:20])
}

func terminal(s metalv1.TicketDeliveryState) bool {
	return s == metalv1.TicketDelivered || s == metalv1.TicketFailed || s == metalv1.TicketSuperseded
}

// rank orders a request before its follow-ups.
func rank(typ string) int {
	if opener(typ) != "" {
		return 1
	}
	return 0
}

// orderKey places a delivery among its object's deliveries to one
// endpoint: by filing time, a follow-up never earlier than its request
// whatever the clocks said, then requests first, then by name. Keys form a
// total order, so waiting on earlier keys can never deadlock.
type orderKey struct {
	at   time.Time
	rank int
	name string
}

func (k orderKey) less(o orderKey) bool {
	if !k.at.Equal(o.at) {
		return k.at.Before(o.at)
	}
	if k.rank != o.rank {
		return k.rank < o.rank
	}
	return k.name < o.name
}

// keyOf is d's key among sibs (the same object's deliveries to the same
// endpoint, d included or not).
func keyOf(d *metalv1.TicketDelivery, sibs []metalv1.TicketDelivery) orderKey {
	k := orderKey{at: d.Spec.EnqueuedAt.Time, rank: rank(d.Spec.EventType), name: d.Name}
	if op := opener(d.Spec.EventType); op != "" {
		for i := range sibs {
			s := &sibs[i]
			if s.Spec.EventType == op && s.Spec.Instance == d.Spec.Instance && s.Spec.EnqueuedAt.Time.After(k.at) {
				k.at = s.Spec.EnqueuedAt.Time
			}
		}
	}
	return k
}
