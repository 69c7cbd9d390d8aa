package cluster

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// Hook sets up what a controller needs in a new remote target before its
// Cache starts (indexes, informers, event handlers, controllers). ctx ends
// when the target is dropped (its Secret changed, no class uses it, or the
// Registry stops).
type Hook func(ctx context.Context, t *Target) error

// Options configure a Registry.
type Options struct {
	// Secrets reads kubeconfig Secrets. Use an uncached reader
	// (mgr.GetAPIReader()): it needs only get on the Secrets, not a
	// cluster-wide watch. Required.
	Secrets client.Reader
	// Classes lists MachineClasses and Machines, to drop targets no class
	// and no Machine (spec.bootstrap.kubeconfigSecretRef) refers to (the
	// manager's cache). Without it targets are dropped after IdleTimeout.
	Classes client.Reader
	// Management is the target of classes without kubeconfigSecretRef.
	Management *Target
	// Hooks run for each new remote target; with any, targets get a Cache.
	Hooks []Hook
	// Timeout bounds the reachability check of a new target (default 10s).
	Timeout time.Duration
	// SweepInterval is how often Start checks targets (default 30s).
	SweepInterval time.Duration
	// IdleTimeout drops a target not asked for this long when Classes is
	// nil (default 10m).
	IdleTimeout time.Duration
	// Mutate adjusts a target's rest.Config (QPS, user agent) before use.
	Mutate func(*rest.Config)
	Logger logr.Logger
}

// Registry builds and keeps Targets, one per kubeconfig Secret key content.
type Registry struct {
	o  Options
	mu sync.Mutex
	m  map[SecretRef]*entry
	// building serializes builds per Secret.
	building sync.Map
	ctx      context.Context // set by Start; targets' caches live under it
}

type entry struct {
	t        *Target
	sum      [32]byte
	cancel   context.CancelFunc
	lastUsed time.Time
}

// New returns a Registry.
func New(o Options) (*Registry, error) {
	if o.Secrets == nil {
		return nil, errors.New("cluster: Options.Secrets is required")
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	return &Registry{o: o, m: map[SecretRef]*entry{}}, nil
}

// AddHook adds a Hook for targets built from now on. Call it before Start.
func (r *Registry) AddHook(h Hook) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.o.Hooks = append(r.o.Hooks, h)
}

// SecretRef is a key of a kubeconfig Secret: one Target each.
type SecretRef struct {
	types.NamespacedName
	// Key of the Secret's data holding the kubeconfig; "" is KubeconfigKey.
	Key string
}

// DataKey is the key, defaulted.
func (s SecretRef) DataKey() string {
	if s.Key == "" {
		return KubeconfigKey
	}
	return s.Key
}

func (s SecretRef) normal() SecretRef { s.Key = s.DataKey(); return s }

// SecretOf returns the kubeconfig Secret a class refers to, if any.
func SecretOf(class *metalv1.MachineClass) (types.NamespacedName, bool) {
	ref := class.Spec.Join.KubeconfigSecretRef
	if ref == nil || ref.Name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: class.Namespace, Name: ref.Name}, true
}

// MachineSecretOf returns the kubeconfig Secret key a Machine names itself
// (spec.bootstrap.kubeconfigSecretRef), if any.
func MachineSecretOf(m *metalv1.Machine) (SecretRef, bool) {
	b := m.Spec.Bootstrap
	if b == nil || b.KubeconfigSecretRef == nil || b.KubeconfigSecretRef.Name == "" {
		return SecretRef{}, false
	}
	ref := SecretRef{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: b.KubeconfigSecretRef.Name}, Key: b.KubeconfigSecretRef.Key}
	return ref.normal(), true
}

// ForMachine returns the target a Machine names in
// spec.bootstrap.kubeconfigSecretRef; callers check MachineSecretOf first.
func (r *Registry) ForMachine(ctx context.Context, m *metalv1.Machine) (*Target, error) {
	ref, ok := MachineSecretOf(m)
	if !ok {
		return nil, fmt.Errorf("machine %s/%s has no spec.bootstrap.kubeconfigSecretRef", m.Namespace, m.Name)
	}
	t, err := r.ForSecretKey(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("machine %s/%s spec.bootstrap.kubeconfigSecretRef: %w", m.Namespace, m.Name, err)
	}
	return t, nil
}

// For returns the target of a class: the management cluster without
// spec.join.kubeconfigSecretRef (nil if Options.Management is nil), else
// the target of that Secret.
func (r *Registry) For(ctx context.Context, class *metalv1.MachineClass) (*Target, error) {
	key, ok := SecretOf(class)
	if !ok {
		return r.o.Management, nil
	}
	t, err := r.ForSecret(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("MachineClass %s/%s spec.join.kubeconfigSecretRef: %w", class.Namespace, class.Name, err)
	}
	return t, nil
}

// ForSecret returns the target of a kubeconfig Secret's key "kubeconfig".
func (r *Registry) ForSecret(ctx context.Context, key types.NamespacedName) (*Target, error) {
	return r.ForSecretKey(ctx, SecretRef{NamespacedName: key})
}

// ForSecretKey returns the target of a kubeconfig Secret's key. The Secret
// is read on every call (one GET); the target is rebuilt only when that
// key's content changed.
func (r *Registry) ForSecretKey(ctx context.Context, ref SecretRef) (*Target, error) {
	ref = ref.normal()
	key := ref.NamespacedName
	data, err := readKubeconfig(ctx, r.o.Secrets, key, ref.Key)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if t := r.lookup(ref, sum); t != nil {
		return t, nil
	}
	mu, _ := r.building.LoadOrStore(ref, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if t := r.lookup(ref, sum); t != nil {
		return t, nil
	}
	t, err := build(ctx, key, ref.Key, data, r.o.Timeout, r.o.Mutate)
	if err != nil {
		return nil, err
	}
	e := &entry{t: t, sum: sum, lastUsed: time.Now()}
	if err := r.start(e); err != nil {
		return nil, err
	}
	r.mu.Lock()
	old := r.m[ref]
	r.m[ref] = e
	r.mu.Unlock()
	if old != nil {
		r.o.Logger.Info("target cluster Secret changed; rebuilt its clients", "secret", key.String(), "key", ref.Key, "server", t.Server)
		old.cancel()
	} else {
		r.o.Logger.Info("connected to target cluster", "secret", key.String(), "key", ref.Key, "server", t.Server)
	}
	return t, nil
}

func (r *Registry) lookup(key SecretRef, sum [32]byte) *Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.m[key]; e != nil && e.sum == sum {
		e.lastUsed = time.Now()
		return e.t
	}
	return nil
}

// start runs the hooks and the target's cache.
func (r *Registry) start(e *entry) error {
	r.mu.Lock()
	hooks, parent := r.o.Hooks, r.ctx
	r.mu.Unlock()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	e.cancel = cancel
	if len(hooks) == 0 {
		return nil
	}
	c, err := cache.New(e.t.Config, cache.Options{})
	if err != nil {
		cancel()
		return fmt.Errorf("target cluster of Secret %s: cache: %w", e.t.Secret, err)
	}
	e.t.Cache, e.t.Nodes = c, c
	for _, h := range hooks {
		if err := h(ctx, e.t); err != nil {
			cancel()
			return fmt.Errorf("target cluster of Secret %s: %w", e.t.Secret, err)
		}
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			r.o.Logger.Error(err, "target cluster cache stopped", "secret", e.t.Secret.String())
		}
	}()
	sctx, scancel := context.WithTimeout(ctx, 2*r.o.Timeout)
	defer scancel()
	if !c.WaitForCacheSync(sctx) {
		cancel()
		return &secretError{key: e.t.Secret, kind: ErrUnreachable,
			msg: fmt.Sprintf("the target cluster at %s: its caches did not sync within %s (does the kubeconfig allow list and watch?)", e.t.Server, 2*r.o.Timeout)}
	}
	return nil
}

// Targets returns the remote targets alive now.
func (r *Registry) Targets() []*Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Target, 0, len(r.m))
	for _, e := range r.m {
		out = append(out, e.t)
	}
	return out
}

// Start implements manager.Runnable: it connects to the targets classes
// refer to (so that hooks such as the CSR approver run before any Machine
// asks), drops targets that are no longer used or whose Secret changed, and
// stops them all when ctx ends.
func (r *Registry) Start(ctx context.Context) error {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	defer r.stopAll()
	tick := time.NewTicker(r.o.SweepInterval)
	defer tick.Stop()
	for {
		r.Sweep(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Sweep does one round of what Start does periodically.
func (r *Registry) Sweep(ctx context.Context) {
	used := map[SecretRef]bool{}
	if r.o.Classes != nil {
		var list metalv1.MachineClassList
		if err := r.o.Classes.List(ctx, &list); err != nil {
			r.o.Logger.Error(err, "listing MachineClasses for target clusters")
			return
		}
		for i := range list.Items {
			if key, ok := SecretOf(&list.Items[i]); ok {
				used[SecretRef{NamespacedName: key}.normal()] = true
			}
		}
		// Machines naming their own cluster (spec.bootstrap.kubeconfigSecretRef).
		var machines metalv1.MachineList
		if err := r.o.Classes.List(ctx, &machines); err != nil {
			r.o.Logger.Error(err, "listing Machines for target clusters")
			return
		}
		for i := range machines.Items {
			if ref, ok := MachineSecretOf(&machines.Items[i]); ok {
				used[ref] = true
			}
		}
		for key := range used {
			if _, err := r.ForSecretKey(ctx, key); err != nil && ctx.Err() == nil {
				r.o.Logger.Info("target cluster not available", "secret", key.String(), "key", key.Key, "reason", err.Error())
				if errors.Is(err, ErrSecret) {
					used[key] = false // deleted or broken: stop using the old credentials
				}
			}
		}
	}
	r.mu.Lock()
	var drop []*entry
	for key, e := range r.m {
		idle := r.o.Classes == nil && time.Since(e.lastUsed) > r.o.IdleTimeout
		if (r.o.Classes != nil && !used[key]) || idle {
			drop = append(drop, e)
			delete(r.m, key)
		}
	}
	r.mu.Unlock()
	for _, e := range drop {
		r.o.Logger.Info("dropping target cluster no MachineClass or Machine uses", "secret", e.t.Secret.String(), "key", e.t.SecretKey)
		e.cancel()
	}
}

func (r *Registry) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, e := range r.m {
		e.cancel()
		delete(r.m, key)
	}
}

// NeedLeaderElection: targets serve the controllers, which run on the leader.
func (r *Registry) NeedLeaderElection() bool { return true }
