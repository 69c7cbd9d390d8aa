// Command kubelet is upstream's kubelet v1.36 (k8s.io/kubernetes/cmd/kubelet),
// built for the QEMU lab's in-place upgrade: a host starts on it and is
// upgraded to the kubelet of ../kubelet. A module of its own, so its
// dependencies cannot move those of the other tools.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream's main
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client metrics, as upstream's main
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream's main
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
