// Package v1alpha1 holds Anvil's API types: Host, MachineClass, Machine and
// MachineSet in group metal.anvil.dev.
//
// Every status field has one writer with its own field manager; STATUS.md
// in this folder is the table of who writes what, and how.
//
// +kubebuilder:object:generate=true
// +groupName=metal.anvil.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "metal.anvil.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = &schemeBuilder{}

	// AddToScheme adds the types in this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// schemeBuilder is what controller-runtime's scheme.Builder did, on
// apimachinery alone: that one is deprecated for API packages, which should
// import little.
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
