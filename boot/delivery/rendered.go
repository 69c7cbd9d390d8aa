package delivery

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/internal/statusapply"
)

// Host conditions written by the config endpoint.
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts/status,verbs=patch,roleName=anvil-pxe

// recordRender puts the outcome of a config render on the Host, so that a
// failure that only shows at fetch time (a per-host value the template
// chokes on, an unusable target cluster) reaches the Machine instead of
// only the boot service's log. Only a failure, or the first success after
// one, is written. Errors here carry no secrets: templates report scrubbed
// TemplateErrors, tokens are redacted, target errors never quote the
// kubeconfig.
func (c *Configs) recordRender(ctx context.Context, h *metalv1.Host, renderErr error) {
	if c.o.Writer == nil || h == nil || errors.Is(renderErr, configserver.ErrNoConfig) {
		return
	}
	cond := metav1.Condition{Type: metalv1.ConditionConfigRendered, Status: metav1.ConditionTrue, Reason: metalv1.ReasonConfigRendered,
		Message: "boot " + h.Status.BootRequestID + ": config rendered"}
	if renderErr != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, metalv1.ReasonConfigRenderFailed
		cond.Message = fmt.Sprintf("boot %s: %v", h.Status.BootRequestID, renderErr)
		if len(cond.Message) > 1000 {
			cond.Message = cond.Message[:1000] + "..."
		}
	}
	cur := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionConfigRendered)
	if renderErr == nil && (cur == nil || cur.Status == metav1.ConditionTrue) {
		return // nothing to clear: no write on the common path
	}
	if cur != nil && cur.Status == cond.Status && cur.Message == cond.Message && cur.ObservedGeneration == h.Generation {
		return
	}
	log := c.logger(ctx)
	// The condition alone, by server-side apply: no other writer's field
	// or condition is sent, so no conflict and nothing to re-read.
	h = h.DeepCopy()
	cond.ObservedGeneration = h.Generation
	meta.SetStatusCondition(&h.Status.Conditions, cond)
	_, err := statusapply.ConfigRendered.Apply(ctx, c.o.Writer, statusapply.Request{
		Live: h, GVK: statusapply.HostGVK,
		Status: map[string]any{"conditions": []metav1.Condition{*meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionConfigRendered)}},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		log.Error(err, "recording the config render outcome on the Host", "host", h.Namespace+"/"+h.Name)
	}
}

func (c *Configs) logger(ctx context.Context) logr.Logger {
	if l, err := logr.FromContext(ctx); err == nil {
		return l
	}
	return c.o.Logger
}
