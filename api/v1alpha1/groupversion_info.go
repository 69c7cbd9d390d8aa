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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "metal.anvil.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types in this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
