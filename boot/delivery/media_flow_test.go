package delivery_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/boot/bootcred"
	"anvil.dev/anvil/boot/delivery"
	"anvil.dev/anvil/boot/media"
)

// TestVirtualMediaBootFlow: a VirtualMedia Host whose status.virtualMedia
// names a token (as the Host controller records it): the BMC (any
// address) gets the ISO, which chains /media/<token>.ipxe; from the static
// address that is the PXE path's script with the boot credential and ip=.
// Once the credential is used the ISO and script URLs answer 403, and the
// credential is refused after its grace window as today's; the token is in
// no log line.
func TestVirtualMediaBootFlow(t *testing.T) {
	needAPIServer(t)
	const static = "127.0.0.5"
	const bmcAddr = "127.0.0.6"
	f := newProxyFixture(t, func(*delivery.WireOptions) {})
	mac := newMAC()
	o := f.create(t, "vm-media", hostSpec{classFile: "machineclass-cloudinit.yaml", version: "v1.37.2", macs: []string{mac}, static: static + "/8", live: true}, "b-1")
	ctx := context.Background()
	token, hash, err := media.NewToken()
	must(t, err)
	h := &metalv1.Host{}
	must(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o.host), h))
	h.Spec.BootMethod = metalv1.BootMethodVirtualMedia
	must(t, env.Client.Update(ctx, h))
	now := metav1.Now()
	h.Status.VirtualMedia = &metalv1.HostVirtualMedia{TokenHash: hash, BootRequestID: "b-1", InsertedAt: &now}
	must(t, env.Client.Status().Update(ctx, h))
	waitFor(t, "the cache to find the Host by token hash", func() bool {
		var l metalv1.HostList
		err := mgr.GetClient().List(ctx, &l, client.MatchingFields{delivery.IndexMediaTokenHash: hash})
		return err == nil && len(l.Items) == 1 && l.Items[0].Spec.BootMethod == metalv1.BootMethodVirtualMedia
	})

	isoURL := f.base() + media.Path(token)
	code, iso := f.get(t, bmcAddr, isoURL)
	scriptURL := f.base() + "/media/" + token + ".ipxe"
	if code != http.StatusOK || !strings.Contains(iso, "chain --replace --autofree "+scriptURL) || !strings.Contains(iso, "set net${idx}/ip "+static) {
		t.Fatalf("ISO: HTTP %d, %d bytes, without the chain to its script or the static address", code, len(iso))
	}
	if code, s := f.get(t, bmcAddr, scriptURL); code != http.StatusOK || strings.Contains(s, "nocloud") {
		t.Fatalf("the script from elsewhere than the static address: HTTP %d, with a credential:\n%s", code, s)
	}
	code, script := f.get(t, static, scriptURL)
	m := regexp.MustCompile(` ds=nocloud-net;s=(\S+/nocloud/([A-Za-z0-9_-]{43})/)\s`).FindStringSubmatch(script)
	if code != http.StatusOK || m == nil || !strings.Contains(script, " ip="+static+":::255.0.0.0:::off") {
		t.Fatalf("the boot's script: HTTP %d\n%s", code, script)
	}
	seed, cred := m[1], m[2]
	waitCredential(t, o, bootcred.HashCredential(cred))
	if code, _ := f.get(t, static, seed+"meta-data"); code != http.StatusOK {
		t.Fatalf("meta-data with the ISO's credential: HTTP %d", code)
	}
	waitFor(t, "the cache to see the credential used", func() bool {
		var l metalv1.HostList
		err := mgr.GetClient().List(ctx, &l, client.MatchingFields{delivery.IndexMediaTokenHash: hash})
		return err == nil && len(l.Items) == 1 && l.Items[0].Status.BootCredential != nil && l.Items[0].Status.BootCredential.ConsumedAt != nil
	})
	for _, u := range []string{isoURL, scriptURL} {
		if code, _ := f.get(t, bmcAddr, u); code != http.StatusForbidden {
			t.Errorf("%s after the boot: HTTP %d, want 403", strings.TrimPrefix(u, f.base()), code)
		}
	}
	f.clock.Advance(bootcred.DefaultGrace + time.Second)
	if code, _ := f.get(t, static, seed+"meta-data"); code != http.StatusForbidden {
		t.Errorf("the ISO's credential used again: HTTP %d, want 403", code)
	}
	if logs := f.logs.String(); strings.Contains(logs, token) || strings.Contains(logs, cred) {
		t.Error("the logs hold the media token or the credential")
	} else if !strings.Contains(logs, "/media/sha256-"+hash[:12]+".iso") {
		t.Errorf("the access log does not show the redacted media path")
	}
}
