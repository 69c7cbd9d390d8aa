package storm

import (
	"fmt"

	"anvil.dev/anvil/pxe/neigh"
)

// fitNeighbourTable raises the kernel's neighbour table limits, for the
// storm only, so that it holds one entry per simulated host (the server
// ARPs for every leased address), as an admin must on a segment this large
// (Anvil logs the same advice, pxe/neigh). The table is the whole
// machine's, shared by every namespace. It returns what to say in the
// report's setup and the function that puts the old limits back; limits
// it cannot read are left alone (and said so), limits it cannot raise are
// an error.
func fitNeighbourTable(hosts int) (note string, restore func(), err error) {
	restore = func() {}
	cur, err := neigh.ReadThresh(neigh.ThreshDir)
	if err != nil {
		// Inside a network namespace (a CI container) the kernel does
		// not show them; the table is the host's then, not ours to set.
		return fmt.Sprintf("kernel neighbour (ARP) table limits not readable here (%v), left as they are", err), restore, nil
	}
	if neigh.Fits(hosts, cur) {
		return fmt.Sprintf("kernel neighbour (ARP) table gc_thresh3 %d, enough for %d hosts", cur.GC3, hosts), restore, nil
	}
	want := neigh.Advice(hosts, cur)
	if err := neigh.WriteThresh(neigh.ThreshDir, want); err != nil {
		return "", restore, fmt.Errorf("raising the kernel neighbour table to gc_thresh3=%d for %d hosts: %w", want.GC3, hosts, err)
	}
	return fmt.Sprintf("kernel neighbour (ARP) table raised for the storm from gc_thresh3 %d / gc_thresh2 %d to %d / %d "+
			"(one entry per host plus %d, as an admin must on a segment this large; restored after)", cur.GC3, cur.GC2, want.GC3, want.GC2, neigh.Headroom),
		func() { _ = neigh.WriteThresh(neigh.ThreshDir, cur) }, nil
}
