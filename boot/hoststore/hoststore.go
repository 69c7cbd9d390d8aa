// Package hoststore keeps boot credential records (bootcred.Store) in the
// status of their Host (status.bootCredential), so they survive restarts of
// Anvil and are shared by every replica of the network services.
//
// Reads come from the manager's informer cache through a field index on the
// credential hash: verifying a presented credential costs no API call. Only
// writes go to the API server, and every write is a merge patch carrying the
// resourceVersion it was computed from (optimistic concurrency). Consume is
// therefore a compare-and-swap: of two first uses racing, even from two
// replicas with their own caches, exactly one patch succeeds; the other gets
// a conflict, re-reads the Host and sees it consumed.
//
// A credential issued a moment ago may not be in a given replica's cache yet
// (under load the watch lagged 30 s behind in the scale benchmark). With
// Options.Reread set, a miss re-reads the one Host that the request's MAC
// belongs to in the cache, if that Host is in a network boot, at most once
// per Host per interval (Rereader); requests with random credentials thus
// cost at most one GET per booting Host per interval, never one per request.
//
// Record.MACs are not stored: they are the Host's spec.bootMACs at the time
// of the lookup, so a Host whose NIC an admin replaced binds to the new MAC.
package hoststore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"anvil.dev/anvil/inventory/reread"

	"github.com/prometheus/client_golang/prometheus"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/internal/statusapply"
)

// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts,verbs=get;list;watch,roleName=anvil-pxe
// +kubebuilder:rbac:groups=metal.anvil.dev,resources=hosts/status,verbs=patch,roleName=anvil-pxe

// IndexBootCredentialHash indexes Hosts by status.bootCredential.hash.
const IndexBootCredentialHash = "status.bootCredential.hash"

// IndexBootMAC indexes Hosts by spec.bootMACs (normalized), to find the
// Host to re-read when a credential misses the cache.
const IndexBootMAC = "hoststore.spec.bootMACs"

// FieldManager writes status.bootCredential and status.agent.credentialHash
// (api/v1alpha1/STATUS.md): here, in delivery's script store and in the
// agent credential's issue and revoke (agent/server/kube).
const FieldManager = "anvil-bootcred"

// casMembers are the status members a credential write may change: the
// credential, and status.agent for the agent credential hash (OnConsume).
var casMembers = []string{"bootCredential", "agent"}

// DefaultMaxAttempts bounds the write attempts of one operation under
// conflicts (other controllers patch Host status too).
const DefaultMaxAttempts = 8

// ErrConflict is returned when a write kept conflicting MaxAttempts times.
var ErrConflict = errors.New("host status kept changing; giving up")

// IndexHash is the indexer function for IndexBootCredentialHash.
func IndexHash(o client.Object) []string {
	h, ok := o.(*metalv1.Host)
	if !ok || h.Status.BootCredential == nil || h.Status.BootCredential.Hash == "" {
		return nil
	}
	return []string{h.Status.BootCredential.Hash}
}

// AddIndex registers IndexBootCredentialHash and IndexBootMAC; call it once
// per manager, before the manager starts (mgr.GetFieldIndexer()).
func AddIndex(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &metalv1.Host{}, IndexBootCredentialHash, IndexHash); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &metalv1.Host{}, IndexBootMAC, func(o client.Object) []string {
		if h, ok := o.(*metalv1.Host); ok {
			return bootMACs(h)
		}
		return nil
	})
}

// Options configure a Store.
type Options struct {
	// Client is the manager's client: reads come from its cache, which must
	// have IndexBootCredentialHash (AddIndex); status patches go to the API.
	Client client.Client
	// APIReader re-reads a Host after a conflict, bypassing the cache that
	// may still hold the version that conflicted (mgr.GetAPIReader()).
	APIReader client.Reader
	// MaxAttempts defaults to DefaultMaxAttempts.
	MaxAttempts int
	// Reread, if set, looks past the cache when a presented credential is
	// not in it (Refresh); the cache must then have IndexBootMAC too.
	Reread *reread.Rereader
	// Misses counts what such re-reads found (MissCounter; private if nil).
	Misses *prometheus.CounterVec
	// OnConsume, if set, is called with the Host about to be patched by the
	// Consume that wins, and may change more of its status, so that it goes
	// out in the same patch (delivery issues the agent credential this
	// way). The returned func, if any, runs once that patch succeeded.
	// Called again, on a fresh copy, after a conflict.
	OnConsume func(h *metalv1.Host) (committed func())
}

// Store implements bootcred.Store on Host status.
type Store struct {
	opts Options

	mu     sync.Mutex
	reread map[string]types.NamespacedName // hash -> Host, found by Refresh
}

var _ bootcred.Refresher = (*Store)(nil)

var _ bootcred.Store = (*Store)(nil)

// New returns a Store.
func New(opts Options) (*Store, error) {
	if opts.Client == nil || opts.APIReader == nil {
		return nil, errors.New("hoststore: Client and APIReader are required")
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Misses == nil {
		opts.Misses = reread.MissCounter(nil)
	}
	return &Store{opts: opts, reread: map[string]types.NamespacedName{}}, nil
}

// Get implements bootcred.Store from the cache.
func (s *Store) Get(ctx context.Context, hash string) (bootcred.Record, error) {
	h, err := s.byHash(ctx, hash)
	if err != nil {
		return bootcred.Record{}, err
	}
	return toRecord(h), nil
}

// Put implements bootcred.Store: it replaces the Host's credential, which
// voids the previous one. The Host must exist, have rec.Host.UID (when
// set), and every MAC of rec must be one of its boot MACs.
func (s *Store) Put(ctx context.Context, rec bootcred.Record) error {
	if rec.Hash == "" {
		return errors.New("hoststore: record without hash")
	}
	key := types.NamespacedName{Namespace: rec.Host.Namespace, Name: rec.Host.Name}
	return s.update(ctx, key, nil, func(h *metalv1.Host) (bool, error) {
		if rec.Host.UID != "" && string(h.UID) != rec.Host.UID {
			return false, fmt.Errorf("host %s was replaced (uid %s, credential for %s)", key, h.UID, rec.Host.UID)
		}
		boot := bootMACs(h)
		for _, m := range rec.MACs {
			n, err := bootcred.NormalizeMAC(m)
			if err != nil || !slices.Contains(boot, n) {
				return false, fmt.Errorf("MAC %s is not a boot MAC of host %s", m, key)
			}
		}
		h.Status.BootCredential = &metalv1.BootCredentialStatus{
			Hash:           rec.Hash,
			IssuedAt:       metav1.NewTime(rec.IssuedAt),
			ExpiresAt:      metav1.NewTime(rec.ExpiresAt),
			GraceSeconds:   rec.GraceSeconds,
			ScriptServedTo: rec.BoundTo,
		}
		if rec.ConsumedAt != nil {
			t := metav1.NewTime(*rec.ConsumedAt)
			h.Status.BootCredential.ConsumedAt = &t
			h.Status.BootCredential.ConsumedFrom = rec.ConsumedFrom
		}
		return true, nil
	})
}

// Consume implements bootcred.Store as a compare-and-swap on the Host's
// resourceVersion.
func (s *Store) Consume(ctx context.Context, hash string, at time.Time, from string) (bootcred.Record, bool, error) {
	h, err := s.byHash(ctx, hash)
	if err != nil {
		return bootcred.Record{}, false, err
	}
	won := false
	var out bootcred.Record
	var committed func()
	err = s.update(ctx, client.ObjectKeyFromObject(h), h, func(h *metalv1.Host) (bool, error) {
		won, committed = false, nil // a previous attempt that conflicted did not win
		bc := h.Status.BootCredential
		if bc == nil || bc.Hash != hash {
			return false, bootcred.ErrNotFound // replaced by a newer boot meanwhile
		}
		if bc.ConsumedAt != nil {
			out = toRecord(h)
			return false, nil // someone else was first
		}
		t := metav1.NewTime(at)
		bc.ConsumedAt, bc.ConsumedFrom = &t, from
		out, won = toRecord(h), true
		if s.opts.OnConsume != nil {
			committed = s.opts.OnConsume(h)
		}
		return true, nil
	})
	if err != nil {
		return bootcred.Record{}, false, err
	}
	if won && committed != nil {
		committed()
	}
	return out, won, nil
}

// Delete implements bootcred.Store. Hosts that are gone have no record.
func (s *Store) Delete(ctx context.Context, host bootcred.HostKey) error {
	key := types.NamespacedName{Namespace: host.Namespace, Name: host.Name}
	err := s.update(ctx, key, nil, func(h *metalv1.Host) (bool, error) {
		if h.Status.BootCredential == nil {
			return false, nil
		}
		h.Status.BootCredential = nil
		return true, nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// MarkScriptServed records that the iPXE script carrying the credential
// with this hash was handed out, if that was not recorded before (compare and
// swap, like Consume). It returns true for the call that recorded it, so a
// second script request of the same boot can be told apart and given no
// credential.
func (s *Store) MarkScriptServed(ctx context.Context, hash string, at time.Time) (bool, error) {
	h, err := s.byHash(ctx, hash)
	if err != nil {
		return false, err
	}
	won := false
	err = s.update(ctx, client.ObjectKeyFromObject(h), h, func(h *metalv1.Host) (bool, error) {
		won = false
		bc := h.Status.BootCredential
		if bc == nil || bc.Hash != hash {
			return false, bootcred.ErrNotFound
		}
		if bc.ScriptServedAt != nil {
			return false, nil
		}
		t := metav1.NewTime(at)
		bc.ScriptServedAt = &t
		won = true
		return true, nil
	})
	return won, err
}

// Status returns the Host's credential status as the cache has it (nil if
// none), for callers that need ScriptServedAt.
func (s *Store) Status(ctx context.Context, host bootcred.HostKey) (*metalv1.BootCredentialStatus, error) {
	h := &metalv1.Host{}
	if err := s.opts.Client.Get(ctx, types.NamespacedName{Namespace: host.Namespace, Name: host.Name}, h); err != nil {
		return nil, err
	}
	return h.Status.BootCredential.DeepCopy(), nil
}

func (s *Store) byHash(ctx context.Context, hash string) (*metalv1.Host, error) {
	if hash == "" {
		return nil, bootcred.ErrNotFound
	}
	var list metalv1.HostList
	if err := s.opts.Client.List(ctx, &list, client.MatchingFields{IndexBootCredentialHash: hash}); err != nil {
		return nil, fmt.Errorf("listing hosts by boot credential: %w", err)
	}
	switch len(list.Items) {
	case 0:
		if h := s.recent(ctx, hash); h != nil {
			return h, nil
		}
		return nil, bootcred.ErrNotFound
	case 1:
		return &list.Items[0], nil
	}
	// 256-bit random credentials do not collide; a copied status might.
	return nil, fmt.Errorf("%d hosts carry the same boot credential hash", len(list.Items))
}

// update applies mutate to the Host and patches the status fields it
// changed, on the condition that those fields, the Host's UID and its boot
// MACs (all that mutate decides on) are still what it read: a test-guarded
// JSON patch of status.bootCredential and status.agent alone
// (statusapply.CASPatch) under the field manager anvil-bootcred, so writes
// of other status fields
// (leases, the controllers') do not make it conflict. A failed test
// re-reads the Host from the API server and tries again with a merge patch
// that has the resourceVersion as precondition, which also covers a Host
// the JSON patch cannot express. mutate returns whether it changed
// anything; an error from it is returned as is. cached, if set, is the
// first version to try (from the cache).
func (s *Store) update(ctx context.Context, key types.NamespacedName, cached *metalv1.Host, mutate func(*metalv1.Host) (bool, error)) error {
	h := cached
	tested := true
	for attempt := 0; attempt < s.opts.MaxAttempts; attempt++ {
		if h == nil {
			h = &metalv1.Host{}
			// The first read may come from the cache; after a conflict the
			// cache may still hold the losing version, so ask the API.
			var r client.Reader = s.opts.Client
			if attempt > 0 {
				r = s.opts.APIReader
			}
			err := r.Get(ctx, key, h)
			if apierrors.IsNotFound(err) && attempt == 0 {
				// A Host created a moment ago may not be cached yet.
				err = s.opts.APIReader.Get(ctx, key, h)
			}
			if err != nil {
				if apierrors.IsNotFound(err) {
					return err
				}
				return fmt.Errorf("reading host %s: %w", key, err)
			}
		} else {
			h = h.DeepCopy() // never modify a cache object
		}
		before := h.DeepCopy()
		changed, err := mutate(h)
		if err != nil || !changed {
			return err
		}
		var patch client.Patch = client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
		if tested {
			p, ok, perr := statusapply.CASPatch(before, h, casMembers, "/metadata/uid", "/spec/bootMACs")
			if perr != nil {
				return fmt.Errorf("patching boot credential of host %s: %w", key, perr)
			}
			if !ok {
				return nil // mutate changed nothing that is written
			}
			patch = p
		}
		err = s.opts.Client.Status().Patch(ctx, h, patch, client.FieldOwner(FieldManager))
		if err == nil {
			if s.opts.Reread != nil {
				s.opts.Reread.Observe(h) // h is the version just written
			}
			return nil
		}
		retry := apierrors.IsConflict(err)
		if tested && apierrors.IsInvalid(err) {
			tested, retry = false, true
		}
		if !retry {
			if apierrors.IsNotFound(err) {
				return err
			}
			return fmt.Errorf("patching boot credential of host %s: %w", key, err)
		}
		h = nil
		if attempt == 0 {
			continue
		}
		// Several writers at once: back off a little before the next read.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
	return fmt.Errorf("host %s: %w", key, ErrConflict)
}

func bootMACs(h *metalv1.Host) []string {
	out := make([]string, 0, len(h.Spec.BootMACs))
	for _, m := range h.Spec.BootMACs {
		if n, err := bootcred.NormalizeMAC(m); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func toRecord(h *metalv1.Host) bootcred.Record {
	bc := h.Status.BootCredential
	r := bootcred.Record{
		Host:         bootcred.HostKey{Namespace: h.Namespace, Name: h.Name, UID: string(h.UID)},
		Hash:         bc.Hash,
		MACs:         bootMACs(h),
		IssuedAt:     bc.IssuedAt.Time,
		ExpiresAt:    bc.ExpiresAt.Time,
		GraceSeconds: bc.GraceSeconds,
		ConsumedFrom: bc.ConsumedFrom,
		BoundTo:      bc.ScriptServedTo,
	}
	if bc.ConsumedAt != nil {
		t := bc.ConsumedAt.Time
		r.ConsumedAt = &t
	}
	return r
}

// Refresh implements bootcred.Refresher: the credential with this hash is
// not in the cache; re-read (Options.Reread) the Host that owns mac in the
// cache, if it is in a network boot, and return its record if it carries
// the credential. Hosts not in the cache cost no API call.
func (s *Store) Refresh(ctx context.Context, hash, mac string) (bootcred.Record, error) {
	if s.opts.Reread == nil || hash == "" {
		return bootcred.Record{}, bootcred.ErrNotFound
	}
	count := func(o string) { s.opts.Misses.WithLabelValues("boot", o).Inc() }
	norm, err := bootcred.NormalizeMAC(mac)
	if err != nil {
		count(reread.MissUnknownHost)
		return bootcred.Record{}, bootcred.ErrNotFound
	}
	var list metalv1.HostList
	if err := s.opts.Client.List(ctx, &list, client.MatchingFields{IndexBootMAC: norm}); err != nil {
		count(reread.MissError)
		return bootcred.Record{}, fmt.Errorf("listing hosts by boot MAC: %w", err)
	}
	// Only a Host the cache already knows to be booting can hold a
	// credential issued for this boot (the script was served from a cache
	// that had its boot request).
	if len(list.Items) != 1 || list.Items[0].Spec.BootRequest == nil {
		count(reread.MissUnknownHost)
		return bootcred.Record{}, bootcred.ErrNotFound
	}
	key := client.ObjectKeyFromObject(&list.Items[0])
	h, recent, err := s.opts.Reread.Get(ctx, key, list.Items[0].ResourceVersion)
	if err != nil {
		count(reread.MissError)
		return bootcred.Record{}, fmt.Errorf("re-reading host %s: %w", key, err)
	}
	if h == nil || h.UID != list.Items[0].UID || h.Status.BootCredential == nil || h.Status.BootCredential.Hash != hash {
		count(reread.MissNotFound)
		return bootcred.Record{}, bootcred.ErrNotFound
	}
	if recent {
		count(reread.MissFoundRecent)
	} else {
		count(reread.MissFoundAPI)
	}
	s.mu.Lock()
	if len(s.reread) >= 1024 {
		clear(s.reread) // a hint only: Consume re-reads on a miss anyway
	}
	s.reread[hash] = key
	s.mu.Unlock()
	return toRecord(h), nil
}

// recent is the Host a Refresh found carrying hash, as re-read less than an
// interval ago, for the Consume and the grace-window requests that follow.
func (s *Store) recent(ctx context.Context, hash string) *metalv1.Host {
	if s.opts.Reread == nil {
		return nil
	}
	s.mu.Lock()
	key, ok := s.reread[hash]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	cached := &metalv1.Host{}
	if err := s.opts.Client.Get(ctx, key, cached); err != nil {
		return nil
	}
	h, ok := s.opts.Reread.Recent(key, cached.ResourceVersion)
	if !ok {
		// The cache moved since that re-read, and the List by hash that
		// led here did not find the credential: the cache is at a newer
		// version that still predates it (another writer's, under load).
		// Read again rather than refuse a credential found a moment ago.
		var err error
		h, _, err = s.opts.Reread.Get(ctx, key, cached.ResourceVersion)
		ok = err == nil && h != nil
	}
	if !ok || h.Status.BootCredential == nil || h.Status.BootCredential.Hash != hash {
		s.mu.Lock()
		delete(s.reread, hash)
		s.mu.Unlock()
		return nil
	}
	return h
}
