// Command kubelet is upstream's kubelet v1.36.1 (k8s.io/kubernetes/cmd/kubelet),
// the patch release before ../kubelet136: the lab's patch upgrade (no drain,
// running containers kept) goes from it to v1.36.3. A module of its own, so its
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
