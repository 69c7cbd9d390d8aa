// Package drivers registers every BMC driver Anvil ships (redfish+https,
// redfish+http, ipmi, manual). Import it for its side effect:
//
//	import _ "anvil.dev/anvil/bmc/drivers"
package drivers

import (
	// Register the drivers.
	_ "anvil.dev/anvil/bmc/ipmi"
	_ "anvil.dev/anvil/bmc/manual"
	_ "anvil.dev/anvil/bmc/redfish"
)
