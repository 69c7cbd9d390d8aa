package inventory_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
)

func TestMACClaimOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	host := func(ns, name string, created time.Time, valid, discovered bool) *metalv1.Host {
		h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(created)}}
		h.Spec.BMC.Address = "redfish://10.0.0.1"
		if discovered {
			h.Labels = map[string]string{inventory.LabelDiscovered: "true"}
			h.Spec.BMC.Address = ""
		}
		if valid {
			h.Status.Conditions = []metav1.Condition{{Type: metalv1.ConditionValid, Status: metav1.ConditionTrue, Reason: metalv1.ReasonValid}}
		}
		return h
	}
	for _, tc := range []struct {
		name string
		a, b *metalv1.Host // a keeps the MAC
	}{
		{"registered before discovered, even a newer one", host("ns", "new", t0.Add(time.Hour), false, false), host("ns", "old", t0, true, true)},
		{"a discovered Host that got its BMC is registered", host("ns", "b", t0.Add(time.Hour), false, false), host("ns", "a", t0, false, true)},
		{"valid before invalid, even a newer one", host("ns", "new", t0.Add(time.Hour), true, false), host("ns", "old", t0, false, false)},
		{"older first", host("ns", "z", t0, false, false), host("ns", "a", t0.Add(time.Second), false, false)},
		{"one second older is older", host("ns", "z", t0, true, false), host("ns", "a", t0.Add(time.Second), true, false)},
		{"same age: namespace", host("a", "z", t0, true, false), host("b", "a", t0, true, false)},
		{"same age and namespace: name", host("ns", "a", t0, true, false), host("ns", "b", t0, true, false)},
		{"two discovered: older first", host("ns", "z", t0, false, true), host("ns", "a", t0.Add(time.Minute), false, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := inventory.ClaimOf(tc.a), inventory.ClaimOf(tc.b)
			if !a.Before(b) {
				t.Errorf("%s/%s does not keep the MAC from %s/%s", tc.a.Namespace, tc.a.Name, tc.b.Namespace, tc.b.Name)
			}
			if b.Before(a) {
				t.Errorf("%s/%s also keeps the MAC from %s/%s", tc.b.Namespace, tc.b.Name, tc.a.Namespace, tc.a.Name)
			}
		})
	}
	if c := inventory.ClaimOf(host("ns", "a", t0, true, false)); c.Before(c) {
		t.Error("a Host keeps a MAC from itself")
	}
}
