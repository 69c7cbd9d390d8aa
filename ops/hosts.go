package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
)

// SetOnline sets a Host's spec.online, the power it should have.
func SetOnline(ctx context.Context, c client.Client, key types.NamespacedName, online bool) (string, error) {
	return "", errors.New("ops.SetOnline: not implemented yet")
}

// PowerCycle asks the Host controller to reset a Host's power once.
func PowerCycle(ctx context.Context, c client.Client, key types.NamespacedName) (string, error) {
	return "", errors.New("ops.PowerCycle: not implemented yet")
}

// AckPower confirms that a person did the pending power action of a
// manual:// Host: the controller then takes it as done.
func AckPower(ctx context.Context, c client.Client, key types.NamespacedName) (string, error) {
	var h metalv1.Host
	if err := c.Get(ctx, key, &h); err != nil {
		return "", fmt.Errorf("reading host %s: %w", key.Name, err)
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
	if err := c.Patch(ctx, &h, patch); err != nil {
		return "", fmt.Errorf("annotating host %s with %s: %w", h.Name, inventory.AnnotationAckPower, err)
	}
	what := "power " + string(p.Action)
	if p.BootDevice != "" {
		what += " with a one-time " + string(p.BootDevice) + " boot"
	}
	return fmt.Sprintf("acknowledged for %s: %s (requested %s)", h.Name, what, p.RequestedAt.UTC().Format(time.RFC3339)), nil
}
