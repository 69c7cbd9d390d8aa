package machine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/ignition"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machineclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machineclasses/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reasons of the ConfigValid condition. ReasonTemplateError belongs in
// api/v1alpha1 next to the other reasons; it is here until it moves.
const (
	ReasonTemplateError = "TemplateError"
	// ReasonUnsupportedFormat: a format or variant the CRD should have
	// refused (its enum) reached the controller anyway.
	ReasonUnsupportedFormat = "UnsupportedFormat"
)

// ClassReconciler validates MachineClass config templates: it renders them
// with ignition.SampleVars through Butane and the Ignition validator (or the
// cloud-init checks) and reports the result as the ConfigValid condition,
// with status.configHash and observedGeneration. ArtifactsValid (kernel,
// initrd, image and kubelet downloads) is not set here.
type ClassReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Renderer validates templates; a new one with default options if nil.
	// Pass the one the config server uses so Strict/AllowExperimental agree.
	Renderer *ignition.Renderer
	// MaxConcurrentReconciles bounds the workers (default 2): each
	// validation runs Butane, which is CPU work.
	MaxConcurrentReconciles int
}

// ConfigHash is the content hash of a class's config template as recorded
// in status.configHash: hex SHA-256 over the length-prefixed format,
// variant, template, vendor-data and network-config.
func ConfigHash(c metalv1.ConfigTemplate) string {
	h := sha256.New()
	for _, f := range []string{c.Format, c.Variant, c.Template, c.VendorData, c.NetworkConfig} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Reconcile validates one MachineClass.
func (r *ClassReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	mc := &metalv1.MachineClass{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	hash := ConfigHash(mc.Spec.Config)
	old := meta.FindStatusCondition(mc.Status.Conditions, metalv1.ConditionConfigValid)
	if old != nil && old.ObservedGeneration == mc.Generation && mc.Status.ConfigHash == hash && mc.Status.ObservedGeneration == mc.Generation {
		return ctrl.Result{}, nil // this generation was validated; Butane is not free
	}
	var prev metav1.Condition
	if old != nil {
		prev = *old
	}

	cond := metav1.Condition{
		Type: metalv1.ConditionConfigValid, Status: metav1.ConditionTrue, Reason: metalv1.ReasonValid,
		Message: "the template renders to a valid config", ObservedGeneration: mc.Generation,
	}
	if err := r.validate(mc.Spec.Config); err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonTemplateError, err.Error()
		var te *ignition.TemplateError
		if !errors.As(err, &te) {
			cond.Reason = ReasonUnsupportedFormat
		}
	}

	before := mc.DeepCopy()
	meta.SetStatusCondition(&mc.Status.Conditions, cond)
	mc.Status.ConfigHash = hash
	mc.Status.ObservedGeneration = mc.Generation
	if !equality.Semantic.DeepEqual(before.Status, mc.Status) {
		if err := r.Client.Status().Patch(ctx, mc, client.MergeFrom(before)); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, fmt.Errorf("patching MachineClass status: %w", err)
		}
	}
	if prev.Status != cond.Status || prev.Reason != cond.Reason || prev.Message != cond.Message {
		log.Info("MachineClass config validated", "valid", cond.Status, "reason", cond.Reason, "message", cond.Message)
		if r.Recorder != nil {
			typ := corev1.EventTypeNormal
			if cond.Status != metav1.ConditionTrue {
				typ = corev1.EventTypeWarning
			}
			r.Recorder.Eventf(mc, nil, typ, cond.Reason, "ValidateConfig", "%s", cond.Message)
		}
	}
	return ctrl.Result{}, nil
}

// validate renders the class's templates with sample values. Its errors are
// *ignition.TemplateError (line and reason, secrets scrubbed) except for a
// format the CRD should not have let through.
func (r *ClassReconciler) validate(c metalv1.ConfigTemplate) error {
	switch c.Format {
	case "butane":
		switch v := ignition.Variant(c.Variant); v {
		case ignition.VariantFCOS, ignition.VariantFlatcar:
			return r.renderer().Validate(c.Template, v)
		default:
			return fmt.Errorf("butane variant %q is not supported (want %q or %q)", c.Variant, ignition.VariantFCOS, ignition.VariantFlatcar)
		}
	case "cloud-init":
		return r.renderer().ValidateNoCloud(ignition.NoCloudTemplates{UserData: c.Template, VendorData: c.VendorData, NetworkConfig: c.NetworkConfig})
	}
	return fmt.Errorf("config format %q is not supported (want butane or cloud-init)", c.Format)
}

func (r *ClassReconciler) renderer() *ignition.Renderer {
	if r.Renderer == nil {
		r.Renderer = ignition.NewRenderer(ignition.Options{})
	}
	return r.Renderer
}

// SetupWithManager registers the controller. Only spec changes (generation)
// trigger a validation.
func (r *ClassReconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	r.renderer() // set once here, not racily from concurrent reconciles
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 2
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&metalv1.MachineClass{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Named("machineclass").
		Complete(r)
}
