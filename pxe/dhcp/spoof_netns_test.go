package dhcp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"anvil.dev/anvil/test/netnstest"
)

const attackerMAC = "02:aa:00:00:00:66"

// attacker turns the client namespace into another machine on the
// segment: its own MAC and address, and a UDP socket on port 68 that
// sends whatever DHCP packet it is given to the server (chaddr is just a
// field: no raw socket is needed to claim someone else's).
func (e *realEnv) attacker(t *testing.T, last byte) func(*dhcpv4.DHCPv4) {
	t.Helper()
	e.pair.SetCliMAC(t, mac(t, attackerMAC))
	e.pair.Cli.Exec(t, "ip", "addr", "add", netip.PrefixFrom(e.addr(last), 24).String(), "dev", e.pair.CliIf)
	var conn *net.UDPConn
	must(t, e.pair.Cli.Do(func() (err error) {
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IP(e.addr(last).AsSlice()), Port: clientPort})
		return err
	}))
	t.Cleanup(func() { conn.Close() })
	dst := &net.UDPAddr{IP: net.IP(e.pair.SrvIP.AsSlice()), Port: serverPort}
	return func(p *dhcpv4.DHCPv4) {
		t.Helper()
		if _, err := conn.WriteToUDP(p.ToBytes(), dst); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *realEnv) dropped(reason string) float64 {
	return testutil.ToFloat64(e.srv.metrics.dropped.WithLabelValues(reason))
}

// spoofed builds a packet with someone else's chaddr.
func spoofed(t *testing.T, chaddr string, mt dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	return request(t, chaddr, mt, mods...)
}

// TestSpoofedReleaseKeepsLease: a RELEASE with the victim's chaddr,
// ciaddr and our server identifier, sent from another MAC, leaves the
// victim's lease alone; the victim's own RELEASE (udhcpc -R) still ends it.
func TestSpoofedReleaseKeepsLease(t *testing.T) {
	netnstest.RequireCommands(t, "busybox", "ip")
	e := newRealEnv(t)
	leases := NewMemoryLeaseStore(LeaseStoreOptions{})
	e.start(t, e.options(t, leases))
	victim := mac(t, realDynMAC)

	got, err := e.udhcpc(t, realDynMAC)
	must(t, err)
	ip := got["ip"]
	active := func() bool {
		l, err := leases.Get(context.Background(), victim)
		return err == nil && l.IP.String() == ip && l.Expires.After(time.Now())
	}
	if !active() {
		t.Fatalf("no active lease of %s after udhcpc", ip)
	}

	send := e.attacker(t, 200)
	send(spoofed(t, realDynMAC, dhcpv4.MessageTypeRelease, dhcpv4.WithClientIP(net.ParseIP(ip)), withServerID(e.pair.SrvIP)))
	// Either the server refuses it (counted) or the lease ends.
	if !netnstest.WaitFor(10*time.Second, func() bool { return e.dropped("release_not_from_holder") > 0 || !active() }) {
		t.Fatal("the spoofed RELEASE was neither refused nor applied")
	}
	if !active() {
		t.Fatalf("a RELEASE from %s ended %s's lease of %s", attackerMAC, realDynMAC, ip)
	}

	// The victim's own RELEASE: udhcpc stays running, its script
	// configures the address (so the RELEASE leaves from it, as on a real
	// host), and SIGUSR2 makes it release.
	e.pair.SetCliMAC(t, victim)
	out := filepath.Join(e.dir, "release.env")
	script := filepath.Join(e.dir, "udhcpc-cfg.sh")
	body := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = bound ]; then ip addr add \"$ip/$mask\" dev \"$interface\"; env > %q; fi\nexit 0\n", out)
	must(t, os.WriteFile(script, []byte(body), 0o755))
	var stdout, stderr netnstest.SyncBuffer
	cmd := e.pair.Cli.Start(t, &stdout, &stderr, "busybox", "udhcpc", "-i", e.pair.CliIf, "-f", "-t", "3", "-T", "1", "-s", script)
	defer func() { t.Logf("udhcpc:\n%s%s", stdout.String(), stderr.String()) }()
	if !netnstest.WaitFor(20*time.Second, func() bool { _, err := os.Stat(out); return err == nil }) {
		t.Fatal("udhcpc did not bind")
	}
	must(t, cmd.Process.Signal(syscall.SIGUSR2))
	if !netnstest.WaitFor(10*time.Second, func() bool { return !active() }) {
		t.Fatalf("the victim's own RELEASE did not end its lease")
	}
}

// TestSpoofedDeclinesDoNotExhaustPool: an attacker who claims an accepted
// Host's chaddr, starts an exchange for it and DECLINEs every pool address
// five times over holds nothing: the real host then still gets an address.
func TestSpoofedDeclinesDoNotExhaustPool(t *testing.T) {
	netnstest.RequireCommands(t, "busybox", "ip")
	e := newRealEnv(t)
	opts := e.options(t, nil)
	opts.Workers = 1 // one write worker: the write queue is handled in order (see the sentinel below)
	e.start(t, opts)

	send := e.attacker(t, 200)
	send(spoofed(t, realDynMAC, dhcpv4.MessageTypeDiscover))
	if !netnstest.WaitFor(10*time.Second, func() bool {
		return testutil.ToFloat64(e.srv.metrics.replies.WithLabelValues("offer")) > 0
	}) {
		t.Fatal("no OFFER for the spoofed DISCOVER")
	}
	for range 5 {
		for last := 100; last <= 120; last++ {
			send(spoofed(t, realDynMAC, dhcpv4.MessageTypeDecline, withRequested(e.addr(byte(last)).String()), withServerID(e.pair.SrvIP)))
		}
	}
	// The sentinel: a DECLINE of an unknown MAC, behind the others in the
	// one write worker's queue, dropped once they are all handled.
	send(spoofed(t, realUnknMAC, dhcpv4.MessageTypeDecline, withRequested(e.addr(100).String())))
	if !netnstest.WaitFor(10*time.Second, func() bool { return e.dropped("unknown_host") > 0 }) {
		t.Fatal("the DECLINEs were not handled")
	}
	got, err := e.udhcpc(t, realDynMAC)
	if err != nil {
		t.Fatalf("after 105 spoofed DECLINEs the real host gets no address: %v", err)
	}
	if got["ip"] == "" {
		t.Fatal("no address")
	}
}

// TestRealClientDecline: udhcpc finds the address it was given in use
// (ARP answer from another machine) and DECLINEs it; the server holds the
// address and the client gets another one.
func TestRealClientDecline(t *testing.T) {
	netnstest.RequireCommands(t, "busybox", "ip")
	e := newRealEnv(t)
	e.start(t, e.options(t, nil))
	// Someone already uses the pool's first address.
	e.pair.Srv.Exec(t, "ip", "addr", "add", netip.PrefixFrom(e.addr(100), 24).String(), "dev", e.pair.SrvIf)
	got, err := e.udhcpc(t, realDynMAC, "-a", "-A", "1")
	must(t, err)
	if got["ip"] == e.addr(100).String() || got["ip"] == "" {
		t.Fatalf("udhcpc got %q, the address in use was %s", got["ip"], e.addr(100))
	}
	if _, held := e.srv.declined[e.addr(100)]; !held {
		t.Fatalf("the declined address is not held")
	}
}
