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
// off, lease file in dir: dnsmasq as an admin would run it for PXE.
func dnsmasqConfig(dir, iface string, prefix netip.Prefix, rs []Reservation) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "port=0\ninterface=%s\nbind-interfaces\nuser=root\n", iface)
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
// other subjects it answers only reserved MACs.
func keaConfig(dir, iface string, prefix netip.Prefix, rs []Reservation) (string, error) {
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
			"interfaces-config": map[string]any{"interfaces": []string{iface}},
			"lease-database": map[string]any{
				"type": "memfile", "persist": true, "lfc-interval": 0,
				"name": filepath.Join(dir, "kea-leases4.csv"),
			},
			"host-reservation-identifiers": []string{"hw-address"},
			"valid-lifetime":               3600,
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
