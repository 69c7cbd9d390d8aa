package delivery

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

// MediaBoot decides whether a /media/<token>.iso URL still serves.
func TestMediaBoot(t *testing.T) {
	now := metav1.Now()
	base := func() *metalv1.Host {
		return &metalv1.Host{
			Spec: metalv1.HostSpec{BootMethod: metalv1.BootMethodVirtualMedia, BootMACs: []string{"52:54:00:00:00:01"},
				Network:     &metalv1.HostNetwork{Address: "10.0.0.21/24", Gateway: "10.0.0.1", DNS: []string{"10.0.0.53"}},
				BootRequest: &metalv1.BootRequest{ID: "b1"}},
			Status: metalv1.HostStatus{BootRequestID: "b1", VirtualMedia: &metalv1.HostVirtualMedia{TokenHash: "h1", BootRequestID: "b1"}},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(h *metalv1.Host)
		hash   string
		want   bool
	}{
		{"the boot is on", func(*metalv1.Host) {}, "h1", true},
		{"credential issued, not used", func(h *metalv1.Host) {
			h.Status.BootCredential = &metalv1.BootCredentialStatus{BootRequestID: "b1", ScriptServedAt: &now}
		}, "h1", true},
		{"another hash", func(*metalv1.Host) {}, "h2", false},
		{"empty hash", func(h *metalv1.Host) { h.Status.VirtualMedia.TokenHash = "" }, "", false},
		{"credential consumed", func(h *metalv1.Host) {
			h.Status.BootCredential = &metalv1.BootCredentialStatus{BootRequestID: "b1", ConsumedAt: &now}
		}, "h1", false},
		{"an older boot's credential consumed", func(h *metalv1.Host) {
			h.Status.BootCredential = &metalv1.BootCredentialStatus{BootRequestID: "b0", ConsumedAt: &now}
		}, "h1", true},
		{"newer boot request", func(h *metalv1.Host) { h.Spec.BootRequest.ID = "b2" }, "h1", false},
		{"inserted before the boot is acknowledged", func(h *metalv1.Host) { h.Status.BootRequestID = "b0" }, "h1", true},
		{"boot request gone", func(h *metalv1.Host) { h.Spec.BootRequest = nil }, "h1", false},
		{"ejected", func(h *metalv1.Host) { h.Status.VirtualMedia.EjectedAt = &now }, "h1", false},
		{"boot method changed to PXE", func(h *metalv1.Host) { h.Spec.BootMethod = metalv1.BootMethodPXE }, "h1", false},
		{"no network", func(h *metalv1.Host) { h.Spec.Network = nil }, "h1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := base()
			tc.change(h)
			n, ok := MediaBoot(h, tc.hash)
			if ok != tc.want {
				t.Fatalf("MediaBoot = %v, want %v", ok, tc.want)
			}
			if ok && (n.Address.String() != "10.0.0.21/24" || n.Gateway.String() != "10.0.0.1" || len(n.DNS) != 1 || n.MAC.String() != "52:54:00:00:00:01") {
				t.Errorf("network %+v", n)
			}
		})
	}
}
