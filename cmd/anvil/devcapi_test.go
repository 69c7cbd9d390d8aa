//go:build dev

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/capitest"
	"anvil.dev/anvil/test/envtest"
	"anvil.dev/anvil/test/need"
)

// The README's "With Cluster API" walk, as typed: `anvil dev --capi`
// (make run-capi) comes up with Cluster API's real managers, the kubeconfig
// Secret and deploy/examples/capi/cluster.yaml give a Cluster whose two
// workers run on the simulated Hosts; a version bump of the
// MachineDeployment upgrades them in place (same Machines, same Hosts, the
// Nodes' kubelets at the new version); the version the simulated hosts
// fail is rolled back and reported on both Machines; Ctrl-C stops it all.
func TestDevCAPIWalkthrough(t *testing.T) {
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	capitest.Dir(t) // skips (fails under CI) without bin/capi
	// anvil dev starts `anvil serve` as its own executable: this test
	// binary, which runs anvil when this is set (serve_rbac_test.go).
	t.Setenv(runAnvilEnv, "1")
	data := t.TempDir()
	etcdPort := freePortRun(t, 3)
	api, metrics, probes := need.FreePort(t), need.FreePort(t), need.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := newRootCommand()
	out := &lockedBuffer{}
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs([]string{"dev", "--capi", "--data-dir", data, "--bin-dir", filepath.Join(root, "bin"), "--demo-bmcs=false", "--lab=off", "--ticket-callback-addr=",
		"--api-port", fmt.Sprint(api), "--etcd-port", fmt.Sprint(etcdPort),
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics), "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probes), "--console-listen="})
	errc := make(chan error, 1)
	go func() { errc <- cmd.ExecuteContext(ctx) }()
	stopped := false
	defer func() {
		if !stopped {
			cancel()
			<-errc
		}
		if t.Failed() {
			t.Logf("anvil dev --capi printed:\n%s", out.String())
			for _, f := range []string{"logs/anvil-controllers.log", "capi/cluster-api-manager.log"} {
				if b, err := os.ReadFile(filepath.Join(data, f)); err == nil {
					t.Logf("%s (end):\n%s", f, b[max(0, len(b)-6000):])
				}
			}
		}
	}()

	poll := func(what string, timeout time.Duration, cond func(ctx context.Context) (bool, string)) {
		t.Helper()
		last := ""
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			select {
			case err := <-errc:
				stopped = true
				return false, fmt.Errorf("anvil dev --capi exited: %v", err)
			default:
			}
			ok, why := cond(ctx)
			last = why
			return ok, nil
		})
		if err != nil {
			t.Fatalf("%s: %v; last: %s", what, err, last)
		}
	}
	poll("anvil dev --capi to come up", 4*time.Minute, func(context.Context) (bool, string) {
		return strings.Contains(out.String(), "Cluster API and Anvil are up"), "not up yet"
	})
	for _, want := range []string{"kubectl apply -f deploy/examples/capi/cluster.yaml", "ExtensionConfig \"anvil\""} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the help lacks %q", want)
		}
	}
	kubeconfig := filepath.Join(data, "kubeconfig")
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(rc, client.Options{Scheme: capitest.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	// The README's commands: the kubeconfig Secret, then the example.
	kc, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	must(t, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c1-kubeconfig", Namespace: "default",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}, Type: clusterv1.ClusterSecretType, Data: map[string][]byte{"value": kc}}))
	example, err := os.ReadFile(filepath.Join(root, "deploy", "examples", "capi", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The example is written for make run-capi's API server on 6443.
	example = bytes.Replace(example, []byte("port: 6443"), []byte(fmt.Sprintf("port: %d", api)), 1)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(example), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			must(t, c.Create(ctx, u))
		}
	}

	type worker struct{ machine, host, version, kubelet, updating string }
	workers := func(ctx context.Context) ([]worker, string) {
		var ms clusterv1.MachineList
		if err := c.List(ctx, &ms, client.InNamespace("default"), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: "workers"}); err != nil {
			return nil, err.Error()
		}
		var ws []worker
		for _, m := range ms.Items {
			w := worker{machine: m.Name, version: m.Spec.Version}
			if cond := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineUpdatingCondition); cond != nil && cond.Status == metav1.ConditionTrue {
				w.updating = cond.Reason
			}
			am := &infrav1.AnvilMachine{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: m.Spec.InfrastructureRef.Name}, am); err == nil && am.Status.HostRef != nil {
				w.host = am.Status.HostRef.Name
			}
			if m.Status.NodeRef.IsDefined() {
				n := &corev1.Node{}
				if err := c.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, n); err == nil {
					w.kubelet = n.Status.NodeInfo.KubeletVersion
				}
			}
			ws = append(ws, w)
		}
		slices.SortFunc(ws, func(a, b worker) int { return strings.Compare(a.machine, b.machine) })
		return ws, fmt.Sprintf("%+v", ws)
	}
	var before []worker
	poll("the MachineDeployment's two workers to run v1.36.1 on Anvil Hosts", 4*time.Minute, func(ctx context.Context) (bool, string) {
		ws, why := workers(ctx)
		for _, w := range ws {
			if w.host == "" || w.kubelet != "v1.36.1" {
				return false, why
			}
		}
		before = ws
		return len(ws) == 2, why
	})

	patchVersion := func(v string) {
		t.Helper()
		md := &clusterv1.MachineDeployment{}
		must(t, c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "workers"}, md))
		p := client.MergeFrom(md.DeepCopy())
		md.Spec.Template.Spec.Version = v
		must(t, c.Patch(ctx, md, p))
	}
	patchVersion("v1.36.3")
	poll("both workers upgraded in place to v1.36.3", 4*time.Minute, func(ctx context.Context) (bool, string) {
		ws, why := workers(ctx)
		if len(ws) != 2 {
			return false, why
		}
		for i, w := range ws {
			if w.machine != before[i].machine || w.host != before[i].host {
				t.Fatalf("replaced instead of updated in place: before %+v, now %+v", before, ws)
			}
			if w.version != "v1.36.3" || w.kubelet != "v1.36.3" || w.updating != "" {
				return false, why
			}
		}
		return true, why
	})

	patchVersion("v1.37.2") // every simulated host fails it
	poll("the failed v1.37.2 upgrade reported on both Machines, nothing replaced", 4*time.Minute, func(ctx context.Context) (bool, string) {
		ws, why := workers(ctx)
		failed := ""
		for i, w := range ws {
			if i >= len(before) || w.machine != before[i].machine || w.host != before[i].host {
				t.Fatalf("a worker was replaced: before %+v, now %+v", before, ws)
			}
			if w.updating == clusterv1.MachineInPlaceUpdateFailedReason {
				failed = w.machine
			}
		}
		if failed == "" {
			return false, why
		}
		m := &metalv1.Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: failed}, m); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(m.Status.Conditions, "Updating")
		if cond == nil || !strings.Contains(cond.Message, "did not become healthy") || !strings.Contains(cond.Message, "metal.anvil.dev/retry-upgrade=") {
			return false, fmt.Sprintf("Anvil Machine %s Updating condition %+v", failed, cond)
		}
		return true, why
	})

	cancel()
	select {
	case err := <-errc:
		stopped = true
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("anvil dev --capi stopped with %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("anvil dev --capi did not stop")
	}
	if !strings.Contains(out.String(), "stopping") {
		t.Errorf("no stop message:\n%s", out.String())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
