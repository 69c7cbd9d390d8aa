package scale

import (
	"k8s.io/client-go/rest"
)

// APIServer is a fresh kube-apiserver and etcd from test/envtest's binaries
// with Anvil's CRDs, for the other benchmarks that need one (the console
// benchmark): the same start as scale's, without the audit log.
type APIServer struct {
	// Config is an admin's (system:masters) client config.
	Config *rest.Config
	// Kubeconfig is the path of that admin's kubeconfig.
	Kubeconfig string
	// PIDs of kube-apiserver and etcd, for /proc.
	PIDs []int
	a    *apiServer
}

// StartAPIServer starts one; dir receives its kubeconfig. Stop it.
func StartAPIServer(dir string) (*APIServer, error) {
	a, err := startAPIServer(dir, false, false)
	if err != nil {
		return nil, err
	}
	return &APIServer{Config: a.cfg, Kubeconfig: a.kubeconfig[userControllers], PIDs: descendants("kube-apiserver", "etcd"), a: a}, nil
}

// Stop stops kube-apiserver and etcd.
func (s *APIServer) Stop() { s.a.stop() }
