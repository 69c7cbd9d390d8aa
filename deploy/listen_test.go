package deploy_test

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"anvil.dev/anvil/test/envtest"
)

// A host-network pod's listeners are the node's: the boot DaemonSet faces
// the provisioning network, so its metrics and probe endpoints bind to a
// given address (the pod IP, loopback), never to every interface, and its
// probes ask where the probe endpoint listens.
func TestHostNetworkListenersAreBound(t *testing.T) {
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "deploy"))
	if err != nil {
		t.Fatalf("kustomize build deploy/: %v", err)
	}
	checked := 0
	for _, r := range resMap.Resources() {
		if r.GetKind() != "DaemonSet" && r.GetKind() != "Deployment" {
			continue
		}
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		var spec corev1.PodSpec
		switch r.GetKind() {
		case "DaemonSet":
			var ds appsv1.DaemonSet
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ds)
			spec = ds.Spec.Template.Spec
		default:
			var d appsv1.Deployment
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &d)
			spec = d.Spec.Template.Spec
		}
		if err != nil {
			t.Fatal(err)
		}
		if !spec.HostNetwork {
			continue
		}
		for _, c := range spec.Containers {
			checked++
			podIP := map[string]bool{} // env vars holding the pod IP
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP" {
					podIP[e.Name] = true
				}
			}
			flags := map[string]string{}
			for _, a := range c.Args {
				if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
					flags[k] = v
				}
			}
			where := r.GetKind() + " " + r.GetName() + " container " + c.Name
			for _, f := range []string{"--metrics-bind-address", "--health-probe-bind-address"} {
				v, ok := flags[f]
				if !ok {
					t.Errorf("%s: %s not set; its default listens on every interface of the node", where, f)
					continue
				}
				if v == "0" {
					continue // off
				}
				host, port, err := net.SplitHostPort(v)
				if err != nil {
					t.Errorf("%s: %s=%s: %v", where, f, v, err)
					continue
				}
				if name, ok := strings.CutPrefix(host, "$("); ok {
					if !podIP[strings.TrimSuffix(name, ")")] {
						t.Errorf("%s: %s=%s: %s is not the pod IP from the downward API", where, f, v, host)
					}
				} else if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
					t.Errorf("%s: %s=%s listens on every interface of the node", where, f, v)
				}
				if f != "--health-probe-bind-address" {
					continue
				}
				for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
					if p == nil || p.HTTPGet == nil {
						t.Errorf("%s: no %s probe", where, name)
						continue
					}
					if p.HTTPGet.Host != host || strconv.Itoa(int(p.HTTPGet.Port.IntVal)) != port {
						t.Errorf("%s: %s probe asks %s:%s, the probe endpoint listens on %s", where, name, p.HTTPGet.Host, p.HTTPGet.Port.String(), v)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no host-network pod in deploy/")
	}
}
