package delivery_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/httpboot"
	"anvil.dev/anvil/pxe/index"
)

// rejoin puts the Host where its Machine controller and Host controller
// leave a provisioned diskless Host: Provisioned, with an acknowledged
// Rejoin request id, and its Machine's Node reporting kubelet running.
func rejoin(t *testing.T, o objects, id, running string) {
	t.Helper()
	ctx := context.Background()
	m := &metalv1.Machine{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.machine), m))
	m.Status.Version = running
	must(t, env.Client.Status().Update(ctx, m))
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.host), h))
	h.Spec.BootRequest = &metalv1.BootRequest{ID: id, Purpose: metalv1.BootPurposeRejoin}
	must(t, env.Client.Update(ctx, h))
	h.Status.State, h.Status.BootRequestID = metalv1.HostProvisioned, id
	must(t, env.Client.Status().Update(ctx, h))
	waitFor(t, "the index and cache to see the rejoin "+id, func() bool {
		cached := &metalv1.Machine{}
		if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(m), cached); err != nil || cached.Status.Version != running {
			return false
		}
		h, ok := ix.Host(mustMAC(t, o.host.Spec.BootMACs[0]))
		return ok && index.Decide(h).PXE && h.Status.BootRequestID == id
	})
}

// TestRejoinAfterARolledBackUpgrade: a provisioned diskless Host armed for
// a rejoin gets one credential per request ID, and its config installs the
// kubelet its Node last ran, not spec.version: a failed in-place upgrade
// rolled back from there. A class with spec.image never rejoins by network
// boot: its script exits to the disk, with no credential.
func TestRejoinAfterARolledBackUpgrade(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	f := newFixture(t)
	mac := newMAC()
	o := f.create(t, "rejoin-01", hostSpec{classFile: "machineclass-fcos.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "p-1")
	// The class lists the version the upgrade came from too.
	c := o.class.DeepCopy()
	old := c.Spec.Kubelets[0]
	old.Version, old.SHA256 = "v1.36.3", strings.Repeat("3", 64)
	c.Spec.Kubelets = append(c.Spec.Kubelets, old)
	must(t, env.Client.Update(ctx, c))
	waitFor(t, "the cache to see the class's second kubelet", func() bool {
		got := &metalv1.MachineClass{}
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(c), got) == nil && len(got.Spec.Kubelets) == 2
	})
	rejoin(t, o, "j-1", "v1.36.3")

	s := f.script(t, hostAddr, mac)
	m := credRe.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("rejoin script has no credential:\n%s", s)
	}
	if st := hostStatus(t, o).BootCredential; st == nil || st.BootRequestID != "j-1" || st.ScriptServedTo != hostAddr {
		t.Fatalf("status.bootCredential after the rejoin script = %+v", st)
	}
	if again := f.script(t, hostAddr, mac); strings.Contains(again, "cred=") || !strings.Contains(again, "(second_request)") {
		t.Fatalf("second script of the rejoin boot:\n%s", again)
	}
	url := strings.SplitN(strings.SplitN(s, "ignition.config.url=", 2)[1], " ", 2)[0]
	var body string
	waitFor(t, "the rejoin config", func() bool {
		var code int
		code, body = f.get(t, hostAddr, url)
		return code == http.StatusOK
	})
	unit := unitContents(t, parseIgnition(t, body), "kubelet.service")
	if !strings.Contains(unit, "Description=kubelet v1.36.3") {
		t.Fatalf("rejoin kubelet.service is not the running v1.36.3:\n%s", unit)
	}
	kubelet := file(t, parseIgnition(t, body), "/opt/bin/kubelet")
	if src := kubelet.Contents.Source; src == nil || !strings.Contains(*src, "/kubelet/v1.36.3/") {
		t.Fatalf("rejoin kubelet source %v, want the v1.36.3 artifact", src)
	}
	if len(tokens(t, o)) != 1 {
		t.Fatal("the rejoin config minted no bootstrap token")
	}

	// The next arming gets a new credential.
	rejoin(t, o, "j-2", "v1.36.3")
	s2 := f.script(t, hostAddr, mac)
	if m2 := credRe.FindStringSubmatch(s2); m2 == nil || m2[1] == m[1] {
		t.Fatalf("script of the next rejoin: want a new credential:\n%s", s2)
	}

	// An image class armed by hand: the disk boots, nothing is issued.
	disk := f.create(t, "rejoin-02", hostSpec{classFile: "machineclass-cloudinit.yaml", version: "v1.37.2", macs: []string{newMAC()}, leaseIP: otherAddr}, "p-1")
	rejoin(t, disk, "j-1", "v1.37.2")
	if got := f.script(t, otherAddr, disk.host.Spec.BootMACs[0]); got != string(httpboot.ExitScript()) {
		t.Fatalf("rejoin script of an image class:\n%s", got)
	}
	if st := hostStatus(t, disk).BootCredential; st != nil {
		t.Fatalf("an image class's rejoin issued a credential: %+v", st)
	}
}
