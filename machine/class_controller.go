package machine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

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
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/render"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machineclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machineclasses/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ClassReconciler validates MachineClass config templates: it renders them
// with render.SampleVars through Butane and the Ignition validator (or the
// cloud-init checks) and reports the result as the ConfigValid condition,
// with status.configHash and observedGeneration. It checks the artifact
// URLs against the request-forgery guard (ArtifactURLsAllowed).
// ArtifactsValid (the downloads and their sha256) is not set here: the
// boot servers that fetch them write it.
type ClassReconciler struct {
	Client client.Client
	// ArtifactGuard is the guard the boot servers fetch artifacts with
	// (the same --artifact-allow-cidrs). ArtifactGuardFlag names that flag
	// in messages (default "anvil serve --artifact-allow-cidrs").
	ArtifactGuard     netguard.Guard
	ArtifactGuardFlag string
	Recorder          events.EventRecorder
	// Renderer validates templates; a new one with default options if nil.
	// Pass the one the config server uses so Strict/AllowExperimental agree.
	Renderer *render.Renderer
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
	configDone := old != nil && old.ObservedGeneration == mc.Generation && mc.Status.ConfigHash == hash && mc.Status.ObservedGeneration == mc.Generation
	// The URL check is cheap (no lookups) and depends on the guard's
	// flags too, so it runs on every reconcile (e.g. after a restart with
	// another --artifact-allow-cidrs); Butane runs once per generation.
	urlCond := r.CheckArtifactURLs(mc)
	oldURL := meta.FindStatusCondition(mc.Status.Conditions, metalv1.ConditionArtifactURLsAllowed)
	if configDone && oldURL != nil && sameCondition(*oldURL, urlCond) {
		return ctrl.Result{}, nil // this generation was validated; Butane is not free
	}
	var prev, prevURL metav1.Condition
	if old != nil {
		prev = *old
	}
	if oldURL != nil {
		prevURL = *oldURL
	}

	cond := metav1.Condition{
		Type: metalv1.ConditionConfigValid, Status: metav1.ConditionTrue, Reason: metalv1.ReasonValid,
		Message: "the template renders to a valid config", ObservedGeneration: mc.Generation,
	}
	if configDone {
		cond = prev
	} else if err := r.validate(mc.Spec.Config); err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, metalv1.ReasonTemplateError, err.Error()
		var te *render.TemplateError
		if !errors.As(err, &te) {
			cond.Reason = metalv1.ReasonUnsupportedFormat
		}
	}

	before := mc.DeepCopy()
	meta.SetStatusCondition(&mc.Status.Conditions, cond)
	meta.SetStatusCondition(&mc.Status.Conditions, urlCond)
	mc.Status.ConfigHash = hash
	mc.Status.ObservedGeneration = mc.Generation
	if !equality.Semantic.DeepEqual(before.Status, mc.Status) {
		// Its own fields alone, by server-side apply: ArtifactsValid is
		// the network services' (pxe/netboot), and a whole conditions
		// list from this copy could drop theirs.
		_, err := statusapply.MachineClassController.Apply(ctx, r.Client, statusapply.Request{Live: before, GVK: statusapply.MachineClassGVK, Status: map[string]any{
			"configHash": mc.Status.ConfigHash, "observedGeneration": mc.Status.ObservedGeneration,
			"conditions": []metav1.Condition{*meta.FindStatusCondition(mc.Status.Conditions, cond.Type), *meta.FindStatusCondition(mc.Status.Conditions, urlCond.Type)},
		}})
		if err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, fmt.Errorf("patching MachineClass status: %w", err)
		}
	}
	for _, c := range []struct {
		prev, now metav1.Condition
		what      string
	}{{prev, cond, "ValidateConfig"}, {prevURL, urlCond, "CheckArtifactURLs"}} {
		if c.prev.Status == c.now.Status && c.prev.Reason == c.now.Reason && c.prev.Message == c.now.Message {
			continue
		}
		log.Info("MachineClass checked", "condition", c.now.Type, "status", c.now.Status, "reason", c.now.Reason, "message", c.now.Message)
		if r.Recorder != nil {
			typ := corev1.EventTypeNormal
			if c.now.Status != metav1.ConditionTrue {
				typ = corev1.EventTypeWarning
			}
			r.Recorder.Eventf(mc, nil, typ, c.now.Reason, c.what, "%s", c.now.Message)
		}
	}
	return ctrl.Result{}, nil
}

func sameCondition(a, b metav1.Condition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message && a.ObservedGeneration == b.ObservedGeneration
}

// CheckArtifactURLs runs the request-forgery guard over every http(s)
// artifact URL of the class (relative paths are files of the artifact
// directory). Only literal addresses and localhost are decided here; the
// boot servers check every address they dial as well, so a name that
// resolves to a refused address is refused there (ArtifactsValid).
func (r *ClassReconciler) CheckArtifactURLs(mc *metalv1.MachineClass) metav1.Condition {
	flag := r.ArtifactGuardFlag
	if flag == "" {
		flag = "anvil serve --artifact-allow-cidrs"
	}
	type field struct{ name, url string }
	fields := []field{{"spec.kernel.url", mc.Spec.Kernel.URL}}
	for i, a := range mc.Spec.Initrds {
		fields = append(fields, field{fmt.Sprintf("spec.initrds[%d].url", i), a.URL})
	}
	if mc.Spec.Image != nil {
		fields = append(fields, field{"spec.image.url", mc.Spec.Image.URL})
	}
	for i, k := range mc.Spec.Kubelets {
		fields = append(fields, field{fmt.Sprintf("spec.kubelets[%d].url", i), k.URL})
	}
	var refused []string
	for _, f := range fields {
		u, err := url.Parse(f.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue // not fetched (a path, or refused as unusable by the boot servers)
		}
		if err := r.ArtifactGuard.CheckHost(u.Hostname()); err != nil {
			// The guard's reason names the address, never the URL (it may
			// carry a token).
			refused = append(refused, fmt.Sprintf("%s: %s", f.name, strings.TrimPrefix(err.Error(), netguard.ErrDenied.Error()+": ")))
		}
	}
	c := metav1.Condition{Type: metalv1.ConditionArtifactURLsAllowed, ObservedGeneration: mc.Generation,
		Status: metav1.ConditionTrue, Reason: metalv1.ReasonValid, Message: "no artifact URL names a refused address"}
	if len(refused) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, metalv1.ReasonAddressRefused
		c.Message = fmt.Sprintf("artifact URLs name addresses the boot servers refuse to fetch from: %s. Use another address, or have an admin allow it with %s=<CIDR>",
			strings.Join(refused, "; "), flag)
	}
	return c
}

// validate renders the class's templates with sample values. Its errors are
// *render.TemplateError (line and reason, secrets scrubbed) except for a
// format the CRD should not have let through.
func (r *ClassReconciler) validate(c metalv1.ConfigTemplate) error {
	switch c.Format {
	case "butane":
		switch v := render.Variant(c.Variant); v {
		case render.VariantFCOS, render.VariantFlatcar:
			return r.renderer().Validate(c.Template, v)
		default:
			return fmt.Errorf("butane variant %q is not supported (want %q or %q)", c.Variant, render.VariantFCOS, render.VariantFlatcar)
		}
	case "cloud-init":
		return r.renderer().ValidateNoCloud(render.NoCloudTemplates{UserData: c.Template, VendorData: c.VendorData, NetworkConfig: c.NetworkConfig})
	}
	return fmt.Errorf("config format %q is not supported (want butane or cloud-init)", c.Format)
}

func (r *ClassReconciler) renderer() *render.Renderer {
	if r.Renderer == nil {
		r.Renderer = render.NewRenderer(render.Options{})
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
