//go:build dev

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
)

// `anvil dev` (what `make run` runs): the control plane comes up, a Host
// from deploy/examples is reconciled, Ctrl-C stops everything, and a second
// run keeps the data.
func TestDevStartStopKeepsData(t *testing.T) {
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	etcdPort := freePortRun(t, 3) // etcd client, etcd peer, kube-controller-manager
	api, metrics, probes, consolePort := need.FreePort(t), need.FreePort(t), need.FreePort(t), need.FreePort(t)
	run := func() (context.CancelFunc, chan error, *lockedBuffer) {
		ctx, cancel := context.WithCancel(context.Background())
		cmd := newRootCommand()
		out := &lockedBuffer{}
		cmd.SetOut(out)
		cmd.SetErr(out)
		cmd.SetArgs([]string{"dev", "--data-dir", data, "--bin-dir", filepath.Join(root, "bin"), "--demo-bmcs=false", "--lab=off", "--ticket-callback-addr=",
			"--api-port", fmt.Sprint(api), "--etcd-port", fmt.Sprint(etcdPort),
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics), "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probes),
			"--console-listen", fmt.Sprintf("127.0.0.1:%d", consolePort)})
		errc := make(chan error, 1)
		go func() { errc <- cmd.ExecuteContext(ctx) }()
		return cancel, errc, out
	}
	kubeconfig := filepath.Join(data, "kubeconfig")
	connect := func(out *lockedBuffer, errc chan error) client.Client {
		var c client.Client
		err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			select {
			case err := <-errc:
				return false, fmt.Errorf("anvil dev exited: %v\n%s", err, out.String())
			default:
			}
			if !strings.Contains(out.String(), "export KUBECONFIG=") {
				return false, nil
			}
			rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return false, nil
			}
			c, err = client.New(rc, client.Options{Scheme: newScheme()})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("anvil dev did not come up: %v", err)
		}
		return c
	}
	stop := func(cancel context.CancelFunc, errc chan error) {
		cancel()
		select {
		case err := <-errc:
			if err != nil && err != context.Canceled {
				t.Fatalf("anvil dev stopped with %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("anvil dev did not stop")
		}
		// Everything it started is gone: its ports are free again.
		for _, p := range []int{api, etcdPort, etcdPort + 1, etcdPort + 2} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				t.Fatalf("port %d still in use after stop: %v", p, err)
			}
			l.Close()
		}
	}

	cancel, errc, out := run()
	c := connect(out, errc)
	b, err := os.ReadFile(filepath.Join(root, "deploy", "examples", "host-missing-secret.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h := &metalv1.Host{}
	if err := yaml.UnmarshalStrict(b, h); err != nil {
		t.Fatal(err)
	}
	h.Namespace = "default"
	ctx := context.Background()
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(h)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, h)
		return err == nil && h.Status.State == metalv1.HostError, nil
	}); err != nil {
		t.Fatalf("example Host never reached Error: %+v\n%s", h.Status, out.String())
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", probes, path))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("probe %s: %v %v", path, err, resp)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics: %v", err)
	}
	resp.Body.Close()
	// The console: the anvil-admin token it prints how to get signs in, and
	// the racks show the Host.
	if !strings.Contains(out.String(), "kubectl create token anvil-admin -n default") {
		t.Errorf("anvil dev does not say how to sign in to the console:\n%s", out.String())
	}
	checkDevConsole(t, c, fmt.Sprintf("http://127.0.0.1:%d", consolePort), h.Name)
	// dev runs one replica: no leader election Lease.
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases, client.InNamespace("default")); err != nil || len(leases.Items) != 0 {
		t.Fatalf("leases in dev mode: %v %d", err, len(leases.Items))
	}
	stop(cancel, errc)

	cancel, errc, out = run()
	c = connect(out, errc)
	if err := c.Get(ctx, key, h); err != nil || h.Status.State != metalv1.HostError {
		t.Fatalf("after restart the Host is %v / %+v\n%s", err, h.Status, out.String())
	}
	stop(cancel, errc)
}

// checkDevConsole signs in to the console as anvil-admin and finds the
// Host on the racks page.
func checkDevConsole(t *testing.T, c client.Client, base, host string) {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "anvil-admin"}, sa); err != nil {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := hc.PostForm(base+"/login", url.Values{"token": {tr.Status.Token}, "next": {"/racks?ns=default"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), host) || !strings.Contains(string(body), "system:serviceaccount:default:anvil-admin") {
		t.Errorf("the console's racks page after sign-in: %d\n%.2000s", resp.StatusCode, body)
	}
}

// freePortRun finds n consecutive free ports and returns the first.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		p := need.FreePort(t)
		ok := true
		for i := 1; i < n && ok; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok {
			return p
		}
	}
	t.Fatal("no run of free ports")
	return 0
}
