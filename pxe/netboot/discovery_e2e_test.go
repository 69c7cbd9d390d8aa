package netboot_test

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/inventory"
	"anvil.dev/anvil/pxe/index"
	"anvil.dev/anvil/test/netnstest"
)

// newSegment is a server and a client namespace with the directories the
// services need, and a registry to read their metrics from.
func newSegment(t *testing.T) (*e2e, *prometheus.Registry) {
	netnstest.RequireRoot(t)
	netnstest.RequireCommands(t, "busybox", "ip")
	e := &e2e{pair: netnstest.NewPair(t, netnstest.PairOptions{}), ns: env.Namespace(t), dir: t.TempDir()}
	for _, d := range []string{"tftp", "artifacts"} {
		must(t, os.MkdirAll(filepath.Join(e.dir, d), 0o755))
	}
	return e, prometheus.NewRegistry()
}

// attacker makes the client namespace another machine on the segment (its
// own MAC and address) and returns a sender of DHCP packets to the server:
// chaddr is just a field, so claiming any MAC needs no raw socket.
func (e *e2e) attacker(t *testing.T) func(*dhcpv4.DHCPv4) {
	t.Helper()
	e.pair.SetCliMAC(t, randMAC(t))
	src := e.addr(200)
	e.pair.Cli.Exec(t, "ip", "addr", "add", netip.PrefixFrom(src, 24).String(), "dev", e.pair.CliIf)
	var conn *net.UDPConn
	must(t, e.pair.Cli.Do(func() (err error) {
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IP(src.AsSlice()), Port: 68})
		return err
	}))
	t.Cleanup(func() { conn.Close() })
	dst := &net.UDPAddr{IP: net.IP(e.pair.SrvIP.AsSlice()), Port: 67}
	return func(p *dhcpv4.DHCPv4) {
		t.Helper()
		if _, err := conn.WriteToUDP(p.ToBytes(), dst); err != nil {
			t.Fatal(err)
		}
	}
}

// pxeDiscover is a BIOS PXE ROM's DISCOVER for chaddr.
func pxeDiscover(t *testing.T, chaddr net.HardwareAddr) *dhcpv4.DHCPv4 {
	t.Helper()
	p, err := dhcpv4.NewDiscovery(chaddr, dhcpv4.WithOption(dhcpv4.OptClientArch(iana.Arch(0))),
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001")))
	must(t, err)
	return p
}

// metric sums the series of a counter family with label result=result.
func metric(t *testing.T, reg *prometheus.Registry, name, result string) float64 {
	t.Helper()
	return metricBy(t, reg, name, "result", result)
}

// metricBy sums the series of a counter family with label key=value.
func metricBy(t *testing.T, reg *prometheus.Registry, name, key, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	must(t, err)
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == key && l.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// discoveredHosts counts the discovered, unaccepted Hosts everywhere.
func discoveredHosts(t *testing.T) int {
	t.Helper()
	var list metalv1.HostList
	must(t, env.Client.List(context.Background(), &list, client.MatchingLabels{index.LabelDiscovered: "true"}))
	n := 0
	for i := range list.Items {
		if inventory.YieldsMAC(&list.Items[i]) {
			n++
		}
	}
	return n
}

func gone(key client.ObjectKey) bool {
	return apierrors.IsNotFound(env.Client.Get(context.Background(), key, &metalv1.Host{}))
}

// TestSpoofedDiscoverDoesNotSquatAMAC: an attacker's DISCOVER for a MAC
// creates a discovered Host; the Host the admin then registers with that
// MAC owns it (DHCP answers it), and the discovered one is deleted.
func TestSpoofedDiscoverDoesNotSquatAMAC(t *testing.T) {
	ctx := context.Background()
	e, reg := newSegment(t)
	o := e.options(t)
	o.Registerer = reg
	comp, _ := e.start(t, o)

	victim := randMAC(t)
	send := e.attacker(t)
	send(pxeDiscover(t, victim))
	squat := client.ObjectKey{Namespace: e.ns, Name: index.DiscoveredHostName(victim)}
	waitFor(t, "the spoofed DISCOVER created a Host", func() bool { return !gone(squat) })

	must(t, env.Client.Create(ctx, &metalv1.Host{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "node-7"},
		Spec:       metalv1.HostSpec{BMC: metalv1.BMC{Address: "manual://lab"}, BootMACs: []string{victim.String()}},
	}))
	waitFor(t, "the admin's Host owns the MAC in the index", func() bool {
		h, ok := comp.Index.Host(victim)
		return ok && h.Name == "node-7"
	})
	waitFor(t, "the discovered Host is deleted", func() bool { return gone(squat) })
	got, err := e.udhcpc(t, victim, biosPXE...)
	if err != nil || got["ip"] == "" {
		t.Fatalf("the admin's Host gets no address: %v %v", got, err)
	}
	waitFor(t, "the deletion counted", func() bool { return metric(t, reg, "anvil_discovery_hosts_total", "deleted_shadowed") >= 1 })
}

// TestDiscoveryIsCapped: with --discovery-max-hosts at three more than
// exist, DISCOVERs for six new MACs create three Hosts.
func TestDiscoveryIsCapped(t *testing.T) {
	e, reg := newSegment(t)
	o := e.options(t)
	o.Registerer = reg
	before := discoveredHosts(t)
	o.DiscoveryMaxHosts = before + 3
	e.start(t, o)

	send := e.attacker(t)
	for range 6 {
		send(pxeDiscover(t, randMAC(t)))
	}
	waitFor(t, "every report handled (or more than the cap created)", func() bool {
		return metric(t, reg, "anvil_discovery_hosts_total", "created")+metric(t, reg, "anvil_discovery_hosts_total", "cap_reached") >= 6 ||
			discoveredHosts(t) > before+3
	})
	if n := discoveredHosts(t); n != before+3 {
		t.Fatalf("%d discovered Hosts, want %d (the cap)", n, before+3)
	}
	if got := metric(t, reg, "anvil_discovery_hosts_total", "cap_reached"); got != 3 {
		t.Errorf("cap_reached = %v, want 3", got)
	}
}

// TestUnacceptedDiscoveredHostExpires: a discovered Host nobody accepts
// is deleted after --discovery-ttl.
func TestUnacceptedDiscoveredHostExpires(t *testing.T) {
	e, reg := newSegment(t)
	o := e.options(t)
	o.Registerer = reg
	o.DiscoveryTTL = 2 * time.Second
	e.start(t, o)

	m := randMAC(t)
	e.attacker(t)(pxeDiscover(t, m))
	key := client.ObjectKey{Namespace: e.ns, Name: index.DiscoveredHostName(m)}
	waitFor(t, "the discovered Host exists", func() bool { return !gone(key) })
	waitFor(t, "the discovered Host expired", func() bool { return gone(key) })
	// The API server shows the Host gone before the deleter's call returns
	// and counts it: wait for the count, do not read it once.
	waitFor(t, "the expiry counted", func() bool { return metric(t, reg, "anvil_discovery_hosts_total", "deleted_expired") >= 1 })
}
