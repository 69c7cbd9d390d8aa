package inventory_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
)

const testPassword = "hunter2-NoLeak!" // ipmi_sim takes at most 16 bytes

func newHost(ns, name, mac, secret string) *metalv1.Host {
	return &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: metalv1.HostSpec{
			// The emulated Redfish BMCs tests point Hosts at serve plain
			// HTTP on loopback.
			BMC:      metalv1.BMC{Address: ipmiAddr(), CredentialsName: secret, AllowPlainHTTP: true},
			BootMACs: []string{mac},
		},
	}
}

func newSecret(ns, name string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       map[string][]byte{"username": []byte("admin"), "password": []byte(testPassword)},
	}
}

func state(s metalv1.HostState) func(*metalv1.Host) bool {
	return func(h *metalv1.Host) bool { return h.Status.State == s }
}

func validReason(h *metalv1.Host) string {
	if c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionValid); c != nil {
		return c.Reason
	}
	return ""
}

func TestHostBecomesAvailable(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	must(t, env.Client.Create(ctx, newHost(ns, "h1", "52:54:00:00:00:01", "bmc")))
	h := waitHost(t, client.ObjectKey{Namespace: ns, Name: "h1"}, "became Available", state(metalv1.HostAvailable))
	if validReason(h) != metalv1.ReasonValid {
		t.Fatalf("Valid condition reason = %q", validReason(h))
	}
	// Defaults from the CRD schema.
	if h.Spec.Architecture != "x86_64" || h.Spec.BootMode != "UEFI" {
		t.Fatalf("defaults not applied: arch=%q bootMode=%q", h.Spec.Architecture, h.Spec.BootMode)
	}
}

func TestHostMissingSecretThenCreated(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newHost(ns, "h1", "52:54:00:00:00:02", "later")))
	key := client.ObjectKey{Namespace: ns, Name: "h1"}
	h := waitHost(t, key, "went to Error", state(metalv1.HostError))
	c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionValid)
	if c == nil || c.Reason != metalv1.ReasonSecretMissing || !strings.Contains(c.Message, `"later"`) {
		t.Fatalf("condition does not name the missing Secret: %+v", c)
	}
	// The Secret watch brings the Host back without any other change.
	must(t, env.Client.Create(ctx, newSecret(ns, "later")))
	waitHost(t, key, "recovered to Available", state(metalv1.HostAvailable))
}

func TestHostSecretWithoutPassword(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	s := newSecret(ns, "bmc")
	delete(s.Data, "password")
	must(t, env.Client.Create(ctx, s))
	must(t, env.Client.Create(ctx, newHost(ns, "h1", "52:54:00:00:00:03", "bmc")))
	h := waitHost(t, client.ObjectKey{Namespace: ns, Name: "h1"}, "went to Error", state(metalv1.HostError))
	if validReason(h) != metalv1.ReasonSecretInvalid {
		t.Fatalf("reason = %q, want %q", validReason(h), metalv1.ReasonSecretInvalid)
	}
}

func TestDuplicateMACSecondLoses(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	ns2 := env.Namespace(t) // MACs are physical: duplicates count across namespaces
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	must(t, env.Client.Create(ctx, newSecret(ns2, "bmc")))
	must(t, env.Client.Create(ctx, newHost(ns, "first", "52:54:00:aa:00:04", "bmc")))
	first := client.ObjectKey{Namespace: ns, Name: "first"}
	waitHost(t, first, "became Available", state(metalv1.HostAvailable))

	// Same MAC, written in upper case: still the same MAC.
	must(t, env.Client.Create(ctx, newHost(ns2, "second", "52:54:00:AA:00:04", "bmc")))
	second := client.ObjectKey{Namespace: ns2, Name: "second"}
	h := waitHost(t, second, "went to Error", state(metalv1.HostError))
	c := meta.FindStatusCondition(h.Status.Conditions, metalv1.ConditionValid)
	if c.Reason != metalv1.ReasonDuplicateMAC || !strings.Contains(c.Message, ns+"/first") {
		t.Fatalf("duplicate condition = %+v", c)
	}
	// The first keeps working.
	waitHost(t, first, "stayed Available", state(metalv1.HostAvailable))

	// Once the first is gone, the second owns the MAC.
	must(t, env.Client.Delete(ctx, &metalv1.Host{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"}}))
	waitHost(t, second, "became Available after the first was deleted", state(metalv1.HostAvailable))
}

func TestDiscoveredHostWaitsForBMC(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	h := newHost(ns, "found", "52:54:00:00:00:05", "")
	h.Spec.BMC = metalv1.BMC{}
	must(t, env.Client.Create(ctx, h))
	key := client.ObjectKey{Namespace: ns, Name: "found"}
	waitHost(t, key, "became Discovered", state(metalv1.HostDiscovered))

	// The admin accepts it by adding BMC details.
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	must(t, env.Client.Get(ctx, key, h))
	h.Spec.BMC = metalv1.BMC{Address: ipmiAddr(), CredentialsName: "bmc"}
	must(t, env.Client.Update(ctx, h))
	waitHost(t, key, "became Available once accepted", state(metalv1.HostAvailable))
}

// The API server itself rejects what CEL and the schema can check.
func TestHostSchemaValidation(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name    string
		mutate  func(*metalv1.Host)
		wantErr string
	}{
		{"unknown scheme", func(h *metalv1.Host) { h.Spec.BMC.Address = "idrac://10.0.0.1" }, "address must start with"},
		{"creds in URL", func(h *metalv1.Host) { h.Spec.BMC.Address = "ipmi://root:pw@10.0.0.1" }, "must not carry credentials"},
		{"bad MAC", func(h *metalv1.Host) { h.Spec.BootMACs = []string{"52:54:00:zz:00:01"} }, "bootMACs"},
		{"no MAC", func(h *metalv1.Host) { h.Spec.BootMACs = nil }, "bootMACs"},
		{"no credentials", func(h *metalv1.Host) { h.Spec.BMC.CredentialsName = "" }, "credentialsName is required"},
		{"bad CIDR", func(h *metalv1.Host) { h.Spec.Network = &metalv1.HostNetwork{Address: "10.0.0.300/24"} }, "IPv4 CIDR"},
		{"IPv4 as address6", func(h *metalv1.Host) { h.Spec.Network = &metalv1.HostNetwork{Address6: "10.0.0.5/24"} }, "IPv6 CIDR"},
		{"address6 without prefix", func(h *metalv1.Host) { h.Spec.Network = &metalv1.HostNetwork{Address6: "fd00::5"} }, "IPv6 CIDR"},
		{"bad arch", func(h *metalv1.Host) { h.Spec.Architecture = "sparc" }, "architecture"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(ns, "x", "52:54:00:00:01:01", "bmc")
			tc.mutate(h)
			err := env.Client.Create(context.Background(), h)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("create error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
	// manual:// needs no credentials.
	h := newHost(ns, "manual", "52:54:00:00:01:02", "")
	h.Spec.BMC.Address = "manual://rack-7"
	must(t, env.Client.Create(context.Background(), h))
	waitHost(t, client.ObjectKey{Namespace: ns, Name: "manual"}, "became Available", state(metalv1.HostAvailable))
}

// No password in any Host status or Event.
func TestNoPasswordInStatusOrEvents(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	must(t, env.Client.Create(ctx, newSecret(ns, "bmc")))
	must(t, env.Client.Create(ctx, newHost(ns, "ok", "52:54:00:00:02:01", "bmc")))
	waitHost(t, client.ObjectKey{Namespace: ns, Name: "ok"}, "became Available", state(metalv1.HostAvailable))
	must(t, env.Client.Create(ctx, newHost(ns, "dup", "52:54:00:00:02:01", "bmc")))
	waitHost(t, client.ObjectKey{Namespace: ns, Name: "dup"}, "went to Error", state(metalv1.HostError))
	var hosts metalv1.HostList
	must(t, env.Client.List(ctx, &hosts, client.InNamespace(ns)))
	var evs eventsv1.EventList
	must(t, env.Client.List(ctx, &evs, client.InNamespace(ns)))
	if len(evs.Items) == 0 {
		t.Fatal("no Events were recorded; the check below would prove nothing")
	}
	for _, o := range []any{hosts, evs} {
		b, _ := yaml.Marshal(o)
		if strings.Contains(string(b), testPassword) {
			t.Fatalf("password found in %T", o)
		}
	}
	if logs := managerLogs.String(); logs == "" || strings.Contains(logs, testPassword) {
		t.Fatalf("manager logs are empty (nothing checked) or contain the password (%d bytes)", len(logs))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
