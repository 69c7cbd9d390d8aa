// Package v1beta1 holds Anvil's Cluster API infrastructure provider types:
// AnvilCluster, AnvilMachine and AnvilMachineTemplate in group
// infrastructure.cluster.x-k8s.io, following the CAPI v1beta2 contract.
//
// They are a second front end on Anvil's core: an AnvilMachine owns one
// Anvil Machine (metal.anvil.dev) and mirrors its status; it does not claim,
// power, boot or wipe anything itself. The controllers are in capi/infra.
//
// Every CRD carries the label cluster.x-k8s.io/v1beta2=v1beta1 (the
// +kubebuilder:metadata marker on each kind): the contract version this
// API version implements.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = &schemeBuilder{}

	// AddToScheme adds the types in this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// ContractLabel and ContractVersion: the label on every CRD of this
// package, telling Cluster API which of its contract versions this API
// version implements.
const (
	ContractLabel   = "cluster.x-k8s.io/v1beta2"
	ContractVersion = "v1beta1"
)

// schemeBuilder is the one of api/v1alpha1: apimachinery alone.
//
// +kubebuilder:object:generate=false
type schemeBuilder struct{ runtime.SchemeBuilder }

// Register adds objects to GroupVersion when AddToScheme runs.
func (b *schemeBuilder) Register(objs ...runtime.Object) {
	b.SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, objs...)
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})
}
