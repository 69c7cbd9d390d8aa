//go:build tools

// Package staticcheck pins the linter `make lint` runs (honnef.co/go/tools).
// It is a module of its own so that the linter's golang.org/x/tools never
// changes the versions kube-apiserver and the kubelet are built with.
package staticcheck

import _ "honnef.co/go/tools/cmd/staticcheck"
