// Command kubectl is kubectl itself, built from k8s.io/kubectl v0.37.2 (the
// version the main module requires) with its own main, as
// k8s.io/kubernetes/cmd/kubectl has it: the console benchmark's peer, what
// an admin runs without the console. Its own Go module, like bench/plot,
// so the main module does not carry kubectl's command dependencies;
// anvil-bench builds it into bin/kubectl (offline: from the module cache).
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
