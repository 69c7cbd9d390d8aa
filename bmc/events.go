package bmc

import (
	"context"
	"fmt"
	"strings"
)

// EventSource is the optional capability of a driver whose BMC pushes
// events (Redfish EventService server-sent events). A controller that
// subscribes learns of a power change when it happens instead of polling
// for it. Use EventSourceOf rather than a type assertion.
//
// A driver that implements it may find, at run time, that its BMC offers
// no event stream: SubscribeEvents then fails with an *Error of kind
// ErrUnsupported.
type EventSource interface {
	// SubscribeEvents opens the BMC service's event stream. It returns once
	// the BMC has accepted the subscription; events that happen before that
	// are not delivered. The stream ends when ctx ends, on Close, or when
	// the BMC closes it.
	SubscribeEvents(ctx context.Context) (EventStream, error)
}

// EventStream is an open subscription.
type EventStream interface {
	// Next blocks for the next event record. Any error ends the stream (a
	// BMC closing it is io.EOF); events after it are lost until a new
	// subscription, so the subscriber should read the state it cares about
	// again.
	Next() (Event, error)
	// Close ends the subscription.
	Close() error
}

// Event is one event record: what happened to which resource. It carries
// no state: a subscriber reads what it needs from the resource itself.
type Event struct {
	// MessageID identifies the message, e.g.
	// "ResourceEvent.1.3.ResourcePoweredOn".
	MessageID string
	// Origin is the path of the resource the event is about, e.g.
	// /redfish/v1/Systems/1 ("" when the BMC did not say).
	Origin string
}

// AboutPower reports whether the event may mean a power change: its
// message names power, a reset or a state change (DMTF's ResourceEvent
// ResourcePoweredOn/Off, PoweringOn/Off, ResourceStateChanged and
// ResourceChanged, and the vendors' ServerPoweredOn-like messages). Sensor
// readings and log entries are not worth a power read.
func (e Event) AboutPower() bool {
	name := e.MessageID[strings.LastIndex(e.MessageID, ".")+1:]
	for _, w := range []string{"Power", "Reset", "StateChanged", "ResourceChanged"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// ConcernsSystem reports whether the event's origin is the system at
// systemPath or one of its sub-resources.
func (e Event) ConcernsSystem(systemPath string) bool {
	sp := strings.TrimRight(systemPath, "/")
	o := strings.TrimRight(e.Origin, "/")
	return sp != "" && (o == sp || strings.HasPrefix(o, sp+"/"))
}

// EventSourceOf returns d's event capability, or an *Error of kind
// ErrUnsupported naming the driver's address when it has none.
func EventSourceOf(d Driver, address string) (EventSource, error) {
	if es, ok := d.(EventSource); ok {
		return es, nil
	}
	return nil, &Error{Kind: ErrUnsupported, Op: "subscribe to events", Address: address,
		Err: fmt.Errorf("the %T driver has no event subscription; power changes are found by polling", d)}
}
