//go:build tools

// Package tools pins build tools that are run with `go build` from this module.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
