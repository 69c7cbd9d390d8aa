package ticket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// Outbox files events durably: one TicketDelivery per matching endpoint,
// created in the object's namespace. The delivery controller sends them.
type Outbox struct {
	client   client.Client // reads endpoints and deliveries (cache is fine), writes
	reader   client.Reader // reads where a stale cache would misorder
	callback string
	now      func() time.Time
}

// OutboxOptions configure an Outbox.
type OutboxOptions struct {
	// Client creates deliveries and reads endpoints; the manager's.
	Client client.Client
	// APIReader reads around the cache (default Client).
	APIReader client.Reader
	// CallbackBaseURL is Anvil's HTTP server as receivers reach it, e.g.
	// http://10.0.0.1:8080; payloads then link to the callback URL.
	CallbackBaseURL string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// NewOutbox returns an Outbox.
func NewOutbox(o OutboxOptions) *Outbox {
	if o.APIReader == nil {
		o.APIReader = o.Client
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Outbox{client: o.Client, reader: o.APIReader, callback: strings.TrimRight(o.CallbackBaseURL, "/"), now: o.Now}
}

// Enqueue files ev for every endpoint in the object's namespace whose
// event types and selector match. It is idempotent per (object UID, type,
// instance, endpoint): call it as often as a reconcile likes. A follow-up
// (fulfilled, cancelled) only goes to endpoints that were sent the request
// if they subscribe to requests at all; a request is not filed once its
// cancellation is.
func (o *Outbox) Enqueue(ctx context.Context, ev Event) error {
	kind, err := kindOf(ev.Object)
	if err != nil {
		return err
	}
	if !knownType(ev.Type) {
		return fmt.Errorf("ticket: unknown event type %q", ev.Type)
	}
	obj := ev.Object
	if obj.GetUID() == "" {
		return fmt.Errorf("ticket: %s %s/%s has no UID (not read from the API server?)", kind, obj.GetNamespace(), obj.GetName())
	}
	var eps metalv1.TicketEndpointList
	if err := o.client.List(ctx, &eps, client.InNamespace(obj.GetNamespace())); err != nil {
		return fmt.Errorf("listing TicketEndpoints in %s: %w", obj.GetNamespace(), err)
	}
	instance := ev.Instance
	if op := opener(ev.Type); op != "" && instance == "" {
		if instance, err = o.latestInstance(ctx, obj, op); err != nil {
			return err
		}
	}
	now := o.now()
	var created, existed int
	var errs []error
	for i := range eps.Items {
		ep := &eps.Items[i]
		if !subscribes(ep, ev.Type) || !selects(ep, obj) {
			continue
		}
		name := DeliveryName(obj.GetName(), string(obj.GetUID()), ev.Type, instance, ep.Name)
		if o.exists(ctx, o.client, obj.GetNamespace(), name) {
			existed++
			continue
		}
		if skip, err := o.skip(ctx, ep, obj, ev.Type, instance); err != nil || skip {
			if err != nil {
				errs = append(errs, err)
			}
			continue
		}
		d, err := o.delivery(ev, kind, instance, ep, name, now)
		if err != nil {
			return err
		}
		switch err := o.client.Create(ctx, d); {
		case apierrors.IsAlreadyExists(err):
			existed++
		case err != nil:
			errs = append(errs, fmt.Errorf("filing %s for %s %s/%s with TicketEndpoint %s: %w", ev.Type, kind, obj.GetNamespace(), obj.GetName(), ep.Name, err))
		default:
			created++
			ctrl.LoggerFrom(ctx).Info("ticket event filed", "event", ev.Type, "kind", kind, "object", obj.GetName(), "endpoint", ep.Name, "delivery", name)
		}
	}
	if ev.Type == HardwareRequested && kind == "Machine" && created > 0 && existed == 0 {
		// The first filing of this request: whatever an earlier request
		// of this Machine left in status is history.
		if err := setHardwareRequest(ctx, o.client, o.reader, obj.GetNamespace(), obj.GetName(), obj.GetUID(), hwUpdate{reset: true, state: metalv1.HardwareRequestPending}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// skip decides the ordering rules at filing time, read live so a request
// filed a moment ago counts.
func (o *Outbox) skip(ctx context.Context, ep *metalv1.TicketEndpoint, obj client.Object, typ, instance string) (bool, error) {
	ns, uid := obj.GetNamespace(), string(obj.GetUID())
	if op := opener(typ); op != "" && subscribes(ep, op) {
		// The endpoint takes requests: a follow-up without one is noise.
		return !o.exists(ctx, o.reader, ns, DeliveryName(obj.GetName(), uid, op, instance, ep.Name)), nil
	}
	if c := canceller(typ); c != "" {
		return o.exists(ctx, o.reader, ns, DeliveryName(obj.GetName(), uid, c, instance, ep.Name)), nil
	}
	return false, nil
}

func (o *Outbox) exists(ctx context.Context, r client.Reader, ns, name string) bool {
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &metalv1.TicketDelivery{})
	return err == nil
}

// latestInstance is the instance of the object's most recent request.
func (o *Outbox) latestInstance(ctx context.Context, obj client.Object, op string) (string, error) {
	var list metalv1.TicketDeliveryList
	sel := client.MatchingLabels{LabelObjectUID: string(obj.GetUID()), LabelEventType: op}
	if err := o.reader.List(ctx, &list, client.InNamespace(obj.GetNamespace()), sel); err != nil {
		return "", fmt.Errorf("listing deliveries of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	var latest *metalv1.TicketDelivery
	for i := range list.Items {
		if d := &list.Items[i]; latest == nil || latest.Spec.EnqueuedAt.Before(&d.Spec.EnqueuedAt) {
			latest = d
		}
	}
	if latest == nil {
		return "", nil
	}
	return latest.Spec.Instance, nil
}

func (o *Outbox) delivery(ev Event, kind, instance string, ep *metalv1.TicketEndpoint, name string, now time.Time) (*metalv1.TicketDelivery, error) {
	obj := ev.Object
	data := make(map[string]any, len(ev.Data)+4)
	for k, v := range ev.Data {
		data[k] = v
	}
	data["object"] = map[string]any{"kind": kind, "namespace": obj.GetNamespace(), "name": obj.GetName(), "uid": string(obj.GetUID()), "labels": obj.GetLabels()}
	for k, v := range thinData(obj) {
		if _, set := data[k]; !set {
			data[k] = v
		}
	}
	if instance != "" {
		data["instance"] = instance
	}
	if o.callback != "" {
		data["links"] = map[string]any{"callback": o.callback + PathPrefix + url.PathEscape(obj.GetNamespace()) + "/" + url.PathEscape(ep.Name)}
	}
	body, err := json.Marshal(map[string]any{"type": ev.Type, "timestamp": now.UTC().Format(time.RFC3339), "data": data})
	if err != nil {
		return nil, fmt.Errorf("ticket: event data of %s does not encode: %w", ev.Type, err)
	}
	if len(body) > 64<<10 {
		return nil, fmt.Errorf("ticket: %s payload is %d bytes, more than 64 KiB; keep event data thin", ev.Type, len(body))
	}
	uid := string(obj.GetUID())
	return &metalv1.TicketDelivery{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: obj.GetNamespace(),
			Labels: map[string]string{LabelObjectUID: uid, LabelEndpoint: labelValue(ep.Name), LabelEventType: ev.Type},
		},
		Spec: metalv1.TicketDeliverySpec{
			EndpointName: ep.Name, EventType: ev.Type, Instance: instance,
			WebhookID: WebhookID(uid, ev.Type, instance),
			Object:    metalv1.TicketObjectReference{Kind: kind, Name: obj.GetName(), UID: uid},
			Payload:   string(body), EnqueuedAt: metav1.NewMicroTime(now),
		},
	}, nil
}

// thinData is what a person needs to act, taken from the object.
func thinData(obj client.Object) map[string]any {
	switch o := obj.(type) {
	case *metalv1.Machine:
		m := map[string]any{"machineClass": o.Spec.MachineClassRef.Name, "version": o.Spec.Version}
		if o.Spec.FailureDomain != "" {
			m["failureDomain"] = o.Spec.FailureDomain
		}
		if sel, err := metav1.LabelSelectorAsSelector(&o.Spec.HostSelector); err == nil && !sel.Empty() {
			m["hostSelector"] = sel.String()
		}
		return m
	case *metalv1.Host:
		m := map[string]any{"bootMACs": o.Spec.BootMACs}
		if strings.HasPrefix(o.Spec.BMC.Address, "manual:") {
			m["bmcAddress"] = o.Spec.BMC.Address // carries no credentials (CRD rule)
		}
		if rack := o.Labels[metalv1.LabelRack]; rack != "" {
			m["rack"] = rack
		}
		return m
	}
	return nil
}

func kindOf(obj client.Object) (string, error) {
	switch obj.(type) {
	case *metalv1.Machine:
		return "Machine", nil
	case *metalv1.Host:
		return "Host", nil
	case nil:
		return "", errors.New("ticket: event without an object")
	}
	return "", fmt.Errorf("ticket: events are about Machines and Hosts, not %T", obj)
}

// subscribes reports whether the endpoint takes events of typ.
func subscribes(ep *metalv1.TicketEndpoint, typ string) bool {
	return len(ep.Spec.EventTypes) == 0 || slices.Contains(ep.Spec.EventTypes, typ)
}

// selects reports whether the endpoint's selector matches obj's labels.
// A selector that does not parse matches nothing.
func selects(ep *metalv1.TicketEndpoint, obj client.Object) bool {
	if ep.Spec.Selector == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(ep.Spec.Selector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(obj.GetLabels()))
}
