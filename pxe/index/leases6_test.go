package index_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	metalv1 "anvil.dev/anvil/api/v1alpha1"
	"anvil.dev/anvil/pxe/index"
)

// TestLease6WriterKeepsLeasesInStatus: the DHCPv6 leases the writer is
// given land in their Hosts' status.leases6 (the newest per MAC, a MAC
// the Host lost dropped), and Persisted6 gives the unexpired ones back, as
// a restarted DHCPv6 server restores them.
func TestLease6WriterKeepsLeasesInStatus(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.Namespace(t)
	m1, m2, stranger := randMAC(t), randMAC(t), randMAC(t)
	h := newHost(t, ns, "v6", []string{m1, m2})
	key := client.ObjectKeyFromObject(h)
	waitIndexed(t, ix, m1, m2)
	w, err := index.NewLease6Writer(index.Lease6WriterOptions{Index: ix, Client: mgrClient, APIReader: mgrReader, Logger: testLogger})
	must(t, err)
	go w.Run(ctx)

	exp := time.Now().Add(time.Hour)
	a1, a2 := netip.MustParseAddr("fd00:6::101"), netip.MustParseAddr("fd00:6::102")
	w.Enqueue(index.Lease6{MAC: hw(t, m1), IP: netip.MustParseAddr("fd00:6::1ff"), DUID: []byte{0, 3, 0, 1}, Expires: exp})
	w.Enqueue(index.Lease6{MAC: hw(t, m1), IP: a1, DUID: []byte{0, 3, 0, 1, 0xaa}, Expires: exp}) // newer: wins
	w.Enqueue(index.Lease6{MAC: hw(t, m2), IP: a2, Expires: exp.Add(-2 * time.Hour)})             // already expired
	w.Enqueue(index.Lease6{MAC: hw(t, stranger), IP: netip.MustParseAddr("fd00:6::103"), Expires: exp})

	stored := func() map[string]metalv1.DHCPv6Lease {
		got := &metalv1.Host{}
		must(t, env.Client.Get(ctx, key, got))
		out := map[string]metalv1.DHCPv6Lease{}
		for _, l := range got.Status.Leases6 {
			out[l.MAC] = l
		}
		return out
	}
	eventually(t, "both MACs' leases in status.leases6", func() bool {
		s := stored()
		return s[m1].IP == a1.String() && s[m2].IP == a2.String()
	})
	s := stored()
	if len(s) != 2 || s[m1].DUID != "00030001aa" || s[m1].ExpiresAt.Time.Before(exp.Truncate(time.Second)) {
		t.Fatalf("status.leases6 = %+v; want the two boot MACs', m1's newest with its DUID", s)
	}

	eventually(t, "the index sees them", func() bool { return len(ix.Persisted6(time.Now())) > 0 })
	var mine []index.Lease6
	for _, l := range ix.Persisted6(time.Now()) {
		if l.MAC.String() == m1 || l.MAC.String() == m2 {
			mine = append(mine, l)
		}
	}
	if len(mine) != 1 || mine[0].MAC.String() != m1 || mine[0].IP != a1 {
		t.Fatalf("Persisted6 = %+v; want only m1's unexpired lease", mine)
	}

	// The Host drops m2 from its boot MACs: the next write drops its entry.
	updateHost(t, key, false, func(h *metalv1.Host) { h.Spec.BootMACs = []string{m1} })
	eventually(t, "the index drops m2", func() bool { _, ok := ix.Host(hw(t, m2)); return !ok })
	w.Enqueue(index.Lease6{MAC: hw(t, m1), IP: a1, Expires: exp.Add(time.Hour)})
	eventually(t, "m2's entry dropped, m1's renewed", func() bool {
		s := stored()
		_, has2 := s[m2]
		return !has2 && s[m1].ExpiresAt.Time.After(exp)
	})
}
