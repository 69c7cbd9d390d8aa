package machine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

func TestTargetBackoff(t *testing.T) {
	r := &MachineReconciler{}
	m := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "u1"}}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute}
	for i, w := range want {
		if got := r.targetBackoff(m); got != w {
			t.Fatalf("look %d: backoff %s, want %s", i+1, got, w)
		}
	}
	for range 100 { // no overflow however long it waits
		if got := r.targetBackoff(m); got != time.Minute {
			t.Fatalf("backoff %s after many looks, want %s", got, time.Minute)
		}
	}
	other := &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{UID: "u2"}}
	if got := r.targetBackoff(other); got != time.Second {
		t.Fatalf("another Machine's first backoff %s, want 1s", got)
	}
	r.targetWaits.Delete(m.UID) // what ownTargetOf does once the target is there
	if got := r.targetBackoff(m); got != time.Second {
		t.Fatalf("backoff after a reset %s, want 1s", got)
	}
}

func TestHostHostnameIndex(t *testing.T) {
	claimed := &corev1.ObjectReference{Name: "m1"}
	tests := []struct {
		name string
		host metalv1.Host
		want []string
	}{
		{"free Host", metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: "h1"}}, nil},
		{"claimed, by name", metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: "h1"}, Spec: metalv1.HostSpec{ConsumerRef: claimed}}, []string{"h1"}},
		{"claimed, spec.network.hostname", metalv1.Host{ObjectMeta: metav1.ObjectMeta{Name: "h1"},
			Spec: metalv1.HostSpec{ConsumerRef: claimed, Network: &metalv1.HostNetwork{Hostname: "rack1-n3"}}}, []string{"rack1-n3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hostHostname(&tc.host)
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Fatalf("index %v, want %v", got, tc.want)
			}
		})
	}
}
