// Package cluster is about the clusters Machines join: the management
// cluster Anvil runs in, or another one (a "target") named by a MachineClass's
// spec.join.kubeconfigSecretRef, a Secret whose key "kubeconfig" reaches it,
// or by a Machine's spec.bootstrap.kubeconfigSecretRef (a Secret and key of
// its own: Cluster API's <cluster>-kubeconfig, key value).
//
// A Registry builds a Target from that Secret (clients, the server URL, the
// CA and its hash, the server's version), keeps it while the Secret's content
// stays the same and MachineClasses refer to it, and rebuilds it when the
// Secret changes. Targets built for controllers also carry a cache of the
// target's objects (Nodes, CSRs) that Hooks set up before it starts.
//
// Errors name the Secret and what is wrong with it; they never carry the
// kubeconfig's credentials.
package cluster

import (
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// KubeconfigKey is the Secret key holding the target's kubeconfig.
const KubeconfigKey = "kubeconfig"

// IndexNodeProviderID indexes a target's Nodes by spec.providerID (Anvil's
// anvil:// IDs only), in Target.Cache when a Hook asked for it.
const IndexNodeProviderID = "spec.providerID"

// Target is one cluster Machines join.
type Target struct {
	// Secret is the kubeconfig Secret; empty for the management cluster.
	Secret types.NamespacedName
	// SecretKey is the key of Secret holding the kubeconfig.
	SecretKey string
	// Config reaches the target's API server with the kubeconfig's
	// credentials (nil for the management cluster unless given).
	Config *rest.Config
	// Clientset mints bootstrap tokens, drains and cordons.
	Clientset kubernetes.Interface
	// Client writes (deletes Nodes, approves CSRs), uncached.
	Client client.Client
	// Nodes reads Nodes: for a remote target its Cache when Hooks set one
	// up, else Client; for the management cluster the manager's cache.
	Nodes client.Reader
	// Cache holds the target's objects for controllers; nil for the
	// management cluster and for Registries without Hooks.
	Cache cache.Cache
	// Server is the API server URL of the kubeconfig.
	Server string
	// CACertPEM is the target's CA bundle and CACertHash kubeadm's
	// discovery hash of its first certificate.
	CACertPEM  []byte
	CACertHash string

	version versionCache
}

// Remote reports whether this is a cluster other than the management one.
func (t *Target) Remote() bool { return t.Secret.Name != "" }

// String names the target for messages.
func (t *Target) String() string {
	if !t.Remote() {
		return "the management cluster"
	}
	if t.SecretKey != "" && t.SecretKey != KubeconfigKey {
		return fmt.Sprintf("the target cluster of Secret %s key %s (%s)", t.Secret, t.SecretKey, t.Server)
	}
	return fmt.Sprintf("the target cluster of Secret %s (%s)", t.Secret, t.Server)
}

// ServerVersion is the target API server's version, cached for a minute.
func (t *Target) ServerVersion() (*utilversion.Version, error) {
	return t.version.get(t.Clientset)
}

type versionCache struct {
	mu sync.Mutex
	v  *utilversion.Version
	at time.Time
}

func (c *versionCache) get(cs kubernetes.Interface) (*utilversion.Version, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v != nil && time.Since(c.at) < time.Minute {
		return c.v, nil
	}
	info, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, err
	}
	v, err := utilversion.ParseGeneric(info.GitVersion)
	if err != nil {
		return nil, err
	}
	c.v, c.at = v, time.Now()
	return v, nil
}

// NodeProviderID is the IndexNodeProviderID function.
func NodeProviderID(o client.Object) []string {
	if p := o.(*corev1.Node).Spec.ProviderID; len(p) > len(metalv1.ProviderIDPrefix) && strings.HasPrefix(p, metalv1.ProviderIDPrefix) {
		return []string{p}
	}
	return nil
}
