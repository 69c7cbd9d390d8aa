// Command kube-apiserver is upstream's API server, built here so tests and
// `make run` use the real thing rather than a fake.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
