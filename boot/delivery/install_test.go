package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"anvil.dev/anvil/agent"
	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/configserver"
	"anvil.dev/anvil/pxe/httpboot"
)

// post sends a JSON body from the address from.
func (f *fixture) post(t *testing.T, from, url string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	must(t, err)
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Post(url, "application/json", bytes.NewReader(b))
	must(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, out
}

var installArgRe = regexp.MustCompile(` ` + regexp.QuoteMeta(agent.InstallArg) + `=(\S+)`)

// TestInstallFlow: a class with spec.image boots an installer. It checks in
// with the boot credential (without spending it), gets the disk the Host's
// rootDeviceHints pick, the image and the seed URL, reports the image
// written; from then on the Host's script exits to the disk, no new
// credential is issued, and the installed OS's cloud-init gets its seed
// with the one it was handed.
func TestInstallFlow(t *testing.T) {
	needAPIServer(t)
	f := newFixture(t)
	mac := newMAC()
	o := f.create(t, "inst-01", hostSpec{classFile: "machineclass-cloudinit.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")

	s := f.script(t, hostAddr, mac)
	m := installArgRe.FindStringSubmatch(s)
	if m == nil || strings.Contains(s, "ds=nocloud") || strings.Contains(s, "ignition.") {
		t.Fatalf("install script:\n%s", s)
	}
	planURL := m[1]
	hash := hostStatus(t, o).BootCredential.Hash
	waitCredential(t, o, hash)

	disks := agent.InstallRequest{BootID: "boot-a", Disks: []agent.Disk{
		{Name: "sdb", SizeBytes: 8 << 30, Removable: true}, // a USB stick: never picked without a hint naming it
		{Name: "vdb", SizeBytes: 200 << 30},
		{Name: "vda", SizeBytes: 20 << 30},
	}}
	// From another address: refused, nothing spent.
	if code, _ := f.post(t, otherAddr, planURL, disks); code != http.StatusForbidden {
		t.Fatalf("plan from another address: HTTP %d, want 403", code)
	}
	code, body := f.post(t, hostAddr, planURL, disks)
	if code != http.StatusOK {
		t.Fatalf("plan: HTTP %d: %s", code, body)
	}
	var plan agent.InstallPlan
	must(t, json.Unmarshal(body, &plan))
	if err := plan.Validate(); err != nil {
		t.Fatal(err)
	}
	cred := regexp.MustCompile(`cred=([A-Za-z0-9_-]{43})`).FindStringSubmatch(planURL)[1]
	if plan.Device != "vda" || plan.Image.SHA256 != o.class.Spec.Image.SHA256 ||
		!strings.HasPrefix(plan.Image.URL, f.base()+"/artifacts/") ||
		plan.SeedURL != configserver.NoCloudSeedURL(f.base()+"/config/", mac, cred) {
		t.Fatalf("plan %+v", plan)
	}
	if st := hostStatus(t, o); st.BootCredential.ConsumedAt != nil {
		t.Fatal("the plan request spent the boot credential")
	}
	// A second check-in (an installer that restarted) is still answered.
	if code, _ := f.post(t, hostAddr, planURL, disks); code != http.StatusOK {
		t.Fatalf("second plan request: HTTP %d", code)
	}
	// GET is not how the plan is asked for.
	if code, _ := f.get(t, hostAddr, planURL); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET plan: HTTP %d, want 405", code)
	}

	resultURL, err := agent.InstallResultURL(planURL)
	must(t, err)
	// The Host as a cache that has not seen the result yet will hand it
	// over, below.
	stale := &metalv1.Host{}
	must(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(o.host), stale))
	res := agent.InstallResult{BootID: "boot-a", Outcome: agent.InstallSucceeded, Device: "vda", SHA256: plan.Image.SHA256, BytesWritten: 3 << 30}
	if code, body := f.post(t, hostAddr, resultURL, res); code != http.StatusNoContent {
		t.Fatalf("result: HTTP %d: %s", code, body)
	}
	st := hostStatus(t, o)
	in := st.Install
	c := meta.FindStatusCondition(st.Conditions, metalv1.ConditionInstalled)
	if in == nil || in.BootRequestID != "b-1" || in.Outcome != metalv1.InstallInstalled || in.Device != "vda" || in.ImageSHA256 != plan.Image.SHA256 ||
		c == nil || c.Status != "True" {
		t.Fatalf("install status %+v, condition %+v", in, c)
	}
	// A late, contradicting post does not undo the recorded outcome.
	late := agent.InstallResult{BootID: "boot-a", Outcome: agent.InstallFailed, Reason: agent.InstallWriteFailed, Message: "late"}
	if code, _ := f.post(t, hostAddr, resultURL, late); code != http.StatusNoContent {
		t.Fatalf("late result: HTTP %d", code)
	}
	if got := hostStatus(t, o).Install; got.Outcome != metalv1.InstallInstalled {
		t.Fatalf("late result overwrote the install: %+v", got)
	}
	// Nor when the late post is checked against a cache still behind the
	// first outcome (a loaded machine): the write is a compare-and-swap,
	// and the re-read Host has the outcome.
	if stale.Status.Install != nil {
		t.Fatalf("the Host read before the result already has an install: %+v", stale.Status.Install)
	}
	if err := f.wiring.Configs.RecordInstall(context.Background(), stale, late); err != nil {
		t.Fatalf("late result against a stale Host: %v", err)
	}
	if got := hostStatus(t, o).Install; got.Outcome != metalv1.InstallInstalled || got.Reason != "" {
		t.Fatalf("late result against a stale Host overwrote the install: %+v", got)
	}

	// The reboot: iPXE asks again and is sent to the disk; the credential
	// is still the one the installed OS holds.
	waitFor(t, "the cache to see the install", func() bool {
		var h metalv1.Host
		return mgr.GetClient().Get(context.Background(), client.ObjectKeyFromObject(o.host), &h) == nil && h.Status.Install != nil
	})
	if got := f.script(t, hostAddr, mac); got != string(httpboot.ExitScript()) {
		t.Fatalf("script after the install:\n%s", got)
	}
	if st := hostStatus(t, o).BootCredential; st.Hash != hash || st.ConsumedAt != nil {
		t.Fatalf("boot credential changed after the install: %+v", st)
	}
	// First boot from disk: cloud-init fetches the seed, spending it.
	code, ud := f.get(t, hostAddr, plan.SeedURL+"user-data")
	if code != http.StatusOK || !strings.HasPrefix(ud, "#cloud-config") || tokenRe.FindStringSubmatch(ud) == nil {
		t.Fatalf("user-data from the installed OS: HTTP %d\n%s", code, ud)
	}
	if st := hostStatus(t, o).BootCredential; st.ConsumedAt == nil || st.ConsumedFrom != hostAddr {
		t.Fatalf("the seed fetch did not use the credential: %+v", st)
	}
	// And now the installer's URL is dead.
	if code, _ := f.post(t, hostAddr, planURL, disks); code != http.StatusForbidden {
		t.Fatalf("plan after the OS used the credential: HTTP %d, want 403", code)
	}
	if logs := f.logs.String(); strings.Contains(logs, cred) {
		t.Fatal("logs contain the boot credential")
	}
}

// TestInstallNoRootDevice: hints no disk meets end the install with a
// message naming the hint and the disks, on the Host and to the installer.
func TestInstallNoRootDevice(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	f := newFixture(t)
	mac := newMAC()
	o := f.create(t, "inst-02", hostSpec{classFile: "machineclass-cloudinit.yaml", version: "v1.37.2", macs: []string{mac}, leaseIP: hostAddr}, "b-1")
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.host), h))
	h.Spec.RootDeviceHints = &metalv1.RootDeviceHints{MinSizeGigabytes: 500}
	must(t, env.Client.Update(ctx, h))
	waitFor(t, "the cache to see the hints", func() bool {
		var got metalv1.Host
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(h), &got) == nil && got.Spec.RootDeviceHints != nil
	})

	m := installArgRe.FindStringSubmatch(f.script(t, hostAddr, mac))
	if m == nil {
		t.Fatal("no install argument in the script")
	}
	waitCredential(t, o, hostStatus(t, o).BootCredential.Hash)
	code, body := f.post(t, hostAddr, m[1], agent.InstallRequest{BootID: "x", Disks: []agent.Disk{{Name: "vda", SizeBytes: 20 << 30}}})
	var er agent.ErrorResponse
	_ = json.Unmarshal(body, &er)
	if code != http.StatusUnprocessableEntity || !strings.Contains(er.Error, "minSizeGigabytes=500") || !strings.Contains(er.Error, "vda 20.0 GiB") {
		t.Fatalf("plan: HTTP %d %s", code, body)
	}
	st := hostStatus(t, o)
	c := meta.FindStatusCondition(st.Conditions, metalv1.ConditionInstalled)
	if st.Install == nil || st.Install.Outcome != metalv1.InstallFailed || st.Install.Reason != metalv1.InstallNoRootDevice ||
		c == nil || c.Status != "False" || c.Reason != string(metalv1.InstallNoRootDevice) || !strings.Contains(c.Message, "spec.rootDeviceHints") {
		t.Fatalf("install status %+v, condition %+v", st.Install, c)
	}
	if st.BootCredential.ConsumedAt != nil {
		t.Fatal("a refused install spent the credential")
	}
	_ = bootcred.HostKey{}
}
