package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"anvil.dev/anvil/test/lab"
	"anvil.dev/anvil/test/lab/image"
	"anvil.dev/anvil/test/lab/stack"
)

// TestLabIPv6: a UEFI host on an IPv6-only segment (no DHCPv4 server, PXEv4
// off in its firmware; router advertisements with the M flag), with the
// boot server on HTTPS only, is provisioned to a Ready Node whose address
// is IPv6: OVMF's PXEv6 gets tftp://[anvil]/ipxe.efi from Anvil's DHCPv6
// (the iPXE build that trusts the boot CA), iPXE gets its script over
// HTTPS on IPv6 (the boot credential bound to the host's DHCPv6 lease),
// the kernel and initrd too, the OS takes ip=dhcp6 (dhclient -6 gets the
// same address, leased by MAC) and the CA from its initrd, Ignition fetches
// the config over HTTPS and the kubelet joins the API server at its IPv6
// address. Nothing goes over plain HTTP: a sniffer on the segment sees no
// request line.
func TestLabIPv6(t *testing.T) {
	const name = "vm-v6"
	e := startBootLab(t, lab.HostOptions{Name: name}, func(o *stack.Options) { o.IPv6, o.TLS = true, true })
	st := e.st
	subnet6 := st.Lab.Subnet6()
	sniff, err := st.Lab.SniffHTTPFrom(subnet6)
	if err != nil {
		t.Fatal(err)
	}
	defer sniff.Close()
	e.importHosts(name)
	_, n := e.runMachine("m6")
	var internal []string
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		internal = append(internal, a.Address)
		if ip, err := netip.ParseAddr(a.Address); err != nil || !subnet6.Contains(ip) {
			t.Errorf("Node %s has InternalIP %s, want only addresses of the IPv6 segment %s", n.Name, a.Address, subnet6)
		}
	}
	if len(internal) == 0 {
		t.Fatalf("Node %s has no InternalIP: %+v", n.Name, n.Status.Addresses)
	}
	e.logf("Node %s Ready, kubelet %s, InternalIP %v", n.Name, n.Status.NodeInfo.KubeletVersion, internal)

	// The credential went to, and was used from, the host's DHCPv6 address.
	bc := e.host(name).Status.BootCredential
	if bc == nil || bc.ConsumedAt == nil {
		t.Fatalf("boot credential not used: %+v", bc)
	}
	served, err1 := netip.ParseAddr(bc.ScriptServedTo)
	used, err2 := netip.ParseAddr(bc.ConsumedFrom)
	if err1 != nil || err2 != nil || !subnet6.Contains(served) || used != served || !strings.Contains(strings.Join(internal, " "), used.String()) {
		t.Fatalf("boot credential served to %q and used from %q; want the same address of %s, the Node's (%v)", bc.ScriptServedTo, bc.ConsumedFrom, subnet6, internal)
	}
	e.logf("boot script served to and config fetched from %s", used)
	// The DHCPv6 lease is kept in the Host's status (for a restart).
	e.waitFor(time.Minute, "the DHCPv6 lease in status.leases6", func(context.Context) (bool, string) {
		l6 := e.host(name).Status.Leases6
		return len(l6) == 1 && l6[0].MAC == st.Lab.Hosts()[0].MAC.String() && l6[0].IP == used.String() && l6[0].DUID != "", fmt.Sprintf("%+v", l6)
	})

	// Everything over HTTPS: the request lines a plain-HTTP client would
	// send (they hold credentials: only their count and paths are shown).
	if reqs := sniff.Requests(); len(reqs) > 0 {
		var paths []string
		for _, r := range reqs {
			f := strings.Fields(r)
			paths = append(paths, f[0]+" "+strings.SplitN(f[1], "?", 2)[0])
		}
		t.Errorf("%d plain-HTTP requests from the host's segment; want none with HTTPS: %v", len(reqs), paths)
	}
	serial := e.waitSerial(name,
		"PXE over IPv6", // OVMF's IPv6 PXE client
		"https://["+st.Lab.BridgeIP6().String()+"]/", // iPXE's script and artifacts over HTTPS on IPv6
		image.MarkerDHCP6,
		image.MarkerConfigApplied,
		image.MarkerKubeletJoined)
	if strings.Contains(serial, image.MarkerDHCP) {
		t.Errorf("the host ran DHCPv4 (%q on its serial console) on an IPv6-only segment", image.MarkerDHCP)
	}
}
