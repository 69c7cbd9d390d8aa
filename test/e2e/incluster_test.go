package e2e

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/need"
)

const (
	anvilNS         = "anvil-system"
	anvilDeployment = "anvil-controller"
	// The lease cmd/anvil's serve elects its leader with.
	anvilLease = "anvil.metal.anvil.dev"
)

// inClusterAnvil does what the README tells an admin to: `kubectl apply -k
// deploy/` (rendered here by kustomize's own library and applied server-side,
// as kubectl does), on the lab cluster, whose Nodes imported the image
// deploy/ names (anvil.dev/anvil:dev) at boot from the host image. The
// controllers on the test machine are stopped first: the Anvil in the pod is
// then the only one, and a Host registered afterwards reaches Available
// through it. Two things are the lab's, not the admin's: the lab runs no
// kube-scheduler (the test binds the pod to a Node) and no kube-proxy (the pod
// is told the API server's address instead of the kubernetes Service's).
func (e *e2e) inClusterAnvil(ctx context.Context, nodeName string) {
	e.t.Helper()
	root, err := need.RepoRoot()
	if err != nil {
		e.t.Fatal(err)
	}
	objs := renderDeploy(e, filepath.Join(root, "deploy"))
	api, err := url.Parse(e.st.Lab.APIServerURL())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == anvilDeployment {
			labDeployment(e, o, api)
		}
	}
	if err := e.st.KillControllers(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.st.StartControllers() })
	applyAll(e, ctx, objs)
	e.logf("applied deploy/ (%d objects) server-side; the test machine's controllers are stopped", len(objs))

	kube, err := kubernetes.NewForConfig(e.st.CP.Config)
	if err != nil {
		e.t.Fatal(err)
	}
	var pod corev1.Pod
	e.waitFor(10*time.Minute, "the anvil controller pod Running and Ready on "+nodeName, func(ctx context.Context) (bool, string) {
		pods, err := kube.CoreV1().Pods(anvilNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=controller"})
		if err != nil {
			return false, err.Error()
		}
		var b strings.Builder
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
				err := kube.CoreV1().Pods(anvilNS).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
					Target: corev1.ObjectReference{Kind: "Node", Name: nodeName}}, metav1.CreateOptions{})
				fmt.Fprintf(&b, "bound %s: %v; ", p.Name, err)
				continue
			}
			fmt.Fprintf(&b, "%s@%s=%s %s; ", p.Name, p.Spec.NodeName, p.Status.Phase, containerStates(&p))
			if p.Status.Phase == corev1.PodRunning && podReady(&p) {
				pod = p
				return true, ""
			}
		}
		return false, b.String()
	})
	e.logf("anvil controller pod %s Running and Ready on Node %s (image %s)", pod.Name, pod.Spec.NodeName, pod.Status.ContainerStatuses[0].ImageID)
	e.waitFor(3*time.Minute, "pod "+pod.Name+" holding the leader lease "+anvilLease, func(ctx context.Context) (bool, string) {
		var l coordinationv1.Lease
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: anvilNS, Name: anvilLease}, &l); err != nil {
			return false, err.Error()
		}
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return strings.HasPrefix(holder, pod.Name), "holder " + holder
	})

	// An admin registers a Host now; only the Anvil in the pod is there to
	// take it to Available. A manual:// BMC: the lab's BMC emulators listen
	// on the test machine's loopback, out of a pod's reach.
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "in-cluster-spare"}, Spec: metalv1.HostSpec{
		BMC: metalv1.BMC{Address: "manual://in-cluster-spare"}, BootMACs: []string{"52:54:00:aa:bb:01"}}}
	if err := e.c.Create(ctx, h); err != nil {
		e.t.Fatal(err)
	}
	e.waitHost(h.Name, 5*time.Minute, metalv1.HostAvailable)
	e.logf("Host %s Available, reconciled by the in-cluster Anvil (pod %s)", h.Name, pod.Name)
	if err := e.c.Delete(ctx, h); err != nil {
		e.t.Fatal(err)
	}
}

// renderDeploy is `kustomize build deploy/`.
func renderDeploy(e *e2e, dir string) []*unstructured.Unstructured {
	e.t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		e.t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range res.Resources() {
		// Through JSON: kyaml's maps hold ints, which unstructured's
		// deep copies refuse.
		b, err := r.MarshalJSON()
		if err != nil {
			e.t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			e.t.Fatal(err)
		}
		objs = append(objs, u)
	}
	return objs
}

// labDeployment fits the controller Deployment to the lab: one replica (a
// lab Node has 2 GiB), and the API server's own address, since no kube-proxy
// makes the kubernetes Service's ClusterIP reach it. Explicit env wins over
// the kubelet's service variables, which client-go's in-cluster config reads.
func labDeployment(e *e2e, d *unstructured.Unstructured, api *url.URL) {
	e.t.Helper()
	if err := unstructured.SetNestedField(d.Object, int64(1), "spec", "replicas"); err != nil {
		e.t.Fatal(err)
	}
	cs, _, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if err != nil || len(cs) == 0 {
		e.t.Fatalf("Deployment %s has no containers: %v", d.GetName(), err)
	}
	c := cs[0].(map[string]any)
	env, _ := c["env"].([]any)
	env = append(env, map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": api.Hostname()},
		map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": api.Port()})
	c["env"] = env
	if err := unstructured.SetNestedSlice(d.Object, cs, "spec", "template", "spec", "containers"); err != nil {
		e.t.Fatal(err)
	}
}

// applyAll applies each object server-side, in kustomize's order
// (namespaces and CRDs first), as `kubectl apply --server-side` would.
func applyAll(e *e2e, ctx context.Context, objs []*unstructured.Unstructured) {
	e.t.Helper()
	dyn, err := dynamic.NewForConfig(e.st.CP.Config)
	if err != nil {
		e.t.Fatal(err)
	}
	mapper := e.c.RESTMapper()
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			e.t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if o.GetNamespace() != "" {
			r = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if _, err := r.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: "kubectl", Force: true}); err != nil {
			e.t.Fatalf("apply %s %s: %v", gvk.Kind, o.GetName(), err)
		}
	}
}

// containerStates says why a pod is not Ready yet.
func containerStates(p *corev1.Pod) string {
	var b strings.Builder
	for _, s := range p.Status.ContainerStatuses {
		switch {
		case s.State.Waiting != nil:
			fmt.Fprintf(&b, "%s waiting %s %s ", s.Name, s.State.Waiting.Reason, s.State.Waiting.Message)
		case s.State.Terminated != nil:
			fmt.Fprintf(&b, "%s terminated %s (exit %d) ", s.Name, s.State.Terminated.Reason, s.State.Terminated.ExitCode)
		default:
			fmt.Fprintf(&b, "%s running (restarts %d) ", s.Name, s.RestartCount)
		}
	}
	return b.String()
}
