//go:build tools

// Package ignition pins the real Ignition (github.com/coreos/ignition/v2) for
// the QEMU lab's host image. Its main package is
// github.com/coreos/ignition/v2/internal, which build.sh builds by path; an
// import of it is not allowed from here, so this file only names a public
// package of the same module. It is a module of its own so that Ignition's
// cloud SDK dependencies never change the versions kube-apiserver and the
// kubelet are built with.
//
// Do not run `go mod tidy` here (it would drop the requirements of the
// internal package); to bump: go get github.com/coreos/ignition/v2/internal@vX.Y.Z
package ignition

import _ "github.com/coreos/ignition/v2/config"
