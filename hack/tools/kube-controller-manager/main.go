// Command kube-controller-manager is upstream's controller manager, built here
// so tests and `anvil dev` can run the controllers a real cluster runs for the
// kubelet join flow (csrsigning signs approved CSRs, tokencleaner removes
// expired bootstrap tokens, ...).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
