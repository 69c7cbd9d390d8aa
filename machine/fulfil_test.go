package machine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/machine"
	"anvil.dev/anvil/ticket"
)

// outboxNotifier files hardware events in the ticket outbox, as anvil
// serve does.
type outboxNotifier struct{ out *ticket.Outbox }

func (n outboxNotifier) Notify(ctx context.Context, ev machine.Event) error {
	data := map[string]any{}
	if ev.Host != nil {
		data["host"] = ev.Host.Name
	}
	return n.out.Enqueue(ctx, ticket.Event{Type: ev.Type, Object: ev.Machine, Data: data})
}

// ticketEnv is a machineEnv whose Machine controller files hardware events
// with one TicketEndpoint (nothing sends them: the deliveries stay), a
// Host that matches no Machine, and Machine m1 waiting for hardware with
// its hardware.requested filed.
func ticketEnv(t *testing.T) (*machineEnv, *metalv1.Machine) {
	t.Helper()
	e := newMachineEnv(t, 1, fastOptions())
	e.stop()
	e.notifier = outboxNotifier{ticket.NewOutbox(ticket.OutboxOptions{Client: e.c})}
	e.stop = e.startManager(t)
	mustCreate(t, e.c, &metalv1.TicketEndpoint{ObjectMeta: metav1.ObjectMeta{Name: "ops", Namespace: e.ns},
		Spec: metalv1.TicketEndpointSpec{URL: "http://127.0.0.1:9/hooks", SecretRef: metalv1.SecretKeyReference{Name: "ops-hook"}}})
	e.addClass(t, true)
	e.addHost(t, 0, map[string]string{"role": "storage"})
	e.waitHostState(t, "host-0", metalv1.HostAvailable)
	e.addMachine(t, "m1", map[string]string{"role": "worker"})
	m := e.waitPhase(t, "m1", metalv1.MachineWaitingForHardware, 30*time.Second)
	e.waitDelivery(t, m, ticket.HardwareRequested)
	return e, m
}

// deliveries lists the Machine's TicketDeliveries of one event type.
func (e *machineEnv) deliveries(ctx context.Context, m *metalv1.Machine, typ string) ([]metalv1.TicketDelivery, error) {
	var list metalv1.TicketDeliveryList
	err := e.c.List(ctx, &list, client.InNamespace(e.ns), client.MatchingLabels{ticket.LabelObjectUID: string(m.UID), ticket.LabelEventType: typ})
	return list.Items, err
}

func (e *machineEnv) waitDelivery(t *testing.T, m *metalv1.Machine, typ string) {
	t.Helper()
	eventually(t, 30*time.Second, typ+" filed for "+m.Name, func(ctx context.Context) (bool, string) {
		ds, err := e.deliveries(ctx, m, typ)
		if err != nil {
			return false, err.Error()
		}
		return len(ds) == 1, fmt.Sprintf("%d deliveries", len(ds))
	})
}

// The claim's Host update lands, then the process dies: neither the
// Machine's status nor the outbox write happened. The restarted controller
// finds the Machine holding the Host and files hardware.fulfilled.
func TestFulfilledFiledAfterACrashBeforeTheOutboxWrite(t *testing.T) {
	e, m := ticketEnv(t)
	ctx := context.Background()
	e.stop()
	h, err := e.host(ctx, "host-0")
	if err != nil {
		t.Fatal(err)
	}
	// What claimHost writes to the Host.
	patch := client.MergeFrom(h.DeepCopy())
	uid := strings.ReplaceAll(string(m.UID), "-", "")[:12]
	h.Labels["role"] = "worker"
	h.Labels[metalv1.LabelConsumerUID] = string(m.UID)
	h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: metalv1.GroupVersion.String(), Kind: "Machine", Namespace: m.Namespace, Name: m.Name, UID: m.UID}
	h.Spec.BootRequest = &metalv1.BootRequest{ID: uid + "-p1", Purpose: metalv1.BootPurposeProvision}
	h.Spec.Online = true
	if err := e.c.Patch(ctx, h, patch); err != nil {
		t.Fatal(err)
	}
	e.stop = e.startManager(t)

	m = e.waitPhase(t, "m1", metalv1.MachineProvisioning, 60*time.Second)
	if m.Status.HostRef == nil || m.Status.HostRef.Name != "host-0" {
		t.Fatalf("Machine holds %v, want host-0: %s", m.Status.HostRef, describe(m))
	}
	e.waitDelivery(t, m, ticket.HardwareFulfilled)
}

// The outbox write of hardware.fulfilled fails (the API server refuses
// the TicketDelivery: its quota is used up). The claim stands, the Machine
// says it is still filing, and the reconcile retries until the delivery
// exists.
func TestFulfilledRetriedAfterAFailedOutboxWrite(t *testing.T) {
	e, m := ticketEnv(t)
	ctx := context.Background()
	// A quota the admission plugin enforces on its own: hard 1, used 1.
	name := corev1.ResourceName("count/ticketdeliveries.metal.anvil.dev")
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-deliveries", Namespace: e.ns},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{name: resource.MustParse("1")}}}
	mustCreate(t, e.c, q)
	q.Status = corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{name: resource.MustParse("1")}, Used: corev1.ResourceList{name: resource.MustParse("1")}}
	if err := e.c.Status().Update(ctx, q); err != nil {
		t.Fatal(err)
	}
	probe := 0
	eventually(t, 30*time.Second, "the quota refuses TicketDeliveries", func(ctx context.Context) (bool, string) {
		probe++
		d := &metalv1.TicketDelivery{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", probe), Namespace: e.ns},
			Spec: metalv1.TicketDeliverySpec{EndpointName: "none", EventType: ticket.HostFailed, WebhookID: "probe", Payload: "{}",
				Object: metalv1.TicketObjectReference{Kind: "Host", Name: "probe", UID: "probe"}, EnqueuedAt: metav1.NowMicro()}}
		err := e.c.Create(ctx, d)
		return apierrors.IsForbidden(err), fmt.Sprintf("create: %v", err)
	})

	h, err := e.host(ctx, "host-0")
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(h.DeepCopy())
	h.Labels["role"] = "worker"
	if err := e.c.Patch(ctx, h, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "m1 claimed host-0 and says it is still filing hardware.fulfilled", func(ctx context.Context) (bool, string) {
		if m, err = e.machine(ctx, "m1"); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(m.Status.Conditions, machine.ConditionHardwareRequest)
		return m.Status.HostRef != nil && c != nil && c.Reason == machine.HardwareRequestFulfilling && strings.Contains(c.Message, "failed"), describe(m)
	})
	if err := e.c.Delete(ctx, q); err != nil {
		t.Fatal(err)
	}
	e.waitDelivery(t, m, ticket.HardwareFulfilled)
	eventually(t, 30*time.Second, "the Fulfilling condition cleared", func(ctx context.Context) (bool, string) {
		if m, err = e.machine(ctx, "m1"); err != nil {
			return false, err.Error()
		}
		return meta.FindStatusCondition(m.Status.Conditions, machine.ConditionHardwareRequest) == nil, describe(m)
	})
}
