// Package clustertest helps tests with a second cluster for Machines to
// join: it starts another real kube-apiserver and etcd (test/envtest) and
// writes the kubeconfig Secret a MachineClass's
// spec.join.kubeconfigSecretRef names.
package clustertest

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/join/cluster"
	"anvil.dev/anvil/test/envtest"
)

// Start brings up a second control plane (stop it with its Stop).
func Start() (*envtest.Env, error) {
	e, err := envtest.Start()
	if err != nil {
		return nil, fmt.Errorf("second API server: %w", err)
	}
	return e, nil
}

// Kubeconfig is a self-contained admin kubeconfig (data fields only) for rc.
func Kubeconfig(rc *rest.Config) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["target"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData, Token: rc.BearerToken}
	cfg.Contexts["target"] = &clientcmdapi.Context{Cluster: "target", AuthInfo: "admin"}
	cfg.CurrentContext = "target"
	return clientcmd.Write(*cfg)
}

// CreateSecret writes the kubeconfig Secret of rc as namespace/name into
// the cluster of c (the management cluster).
func CreateSecret(ctx context.Context, c client.Client, namespace, name string, rc *rest.Config) (*corev1.Secret, error) {
	data, err := Kubeconfig(rc)
	if err != nil {
		return nil, err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string][]byte{cluster.KubeconfigKey: data},
	}
	return s, c.Create(ctx, s)
}
