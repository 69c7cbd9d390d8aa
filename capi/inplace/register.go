package inplace

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ExtensionConfigName is the name of the ExtensionConfig Anvil applies
// for itself. Cluster API calls its handlers as <handler>.anvil.
const ExtensionConfigName = "anvil"

// RegisterFieldOwner is the field manager of that ExtensionConfig.
const RegisterFieldOwner = "anvil-capi-extension"

// Registration keeps Cluster API's ExtensionConfig "anvil" pointing at
// this extension: at Service (in a cluster) or at URL (outside one), with
// the CA injected by Cluster API from CASecret's ca.crt. Fields Anvil does
// not set (a namespaceSelector, settings) are the admin's and kept.
//
// Cluster-scoped, it outlives an uninstalled Anvil: delete it with
// kubectl delete extensionconfig anvil, or Cluster API's MachineDeployment
// rollouts wait on an extension that no longer answers.
type Registration struct {
	Service  *runtimev1.ServiceReference
	URL      string
	CASecret types.NamespacedName
	Client   client.Client
	Logger   logr.Logger
	// Reapply is how often the ExtensionConfig is applied again once
	// stored (default 10 minutes).
	Reapply time.Duration
}

// NeedLeaderElection: every replica applies the same object, so the
// ExtensionConfig exists as soon as any of them runs.
func (r *Registration) NeedLeaderElection() bool { return false }

// defaultReapply is how often a registered extension applies its
// ExtensionConfig again, so one deleted or edited by hand comes back (an
// unchanged apply writes nothing).
const defaultReapply = 10 * time.Minute

// Start applies the ExtensionConfig, retrying with backoff until it is
// stored, then again every Reapply until ctx ends.
func (r *Registration) Start(ctx context.Context) error {
	delay, registered := time.Second, false
	for {
		next := r.Reapply
		if next <= 0 {
			next = defaultReapply
		}
		if err := r.Apply(ctx); err != nil {
			r.Logger.Error(err, "registering with Cluster API: applying ExtensionConfig; retrying", "extensionConfig", ExtensionConfigName, "retryIn", delay)
			next, delay = delay, min(2*delay, time.Minute)
		} else {
			if !registered {
				r.Logger.Info("registered with Cluster API", "extensionConfig", ExtensionConfigName, "caFrom", r.CASecret.String())
			}
			registered, delay = true, time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// Apply writes the ExtensionConfig once.
func (r *Registration) Apply(ctx context.Context) error {
	cc := map[string]any{}
	if r.Service != nil {
		svc := map[string]any{"namespace": r.Service.Namespace, "name": r.Service.Name}
		if r.Service.Port != nil {
			svc["port"] = int64(*r.Service.Port)
		}
		if r.Service.Path != "" {
			svc["path"] = r.Service.Path
		}
		cc["service"] = svc
	} else {
		cc["url"] = r.URL
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": runtimev1.GroupVersion.String(),
		"kind":       "ExtensionConfig",
		"metadata": map[string]any{
			"name":        ExtensionConfigName,
			"labels":      map[string]any{"app.kubernetes.io/name": "anvil"},
			"annotations": map[string]any{runtimev1.InjectCAFromSecretAnnotation: r.CASecret.String()},
		},
		"spec": map[string]any{"clientConfig": cc},
	}}
	return r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(RegisterFieldOwner), client.ForceOwnership)
}
