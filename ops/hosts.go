package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
)

// getHost reads a Host with a not-found error that says where.
func getHost(ctx context.Context, c client.Client, key types.NamespacedName) (*metalv1.Host, error) {
	h := &metalv1.Host{}
	if err := c.Get(ctx, key, h); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("host %s not found in namespace %s (anvil hosts list -n %s): %w", key.Name, key.Namespace, key.Namespace, err)
		}
		return nil, fmt.Errorf("reading host %s: %w", key.Name, err)
	}
	return h, nil
}

// SetOnline sets a Host's spec.online, the power Anvil keeps it at. The
// Machine controller sets it when it claims, boots and releases a Host and
// leaves it alone in between, so an admin may power a held Host off.
func SetOnline(ctx context.Context, c client.Client, key types.NamespacedName, online bool) (string, error) {
	h, err := getHost(ctx, c, key)
	if err != nil {
		return "", err
	}
	word := map[bool]string{true: "on", false: "off"}[online]
	switch {
	case h.DeletionTimestamp != nil:
		return "", fmt.Errorf("host %s is being deleted; its power is no longer changed", h.Name)
	case h.Spec.Online == online:
		return fmt.Sprintf("host/%s: spec.online is already %t (power %s); nothing patched", h.Name, online, orDash(h.Status.PowerState)), nil
	}
	patch := client.MergeFrom(h.DeepCopy())
	h.Spec.Online = online
	if err := c.Patch(ctx, h, patch); err != nil {
		return "", fmt.Errorf("patching spec.online of host %s: %w", h.Name, err)
	}
	msg := fmt.Sprintf("host/%s: spec.online set to %t; Anvil powers it %s (power is %s now)", h.Name, online, word, orDash(h.Status.PowerState))
	if r := h.Spec.ConsumerRef; r != nil && !online {
		msg += "; it holds Machine " + r.Name + ", whose Node goes down with it"
	}
	return msg, nil
}

// PowerCycle asks the Host controller for one power reset of a running
// Host: it annotates inventory.AnnotationPowerCycle with a new request ID
// (the time), which the controller records in status.powerCycleID once it
// sent the reset. A boot request in flight goes first. A Host that is off
// is refused: there is nothing to cycle.
func PowerCycle(ctx context.Context, c client.Client, key types.NamespacedName) (string, error) {
	h, err := getHost(ctx, c, key)
	if err != nil {
		return "", err
	}
	switch {
	case h.DeletionTimestamp != nil:
		return "", fmt.Errorf("host %s is being deleted; its power is no longer changed", h.Name)
	case h.Spec.BMC.Address == "":
		return "", fmt.Errorf("host %s has no BMC (spec.bmc.address) to cycle its power with", h.Name)
	case h.Status.PowerState == metalv1.PowerOff:
		return "", fmt.Errorf("host %s: %s (anvil hosts power %s on -n %s)", h.Name, inventory.MessagePowerIsOff, h.Name, h.Namespace)
	case !h.Spec.Online:
		return "", fmt.Errorf("host %s has spec.online false, so Anvil keeps it off: nothing to cycle; power it on instead (anvil hosts power %s on -n %s)", h.Name, h.Name, h.Namespace)
	}
	if id := inventory.PowerCycleRequested(h); id != "" {
		return fmt.Sprintf("host/%s: a power cycle is already requested (%s=%s) and not yet done; nothing patched", h.Name, inventory.AnnotationPowerCycle, id), nil
	}
	id := time.Now().UTC().Format(time.RFC3339Nano)
	patch := client.MergeFrom(h.DeepCopy())
	metav1.SetMetaDataAnnotation(&h.ObjectMeta, inventory.AnnotationPowerCycle, id)
	if err := c.Patch(ctx, h, patch); err != nil {
		return "", fmt.Errorf("annotating host %s with %s: %w", h.Name, inventory.AnnotationPowerCycle, err)
	}
	msg := fmt.Sprintf("host/%s: power cycle requested (%s=%s); Anvil sends one power reset", h.Name, inventory.AnnotationPowerCycle, id)
	switch br := h.Spec.BootRequest; {
	case strings.HasPrefix(h.Spec.BMC.Address, "manual:"):
		msg += "; a manual:// Host's reset waits for a person: anvil hosts ack-power " + h.Name + " -n " + h.Namespace + " once it is done"
	case br != nil && br.ID != h.Status.BootRequestID:
		msg += " after the network boot in flight (boot request " + br.ID + ")"
	case h.Status.IssuedPowerAction != nil:
		msg += " after the power " + string(h.Status.IssuedPowerAction.Action) + " in flight"
	}
	return msg, nil
}

// AckPower confirms that a person did the pending power action of a
// manual:// Host: the controller then takes it as done.
func AckPower(ctx context.Context, c client.Client, key types.NamespacedName) (string, error) {
	h, err := getHost(ctx, c, key)
	if err != nil {
		return "", err
	}
	p := h.Status.PendingPowerAction
	if p == nil {
		return "", fmt.Errorf("host %s has no pending power action", h.Name)
	}
	patch := client.MergeFrom(h.DeepCopy())
	if h.Annotations == nil {
		h.Annotations = map[string]string{}
	}
	h.Annotations[inventory.AnnotationAckPower] = inventory.PendingActionID(p)
	if err := c.Patch(ctx, h, patch); err != nil {
		return "", fmt.Errorf("annotating host %s with %s: %w", h.Name, inventory.AnnotationAckPower, err)
	}
	what := "power " + string(p.Action)
	if p.BootDevice != "" {
		what += " with a one-time " + string(p.BootDevice) + " boot"
	}
	return fmt.Sprintf("acknowledged for %s: %s (requested %s)", h.Name, what, p.RequestedAt.UTC().Format(time.RFC3339)), nil
}
