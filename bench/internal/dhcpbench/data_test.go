package dhcpbench

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReservations(t *testing.T) {
	prefix := netip.MustParsePrefix("198.18.0.0/16")
	rs, err := Reservations(prefix, 10000)
	if err != nil {
		t.Fatal(err)
	}
	macs, ips := map[string]bool{}, map[netip.Addr]bool{}
	for _, r := range rs {
		if macs[r.MAC.String()] || ips[r.IP] {
			t.Fatalf("duplicate reservation %v %v", r.MAC, r.IP)
		}
		macs[r.MAC.String()], ips[r.IP] = true, true
		a := r.IP.As4()
		if !prefix.Contains(r.IP) || a[2] < 16 || a[3] == 0 || a[3] == 255 {
			t.Fatalf("address %v outside the reserved area", r.IP)
		}
		if r.MAC[0]&1 != 0 || r.MAC[0]&2 == 0 {
			t.Fatalf("MAC %v is not locally administered unicast", r.MAC)
		}
	}
	if _, err := Reservations(netip.MustParsePrefix("10.0.0.0/24"), 10); err == nil {
		t.Error("a /24 was accepted")
	}
	recs := Records(rs[:2], 16)
	if !recs[0].Accepted || recs[0].IP.Bits() != 16 || recs[1].Hostname != "node-00001" {
		t.Errorf("records: %+v", recs)
	}
}

func TestPeerConfigs(t *testing.T) {
	dir := t.TempDir()
	prefix := netip.MustParsePrefix("198.18.0.0/16")
	rs, _ := Reservations(prefix, 3)

	path, err := keaConfig(dir, "eth9", ModeRelay, prefix, rs)
	if err != nil {
		t.Fatal(err)
	}
	var kea struct {
		Dhcp4 struct {
			Interfaces struct {
				Interfaces []string
				SocketType string `json:"dhcp-socket-type"`
			} `json:"interfaces-config"`
			CacheThreshold float64 `json:"cache-threshold"`
			OutOfPool      bool    `json:"reservations-out-of-pool"`
			Subnet4        []struct {
				Subnet       string `json:"subnet"`
				Reservations []struct {
					HW string `json:"hw-address"`
					IP string `json:"ip-address"`
				} `json:"reservations"`
			} `json:"subnet4"`
		}
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &kea); err != nil {
		t.Fatal(err)
	}
	s := kea.Dhcp4.Subnet4
	if len(s) != 1 || s[0].Subnet != "198.18.0.0/16" || len(s[0].Reservations) != 3 ||
		s[0].Reservations[2].HW != rs[2].MAC.String() || s[0].Reservations[2].IP != rs[2].IP.String() {
		t.Errorf("kea config: %s", b)
	}
	if kea.Dhcp4.Interfaces.SocketType != "udp" || kea.Dhcp4.CacheThreshold != 0.25 || !kea.Dhcp4.OutOfPool {
		t.Errorf("kea config lacks the speed settings of relay mode: %s", b)
	}
	// Broadcast mode needs raw sockets: a UDP socket bound to the interface
	// address never sees a client's broadcast.
	path, err = keaConfig(dir, "eth9", ModeBroadcast, prefix, rs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if err := json.Unmarshal(b, &kea); err != nil || kea.Dhcp4.Interfaces.SocketType != "raw" {
		t.Errorf("kea broadcast config: %v %s", err, b)
	}

	path, err = dnsmasqConfig(dir, "eth9", prefix, rs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	conf := string(b)
	for _, want := range []string{"interface=eth9\n", "dhcp-range=198.18.0.0,static,255.255.0.0,1h\n",
		"dhcp-host=" + rs[1].MAC.String() + "," + rs[1].IP.String() + ",node-00001\n", "port=0\n",
		"dhcp-authoritative\n", "no-ping\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("dnsmasq config lacks %q:\n%s", want, conf)
		}
	}
	if n := strings.Count(conf, "dhcp-host="); n != 3 {
		t.Errorf("%d dhcp-host lines, want 3", n)
	}

	macs := filepath.Join(dir, "macs")
	if err := WriteMACList(macs, rs); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(macs)
	if got := strings.Fields(string(b)); len(got) != 3 || got[0] != "0e:ab:00:00:00:00" {
		t.Errorf("MAC list: %q", got)
	}
}
