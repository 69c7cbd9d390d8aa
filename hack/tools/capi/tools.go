//go:build tools

// Package tools pins Cluster API's managers and clusterctl, built by
// hack/tools/build.sh with `go build` from this module. Cluster API v1.14 is
// on k8s.io v0.36 and controller-runtime v0.24, older than Anvil's, so it
// lives in a module of its own and never touches the root go.mod.
package tools

import (
	// The API module is required explicitly: Cluster API's own replace of
	// ./api does not apply to a module that depends on it.
	_ "sigs.k8s.io/cluster-api/api/core/v1beta2"
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
	_ "sigs.k8s.io/cluster-api/controlplane/kubeadm"
	_ "sigs.k8s.io/cluster-api/core"
)
