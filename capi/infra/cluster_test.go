package infra_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "anvil.dev/anvil/api/infrastructure/v1beta1"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// An AnvilCluster lists the failure domains of the Hosts its selector
// allows, follows Hosts as they come, and is provisioned once its control
// plane endpoint is set.
func TestAnvilClusterFailureDomainsFromHosts(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	host := func(name, domain, pool string) {
		t.Helper()
		labels := map[string]string{"pool": pool}
		if domain != "" {
			labels[metalv1.LabelFailureDomain] = domain
		}
		must(t, c.Create(ctx, &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: []string{fmt.Sprintf("02:00:00:00:10:%02x", len(name)*7%256)}}}))
	}
	host("h1", "rack-b", "capi")
	host("h22", "rack-a", "capi")
	host("h333", "rack-a", "capi")
	host("h4444", "rack-c", "other") // not selected
	host("h55555", "", "capi")       // no failure domain

	ac := &infrav1.AnvilCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: infrav1.AnvilClusterSpec{HostSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "capi"}}}}
	must(t, c.Create(ctx, ac))
	names := func() string {
		got := &infrav1.AnvilCluster{}
		must(t, c.Get(ctx, client.ObjectKeyFromObject(ac), got))
		var out []string
		for _, d := range got.Status.FailureDomains {
			if d.ControlPlane == nil || !*d.ControlPlane {
				t.Errorf("failure domain %s is not usable for the control plane", d.Name)
			}
			out = append(out, d.Name)
		}
		return fmt.Sprint(out)
	}
	waitFor(t, "failure domains [rack-a rack-b]", func() bool { return names() == "[rack-a rack-b]" })
	got := &infrav1.AnvilCluster{}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(ac), got))
	if r := meta.FindStatusCondition(got.Status.Conditions, infrav1.ConditionReady); r == nil || r.Reason != infrav1.ReasonControlPlaneEndpointUnset || r.Status != metav1.ConditionFalse {
		t.Errorf("Ready without an endpoint = %+v", r)
	}
	if got.Status.Initialization.Provisioned != nil {
		t.Error("provisioned without a control plane endpoint")
	}

	host("h666666", "rack-d", "capi")
	waitFor(t, "the new Host's failure domain", func() bool { return names() == "[rack-a rack-b rack-d]" })

	p := client.MergeFrom(got.DeepCopy())
	got.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.100", Port: 6443}
	must(t, c.Patch(ctx, got, p))
	waitFor(t, "provisioned", func() bool {
		must(t, c.Get(ctx, client.ObjectKeyFromObject(ac), got))
		p := got.Status.Initialization.Provisioned
		return p != nil && *p && meta.IsStatusConditionTrue(got.Status.Conditions, infrav1.ConditionReady)
	})
}
