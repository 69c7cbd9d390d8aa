package ticket

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// Defaults of the per-source limit on refused callbacks.
const (
	DefaultFailureBurst = 20
	DefaultFailureEvery = 5 * time.Second
	// maxSources bounds the limiter table; the least recently seen
	// sources are forgotten first.
	maxSources = 10000
	// missingTTL is how long "this Secret does not exist" is believed
	// without reading it again: the metadata cache cannot say so itself.
	missingTTL = 30 * time.Second
)

// signingSecrets serves endpoints' signing Secrets without an API request
// per callback, so unauthenticated traffic cannot turn into API load.
//
// Like the Host controller's credential memo, it keeps what one uncached
// GET read at one resourceVersion, and compares that with the Secret's
// resourceVersion in the manager's metadata-only cache (Client reading
// PartialObjectMetadata): equal means current, anything else (rotated,
// recreated, not cached yet) costs one GET whose result replaces the memo.
// A rotation is therefore used as soon as the watch has seen it. A Secret
// that does not exist is believed missing for missingTTL.
type signingSecrets struct {
	mu sync.Mutex
	m  map[secretMemoKey]secretMemo
}

type secretMemoKey struct{ ns, name, key string }

type secretMemo struct {
	resourceVersion string
	sec             Secret
	err             error
	missingSince    time.Time // set when the GET found no Secret
}

func (s *signingSecrets) get(ctx context.Context, cached, api client.Reader, ep *metalv1.TicketEndpoint, now time.Time) (Secret, error) {
	key := secretMemoKey{ep.Namespace, ep.Spec.SecretRef.Name, ep.Spec.SecretRef.Key}
	s.mu.Lock()
	m, hit := s.m[key]
	s.mu.Unlock()
	pom := &metav1.PartialObjectMetadata{}
	pom.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := cached.Get(ctx, client.ObjectKey{Namespace: key.ns, Name: key.name}, pom); err == nil && pom.ResourceVersion != "" {
		if hit && m.resourceVersion == pom.ResourceVersion {
			return m.sec, m.err
		}
	} else if hit && !m.missingSince.IsZero() && now.Sub(m.missingSince) < missingTTL {
		return m.sec, m.err
	}
	var obj corev1.Secret
	err := api.Get(ctx, client.ObjectKey{Namespace: key.ns, Name: key.name}, &obj)
	switch {
	case apierrors.IsNotFound(err):
		m = secretMemo{err: fmt.Errorf("Secret %s of TicketEndpoint %s not found", key.name, ep.Name), missingSince: now}
	case err != nil:
		return Secret{}, fmt.Errorf("reading Secret %s of TicketEndpoint %s: %w", key.name, ep.Name, err) // not remembered
	default:
		sec, err := secretFromObject(&obj, ep)
		m = secretMemo{resourceVersion: obj.ResourceVersion, sec: sec, err: err}
	}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[secretMemoKey]secretMemo{}
	}
	s.m[key] = m
	s.mu.Unlock()
	return m.sec, m.err
}

// failureLimiter limits refused (401) callbacks per source address: a
// source that keeps sending unsigned or forged callbacks is answered 429
// without any lookup until its budget refills. Valid callbacks cost no
// budget.
type failureLimiter struct {
	every time.Duration
	burst int
	lims  *lru.Cache // source -> *rate.Limiter
}

func newFailureLimiter(every time.Duration, burst int) *failureLimiter {
	return &failureLimiter{every: every, burst: burst, lims: lru.New(maxSources)}
}

// source is the client address without the port.
func source(req *http.Request) string {
	if h, _, err := net.SplitHostPort(req.RemoteAddr); err == nil {
		return h
	}
	return req.RemoteAddr
}

// limited reports whether src has no budget left.
func (f *failureLimiter) limited(src string, now time.Time) bool {
	v, ok := f.lims.Get(src)
	return ok && v.(*rate.Limiter).TokensAt(now) < 1
}

// charge takes one refused callback off src's budget.
func (f *failureLimiter) charge(src string, now time.Time) {
	v, ok := f.lims.Get(src)
	if !ok {
		v = rate.NewLimiter(rate.Every(f.every), f.burst)
		f.lims.Add(src, v)
	}
	v.(*rate.Limiter).AllowN(now, 1)
}
