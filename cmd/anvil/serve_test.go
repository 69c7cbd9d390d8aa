package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// `anvil serve --kubeconfig FILE`, nothing else, out of cluster: it elects
// itself leader with a Lease in kube-system (the documented default) and
// its controllers reconcile a Host.
func TestServeWithOnlyAKubeconfig(t *testing.T) {
	if inCluster() {
		t.Skip("running in a pod: the Lease would go to the pod's namespace")
	}
	kc, err := env.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The context names a namespace: the Lease goes there.
	if got := kubeconfigNamespace(kc); got != "default" {
		t.Fatalf("lease namespace with a context namespace: %q, want default", got)
	}
	// Without one, kube-system (what this test runs).
	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = ""
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	if got := kubeconfigNamespace(kc); got != defaultLeaseNamespace {
		t.Fatalf("lease namespace without a context namespace: %q, want %s", got, defaultLeaseNamespace)
	}
	ns := env.Namespace(t)
	registerHost(t, ns, "serve-defaults", "manual://row-9", "")

	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	var serveErr error
	go func() {
		defer close(exited)
		root := newRootCommand()
		var out strings.Builder
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs([]string{"serve", "--kubeconfig", kc})
		serveErr = root.ExecuteContext(ctx)
	}()
	defer func() {
		cancel()
		select {
		case <-exited:
			if serveErr != nil {
				t.Errorf("anvil serve: %v", serveErr)
			}
		case <-time.After(time.Minute):
			t.Error("anvil serve did not stop within a minute of its context's end")
		}
	}()

	var lease coordinationv1.Lease
	var h metalv1.Host
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("anvil serve exited: %v", serveErr)
		default:
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: defaultLeaseNamespace, Name: "anvil.metal.anvil.dev"}, &lease); err != nil {
			return false, nil
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "serve-defaults"}, &h); err != nil {
			return false, err
		}
		return lease.Spec.HolderIdentity != nil && h.Status.State == metalv1.HostAvailable, nil
	})
	if err != nil {
		t.Fatalf("anvil serve with only --kubeconfig: Lease holder %v, Host state %q: %v", lease.Spec.HolderIdentity, h.Status.State, err)
	}
}

// A kubeconfig without a cluster CA: --http-boot names what is missing and
// the flag that gives it, not a PEM parser's words.
func TestJoinCAErrorsNameTheFix(t *testing.T) {
	cfg := serveConfig{}
	_, err := joinCA(&rest.Config{Host: "https://api.example:6443"}, &cfg)
	if err == nil || !strings.Contains(err.Error(), "certificate-authority-data") || !strings.Contains(err.Error(), "--join-ca-file") {
		t.Fatalf("no CA: %v", err)
	}
	cfg.JoinCAFile = t.TempDir() + "/missing.pem"
	if _, err := joinCA(&rest.Config{}, &cfg); err == nil || !strings.Contains(err.Error(), "--join-ca-file") {
		t.Fatalf("missing CA file: %v", err)
	}
	if _, err := joinCA(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: []byte("not pem")}}, &serveConfig{}); err == nil || !strings.Contains(err.Error(), "--join-ca-file") {
		t.Fatalf("garbage CA: %v", err)
	}
	ca, err := joinCA(env.Config, &serveConfig{})
	if err != nil || len(ca) == 0 {
		t.Fatalf("the test API server's kubeconfig: %v", err)
	}
}
