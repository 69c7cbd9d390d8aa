package lab

import (
	"encoding/csv"
	"io"
	"strings"
)

// WriteHostsCSV writes the hosts in the format of `anvil hosts import`
// (inventory.CSVColumns), passwords included: the importer puts them into
// each Host's credentials Secret. Redfish BMCs use a self-signed certificate,
// hence disable_certificate_verification.
func (l *Lab) WriteHostsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"name", "bmc_address", "username", "password", "boot_macs", "architecture", "boot_mode",
		"rack", "failure_domain", "labels", "disable_certificate_verification"})
	for _, h := range l.Hosts() {
		insecure := ""
		if h.BMC == Redfish {
			insecure = "true"
		}
		_ = cw.Write([]string{h.Name, h.BMCAddress, h.Credentials.Username, h.Credentials.Password, strings.ToLower(h.MAC.String()),
			"x86_64", h.BootMode, h.Rack, h.FailureDomain, "anvil.dev/lab=" + l.o.Name, insecure})
	}
	cw.Flush()
	return cw.Error()
}
