package inventory

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
)

// credentialCache serves BMC credentials without an API request per BMC
// call.
//
// The Host controller watches Secrets metadata-only (to requeue the Hosts
// naming a Secret when it changes), so the manager's cache already holds
// every Secret's resourceVersion, never its values. The memo maps a Secret's
// namespace/name to what one uncached GET read at one resourceVersion: the
// credentials, or why they are unusable. A lookup compares the cached
// resourceVersion with the memo's: equal means the memo is current; any
// other answer (rotated, recreated, not in the cache yet) costs one GET
// whose result replaces the memo. A rotated Secret is therefore used at the
// first BMC call after the watch has seen it, and the same watch event
// requeues the Hosts that name it. An authentication failure from a BMC
// drops the memo too (forget), in case the cache lags the API server.
//
// Values stay in memory as bmc.Credentials, whose every formatting hides
// the password; errors and problems here name the Secret, never its data.
// The zero value is ready to use.
type credentialCache struct {
	mu sync.Mutex
	m  map[types.NamespacedName]credentialMemo
}

type credentialMemo struct {
	resourceVersion string
	creds           bmc.Credentials
	problem         *Problem // the Secret lacks a key
}

// secretKey is the credentials Secret a Host names.
func secretKey(h *metalv1.Host) types.NamespacedName {
	return types.NamespacedName{Namespace: h.Namespace, Name: h.Spec.BMC.CredentialsName}
}

// get returns the Host's credentials, or the Problem that makes them
// unusable (Secret missing or lacking a key). cached reads Secret metadata
// from the manager's cache; api reads whole Secrets from the API server.
func (c *credentialCache) get(ctx context.Context, cached, api client.Reader, h *metalv1.Host) (bmc.Credentials, *Problem, error) {
	key := secretKey(h)
	if rv, ok := cachedResourceVersion(ctx, cached, key); ok {
		c.mu.Lock()
		m, hit := c.m[key]
		c.mu.Unlock()
		if hit && m.resourceVersion == rv {
			return m.creds, m.problem, nil
		}
	}
	var s corev1.Secret
	if err := api.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			c.forget(key)
			return bmc.Credentials{}, &Problem{metalv1.ReasonSecretMissing, fmt.Sprintf("credentials Secret %q not found in namespace %q", key.Name, key.Namespace)}, nil
		}
		return bmc.Credentials{}, nil, fmt.Errorf("reading credentials Secret %s/%s: %w", key.Namespace, key.Name, err)
	}
	m := memoFromSecret(&s)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[types.NamespacedName]credentialMemo{}
	}
	c.m[key] = m
	c.mu.Unlock()
	return m.creds, m.problem, nil
}

// forget drops the memo of a Secret: the next lookup reads it again.
func (c *credentialCache) forget(key types.NamespacedName) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// cachedResourceVersion is the Secret's resourceVersion in the manager's
// metadata cache; ok is false when the cache does not know it (not yet
// synced, deleted, outside the cache's namespaces), and the caller then asks
// the API server.
func cachedResourceVersion(ctx context.Context, cached client.Reader, key types.NamespacedName) (string, bool) {
	if cached == nil {
		return "", false
	}
	pom := &metav1.PartialObjectMetadata{}
	pom.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := cached.Get(ctx, key, pom); err != nil || pom.ResourceVersion == "" {
		return "", false
	}
	return pom.ResourceVersion, true
}

// memoFromSecret checks the Secret's keys and keeps its credentials. Only
// key names reach the Problem.
func memoFromSecret(s *corev1.Secret) credentialMemo {
	m := credentialMemo{resourceVersion: s.ResourceVersion}
	var missing []string
	for _, k := range []string{metalv1.CredentialsUsernameKey, metalv1.CredentialsPasswordKey} {
		if len(s.Data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		m.problem = &Problem{metalv1.ReasonSecretInvalid, fmt.Sprintf("credentials Secret %q lacks key(s) %s", s.Name, strings.Join(missing, ", "))}
		return m
	}
	m.creds = bmc.Credentials{Username: string(s.Data[metalv1.CredentialsUsernameKey]), Password: string(s.Data[metalv1.CredentialsPasswordKey])}
	return m
}

// checkCredentials verifies the Host's Secret exists and has both keys,
// through the memo (see credentialCache); the values never leave it.
func (r *HostReconciler) checkCredentials(ctx context.Context, h *metalv1.Host) (*Problem, error) {
	if !needsCredentials(h) {
		return nil, nil
	}
	_, p, err := r.creds.get(ctx, r.Client, r.APIReader, h)
	return p, err
}
