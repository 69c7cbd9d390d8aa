package delivery_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/internal/ratelimit"
	"anvil.dev/anvil/pxe/httpboot"
)

// answer is what a client can observe of a response.
type answer struct {
	code   int
	header http.Header // without Date
	body   string
}

func (a answer) String() string {
	return fmt.Sprintf("HTTP %d %v\n%s", a.code, a.header, a.body)
}

func (a answer) equal(b answer) bool {
	return a.String() == b.String() // http.Header prints sorted
}

// do sends method url from the source address from.
func (f *fixture) do(t *testing.T, method, from, url string) answer {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second,
	}).DialContext}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(method, url, nil)
	must(t, err)
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	h := resp.Header.Clone()
	h.Del("Date")
	return answer{code: resp.StatusCode, header: h, body: string(b)}
}

// setState writes the Host's status.state and waits for the index.
func setState(t *testing.T, o objects, state metalv1.HostState) {
	t.Helper()
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(o.host), h))
	h.Status.State = state
	must(t, env.Client.Status().Update(context.Background(), h))
	waitFor(t, "the index to see "+o.host.Name+" "+string(state), func() bool {
		h, ok := ix.Host(mustMAC(t, o.host.Spec.BootMACs[0]))
		return ok && h.Status.State == state
	})
}

// clearLeases drops the Host's DHCP leases (they expired, or were never
// there) and waits until the lease store knows no address for its MAC.
func clearLeases(t *testing.T, o objects) {
	t.Helper()
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(o.host), h))
	h.Status.Leases = nil
	must(t, env.Client.Status().Update(context.Background(), h))
	waitFor(t, "the lease of "+o.host.Name+" to go", func() bool {
		_, ok := leases.AddressOf(mustMAC(t, o.host.Spec.BootMACs[0]))
		return !ok
	})
}

// TestNoCredentialBeforeTheLease is the reported attack: a Host without a
// static address is being provisioned, and its own DHCP has not completed.
// Whoever asks for its script (from any address) got its boot credential,
// and with it the config: the bootstrap token and the agent credential. In
// full DHCP mode a MAC without a lease now gets no credential, and a config
// request for a MAC without one is refused without spending the credential.
func TestNoCredentialBeforeTheLease(t *testing.T) {
	needAPIServer(t)
	f := newFixture(t)
	mac := newMAC()
	o := f.create(t, "nolease-01", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}}, "b-1")
	for _, from := range []string{otherAddr, hostAddr} {
		if s := f.script(t, from, mac); s != string(httpboot.ExitScript()) || strings.Contains(s, "cred=") {
			t.Fatalf("script for a MAC without a lease, from %s:\n%s", from, s)
		}
	}
	if bc := hostStatus(t, o).BootCredential; bc != nil {
		t.Fatalf("a credential was issued for a MAC without a lease: %+v", bc)
	}
	// Its DHCP completes: the real host gets the credential (it used to
	// get second_request, the attacker having taken it).
	h := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(o.host), h))
	h.Status.Leases = []metalv1.DHCPLease{{MAC: mac, IP: "127.0.0.8", ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour))}}
	must(t, env.Client.Status().Update(context.Background(), h))
	waitFor(t, "the lease of "+mac, func() bool {
		a, ok := leases.AddressOf(mustMAC(t, mac))
		return ok && a.String() == "127.0.0.8"
	})
	if s := f.script(t, "127.0.0.8", mac); !credRe.MatchString(s) {
		t.Fatalf("the host at its new lease got no credential:\n%s", s)
	}

	// The config side: a credential the Host got from its lease, asked for
	// once the lease is gone (or on a replica that does not know it), from
	// elsewhere: refused, not spent, no token.
	o2 := f.create(t, "nolease-02", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{newMAC()}, leaseIP: "127.0.0.3"}, "b-1")
	mac2 := o2.host.Spec.BootMACs[0]
	m := credRe.FindStringSubmatch(f.script(t, "127.0.0.3", mac2))
	if m == nil {
		t.Fatal("the leased address got no credential")
	}
	waitCredential(t, o2, hostStatus(t, o2).BootCredential.Hash)
	clearLeases(t, o2)
	url := configserver.IgnitionURL(f.base()+"/config/", mac2, m[1])
	if code, body := f.get(t, otherAddr, url); code != http.StatusForbidden || body != "" {
		t.Fatalf("config for a MAC without a lease: HTTP %d %q, want a bare 403", code, body)
	}
	if bc := hostStatus(t, o2).BootCredential; bc.ConsumedAt != nil {
		t.Fatalf("the refused request spent the credential: %+v", bc)
	}
	if n := len(tokens(t, o2)); n != 0 {
		t.Fatalf("the refused request minted %d tokens", n)
	}
}

// TestOutsidersCannotTellMACsApart: from an address that is not the MAC's
// lease, an unknown MAC, an idle Host's, a provisioning Host's and a
// provisioning Host's without a lease get byte-identical answers, the one
// an idle host gets (so an idle host still boots from its disk).
func TestOutsidersCannotTellMACsApart(t *testing.T) {
	needAPIServer(t)
	f := newFixture(t)
	spec := func(lease string) hostSpec {
		return hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{newMAC()}, leaseIP: lease}
	}
	idle := f.create(t, "outsider-idle", spec(hostAddr), "b-1")
	setState(t, idle, metalv1.HostProvisioned)
	prov := f.create(t, "outsider-prov", spec(hostAddr), "b-1")
	nolease := f.create(t, "outsider-nolease", spec(""), "b-1")
	cases := map[string]string{
		"unknown MAC":                     newMAC(),
		"idle Host":                       idle.host.Spec.BootMACs[0],
		"provisioning Host":               prov.host.Spec.BootMACs[0],
		"provisioning Host without lease": nolease.host.Spec.BootMACs[0],
	}
	var first answer
	var firstName string
	for name, mac := range cases {
		a := f.do(t, http.MethodGet, otherAddr, f.base()+"/boot/"+mac+".ipxe")
		if a.code != http.StatusOK {
			t.Fatalf("%s: %s", name, a)
		}
		if firstName == "" {
			first, firstName = a, name
			continue
		}
		if !a.equal(first) {
			t.Errorf("an outsider tells %s from %s:\n%s\n---\n%s", name, firstName, a, first)
		}
	}
	// The idle host itself gets the same: exit to its disk.
	if a := f.do(t, http.MethodGet, hostAddr, f.base()+"/boot/"+idle.host.Spec.BootMACs[0]+".ipxe"); !a.equal(first) || a.body != string(httpboot.ExitScript()) {
		t.Errorf("the idle host from its lease:\n%s", a)
	}
	// Only the provisioning Host at its lease gets its credential.
	if s := f.script(t, hostAddr, prov.host.Spec.BootMACs[0]); credRe.FindStringSubmatch(s) == nil {
		t.Fatalf("the provisioning host at its lease got no credential:\n%s", s)
	}
	if got := f.counter(t, "anvil_boot_script_credentials_total", "result", delivery.ResultWrongAddress); got != 2 {
		t.Errorf("wrong_address = %v, want 2 (the two provisioning Hosts)", got)
	}
}

// TestScriptRequestsRateLimitedPerSource: one address walking MACs is
// throttled (429, whatever the MAC), others are not.
func TestScriptRequestsRateLimitedPerSource(t *testing.T) {
	needAPIServer(t)
	f := newFixtureWith(t, func(o *delivery.WireOptions) { o.ScriptRate = delivery.ScriptRate{} }) // the defaults
	prov := f.create(t, "rate-prov", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{newMAC()}, leaseIP: hostAddr}, "b-1")
	const walker = "127.0.0.20"
	for i := 0; i < delivery.DefaultScriptBurst; i++ {
		if a := f.do(t, http.MethodGet, walker, f.base()+"/boot/"+newMAC()+".ipxe"); a.code != http.StatusOK {
			t.Fatalf("request %d of the burst: %s", i, a)
		}
	}
	unknown := f.do(t, http.MethodGet, walker, f.base()+"/boot/"+newMAC()+".ipxe")
	known := f.do(t, http.MethodGet, walker, f.base()+"/boot/"+prov.host.Spec.BootMACs[0]+".ipxe")
	if unknown.code != http.StatusTooManyRequests || unknown.header.Get("Retry-After") == "" || !unknown.equal(known) {
		t.Fatalf("after the burst: %s\n---\n%s\nwant the same 429 for any MAC", unknown, known)
	}
	// The provisioning host, at its own address, is not held up.
	if s := f.script(t, hostAddr, prov.host.Spec.BootMACs[0]); credRe.FindStringSubmatch(s) == nil {
		t.Fatalf("the host at its lease:\n%s", s)
	}
	if got := f.counter(t, "anvil_boot_script_credentials_total", "result", delivery.ResultRateLimited); got != 2 {
		t.Errorf("rate_limited = %v, want 2", got)
	}
}

// TestHeadOnConfigConsumesNothing: Go's mux answers HEAD with the GET
// handler; a HEAD used to verify (consume) the credential and render the
// config, minting the bootstrap token, for a response without a body.
func TestHeadOnConfigConsumesNothing(t *testing.T) {
	needAPIServer(t)
	f := newFixture(t)
	mac := newMAC()
	o := f.create(t, "head-01", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
	m := credRe.FindStringSubmatch(f.script(t, hostAddr, mac))
	if m == nil {
		t.Fatal("no credential")
	}
	waitCredential(t, o, hostStatus(t, o).BootCredential.Hash)
	url := configserver.IgnitionURL(f.base()+"/config/", mac, m[1])
	if a := f.do(t, http.MethodHead, hostAddr, url); a.code != http.StatusMethodNotAllowed {
		t.Fatalf("HEAD: %s, want 405", a)
	}
	if bc := hostStatus(t, o).BootCredential; bc.ConsumedAt != nil {
		t.Fatalf("HEAD consumed the credential: %+v", bc)
	}
	if n := len(tokens(t, o)); n != 0 {
		t.Fatalf("HEAD minted %d tokens", n)
	}
	if code, _ := f.get(t, hostAddr, url); code != http.StatusOK {
		t.Fatalf("GET after HEAD: HTTP %d", code)
	}
}

// TestFailuresFromTheHostsAddressDoNotLockItOut: somebody who can use the
// host's address (shared, or spoofed on the segment) fails until the
// address is out of tokens; the host's valid credential still gets its
// config, guesses still get 429.
func TestFailuresFromTheHostsAddressDoNotLockItOut(t *testing.T) {
	needAPIServer(t)
	f := newFixtureWith(t, func(o *delivery.WireOptions) {
		o.Limiter = ratelimit.New(ratelimit.Options{Burst: 3, Refill: time.Hour})
	})
	mac := newMAC()
	o := f.create(t, "lockout-01", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
	m := credRe.FindStringSubmatch(f.script(t, hostAddr, mac))
	if m == nil {
		t.Fatal("no credential")
	}
	waitCredential(t, o, hostStatus(t, o).BootCredential.Hash)
	guess := configserver.IgnitionURL(f.base()+"/config/", mac, strings.Repeat("A", 43))
	for i := 0; i < 3; i++ {
		if code, _ := f.get(t, hostAddr, guess); code != http.StatusForbidden {
			t.Fatalf("guess %d: HTTP %d, want 403", i, code)
		}
	}
	if code, _ := f.get(t, hostAddr, guess); code != http.StatusTooManyRequests {
		t.Fatalf("guess after the budget: HTTP %d, want 429", code)
	}
	if code, body := f.get(t, hostAddr, configserver.IgnitionURL(f.base()+"/config/", mac, m[1])); code != http.StatusOK {
		t.Fatalf("the host's valid credential from its limited address: HTTP %d %q, want 200", code, body)
	}
}

// TestProxyModeBinding: without a lease store (proxy DHCP), a Host's
// static address binds its credential and config; a Host without one gets
// no credential unless the binding is first-request, where the first
// script request of the boot wins and the config is bound to the address
// that first uses it.
func TestProxyModeBinding(t *testing.T) {
	needAPIServer(t)
	const static = "127.0.0.4"
	f := newProxyFixture(t, func(*delivery.WireOptions) {})
	st := f.create(t, "proxy-static", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{newMAC()}, static: static + "/8"}, "b-1")
	free := f.create(t, "proxy-free", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{newMAC()}}, "b-1")
	stMAC, freeMAC := st.host.Spec.BootMACs[0], free.host.Spec.BootMACs[0]

	if s := f.script(t, otherAddr, stMAC); s != string(httpboot.ExitScript()) {
		t.Fatalf("static-address host's script from elsewhere:\n%s", s)
	}
	for _, from := range []string{otherAddr, static} {
		if s := f.script(t, from, freeMAC); s != string(httpboot.ExitScript()) {
			t.Fatalf("host without a static address, binding %q, from %s:\n%s", delivery.BindAddress, from, s)
		}
	}
	m := credRe.FindStringSubmatch(f.script(t, static, stMAC))
	if m == nil {
		t.Fatal("the static address got no credential")
	}
	waitCredential(t, st, hostStatus(t, st).BootCredential.Hash)
	url := configserver.IgnitionURL(f.base()+"/config/", stMAC, m[1])
	if code, _ := f.get(t, otherAddr, url); code != http.StatusForbidden {
		t.Fatalf("config from elsewhere: HTTP %d, want 403", code)
	}
	if code, _ := f.get(t, static, url); code != http.StatusOK {
		t.Fatalf("config from the static address: HTTP %d", code)
	}

	// first-request: the Host without a static address gets its credential
	// in the first request, its config goes to the first user.
	g := newProxyFixture(t, func(o *delivery.WireOptions) { o.Binding = delivery.BindFirstRequest })
	m = credRe.FindStringSubmatch(g.script(t, "127.0.0.5", freeMAC))
	if m == nil {
		t.Fatal("first-request: no credential")
	}
	if s := g.script(t, "127.0.0.5", freeMAC); credRe.MatchString(s) {
		t.Fatal("first-request: a second credential in the same boot")
	}
	waitCredential(t, free, hostStatus(t, free).BootCredential.Hash)
	url = configserver.IgnitionURL(g.base()+"/config/", freeMAC, m[1])
	// The config is bound to the address the script went to: somebody who
	// read the script off the wire and asks first from elsewhere is
	// refused, and does not spend it.
	if code, _ := g.get(t, "127.0.0.6", url); code != http.StatusForbidden {
		t.Fatalf("first-request: config from another address than the script's: HTTP %d, want 403", code)
	}
	if bc := hostStatus(t, free).BootCredential; bc.ConsumedAt != nil || bc.ScriptServedTo != "127.0.0.5" {
		t.Fatalf("first-request: status.bootCredential %+v, want unconsumed, scriptServedTo 127.0.0.5", bc)
	}
	if code, _ := g.get(t, "127.0.0.5", url); code != http.StatusOK {
		t.Fatalf("first-request: config: HTTP %d", code)
	}
	// Even so, a static address binds.
	if s := g.script(t, otherAddr, stMAC); s != string(httpboot.ExitScript()) {
		t.Fatalf("first-request: static-address host's script from elsewhere:\n%s", s)
	}
}
