package netboot

import (
	"context"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"

	"anvil.dev/anvil/pxe"
	"anvil.dev/anvil/pxe/neigh"
)

// neighbourCheckEvery is how often the Host count is compared with the
// kernel's neighbour table again (Hosts get registered, admins raise it).
const neighbourCheckEvery = time.Minute

// neighbourCheck says, in the log, when the Hosts that boot from this
// server outnumber the kernel's IPv4 neighbour table (see package neigh):
// at start, and each time the count crosses the table's size either way.
type neighbourCheck struct {
	dir   string // neigh.ThreshDir; tests point it elsewhere
	hosts func() int
	log   logr.Logger
	over  bool // the last check found too many
}

// check compares once and logs when the answer changed. It returns false
// when the thresholds cannot be read (outside the initial network
// namespace the kernel does not show them): then there is nothing to do.
func (c *neighbourCheck) check() bool {
	t, err := neigh.ReadThresh(c.dir)
	if err != nil {
		c.log.V(1).Info("kernel neighbour table limits not readable here (another network namespace?); not checked", "error", err.Error())
		return false
	}
	n := c.hosts()
	switch fits := neigh.Fits(n, t); {
	case !fits && !c.over:
		a := neigh.Advice(n, t)
		c.log.Info("more Hosts boot from this server than the kernel's neighbour (ARP) table holds: when they boot together the kernel drops packets to the ones beyond it, DHCP replies first, and those hosts stop booting; raise the limits (sysctl, as root)",
			"hosts", n, "gc_thresh3", t.GC3, "gc_thresh2", t.GC2,
			"set", "net.ipv4.neigh.default.gc_thresh3="+strconv.Itoa(a.GC3)+" net.ipv4.neigh.default.gc_thresh2="+strconv.Itoa(a.GC2))
		c.over = true
	case fits && c.over:
		c.log.Info("the kernel's neighbour (ARP) table now holds every Host", "hosts", n, "gc_thresh3", t.GC3)
		c.over = false
	}
	return true
}

// run checks now and then every neighbourCheckEvery until ctx ends.
func (c *neighbourCheck) run(ctx context.Context) {
	if !c.check() {
		return
	}
	wait.UntilWithContext(ctx, func(context.Context) { c.check() }, neighbourCheckEvery)
}

// registerNeighbourOverflows exports the kernel's count of full-table
// events (anvil_kernel_arp_table_overflows_total), when readable here.
func registerNeighbourOverflows(reg prometheus.Registerer, path string) {
	if reg == nil {
		return
	}
	if _, err := neigh.TableFulls(path); err != nil {
		return
	}
	_ = pxe.Register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "anvil_kernel_arp_table_overflows_total",
		Help: "Times since boot the kernel found its IPv4 neighbour (ARP) table full (" + neigh.StatFile + ", table_fulls, all CPUs). Each one dropped a packet, DHCP replies included, without telling the sender: raise net.ipv4.neigh.default.gc_thresh3 above the number of hosts.",
	}, func() float64 {
		n, err := neigh.TableFulls(path)
		if err != nil {
			return 0
		}
		return float64(n)
	}))
}
