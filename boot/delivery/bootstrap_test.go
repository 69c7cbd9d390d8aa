package delivery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
)

// withBootstrap points the Machine at a bootstrap data Secret with data
// (nil: no Secret is created) and waits for the manager's cache to see it.
func withBootstrap(t *testing.T, o objects, secret string, data map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	if data != nil {
		must(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.machine.Namespace, Name: secret}, Data: data}))
	}
	m := &metalv1.Machine{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.machine), m))
	m.Spec.Bootstrap = &metalv1.MachineBootstrap{DataSecretName: secret}
	must(t, env.Client.Update(ctx, m))
	waitFor(t, "the cache to see spec.bootstrap of "+m.Name, func() bool {
		got := &metalv1.Machine{}
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(m), got) == nil && got.Spec.Bootstrap != nil
	})
}

// marker is bootstrap data nobody could guess, to look for in logs and
// status.
func marker() string { return "kubeadm-join-secret-" + rand.String(20) }

// TestBootstrapDataServedInsteadOfTemplate: a Machine with
// spec.bootstrap.dataSecretName gets exactly the Secret's bytes, only with
// the boot's credential, Anvil mints no bootstrap token for it, and the
// data appears in no log, Host status or Event.
func TestBootstrapDataServedInsteadOfTemplate(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	f := newFixture(t)

	t.Run("ignition", func(t *testing.T) {
		mac := newMAC()
		o := f.create(t, "capi-01", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
		secret := marker()
		value := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/join","contents":{"source":"data:,` + secret + `"}}]}}`
		withBootstrap(t, o, "capi-01-bootstrap", map[string][]byte{"value": []byte(value), "format": []byte("ignition")})

		s := f.script(t, hostAddr, mac)
		cm := credRe.FindStringSubmatch(s)
		if cm == nil {
			t.Fatalf("no credential in the script:\n%s", s)
		}
		cred := cm[1]
		waitCredential(t, o, bootcred.HashCredential(cred))
		url := configserver.IgnitionURL(f.base()+"/config/", mac, cred)
		noCred := strings.SplitN(url, "?", 2)[0]
		for _, tc := range []struct{ what, from, url string }{
			{"no credential", hostAddr, noCred},
			{"a made-up credential", hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac, strings.Repeat("A", 43))},
			{"the credential from another address", otherAddr, url},
		} {
			if code, body := f.get(t, tc.from, tc.url); code != http.StatusForbidden || body != "" {
				t.Errorf("%s: HTTP %d %q, want a bare 403", tc.what, code, body)
			}
		}
		code, body := f.get(t, hostAddr, url)
		if code != http.StatusOK || body != value {
			t.Fatalf("config with the credential: HTTP %d, %d bytes, want the Secret's %d", code, len(body), len(value))
		}
		if n := len(tokens(t, o)); n != 0 {
			t.Fatalf("Anvil minted %d bootstrap tokens for a Machine with bootstrap data", n)
		}
		checkNotLeaked(t, f, o, secret)
	})

	t.Run("cloud-config", func(t *testing.T) {
		mac := newMAC()
		o := f.create(t, "capi-02", hostSpec{classFile: "machineclass-cloudinit.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr, live: true}, "b-1")
		secret := marker()
		value := "## template: jinja\n#cloud-config\nruncmd:\n- kubeadm join --token " + secret + "\n"
		// No format key: Cluster API's default, cloud-config.
		withBootstrap(t, o, "capi-02-bootstrap", map[string][]byte{"value": []byte(value)})

		s := f.script(t, hostAddr, mac)
		m := regexp.MustCompile(`/nocloud/([A-Za-z0-9_-]{43})/`).FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("no NoCloud seed in the script:\n%s", s)
		}
		cred := m[1]
		waitCredential(t, o, bootcred.HashCredential(cred))
		seed := configserver.NoCloudSeedURL(f.base()+"/config/", mac, cred)
		if code, body := f.get(t, hostAddr, strings.Replace(seed, cred, strings.Repeat("B", 43), 1)+"user-data"); code != http.StatusForbidden || body != "" {
			t.Errorf("user-data with a made-up credential: HTTP %d %q, want a bare 403", code, body)
		}
		code, ud := f.get(t, hostAddr, seed+"user-data")
		if code != http.StatusOK || ud != value {
			t.Fatalf("user-data: HTTP %d, %d bytes, want the Secret's %d", code, len(ud), len(value))
		}
		code, md := f.get(t, hostAddr, seed+"meta-data")
		if code != http.StatusOK || !strings.Contains(md, "instance-id: anvil-bootstrap-") || !strings.Contains(md, "local-hostname: capi-02") ||
			!strings.Contains(md, "\nprovider-id: anvil://"+string(o.host.UID)+"\n") {
			t.Fatalf("meta-data: HTTP %d\n%s", code, md)
		}
		if code, vd := f.get(t, hostAddr, seed+"vendor-data"); code != http.StatusOK || vd != "" {
			t.Fatalf("vendor-data: HTTP %d %q, want empty (the class's is not rendered)", code, vd)
		}
		if n := len(tokens(t, o)); n != 0 {
			t.Fatalf("Anvil minted %d bootstrap tokens for a Machine with bootstrap data", n)
		}
		checkNotLeaked(t, f, o, secret)
	})

	// What cannot be served is an error naming the Secret (and the Host's
	// ConfigRendered=False says so, which the Machine controller turns
	// into the Machine's InfrastructureReady=False ConfigRenderFailed),
	// with no token minted and no value quoted.
	for i, tc := range []struct {
		name   string
		data   map[string][]byte // nil: no Secret
		errHas string
	}{
		{"missing Secret", nil, "not found"},
		{"unknown format", map[string][]byte{"value": []byte("x"), "format": []byte("yaml-ish")}, `format "yaml-ish", want cloud-config or ignition`},
		{"cloud-config for a Butane class", map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}, "boots with ignition"},
		{"no value", map[string][]byte{"format": []byte("ignition")}, "has no key value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mac := newMAC()
			o := f.create(t, "capi-bad-"+string(rune('a'+i)), hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
			name := "bad-bootstrap-" + string(rune('a'+i))
			withBootstrap(t, o, name, tc.data)
			_, err := f.wiring.Configs.Ignition(ctx, hostKey(o), mac)
			want := "bootstrap data Secret " + f.ns + "/" + name + " (spec.bootstrap.dataSecretName of Machine " + o.machine.Name + ")"
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("err = %v, want it to name %q and say %q", err, want, tc.errHas)
			}
			waitFor(t, "ConfigRendered=False on the Host", func() bool {
				for _, c := range hostStatus(t, o).Conditions {
					if c.Type == metalv1.ConditionConfigRendered && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, want) {
						return true
					}
				}
				return false
			})
			if n := len(tokens(t, o)); n != 0 {
				t.Fatalf("minted %d tokens", n)
			}
		})
	}
}

// checkNotLeaked: the bootstrap data is in no log line, nowhere in the
// Host's and Machine's status, and in no Event of the namespace.
func checkNotLeaked(t *testing.T, f *fixture, o objects, secret string) {
	t.Helper()
	ctx := context.Background()
	if strings.Contains(f.logs.String(), secret) {
		t.Error("the logs contain the bootstrap data")
	}
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.host), h))
	m := &metalv1.Machine{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.machine), m))
	var events corev1.EventList
	must(t, env.Client.List(ctx, &events, client.InNamespace(f.ns)))
	for what, v := range map[string]any{"Host": h, "Machine": m, "Events": events} {
		b, err := json.Marshal(v)
		must(t, err)
		if strings.Contains(string(b), secret) {
			t.Errorf("the %s carries the bootstrap data", what)
		}
	}
}
