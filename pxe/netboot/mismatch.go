package netboot

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/internal/statusapply"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=machineclasses/status,verbs=patch,roleName=anvil-pxe

// Reasons of ArtifactsValid, written by the boot servers.
const (
	// ReasonDigestMismatch: an artifact (a file under --artifact-dir, or
	// the upstream content of a URL) does not have the sha256 the class
	// names; it is never served.
	ReasonDigestMismatch = "DigestMismatch"
	// ReasonFetchFailed: an upstream artifact could not be downloaded.
	ReasonFetchFailed = "FetchFailed"
	// ReasonAddressRefused: an artifact URL leads to an address the
	// request-forgery guard refuses (--artifact-allow-cidrs opens it).
	ReasonAddressRefused = metalv1.ReasonAddressRefused
	// ReasonFetchDisabled: the class has http(s) artifacts, but the boot
	// server has no --artifact-cache-dir to fetch them to.
	ReasonFetchDisabled = "FetchDisabled"
	// ReasonVerified: every upstream artifact was fetched and matches.
	ReasonVerified = "Verified"
)

// artifacts prefetches the upstream artifacts of every MachineClass (from
// the informer, when a class is added or its artifacts change) and keeps
// its ArtifactsValid condition: one status write per change of outcome,
// none per request.
type artifacts struct {
	client client.Client // nil: no status is written
	fetch  bool          // --artifact-cache-dir is set: http(s) artifacts are fetched
	index  *index.Index
	srv    *httpboot.Server
	log    logr.Logger
	queue  workqueue.TypedRateLimitingInterface[types.NamespacedName]

	mu      sync.Mutex
	classes map[types.NamespacedName]*classArtifacts
	results map[upstreamKey]httpboot.UpstreamResult
	written map[types.NamespacedName]metav1.Condition // last condition this process wrote
}

type upstreamKey struct{ url, sha string }

type fieldArtifact struct {
	field string // e.g. spec.initrds[1].url
	path  string // under /artifacts/
	key   upstreamKey
	isURL bool
}

type classArtifacts struct {
	gen    int64
	fields []fieldArtifact
	local  map[string]bool // fields whose file under --artifact-dir mismatched
}

func newArtifacts(o Options, ix *index.Index, log logr.Logger) *artifacts {
	return &artifacts{client: o.Client, fetch: o.CacheDir != "", index: ix, log: log.WithName("artifacts"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "netboot-artifacts"}),
		classes: map[types.NamespacedName]*classArtifacts{}, results: map[upstreamKey]httpboot.UpstreamResult{},
		written: map[types.NamespacedName]metav1.Condition{}}
}

// classFields lists a class's artifacts with the field that names them.
func classFields(mc *metalv1.MachineClass) []fieldArtifact {
	key := types.NamespacedName{Namespace: mc.Namespace, Name: mc.Name}
	var out []fieldArtifact
	add := func(field, path string, a metalv1.Artifact) {
		u, err := url.Parse(a.URL)
		isURL := err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
		out = append(out, fieldArtifact{field: field, path: path, key: upstreamKey{a.URL, strings.ToLower(a.SHA256)}, isURL: isURL})
	}
	add("spec.kernel.url", index.KernelPath(key, mc.Spec.Kernel), mc.Spec.Kernel)
	for i, a := range mc.Spec.Initrds {
		add(fmt.Sprintf("spec.initrds[%d].url", i), index.InitrdPath(key, i, a), a)
	}
	if mc.Spec.Image != nil {
		add("spec.image.url", index.ImagePath(key, *mc.Spec.Image), *mc.Spec.Image)
	}
	for i, k := range mc.Spec.Kubelets {
		add(fmt.Sprintf("spec.kubelets[%d].url", i), index.KubeletPath(key, k), k.Artifact)
	}
	return out
}

func (a *artifacts) setClass(o any) {
	mc, ok := unwrapClass(o)
	if !ok {
		return
	}
	key := types.NamespacedName{Namespace: mc.Namespace, Name: mc.Name}
	fields := classFields(mc)
	a.mu.Lock()
	c := a.classes[key]
	if c != nil && c.gen == mc.Generation {
		a.mu.Unlock()
		return // a status or metadata update: nothing to fetch
	}
	changed := c == nil || !slices.Equal(c.fields, fields)
	if c == nil || changed {
		c = &classArtifacts{fields: fields, local: map[string]bool{}}
		a.classes[key] = c
	}
	c.gen = mc.Generation
	a.mu.Unlock()
	if changed && a.srv != nil {
		var want []httpboot.Artifact
		for _, f := range fields {
			if f.isURL {
				want = append(want, httpboot.Artifact{URL: f.key.url, SHA256: f.key.sha})
			}
		}
		a.srv.WantUpstream(key.String(), want)
	}
	a.queue.Add(key)
}

func (a *artifacts) deleteClass(o any) {
	mc, ok := unwrapClass(o)
	if !ok {
		return
	}
	key := types.NamespacedName{Namespace: mc.Namespace, Name: mc.Name}
	a.mu.Lock()
	delete(a.classes, key)
	delete(a.written, key)
	a.mu.Unlock()
	if a.srv != nil {
		a.srv.WantUpstream(key.String(), nil)
	}
}

func unwrapClass(o any) (*metalv1.MachineClass, bool) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	mc, ok := o.(*metalv1.MachineClass)
	return mc, ok
}

// onResult is httpboot's UpstreamOptions.OnResult.
func (a *artifacts) onResult(r httpboot.UpstreamResult) {
	k := upstreamKey{r.URL, r.SHA256}
	a.mu.Lock()
	a.results[k] = r
	var keys []types.NamespacedName
	for key, c := range a.classes {
		for _, f := range c.fields {
			if f.isURL && f.key == k {
				keys = append(keys, key)
				break
			}
		}
	}
	a.mu.Unlock()
	for _, key := range keys {
		a.queue.Add(key)
	}
}

// onLocalMismatch is httpboot's OnArtifactMismatch (called once per file
// version, not per request).
func (a *artifacts) onLocalMismatch(m httpboot.ArtifactMismatch) {
	key, ok := a.index.ClassOfArtifact(m.Path)
	if !ok {
		return
	}
	a.mu.Lock()
	c := a.classes[key]
	if c != nil {
		for _, f := range c.fields {
			if f.path == m.Path {
				c.local[f.field] = true
			}
		}
	}
	a.mu.Unlock()
	if c != nil {
		a.queue.Add(key)
	}
}

// condition is the ArtifactsValid the class should have, or nil while an
// upstream artifact has no outcome yet (nothing is written for "pending").
func (a *artifacts) condition(key types.NamespacedName) *metav1.Condition {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.classes[key]
	if c == nil {
		return nil
	}
	var problems []string
	var mismatch, refused, pending bool
	var disabled []string
	upstream := 0
	for _, f := range c.fields {
		if c.local[f.field] {
			mismatch = true
			problems = append(problems, f.field+": the file under --artifact-dir does not match the sha256")
			continue
		}
		if !f.isURL {
			continue
		}
		upstream++
		r, ok := a.results[f.key]
		switch {
		case !a.fetch:
			disabled = append(disabled, f.field)
		case !ok:
			pending = true
		case !r.Verified:
			mismatch = mismatch || r.Mismatch
			refused = refused || r.Refused
			problems = append(problems, f.field+": "+r.Error)
		}
	}
	cond := &metav1.Condition{Type: metalv1.ConditionArtifactsValid, ObservedGeneration: c.gen}
	switch {
	case len(problems) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonFetchFailed
		if refused {
			cond.Reason = ReasonAddressRefused
		}
		if mismatch {
			cond.Reason = ReasonDigestMismatch
		}
		cond.Message = "not served: " + strings.Join(problems, "; ")
		if upstream > 0 {
			cond.Message += " (failed fetches are retried with backoff, or when the class changes)"
		}
	case len(disabled) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonFetchDisabled
		cond.Message = "not served: " + strings.Join(disabled, ", ") + " are http(s) URLs, and this boot server fetches none (anvil serve --artifact-cache-dir is not set)"
	case pending || upstream == 0:
		return nil
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonVerified
		cond.Message = fmt.Sprintf("the %d fetched artifacts match their sha256", upstream)
	}
	return cond
}

// run registers the informer handler and writes conditions until ctx is
// done.
func (a *artifacts) run(ctx context.Context, informers index.Informers) (stop func(), err error) {
	inf, err := informers.GetInformer(ctx, &metalv1.MachineClass{})
	if err != nil {
		return nil, err
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    a.setClass,
		UpdateFunc: func(_, o any) { a.setClass(o) },
		DeleteFunc: a.deleteClass,
	})
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for a.next(ctx) {
		}
	})
	return func() {
		_ = inf.RemoveEventHandler(reg)
		a.queue.ShutDown()
		wg.Wait()
	}, nil
}

func (a *artifacts) next(ctx context.Context) bool {
	key, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(key)
	if err := a.write(ctx, key); err != nil {
		if ctx.Err() == nil {
			a.log.Info("writing ArtifactsValid; will retry", "class", key, "error", err.Error())
			a.queue.AddRateLimited(key)
		}
		return true
	}
	a.queue.Forget(key)
	return true
}

func (a *artifacts) write(ctx context.Context, key types.NamespacedName) error {
	want := a.condition(key)
	if want == nil || a.client == nil {
		return nil
	}
	a.mu.Lock()
	last, wrote := a.written[key]
	a.mu.Unlock()
	if wrote && sameCondition(last, *want) {
		return nil // the cache may not show our write yet: do not write it twice
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var mc metalv1.MachineClass
	if err := a.client.Get(ctx, key, &mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if mc.Generation != want.ObservedGeneration {
		return nil // a newer spec is on its way through the informer
	}
	if old := meta.FindStatusCondition(mc.Status.Conditions, want.Type); old != nil && sameCondition(*old, *want) {
		return nil // already says so (another replica, or an earlier run)
	}
	before := mc.DeepCopy()
	meta.SetStatusCondition(&mc.Status.Conditions, *want)
	// The condition alone, by server-side apply: no conflict with the
	// MachineClass controller's fields.
	_, err := statusapply.ArtifactsValid.Apply(ctx, a.client, statusapply.Request{Live: before, GVK: statusapply.MachineClassGVK,
		Status: map[string]any{"conditions": []metav1.Condition{*meta.FindStatusCondition(mc.Status.Conditions, want.Type)}}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		a.mu.Lock()
		a.written[key] = *want
		a.mu.Unlock()
		a.log.Info("MachineClass artifacts checked", "class", key, "status", want.Status, "reason", want.Reason, "message", want.Message)
	}
	return err
}

func sameCondition(a, b metav1.Condition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message && a.ObservedGeneration == b.ObservedGeneration
}
