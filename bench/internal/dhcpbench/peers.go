package dhcpbench

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// dnsmasqConfig serves only the reservations (dhcp-range ... static), DNS
// off, lease file in dir: dnsmasq as an admin would run it for PXE. Its
// man page's speed advice is taken where it keeps dnsmasq a lease-keeping
// server: dhcp-authoritative (answers at once, no waiting out unknown
// clients' requests) and no-ping (no ICMP probe before an offer; dnsmasq
// probes only addresses it picks itself, so with dhcp-host addresses it
// changes nothing, but says so). leasefile-ro (no lease file) is not an
// admin's default and is left off.
func dnsmasqConfig(dir, iface string, prefix netip.Prefix, rs []Reservation) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "port=0\ninterface=%s\nbind-interfaces\nuser=root\ndhcp-authoritative\nno-ping\n", iface)
	fmt.Fprintf(&b, "dhcp-range=%s,static,%s,1h\n", prefix.Masked().Addr(), maskString(prefix.Bits()))
	fmt.Fprintf(&b, "dhcp-leasefile=%s\n", filepath.Join(dir, "dnsmasq.leases"))
	fmt.Fprintf(&b, "pid-file=%s\n", filepath.Join(dir, "dnsmasq.pid"))
	for _, r := range rs {
		fmt.Fprintf(&b, "dhcp-host=%s,%s,%s\n", r.MAC, r.IP, r.Hostname)
	}
	path := filepath.Join(dir, "dnsmasq-dhcp.conf")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

func maskString(bits int) string {
	m := uint32(0xffffffff) << (32 - bits)
	return fmt.Sprintf("%d.%d.%d.%d", byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
}

// keaConfig is kea-dhcp4 with the memfile lease backend (persisted to a
// CSV in dir) and the reservations in the subnet; no pool, so like the
// other subjects it answers only reserved MACs. It follows the Kea 2.2
// ARM's advice for speed (keaTuning says what and why); the socket type
// depends on the mode: UDP sockets for relayed traffic (the ARM's advice
// when every client is behind a relay), raw for clients on the link (a
// UDP socket bound to the interface address never sees their broadcasts).
func keaConfig(dir, iface, mode string, prefix netip.Prefix, rs []Reservation) (string, error) {
	type resv struct {
		HW       string `json:"hw-address"`
		IP       string `json:"ip-address"`
		Hostname string `json:"hostname"`
	}
	res := make([]resv, len(rs))
	for i, r := range rs {
		res[i] = resv{HW: r.MAC.String(), IP: r.IP.String(), Hostname: r.Hostname}
	}
	cfg := map[string]any{
		"Dhcp4": map[string]any{
			"interfaces-config": map[string]any{"interfaces": []string{iface}, "dhcp-socket-type": keaSocketType(mode)},
			"lease-database": map[string]any{
				"type": "memfile", "persist": true, "lfc-interval": 0,
				"name": filepath.Join(dir, "kea-leases4.csv"),
			},
			"host-reservation-identifiers": []string{"hw-address"},
			"valid-lifetime":               3600,
			"cache-threshold":              0.25,
			"reservations-global":          false,
			"reservations-in-subnet":       true,
			"reservations-out-of-pool":     true,
			"subnet4": []any{map[string]any{
				"id": 1, "subnet": prefix.Masked().String(), "reservations": res,
			}},
			"loggers": []any{map[string]any{
				"name": "kea-dhcp4", "severity": "WARN",
				"output_options": []any{map[string]any{"output": filepath.Join(dir, "kea-dhcp4.log")}},
			}},
		},
	}
	b, err := json.MarshalIndent(cfg, "", " ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kea-dhcp4.conf")
	return path, os.WriteFile(path, b, 0o644)
}

// keaTuning is the configuration line of the Kea subject: what was set
// for speed and why (Kea 2.2 ARM).
func keaTuning(mode string, n int) string {
	return fmt.Sprintf("memfile leases (persisted, LFC off), %d reservations in the subnet; for speed as the ARM advises: "+
		"dhcp-socket-type %s, cache-threshold 0.25 (lease cache: a client asking again within 15 min of its 1 h lease "+
		"gets it without a lease write), reservations-in-subnet with reservations-out-of-pool and reservations-global off "+
		"(no pool checks, no global lookup), host-reservation-identifiers hw-address only, log WARN to a file; "+
		"multi-threading off (pinned to one core: the ARM sizes the thread pool by cores); "+
		"receive buffer 4 MiB set by the bench as Anvil sets its own", n, keaSocketType(mode))
}

func keaSocketType(mode string) string {
	if mode == ModeRelay {
		return "udp"
	}
	return "raw"
}
