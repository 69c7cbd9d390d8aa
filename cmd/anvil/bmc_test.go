package main

import (
	"anvil.dev/anvil/test/need"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/test/bmctest"
	"anvil.dev/anvil/test/redfishsim"
)

func registerHost(t *testing.T, ns, name, addr, password string) {
	t.Helper()
	ctx := context.Background()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-bmc"}, Data: map[string][]byte{"username": []byte("admin"), "password": []byte(password)}}
	if err := env.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	h := &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: metalv1.HostSpec{
		BMC: metalv1.BMC{Address: addr, CredentialsName: name + "-bmc", DisableCertificateVerification: true}, BootMACs: []string{"02:00:00:00:77:01"}}}
	if strings.HasPrefix(addr, "manual:") {
		h.Spec.BMC.CredentialsName = ""
	}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
}

func TestBMCCheck(t *testing.T) {
	if _, err := bmctest.FindIPMISim(""); err != nil {
		need.OrSkip(t, "ipmi_sim missing: %v", err)
	}
	mockup := need.RedfishMockup(t)
	const pw = "bmc-check-pw-9"
	ipmi := bmctest.StartIPMISim(t, bmctest.IPMISimOptions{Username: "admin", Password: pw})
	rf := redfishsim.Start(t, redfishsim.Options{MockupDir: mockup, TLS: true, Username: "admin", Password: pw})
	kc, err := env.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	registerHost(t, ns, "ipmi", ipmi.Address(), pw)
	registerHost(t, ns, "redfish", rf.BMCAddress(), pw)
	registerHost(t, ns, "wrong", rf.BMCAddress(), "not-the-password")
	for _, tc := range []struct {
		host    string
		wantErr string
		want    []string
	}{
		{"ipmi", "", []string{"Power:    Off", "UUID:"}},
		{"redfish", "", []string{"Power:", "Model:", "MACs:"}},
		{"wrong", "authentication failed", nil},
	} {
		out, err := runCLI(t, "bmc", "check", tc.host, "--kubeconfig", kc, "-n", ns, "--timeout", "20s", "--bmc-allow-cidrs", "127.0.0.1")
		all := out
		if err != nil {
			all += err.Error()
		}
		if strings.Contains(all, pw) || strings.Contains(all, "not-the-password") {
			t.Fatalf("%s: output shows a password", tc.host)
		}
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("%s: error = %v, want %q", tc.host, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.host, err, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.host, w, out)
			}
		}
	}
}

func TestHostsAckPower(t *testing.T) {
	ctx := context.Background()
	kc, err := env.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	registerHost(t, ns, "by-hand", "manual://row-1", "")
	if _, err := runCLI(t, "hosts", "ack-power", "by-hand", "--kubeconfig", kc, "-n", ns); err == nil || !strings.Contains(err.Error(), "no pending power action") {
		t.Fatalf("ack without a pending action: %v", err)
	}
	var h metalv1.Host
	key := client.ObjectKey{Namespace: ns, Name: "by-hand"}
	if err := env.Client.Get(ctx, key, &h); err != nil {
		t.Fatal(err)
	}
	// What the Host controller writes when a manual power action is needed.
	h.Status.PendingPowerAction = &metalv1.PendingPowerAction{Action: "On", BootDevice: "PXE", RequestedAt: metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))}
	if err := env.Client.Status().Update(ctx, &h); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "hosts", "ack-power", "by-hand", "--kubeconfig", kc, "-n", ns)
	if err != nil || !strings.Contains(out, "power On with a one-time PXE boot") {
		t.Fatalf("ack-power: %v\n%s", err, out)
	}
	if err := env.Client.Get(ctx, key, &h); err != nil {
		t.Fatal(err)
	}
	if got := h.Annotations[inventory.AnnotationAckPower]; got != "2026-11-29T12:00:00Z" {
		t.Fatalf("ack annotation = %q", got)
	}
}
