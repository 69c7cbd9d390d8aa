// Command kubeadm is upstream's kubeadm (k8s.io/kubernetes/cmd/kubeadm),
// built here for the Debian host image: Cluster API's kubeadm bootstrap
// provider joins hosts with it, and the CAPI lab test prepares the lab's
// API server for joins with its init phases.
package main

import (
	"k8s.io/kubernetes/cmd/kubeadm/app"
	utilerrors "k8s.io/kubernetes/cmd/kubeadm/app/util/errors"
)

func main() {
	utilerrors.HandleError(app.Run())
}
