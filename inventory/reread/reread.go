// Package reread re-reads a Host past the informer cache, at most once per
// Host per interval, when a presented credential is not in the cache.
package reread

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// DefaultInterval is how often one Host may be re-read past the cache.
const DefaultInterval = 5 * time.Second

// Outcomes of a credential that the cache did not know, the values of the
// "outcome" label of anvil_credential_cache_misses_total.
const (
	// MissFoundAPI: re-read from the API server, the credential is there
	// (the cache was behind).
	MissFoundAPI = "found_api"
	// MissFoundRecent: found in the copy of a re-read less than an
	// interval old (no API call).
	MissFoundRecent = "found_recent"
	// MissNotFound: the Host as re-read does not carry the credential.
	MissNotFound = "not_found"
	// MissUnknownHost: no cached Host to re-read (unknown MAC or UID, or a
	// Host not in a network boot): no API call.
	MissUnknownHost = "unknown_host"
	// MissError: the re-read failed.
	MissError = "error"
)

// MissCounter returns anvil_credential_cache_misses_total{credential,
// outcome}, registered with reg once (a second registration reuses the
// first), or unregistered if reg is nil.
func MissCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "anvil_credential_cache_misses_total",
		Help: "Presented boot or agent credentials the informer cache did not hold, by what re-reading the Host past the cache found.",
	}, []string{"credential", "outcome"})
	for _, cred := range []string{"boot", "agent"} {
		for _, o := range []string{MissFoundAPI, MissFoundRecent, MissNotFound, MissUnknownHost, MissError} {
			c.WithLabelValues(cred, o) // zeros, not gaps
		}
	}
	if reg != nil {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
					return existing
				}
			}
		}
	}
	return c
}

// Options configure a Rereader.
type Options struct {
	// APIReader reads past the cache (mgr.GetAPIReader()). Required.
	APIReader client.Reader
	// Interval between two API reads of one Host (DefaultInterval).
	Interval time.Duration
	// Now returns the current time (time.Now if nil).
	Now func() time.Time
}

// Rereader reads single Hosts from the API server when the informer cache
// is behind, at most once per Host per Interval while the cache's copy of
// the Host stays the same: within the interval the previous read's copy
// answers. So a request that misses in the cache costs at most one GET per
// Host per Interval, whoever sends it, and the few requests of one boot
// that follow a miss (cloud-init's files, the agent's report and first
// poll) are answered without another. Once the cache's copy changes (a
// newer write arrived, a revocation for example), the previous read no
// longer answers: the cache may now be newer than it.
type Rereader struct {
	o      Options
	flight singleflight.Group

	mu   sync.Mutex
	last map[types.NamespacedName]reread
}

type reread struct {
	at       time.Time
	cachedRV string        // the cache's resourceVersion of the Host when read
	host     *metalv1.Host // nil: not found
}

// New returns a Rereader.
func New(o Options) (*Rereader, error) {
	if o.APIReader == nil {
		return nil, errors.New("hoststore: Options needs APIReader")
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Rereader{o: o, last: map[types.NamespacedName]reread{}}, nil
}

// Get returns the Host as the API server has it, or as it had it less than
// an interval ago while the cache held the same version, cachedRV, as now
// (recent is then true). A Host that does not exist is (nil, _, nil). The
// returned Host is the caller's to modify.
func (r *Rereader) Get(ctx context.Context, key types.NamespacedName, cachedRV string) (h *metalv1.Host, recent bool, err error) {
	if h, ok := r.Recent(key, cachedRV); ok {
		return h, true, nil
	}
	v, err, _ := r.flight.Do(key.String()+"@"+cachedRV, func() (any, error) {
		h := &metalv1.Host{}
		err := r.o.APIReader.Get(ctx, key, h)
		if apierrors.IsNotFound(err) {
			h, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		r.put(key, reread{at: r.o.Now(), cachedRV: cachedRV, host: h})
		return h, nil
	})
	if err != nil {
		return nil, false, err
	}
	if v.(*metalv1.Host) == nil {
		return nil, false, nil
	}
	return v.(*metalv1.Host).DeepCopy(), false, nil
}

// Recent returns the copy of a re-read less than an interval old, made
// while the cache held cachedRV as now, without asking the API server. ok
// is false if there is none (or the Host was not found).
func (r *Rereader) Recent(key types.NamespacedName, cachedRV string) (*metalv1.Host, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.last[key]
	if !ok || e.cachedRV != cachedRV || r.o.Now().Sub(e.at) >= r.o.Interval {
		return nil, false
	}
	if e.host == nil {
		return nil, false
	}
	return e.host.DeepCopy(), true
}

// Observe replaces the recent copy of h's Host, if there is one, with h
// (a version this process just wrote), without extending its interval.
func (r *Rereader) Observe(h *metalv1.Host) {
	key := client.ObjectKeyFromObject(h)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.last[key]; ok && e.host != nil && e.host.UID == h.UID {
		e.host = h.DeepCopy()
		r.last[key] = e
	}
}

func (r *Rereader) put(key types.NamespacedName, e reread) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.last) >= 64 { // bounded by the Hosts re-read in one interval
		for k, old := range r.last {
			if e.at.Sub(old.at) >= r.o.Interval {
				delete(r.last, k)
			}
		}
	}
	r.last[key] = e
}
