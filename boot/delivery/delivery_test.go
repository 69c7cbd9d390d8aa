package delivery_test

import (
	"anvil.dev/anvil/agent"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	ignconfig "github.com/coreos/ignition/v2/config"
	igntypes "github.com/coreos/ignition/v2/config/v3_7_experimental/types"
	"github.com/vincent-petithory/dataurl"
	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/join/token"
	"anvil.dev/anvil/pxe/httpboot"
)

const (
	hostAddr  = "127.0.0.1" // the address "our DHCP" leased to the host
	otherAddr = "127.0.0.2" // somebody else on the segment
)

var tokenRe = regexp.MustCompile(`token: ([a-z0-9]{6}\.[a-z0-9]{16})`)

// TestButaneBootFlow walks one FCOS host through two boots: the script
// carries a credential exactly once per boot and only to the leased
// address, the config it unlocks is valid Ignition with a freshly minted
// bootstrap token that the real API server accepts, replays and other
// hosts' requests get 403, and nothing secret reaches the logs.
func TestButaneBootFlow(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	f := newFixture(t)
	mac, mac2 := newMAC(), newMAC()
	o := f.create(t, "node-01", hostSpec{
		classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac, mac2}, leaseIP: hostAddr,
		labels: map[string]string{metalv1.LabelFailureDomain: "rack-a"},
	}, "boot-1")
	var secrets []string // every credential and token value seen; none may be logged

	// A script request from another address than the lease: what an idle
	// host gets, and nothing is spent (the real host still gets one).
	s := f.script(t, otherAddr, mac)
	if s != string(httpboot.ExitScript()) {
		t.Fatalf("script for another address:\n%s", s)
	}
	if got := f.counter(t, "anvil_boot_script_credentials_total", "result", "wrong_address"); got != 1 {
		t.Fatalf("wrong_address counter = %v, want 1", got)
	}

	// The first request of the boot from the leased address gets it.
	s = f.script(t, hostAddr, mac)
	m := credRe.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("first script has no credential:\n%s", s)
	}
	cred1 := m[1]
	secrets = append(secrets, cred1)
	for _, want := range []string{
		" ignition.config.url=" + configserver.IgnitionURL(f.base()+"/config/", mac, cred1) + " ",
		" ignition.platform.id=metal",
		" coreos.inst.install_dev=/dev/sda ", // the class's own arguments stay
		"initrd --name initrd1 /artifacts/" + f.ns + "/fcos-worker/initrd/1/",
	} {
		if !strings.Contains(s, want) {
			t.Fatalf("script lacks %q:\n%s", want, s)
		}
	}
	st := hostStatus(t, o).BootCredential
	if st == nil || st.Hash != bootcred.HashCredential(cred1) || st.BootRequestID != "boot-1" || st.ScriptServedAt == nil || st.ConsumedAt != nil {
		t.Fatalf("status.bootCredential after the first script = %+v", st)
	}

	// A second request in the same boot gets the script without it.
	s = f.script(t, hostAddr, mac)
	if strings.Contains(s, "cred=") || !strings.Contains(s, "(second_request)") || !strings.Contains(s, "ignition.platform.id=metal") {
		t.Fatalf("second script of the boot:\n%s", s)
	}
	if got := f.counter(t, "anvil_boot_script_credentials_total", "result", "second_request"); got != 1 {
		t.Fatalf("second_request counter = %v, want 1", got)
	}
	if hostStatus(t, o).BootCredential.Hash != st.Hash {
		t.Fatal("the second script request replaced the credential")
	}
	waitCredential(t, o, st.Hash)

	url1 := configserver.IgnitionURL(f.base()+"/config/", mac, cred1)
	// From another address the valid credential is refused, and not spent.
	if code, body := f.get(t, otherAddr, url1); code != http.StatusForbidden || body != "" {
		t.Fatalf("config from another address: HTTP %d %q, want a bare 403", code, body)
	}
	if len(tokens(t, o)) != 0 {
		t.Fatal("a refused request minted a token")
	}
	// With another host's MAC it is refused too.
	if code, _ := f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", newMAC(), cred1)); code != http.StatusForbidden {
		t.Fatalf("credential with another MAC: HTTP %d, want 403", code)
	}

	// The host fetches its config: valid Ignition with the token.
	code, body := f.get(t, hostAddr, url1)
	if code != http.StatusOK {
		t.Fatalf("config fetch: HTTP %d %q", code, body)
	}
	cfg := parseIgnition(t, body)
	kubeconf := fileContents(t, cfg, "/etc/kubernetes/bootstrap-kubelet.conf")
	tm := tokenRe.FindStringSubmatch(kubeconf)
	if tm == nil {
		t.Fatalf("bootstrap kubeconfig has no token:\n%s", kubeconf)
	}
	tok := tm[1]
	secrets = append(secrets, tok, strings.SplitN(tok, ".", 2)[1])
	if !strings.Contains(kubeconf, "server: "+env.Config.Host) {
		t.Fatalf("bootstrap kubeconfig does not point at the API server:\n%s", kubeconf)
	}
	unit := unitContents(t, cfg, "kubelet.service")
	for _, want := range []string{"--hostname-override=m-node-01", "--provider-id=anvil://" + string(o.host.UID), "Description=kubelet v1.37.2"} {
		if !strings.Contains(unit, want) {
			t.Fatalf("kubelet.service lacks %q:\n%s", want, unit)
		}
	}
	if got := fileContents(t, cfg, "/etc/hostname"); got != "node-01" {
		t.Fatalf("/etc/hostname = %q", got)
	}
	if env := fileContents(t, cfg, "/etc/anvil/agent.env"); !strings.Contains(env, "ANVIL_ENDPOINT="+f.base()+"\n") || !strings.Contains(env, "ANVIL_NODE_NAME=m-node-01") {
		t.Fatalf("agent.env:\n%s", env)
	}
	kubelet := file(t, cfg, "/opt/bin/kubelet")
	wantURL := f.base() + "/artifacts/" + f.ns + "/fcos-worker/kubelet/v1.37.2/kubelet"
	if kubelet.Contents.Source == nil || *kubelet.Contents.Source != wantURL ||
		kubelet.Contents.Verification.Hash == nil || *kubelet.Contents.Verification.Hash != "sha256-"+strings.Repeat("0", 64) {
		t.Fatalf("kubelet file = %+v, want source %s", kubelet.Contents, wantURL)
	}
	if ca := fileContents(t, cfg, "/etc/kubernetes/pki/ca.crt"); strings.TrimSpace(ca) != strings.TrimSpace(string(env.Config.CAData)) {
		t.Fatalf("ca.crt is not the cluster CA:\n%s", ca)
	}

	// The token is a Secret in kube-system owned by the Machine and Host,
	// and the real API server authenticates it as an Anvil bootstrapper.
	id := strings.SplitN(tok, ".", 2)[0]
	info, err := token.Lookup(ctx, clientset, id)
	must(t, err)
	if info.Owner.Machine.UID != o.machine.UID || info.Owner.Machine.Name != o.machine.Name || info.Owner.Host.UID != o.host.UID {
		t.Fatalf("token owner = %+v", info.Owner)
	}
	if ttl := time.Until(info.Expiration); ttl > 16*time.Minute || ttl < 10*time.Minute {
		t.Fatalf("token expires in %v, want the class's 15m", ttl)
	}
	user := whoAmI(t, tok)
	if user.Username != "system:bootstrap:"+id || !contains(user.Groups, token.AnvilGroup) {
		t.Fatalf("API server sees the token as %+v", user)
	}

	// A retry within the grace window works and reuses the token.
	code, body = f.get(t, hostAddr, url1)
	if code != http.StatusOK {
		t.Fatalf("retry within grace: HTTP %d", code)
	}
	if got := fileContents(t, parseIgnition(t, body), "/etc/kubernetes/bootstrap-kubelet.conf"); !strings.Contains(got, tok) {
		t.Fatal("the retry got another token")
	}
	if n := len(tokens(t, o)); n != 1 {
		t.Fatalf("%d tokens after two fetches, want 1", n)
	}
	// After the grace window the credential is spent.
	f.clock.Advance(bootcred.DefaultGrace + time.Second)
	if code, body := f.get(t, hostAddr, url1); code != http.StatusForbidden || body != "" {
		t.Fatalf("replay after grace: HTTP %d %q, want a bare 403", code, body)
	}

	// A second boot gets a new credential (even though the first was
	// served), which voids the first. Concurrent requests: one wins.
	f.newBoot(t, o, "boot-2")
	scripts := make([]string, 4)
	var wg sync.WaitGroup
	for i := range scripts {
		wg.Go(func() { scripts[i] = f.script(t, hostAddr, mac2) })
	}
	wg.Wait()
	var cred2 string
	for _, s := range scripts {
		if m := credRe.FindStringSubmatch(s); m != nil {
			if cred2 != "" {
				t.Fatalf("two scripts of boot-2 carry a credential")
			}
			cred2 = m[1]
			if !strings.Contains(s, configserver.IgnitionURL(f.base()+"/config/", mac2, cred2)) {
				t.Fatalf("boot-2 script does not use the requesting MAC:\n%s", s)
			}
		}
	}
	if cred2 == "" || cred2 == cred1 {
		t.Fatalf("boot-2: credential issued %v, same as boot-1 %v", cred2 != "", cred2 == cred1)
	}
	secrets = append(secrets, cred2)
	if got := f.counter(t, "anvil_boot_script_credentials_total", "result", "second_request"); got != 1+3 {
		t.Fatalf("second_request counter = %v, want 4", got)
	}
	st2 := hostStatus(t, o).BootCredential
	if st2.BootRequestID != "boot-2" || st2.Hash != bootcred.HashCredential(cred2) {
		t.Fatalf("status after boot-2 = %+v", st2)
	}
	waitCredential(t, o, st2.Hash)
	if code, _ := f.get(t, hostAddr, url1); code != http.StatusForbidden {
		t.Fatalf("boot-1 credential in boot-2: HTTP %d, want 403", code)
	}
	code, body = f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac2, cred2))
	if code != http.StatusOK {
		t.Fatalf("boot-2 config: HTTP %d", code)
	}
	if got := fileContents(t, parseIgnition(t, body), "/etc/kubernetes/bootstrap-kubelet.conf"); !strings.Contains(got, tok) {
		t.Fatal("boot-2 did not reuse the Machine's still valid token")
	}

	// Nothing secret in the logs; the credential hash prefix is there.
	logs := f.logs.String()
	for _, sec := range secrets {
		if strings.Contains(logs, sec) {
			t.Fatalf("logs contain a secret value (%d bytes)", len(sec))
		}
	}
	if !strings.Contains(logs, st.Hash[:12]) || !strings.Contains(logs, id) {
		t.Fatalf("logs do not name the credential hash prefix and the token ID:\n%s", logs)
	}
}

// TestCloudInitBootFlow serves a NoCloud seed to an Ubuntu-class host, and
// lets the real cloud-init fetch it with the script's kernel command line
// when cloud-init is installed.
func TestCloudInitBootFlow(t *testing.T) {
	needAPIServer(t)
	f := newFixture(t)
	mac := newMAC()
	o := f.create(t, "node-02", hostSpec{classFile: "machineclass-cloudinit.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr, live: true}, "b-1")

	s := f.script(t, hostAddr, mac)
	m := regexp.MustCompile(` ds=nocloud-net;s=(\S+/config/` + regexp.QuoteMeta(mac) + `/nocloud/([A-Za-z0-9_-]{43})/)\s`).FindStringSubmatch(s)
	if m == nil || strings.Contains(s, "ignition.") {
		t.Fatalf("cloud-init script:\n%s", s)
	}
	seed, cred := m[1], m[2]
	if seed != configserver.NoCloudSeedURL(f.base()+"/config/", mac, cred) {
		t.Fatalf("seed URL %s", seed)
	}
	waitCredential(t, o, bootcred.HashCredential(cred))

	files := map[string]string{}
	for _, name := range []string{"meta-data", "user-data", "vendor-data", "network-config"} {
		code, body := f.get(t, hostAddr, seed+name)
		if code != http.StatusOK {
			t.Fatalf("%s: HTTP %d", name, code)
		}
		files[name] = body
	}
	tm := tokenRe.FindStringSubmatch(files["user-data"])
	if !strings.HasPrefix(files["user-data"], "#cloud-config") || tm == nil ||
		!strings.Contains(files["user-data"], "--hostname-override=m-node-02") {
		t.Fatalf("user-data:\n%s", files["user-data"])
	}
	tok := tm[1]
	if !strings.Contains(files["meta-data"], "local-hostname: node-02") || !strings.Contains(files["network-config"], `macaddress: "`+mac+`"`) {
		t.Fatalf("meta-data:\n%s\nnetwork-config:\n%s", files["meta-data"], files["network-config"])
	}
	if n := len(tokens(t, o)); n != 1 {
		t.Fatalf("four NoCloud files minted %d tokens, want 1", n)
	}
	// Ignition is not what this class serves.
	if code, _ := f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac, cred)); code != http.StatusNotFound {
		t.Fatalf("ignition of a cloud-init class: HTTP %d, want 404", code)
	}

	t.Run("real cloud-init", func(t *testing.T) {
		// The kernel line of the script, as the kernel would see it.
		line := ""
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "kernel ") {
				line = strings.TrimPrefix(l, "kernel ")
			}
		}
		got := runCloudInit(t, line)
		if !strings.Contains(got.Userdata, tok) || got.Metadata["local-hostname"] != "node-02" {
			t.Fatalf("cloud-init got meta-data %v, user-data %q", got.Metadata, got.Userdata)
		}
	})
	logs := f.logs.String()
	if strings.Contains(logs, cred) || strings.Contains(logs, tok) || strings.Contains(logs, strings.SplitN(tok, ".", 2)[1]) {
		t.Fatal("logs contain the credential or the token")
	}
	// The access log still shows which file was fetched.
	if !strings.Contains(logs, "/nocloud/cred-sha256-"+bootcred.HashCredential(cred)[:12]+"/user-data") {
		t.Fatalf("access log does not show the redacted NoCloud path:\n%s", logs)
	}
}

// TestConfigErrorsCarryNoSecrets: a class that cannot serve the Machine
// fails before minting anything, and a template that fails after the token
// is in the variables reports the failure without the token, through the
// endpoint (500, bare) as well as directly.
func TestConfigErrorsCarryNoSecrets(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	f := newFixture(t)

	t.Run("no kubelet for the version", func(t *testing.T) {
		mac := newMAC()
		o := f.create(t, "node-03", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.36.0", macs: []string{mac}}, "b-1")
		_, err := f.wiring.Configs.Ignition(ctx, hostKey(o), mac)
		if err == nil || !strings.Contains(err.Error(), "no kubelet for version v1.36.0") {
			t.Fatalf("err = %v", err)
		}
		if n := len(tokens(t, o)); n != 0 {
			t.Fatalf("a class error minted %d tokens", n)
		}
	})

	t.Run("template fails after using the token", func(t *testing.T) {
		mac := newMAC()
		o := f.create(t, "node-04", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
		// A class of its own whose Butane puts the token where a number
		// belongs: Butane's error quotes the offending value.
		bad := loadClass(t, "machineclass-fcos.yaml", f.ns)
		bad.Name = "broken"
		bad.Spec.Config.Template = "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: /etc/t\n      mode: {{ .Join.Token }}\n"
		must(t, env.Client.Create(ctx, bad))
		mc := &metalv1.Machine{}
		must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.machine), mc))
		// machineClassRef is immutable: replace the Machine under the Host.
		must(t, env.Client.Delete(ctx, mc))
		mc = &metalv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: mc.Name},
			Spec: metalv1.MachineSpec{MachineClassRef: metalv1.LocalObjectReference{Name: "broken"}, Version: "v1.37.2"}}
		must(t, env.Client.Create(ctx, mc))
		h := &metalv1.Host{}
		must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.host), h))
		h.Spec.ConsumerRef.UID = mc.UID
		must(t, env.Client.Update(ctx, h))
		o.machine = mc
		waitFor(t, "the cache to see the new Machine and class", func() bool {
			var got metalv1.Host
			var c metalv1.MachineClass
			return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(h), &got) == nil && got.Spec.ConsumerRef.UID == mc.UID &&
				mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(bad), &c) == nil
		})

		// As the HTTP server does: the request's local address is the base URL.
		lctx := context.WithValue(ctx, http.LocalAddrContextKey, f.srv.Listener.Addr())
		_, err := f.wiring.Configs.Ignition(lctx, hostKey(o), mac)
		if err == nil {
			t.Fatal("a broken template rendered")
		}
		tl := tokens(t, o)
		if len(tl) != 1 {
			t.Fatalf("%d tokens, want the one minted for the render (err %v)", len(tl), err)
		}
		value := tokenValue(t, tl[0].ID)
		if strings.Contains(err.Error(), value) || strings.Contains(err.Error(), strings.SplitN(value, ".", 2)[1]) {
			t.Fatalf("render error carries the token: %v", err)
		}
		if !strings.Contains(err.Error(), "line 6") {
			t.Fatalf("render error does not point at the template line: %v", err)
		}

		// Through the endpoint: a bare 500, and the logs stay clean.
		s := f.script(t, hostAddr, mac)
		cm := credRe.FindStringSubmatch(s)
		if cm == nil {
			t.Fatalf("no credential:\n%s", s)
		}
		waitCredential(t, o, bootcred.HashCredential(cm[1]))
		code, body := f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac, cm[1]))
		if code != http.StatusInternalServerError || body != "" {
			t.Fatalf("broken template over HTTP: %d %q", code, body)
		}
		logs := f.logs.String()
		if strings.Contains(logs, value) || strings.Contains(logs, cm[1]) {
			t.Fatal("logs carry the token or the credential")
		}
		if !strings.Contains(logs, "rendering config") {
			t.Fatalf("the render failure was not logged:\n%s", logs)
		}
	})
}

// TestNotProvisioning: a Host that is not being provisioned gets no
// credential: "exit" when it should boot from disk, the bare boot spec
// for a wipe.
// TestWipeBootGetsOnlyTheAgentsConfig: a Host network-booting to wipe
// its disks gets a credential and a config with its agent's endpoint and
// a fresh agent credential (whose hash is stored), but no join secrets;
// once provisioned it gets "exit".
//
// A class that installs spec.image wipes with its installer (Anvil's
// initramfs), which takes the wipe config as Ignition, whatever format the
// installed OS reads.
func TestWipeBootGetsOnlyTheAgentsConfig(t *testing.T) {
	needAPIServer(t)
	f := newFixture(t)
	for i, class := range []string{"machineclass-fcos.yaml", "machineclass-cloudinit.yaml"} {
		t.Run(class, func(t *testing.T) { testWipeBoot(t, f, class, fmt.Sprintf("node-05-%d", i)) })
	}
}

func testWipeBoot(t *testing.T, f *fixture, class, name string) {
	ctx := context.Background()
	mac := newMAC()
	o := f.create(t, name, hostSpec{classFile: class, version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.host), h))
	h.Spec.BootRequest = &metalv1.BootRequest{ID: "w-1", Purpose: metalv1.BootPurposeWipe}
	must(t, env.Client.Update(ctx, h))
	h.Status.State = metalv1.HostDeprovisioning
	h.Status.BootRequestID = "w-1"
	must(t, env.Client.Status().Update(ctx, h))
	f.waitBooting(t, mac, "w-1")
	s := f.script(t, hostAddr, mac)
	m := credRe.FindStringSubmatch(s)
	if m == nil || !strings.Contains(s, "kernel /artifacts/") {
		t.Fatalf("wipe script has no credential:\n%s", s)
	}
	waitCredential(t, o, bootcred.HashCredential(m[1]))
	code, body := f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac, m[1]))
	if code != http.StatusOK {
		t.Fatalf("wipe config: HTTP %d %q", code, body)
	}
	cfg := parseIgnition(t, body)
	agentEnv := fileContents(t, cfg, "/etc/anvil/agent.env")
	cred := ""
	for _, line := range strings.Split(agentEnv, "\n") {
		if v, ok := strings.CutPrefix(line, "ANVIL_CREDENTIAL="); ok {
			cred = v
		}
	}
	if cred == "" || !strings.Contains(agentEnv, "ANVIL_ENDPOINT="+f.base()) {
		t.Fatalf("agent.env of the wipe boot:\n%s", agentEnv)
	}
	if a := hostStatus(t, o).Agent; a == nil || a.CredentialHash != agent.CredentialHash(cred) {
		t.Fatalf("the agent credential's hash is not stored: %+v", a)
	}
	if strings.Contains(body, "bootstrap-kubelet") || len(tokens(t, o)) != 0 {
		t.Fatal("a wipe boot got join secrets")
	}
	if strings.Contains(f.logs.String(), cred) {
		t.Fatal("the agent credential was logged")
	}

	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.host), h))
	h.Status.State = metalv1.HostProvisioned
	must(t, env.Client.Status().Update(ctx, h))
	waitFor(t, "the index to see it provisioned", func() bool {
		c, ok := ix.Host(mustMAC(t, mac))
		return ok && c.Status.State == metalv1.HostProvisioned
	})
	if s := f.script(t, hostAddr, mac); !strings.Contains(s, "\nexit 1\n") {
		t.Fatalf("provisioned host script:\n%s", s)
	}
}

// --- helpers ---

func hostKey(o objects) bootcred.HostKey {
	return bootcred.HostKey{Namespace: o.host.Namespace, Name: o.host.Name, UID: string(o.host.UID)}
}

func hostStatus(t *testing.T, o objects) metalv1.HostStatus {
	t.Helper()
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(o.host), h))
	return h.Status
}

func tokenValue(t *testing.T, id string) string {
	t.Helper()
	s, err := clientset.CoreV1().Secrets(token.Namespace).Get(context.Background(), "bootstrap-token-"+id, metav1.GetOptions{})
	must(t, err)
	return string(s.Data["token-id"]) + "." + string(s.Data["token-secret"])
}

// parseIgnition checks the config with Ignition's own parser and validator.
func parseIgnition(t *testing.T, body string) igntypes.Config {
	t.Helper()
	cfg, rpt, err := ignconfig.Parse([]byte(body))
	if err != nil || rpt.IsFatal() {
		t.Fatalf("Ignition rejects the config: %v\n%s", err, rpt.String())
	}
	return cfg
}

func file(t *testing.T, cfg igntypes.Config, path string) igntypes.File {
	t.Helper()
	for _, f := range cfg.Storage.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("config has no file %s", path)
	return igntypes.File{}
}

// fileContents decodes a file's data URL (gunzipping what Butane
// compressed).
func fileContents(t *testing.T, cfg igntypes.Config, path string) string {
	t.Helper()
	f := file(t, cfg, path)
	if f.Contents.Source == nil {
		t.Fatalf("%s has no contents", path)
	}
	du, err := dataurl.DecodeString(*f.Contents.Source)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data := du.Data
	if f.Contents.Compression != nil && *f.Contents.Compression == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		must(t, err)
		data, err = io.ReadAll(zr)
		must(t, err)
	}
	return string(data)
}

func unitContents(t *testing.T, cfg igntypes.Config, name string) string {
	t.Helper()
	for _, u := range cfg.Systemd.Units {
		if u.Name == name && u.Contents != nil {
			return *u.Contents
		}
	}
	t.Fatalf("config has no unit %s", name)
	return ""
}

// whoAmI asks the real API server who the bearer of tok is.
func whoAmI(t *testing.T, tok string) authnv1.UserInfo {
	t.Helper()
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = tok
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	// The API server's token authenticator reads Secrets through an
	// informer: a token minted a moment ago may 401 until it is delivered.
	var r *authnv1.SelfSubjectReview
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		r, err = cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if apierrors.IsUnauthorized(err) {
			return false, nil
		}
		return err == nil, err
	})
	must(t, err)
	return r.Status.UserInfo
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
