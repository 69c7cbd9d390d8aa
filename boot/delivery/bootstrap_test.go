package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	agentclient "anvil.dev/anvil/agent/onhost/client"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/render"
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
// spec.bootstrap.dataSecretName gets the Secret's data instead of its
// class's template, with anvil-agent's files added (Ignition: appended;
// cloud-config: a second MIME part, which the real cloud-init runs after
// Cluster API's), only with the boot's credential, which is spent after
// it; the agent's env-file carries this boot's agent credential, which the
// agent API accepts. Anvil mints no bootstrap token, and the data appears
// in no log, Host status or Event.
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
		if code != http.StatusOK {
			t.Fatalf("config with the credential: HTTP %d", code)
		}
		// Cluster API's config with the agent's files added.
		cfg := parseIgnition(t, body)
		if got := fileContents(t, cfg, "/etc/join"); got != secret {
			t.Fatalf("Cluster API's /etc/join = %q", got)
		}
		if len(cfg.Storage.Files) != 2 || len(cfg.Systemd.Units) != 1 || cfg.Systemd.Units[0].Name != render.AgentUnitName ||
			cfg.Systemd.Units[0].Contents == nil || *cfg.Systemd.Units[0].Contents != render.AgentUnit("/opt/bin/anvil-agent") {
			t.Fatalf("config: %d files, units %+v", len(cfg.Storage.Files), cfg.Systemd.Units)
		}
		if m := file(t, cfg, render.AgentEnvPath).Mode; m == nil || *m != 0o600 {
			t.Fatalf("%s mode %v", render.AgentEnvPath, m)
		}
		checkAgentEnv(t, f, o, fileContents(t, cfg, render.AgentEnvPath), "/opt/bin/kubelet")
		if n := len(tokens(t, o)); n != 0 {
			t.Fatalf("Anvil minted %d bootstrap tokens for a Machine with bootstrap data", n)
		}
		checkSpent(t, f, url)
		checkNotLeaked(t, f, o, secret)
	})

	t.Run("cloud-config", func(t *testing.T) {
		mac := newMAC()
		o := f.create(t, "capi-02", hostSpec{classFile: "machineclass-cloudinit.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr, live: true}, "b-1")
		secret := marker()
		value := "## template: jinja\n#cloud-config\nwrite_files:\n- path: /run/kubeadm/join.yaml\n  content: |\n    name: '{{ ds.meta_data.local_hostname }}'\n    token: " + secret + "\nruncmd:\n- kubeadm join --config /run/kubeadm/join.yaml\n"
		// No format key: Cluster API's default, cloud-config.
		withBootstrap(t, o, "capi-02-bootstrap", map[string][]byte{"value": []byte(value)})

		s := f.script(t, hostAddr, mac)
		m := regexp.MustCompile(` ds=nocloud-net;s=(\S+/nocloud/([A-Za-z0-9_-]{43})/)\s`).FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("no NoCloud seed in the script:\n%s", s)
		}
		cred := m[2]
		waitCredential(t, o, bootcred.HashCredential(cred))
		seed := configserver.NoCloudSeedURL(f.base()+"/config/", mac, cred)
		if seed != m[1] {
			t.Fatalf("seed URL %s", m[1])
		}
		if code, body := f.get(t, hostAddr, strings.Replace(seed, cred, strings.Repeat("B", 43), 1)+"user-data"); code != http.StatusForbidden || body != "" {
			t.Errorf("user-data with a made-up credential: HTTP %d %q, want a bare 403", code, body)
		}
		code, ud := f.get(t, hostAddr, seed+"user-data")
		if code != http.StatusOK || !strings.HasPrefix(ud, "Content-Type: multipart/mixed; boundary=") {
			t.Fatalf("user-data: HTTP %d, not MIME multipart:\n%.200s", code, ud)
		}
		code, md := f.get(t, hostAddr, seed+"meta-data")
		if code != http.StatusOK || !strings.Contains(md, "instance-id: anvil-bootstrap-") || !strings.Contains(md, "local-hostname: capi-02") ||
			!strings.Contains(md, "\nprovider-id: anvil://"+string(o.host.UID)+"\n") {
			t.Fatalf("meta-data: HTTP %d\n%s", code, md)
		}
		if code, vd := f.get(t, hostAddr, seed+"vendor-data"); code != http.StatusOK || vd != "" {
			t.Fatalf("vendor-data: HTTP %d %q, want empty (the class's is not rendered)", code, vd)
		}

		// The real cloud-init, from the script's kernel line: Cluster
		// API's part as it is (jinja rendered from the meta-data), and
		// the agent's.
		got := consumeWithCloudInit(t, kernelLine(s), true)
		if got.SchemaError != "" {
			t.Errorf("merged cloud-config: %s", got.SchemaError)
		}
		if join := got.Files["/run/kubeadm/join.yaml"].Content; join != "name: 'capi-02'\ntoken: "+secret+"\n" {
			t.Fatalf("Cluster API's file: %q", join)
		}
		if len(got.Config.Runcmd) != 4 || fmt.Sprint(got.Config.Runcmd[0]) != "kubeadm join --config /run/kubeadm/join.yaml" {
			t.Fatalf("runcmd %v", got.Config.Runcmd)
		}
		// Before the join, the Machine's kubelet from its class, by its
		// digest, at the kubelet's path on image-builder's images.
		k := o.class.Spec.Kubelets[0]
		if boot := fmt.Sprint(got.Config.Bootcmd); len(got.Config.Bootcmd) != 1 || !strings.Contains(boot, "want='"+k.SHA256+"'") ||
			!strings.Contains(boot, "bin='/usr/bin/kubelet'") || !strings.Contains(boot, "version='"+k.Version+"'") {
			t.Fatalf("bootcmd %v, want the install of kubelet %s (%s)", got.Config.Bootcmd, k.Version, k.SHA256)
		}
		if unit := got.Files[render.AgentUnitPath]; unit.Content != render.AgentUnit("/usr/local/bin/anvil-agent") {
			t.Fatalf("agent unit:\n%s", unit.Content)
		}
		agentEnv := got.Files[render.AgentEnvPath]
		if agentEnv.Mode != 0o600 {
			t.Errorf("%s has mode %o", render.AgentEnvPath, agentEnv.Mode)
		}
		checkAgentEnv(t, f, o, agentEnv.Content, "/usr/bin/kubelet")
		if n := len(tokens(t, o)); n != 0 {
			t.Fatalf("Anvil minted %d bootstrap tokens for a Machine with bootstrap data", n)
		}
		checkSpent(t, f, seed+"user-data")
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

// kernelLine is the script's kernel command line, as the kernel sees it.
func kernelLine(script string) string {
	for _, l := range strings.Split(script, "\n") {
		if v, ok := strings.CutPrefix(l, "kernel "); ok {
			return v
		}
	}
	return ""
}

// checkAgentEnv: the env-file the config carries names this boot server,
// the Host's hostname (the Node kubeadm registers) and kubeadm's kubelet,
// and its credential is the one whose hash Host status holds: the real
// agent API accepts it, and no other. The credential is in no log.
func checkAgentEnv(t *testing.T, f *fixture, o objects, envFile, kubeletBin string) {
	t.Helper()
	kv := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(envFile), "\n") {
		k, v, _ := strings.Cut(line, "=")
		kv[k] = v
	}
	want := map[string]string{"ANVIL_ENDPOINT": f.base(), "ANVIL_NODE_NAME": o.host.Name, "ANVIL_KUBELET_MANAGER": "systemd",
		"ANVIL_KUBELET_BIN": kubeletBin, "ANVIL_KUBECONFIG": "/etc/kubernetes/kubelet.conf"}
	for k, v := range want {
		if kv[k] != v {
			t.Errorf("agent.env %s=%q, want %q", k, kv[k], v)
		}
	}
	cred := kv["ANVIL_CREDENTIAL"]
	if a := hostStatus(t, o).Agent; cred == "" || a == nil || a.CredentialHash != agent.CredentialHash(cred) {
		t.Fatalf("the agent credential's hash is not in Host status: %+v", a)
	}
	if err := agentReport(cred); err != nil {
		t.Fatalf("the agent API refuses the config's credential: %v", err)
	}
	if err := agentReport(cred[:len(cred)-4] + "AAAA"); !errors.Is(err, agentclient.ErrUnauthorized) {
		t.Fatalf("the agent API with a wrong credential: %v, want unauthorized", err)
	}
	if strings.Contains(f.logs.String(), cred) {
		t.Error("the agent credential was logged")
	}
}

// agentReport reports through the real agent API with cred.
func agentReport(cred string) error {
	c, err := agentclient.New(agentclient.Options{Endpoint: agentURL, Credential: cred, Attempts: 1})
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	return c.Report(context.Background(), agent.Report{AgentVersion: "delivery-test", BootID: "0123abcd-0000-4000-8000-0123456789ab", Hostname: "h"})
}

// checkSpent: after the grace window the boot credential is spent, as for
// any config.
func checkSpent(t *testing.T, f *fixture, url string) {
	t.Helper()
	f.clock.Advance(bootcred.DefaultGrace + time.Second)
	if code, body := f.get(t, hostAddr, url); code != http.StatusForbidden || body != "" {
		t.Fatalf("a fetch with the spent credential: HTTP %d, %d bytes, want a bare 403", code, len(body))
	}
}
