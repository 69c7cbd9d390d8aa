package inventory

import (
	"testing"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/bmc"
)

// The one-time boot device a boot request asks the BMC for, by boot
// method and kind of BMC: IPMI has no HTTP boot selector, so PXE.
func TestBootDevice(t *testing.T) {
	for _, tc := range []struct {
		method metalv1.BootMethod
		addr   string
		want   bmc.BootDevice
	}{
		{"", "redfish+https://10.0.0.5", bmc.BootPXE},
		{metalv1.BootMethodPXE, "redfish+https://10.0.0.5", bmc.BootPXE},
		{metalv1.BootMethodPXE, "ipmi://10.0.0.6", bmc.BootPXE},
		{metalv1.BootMethodHTTPBoot, "redfish+https://10.0.0.5/redfish/v1/Systems/1", bmc.BootHTTP},
		{metalv1.BootMethodHTTPBoot, "redfish+http://10.0.0.5", bmc.BootHTTP},
		{metalv1.BootMethodHTTPBoot, "manual://rack1", bmc.BootHTTP},
		{metalv1.BootMethodHTTPBoot, "ipmi://10.0.0.6:623", bmc.BootPXE},
		{metalv1.BootMethodVirtualMedia, "redfish+https://10.0.0.5", bmc.BootCD},
	} {
		h := &metalv1.Host{Spec: metalv1.HostSpec{BootMethod: tc.method, BMC: metalv1.BMC{Address: tc.addr}}}
		if got := bootDevice(h); got != tc.want {
			t.Errorf("bootMethod %q, BMC %s: boot device %s, want %s", tc.method, tc.addr, got, tc.want)
		}
	}
}
