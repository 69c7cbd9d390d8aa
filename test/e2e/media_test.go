package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/lab/image"
	"anvil.dev/anvil/test/lab/stack"
)

// TestLabVirtualMedia: a Host with spec.bootMethod VirtualMedia on a
// segment with no DHCP server at all is provisioned through its Redfish
// BMC (the emulator): the BMC gets InsertMedia of Anvil's per-boot ISO
// (the lab downloads it as a BMC does and puts it into the VM's CD drive)
// and a one-time Cd boot; OVMF boots the CD, whose iPXE runs autoexec.ipxe
// with the static address and chains the boot script; the lab image takes
// the kernel's ip= (no DHCP), Ignition fetches the config from the static
// address, and the Node joins Ready. The Host controller then ejects the
// ISO, and the ISO URL, its chained script URL and the config URL with
// the boot credential (seen on the wire) are refused (403). No token or
// credential appears in Anvil's logs or on the serial console.
//
// Over HTTPS too: the BMC fetches the ISO over HTTPS (trusting the boot
// CA), the ISO's iPXE trusts it, and the script, kernel, initrds and
// Ignition's config go over HTTPS; on the wire there is no plain-HTTP
// request at all (so the config URL is not seen and not replayed there).
func TestLabVirtualMedia(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[tls], func(t *testing.T) { labVirtualMedia(t, tls) })
	}
}

func labVirtualMedia(t *testing.T, tls bool) {
	const name = "vm-media"
	e := startBootLab(t, lab.HostOptions{Name: name, VirtualMedia: true}, func(o *stack.Options) { o.NoDHCP, o.TLS = true, tls })
	st := e.st
	ctx := context.Background()
	static := st.Lab.Subnet().Addr().Next().Next() // .2; no DHCP hands anything out here
	for range 48 {
		static = static.Next() // .50
	}
	sniff, err := st.Lab.SniffHTTP(static)
	if err != nil {
		t.Fatal(err)
	}
	defer sniff.Close()

	e.importHosts(name)
	h := e.host(name)
	patch := client.MergeFrom(h.DeepCopy())
	h.Spec.BootMethod = metalv1.BootMethodVirtualMedia
	h.Spec.Network = &metalv1.HostNetwork{Address: netip.PrefixFrom(static, st.Lab.Subnet().Bits()).String(), Gateway: st.Lab.BridgeIP().String()}
	if err := e.c.Patch(ctx, h, patch); err != nil {
		t.Fatal(err)
	}
	e.logf("Host %s: bootMethod VirtualMedia, static address %s", name, h.Spec.Network.Address)
	_, n := e.runMachine("mv")
	e.logf("Node %s Ready, kubelet %s", n.Name, n.Status.NodeInfo.KubeletVersion)

	// The BMC got the ISO; the VM booted it once from its CD.
	var iso string
	for _, r := range st.Lab.MediaRecords() {
		if r.Err != "" {
			t.Errorf("the lab's BMC failed a virtual media %s: %s", map[bool]string{true: "insert", false: "eject"}[r.Inserted], r.Err)
		}
		if r.Inserted && iso == "" {
			iso = r.URL
			e.logf("the BMC got InsertMedia: %d bytes downloaded, attached to a running VM: %t", r.Bytes, r.Attached)
		}
	}
	if iso == "" {
		t.Fatal("the Redfish BMC never got an InsertMedia")
	}
	mac := st.Lab.Hosts()[0].MAC.String()
	serial := e.waitSerial(name,
		"=== anvil lab: power on "+name+", boot cd,", // the one-time Cd boot, as the power hook saw it
		"file:/autoexec.ipxe",                        // iPXE from the CD runs the ISO's script
		"Anvil: virtual media boot of "+mac,          // ... which is Anvil's
		image.MarkerStaticNetwork,                    // the OS took ip=, no DHCP
		image.MarkerKubeletJoined)
	if strings.Contains(serial, image.MarkerDHCP) {
		t.Errorf("the host ran DHCP (%q on its serial console); the boot should need none", image.MarkerDHCP)
	}
	bc := e.host(name).Status.BootCredential
	if bc == nil || bc.ConsumedAt == nil || bc.ConsumedFrom != static.String() || bc.ScriptServedTo != static.String() {
		t.Fatalf("boot credential: %+v; want its script served to and its config fetched from the static address %s", bc, static)
	}
	e.logf("boot script served to %s, config fetched from %s", bc.ScriptServedTo, bc.ConsumedFrom)

	// The boot is over: the ISO is ejected, by the BMC and from the VM.
	e.waitFor(3*time.Minute, "the ISO ejected", func(ctx context.Context) (bool, string) {
		vm := e.host(name).Status.VirtualMedia
		ejected := false
		for _, r := range st.Lab.MediaRecords() {
			ejected = ejected || !r.Inserted
		}
		return ejected && vm != nil && vm.EjectedAt != nil, fmt.Sprintf("status.virtualMedia %+v, BMC ejected %t", vm, ejected)
	})

	// Replays are refused: the ISO, the script it chains, and the config
	// URL with the boot credential the VM sent (seen on the wire, over
	// plain HTTP; over HTTPS nothing is).
	token := strings.TrimSuffix(iso[strings.LastIndex(iso, "/")+1:], ".iso")
	base := "http://" + st.Lab.BridgeIP().String()
	if tls {
		base = "https://" + st.Lab.BridgeIP().String()
	}
	if !strings.HasPrefix(iso, base+"/media/") || len(token) < 16 {
		t.Fatalf("the BMC was given an ISO URL (%d characters) not under %s/media/", len(iso), base)
	}
	script := "/media/" + token + ".ipxe"
	var config string
	var plain []string
	sawScript := false
	for _, l := range sniff.Requests() {
		f := strings.Fields(l)
		plain = append(plain, f[0]+" "+strings.SplitN(f[1], "?", 2)[0])
		switch {
		case strings.Contains(f[1], "/ignition?"):
			config = f[1]
		case f[1] == script:
			sawScript = true
		}
	}
	replays := map[string]string{"the ISO URL": iso, "the ISO's script URL": base + script}
	switch {
	case tls && len(plain) > 0:
		t.Errorf("over HTTPS the host sent %d plain-HTTP requests: %v", len(plain), plain)
	case !tls && (config == "" || !sawScript):
		t.Fatalf("from %s the bridge saw no config request (%t) or no chained script request (%t)", static, config != "", sawScript)
	case !tls:
		replays["the config URL with the used credential"] = base + config
	}
	for what, u := range replays {
		if code, err := e.labStatus(ctx, u); err != nil || code != http.StatusForbidden {
			t.Errorf("GET of %s after the boot: %d (%v), want 403", what, code, err)
		} else {
			e.logf("GET of %s after the boot: 403", what)
		}
	}

	// No token or credential in Anvil's logs, no credential on the console
	// (iPXE prints the URLs it fetches: the chained script's holds the
	// token, which is dead by now). Over HTTPS the credential is not known
	// here.
	cred := ""
	if !tls {
		cred = config[strings.Index(config, "?")+1:]
		cred = cred[strings.Index(cred, "=")+1:]
		if c, err := url.QueryUnescape(cred); err == nil {
			cred = c
		}
		if len(cred) < 16 {
			t.Fatalf("the credential (%d characters) was not found", len(cred))
		}
	}
	for _, p := range []string{st.LogPath("controllers"), st.LogPath("netboot"), st.Lab.SerialLog(name)} {
		b := readFile(t, p)
		if cred != "" && strings.Contains(b, cred) {
			t.Errorf("%s holds the boot credential", p)
		}
		if strings.Contains(b, token) && p != st.Lab.SerialLog(name) {
			t.Errorf("%s holds the media token", p)
		}
	}
}

// labStatus GETs u from inside the lab's namespace and returns the status;
// errors leave u out (it holds a token or a credential).
func (e *e2e) labStatus(ctx context.Context, u string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c := e.st.Lab.HTTPClient()
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, errors.New("the URL does not parse")
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// waitSerial waits (a minute at most) until the host's serial console
// shows every one of wants, and returns it: the lab image prints its
// kubelet markers on a 2 s poll, so a Node may be Ready first.
func (e *e2e) waitSerial(host string, wants ...string) string {
	e.t.Helper()
	var serial string
	e.waitFor(time.Minute, "the boot's steps on the serial console of "+host, func(context.Context) (bool, string) {
		serial = readFile(e.t, e.st.Lab.SerialLog(host))
		for _, w := range wants {
			if !strings.Contains(serial, w) {
				return false, "it lacks " + w
			}
		}
		return true, ""
	})
	return serial
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
