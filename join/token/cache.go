package token

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// Lister finds Anvil's tokens by owner. Direct asks the API server every
// time; Cache answers from an informer.
type Lister interface {
	List(ctx context.Context, opts ListOptions) ([]Info, error)
}

// Direct is the uncached Lister: a LIST by label per call (fine for rare
// calls and for target clusters, where no informer runs).
type Direct struct{ Clientset kubernetes.Interface }

// List implements Lister with the package's List.
func (d Direct) List(ctx context.Context, opts ListOptions) ([]Info, error) {
	return List(ctx, d.Clientset, opts)
}

// CacheOptions configure a Cache.
type CacheOptions struct {
	// Resync of the informer (0: none; events are enough).
	Resync time.Duration
	// Now returns the current time (time.Now if nil); remembered mints are
	// forgotten once expired.
	Now func() time.Time
}

// Cache is a Lister backed by an informer on kube-system's Secrets of type
// bootstrap.kubernetes.io/token labelled managed-by=anvil. Tokens minted
// through Cache.Mint (or reported with Remember) are listed at once, before
// the informer shows them: a lookup right after a mint must not miss the
// token and mint another. A remembered token is forgotten when the informer
// delivers it, when it is revoked through Cache.Revoke, or when it expires.
// Until the informer has synced, List asks the API server directly.
//
// Cache is a manager Runnable: mgr.Add(cache), or call Start yourself. The
// informer starts at the first use (List, Mint, Remember, Revoke,
// WaitForSync), not at Start: a process that never handles a token (one
// serving only Cluster API's Machines, which bring their own) neither
// watches kube-system's Secrets nor needs the grant to (clusterctl's
// components leave it out), and logs no "forbidden".
type Cache struct {
	cs       kubernetes.Interface
	opts     CacheOptions
	informer cache.SharedIndexInformer
	wanted   chan struct{} // closed by the first use
	wantOnce sync.Once
	parked   chan struct{} // closed when Start waits for the first use

	mu     sync.Mutex
	minted map[string]Info // by ID, not yet seen by the informer
}

var _ Lister = (*Cache)(nil)

// NewCache returns a Cache; it lists nothing from memory until started.
func NewCache(cs kubernetes.Interface, o CacheOptions) *Cache {
	if o.Now == nil {
		o.Now = time.Now
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, o.Resync,
		informers.WithNamespace(Namespace),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.LabelSelector = labels.Set{LabelManagedBy: ManagedByValue}.String()
			lo.FieldSelector = fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String()
		}))
	c := &Cache{cs: cs, opts: o, informer: f.Core().V1().Secrets().Informer(), minted: map[string]Info{},
		wanted: make(chan struct{}), parked: make(chan struct{})}
	// Keep no token secret in memory: List reports Info, never the secret.
	_ = c.informer.SetTransform(func(obj any) (any, error) {
		if s, ok := obj.(*corev1.Secret); ok {
			s = s.DeepCopy()
			delete(s.Data, bootstrapapi.BootstrapTokenSecretKey)
			s.ManagedFields = nil
			return s, nil
		}
		return obj, nil
	})
	_ = c.informer.AddIndexers(cache.Indexers{
		LabelMachineUID: labelIndex(LabelMachineUID),
		LabelHostUID:    labelIndex(LabelHostUID),
	})
	_, _ = c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.seen,
		UpdateFunc: func(_, n any) { c.seen(n) },
	})
	return c
}

func labelIndex(label string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		if s, ok := obj.(*corev1.Secret); ok && s.Labels[label] != "" {
			return []string{s.Labels[label]}, nil
		}
		return nil, nil
	}
}

func (c *Cache) seen(obj any) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return
	}
	c.mu.Lock()
	delete(c.minted, string(s.Data[bootstrapapi.BootstrapTokenIDKey]))
	c.mu.Unlock()
}

// Start runs the informer, from the first use until ctx ends (blocking,
// as a manager Runnable).
func (c *Cache) Start(ctx context.Context) error {
	close(c.parked)
	select {
	case <-ctx.Done():
		return nil
	case <-c.wanted:
	}
	c.informer.Run(ctx.Done())
	return nil
}

// use starts the informer if Start is waiting for it.
func (c *Cache) use() { c.wantOnce.Do(func() { close(c.wanted) }) }

// NeedLeaderElection: every replica serving configs needs its own cache.
func (c *Cache) NeedLeaderElection() bool { return false }

// HasSynced reports whether the informer has its initial list.
func (c *Cache) HasSynced() bool { return c.informer.HasSynced() }

// WaitForSync blocks until synced or ctx ends; false if it ended first.
func (c *Cache) WaitForSync(ctx context.Context) bool {
	c.use()
	return cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced)
}

// List implements Lister from memory (directly from the API server until
// the informer has synced). Expired tokens are listed too, as List does.
func (c *Cache) List(ctx context.Context, opts ListOptions) ([]Info, error) {
	c.use()
	if !c.informer.HasSynced() {
		return List(ctx, c.cs, opts)
	}
	var objs []any
	switch {
	case opts.MachineUID != "":
		objs, _ = c.informer.GetIndexer().ByIndex(LabelMachineUID, string(opts.MachineUID))
	case opts.HostUID != "":
		objs, _ = c.informer.GetIndexer().ByIndex(LabelHostUID, string(opts.HostUID))
	default:
		objs = c.informer.GetStore().List()
	}
	var out []Info
	ids := map[string]bool{}
	for _, obj := range objs {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			continue
		}
		inf, err := info(s)
		if err != nil || !matches(inf, opts) {
			continue // malformed token Secret; not ours to judge here
		}
		ids[inf.ID] = true
		out = append(out, inf)
	}
	now := c.opts.Now()
	c.mu.Lock()
	for id, inf := range c.minted {
		if !inf.Expiration.IsZero() && !now.Before(inf.Expiration) {
			delete(c.minted, id)
			continue
		}
		if !ids[id] && matches(inf, opts) {
			out = append(out, copyInfo(inf))
		}
	}
	c.mu.Unlock()
	return out, nil
}

// Mint is the package's Mint, remembering the token so List finds it at once.
func (c *Cache) Mint(ctx context.Context, opts MintOptions) (Token, error) {
	c.use()
	tok, err := Mint(ctx, c.cs, opts)
	if err != nil {
		return tok, err
	}
	c.Remember(tok)
	return tok, nil
}

// Remember makes List report a token minted elsewhere in this process
// until the informer shows it.
func (c *Cache) Remember(tok Token) {
	if tok.ID == "" {
		return
	}
	c.use()
	c.mu.Lock()
	c.minted[tok.ID] = Info{ID: tok.ID, Owner: tok.Owner, Expiration: tok.Expiration}
	c.mu.Unlock()
	// The informer may have delivered it already (its store is updated
	// before handlers run, so checking after the insert cannot miss it).
	if _, ok, _ := c.informer.GetStore().GetByKey(Namespace + "/" + tok.SecretName()); ok {
		c.mu.Lock()
		delete(c.minted, tok.ID)
		c.mu.Unlock()
	}
}

// Revoke is the package's Revoke, forgetting a remembered token. A token
// the informer holds (it holds only Anvil's) is deleted with its UID as
// the precondition and no GET first; a Conflict there means a token of
// that ID was minted since the informer's copy, and the package's Revoke
// (GET, then delete) decides.
func (c *Cache) Revoke(ctx context.Context, id string) error {
	c.use()
	c.mu.Lock()
	delete(c.minted, id)
	c.mu.Unlock()
	if !bootstraputil.IsValidBootstrapTokenID(id) {
		return ErrInvalidID
	}
	if obj, ok, _ := c.informer.GetStore().GetByKey(Namespace + "/" + bootstraputil.BootstrapTokenSecretName(id)); ok {
		if s, isSecret := obj.(*corev1.Secret); isSecret {
			uid := s.UID
			err := c.cs.CoreV1().Secrets(Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			switch {
			case err == nil || apierrors.IsNotFound(err):
				return nil
			case !apierrors.IsConflict(err):
				return fmt.Errorf("revoking bootstrap token %s: %w", id, err)
			}
		}
	}
	return Revoke(ctx, c.cs, id)
}

func matches(inf Info, o ListOptions) bool {
	return (o.HostUID == "" || inf.Owner.Host.UID == o.HostUID) &&
		(o.MachineUID == "" || inf.Owner.Machine.UID == o.MachineUID)
}

func copyInfo(i Info) Info {
	i.Usages = append([]string(nil), i.Usages...)
	i.Groups = append([]string(nil), i.Groups...)
	return i
}
