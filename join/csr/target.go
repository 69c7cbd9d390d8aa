package csr

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"anvil.dev/anvil/join/cluster"
)

// The rules are the same in every cluster; only where CSRs, tokens and
// Nodes are read differs.

func (r *Approver) csrs() client.Client {
	if r.CSRClient != nil {
		return r.CSRClient
	}
	return r.Client
}

func (r *Approver) workers() int {
	if r.MaxConcurrentReconciles > 0 {
		return r.MaxConcurrentReconciles
	}
	return 2
}

// approveInTarget is the cluster.Hook that runs an approver for a target
// cluster's CSRs until the target is dropped. Its Events would land in a
// cluster where the Machines do not exist, so it only logs.
func (r *Approver) approveInTarget(ctx context.Context, t *cluster.Target) error {
	a := &Approver{
		Client: r.Client, CSRClient: t.Client, APIReader: t.Client, Kube: t.Clientset,
		MachineAddressesOnly: r.MachineAddressesOnly, RetryInterval: r.RetryInterval, MaxPendingAge: r.MaxPendingAge,
		MaxConcurrentReconciles: r.MaxConcurrentReconciles, Now: r.Now,
	}
	log := ctrl.Log.WithName("csr-approver").WithValues("target", t.Secret.String())
	c, err := controller.NewUnmanaged("csr-approver-"+t.Secret.Namespace+"-"+t.Secret.Name, controller.Options{
		Reconciler: a, MaxConcurrentReconciles: r.workers(), SkipNameValidation: ptr.To(true), Logger: log,
	})
	if err != nil {
		return fmt.Errorf("CSR approver: %w", err)
	}
	open := predicate.NewTypedPredicateFuncs(func(c *certificatesv1.CertificateSigningRequest) bool { return !finished(c) })
	if err := c.Watch(source.Kind(t.Cache, &certificatesv1.CertificateSigningRequest{},
		&handler.TypedEnqueueRequestForObject[*certificatesv1.CertificateSigningRequest]{}, open)); err != nil {
		return fmt.Errorf("CSR approver: %w", err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			log.Error(err, "CSR approver of target cluster stopped")
		}
	}()
	return nil
}
