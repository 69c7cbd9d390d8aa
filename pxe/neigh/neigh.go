// Package neigh reads the Linux kernel's IPv4 neighbour (ARP) table limits
// and overflow count, so the boot services can say when a segment has more
// hosts than the table holds.
//
// A boot server talks to every booting host by its own address (TFTP, HTTP,
// the OS's DHCP renewals), so each one takes a neighbour entry. The table
// is one for the whole machine (all network namespaces), and
// net.ipv4.neigh.default.gc_thresh3 (1024 by default) is its hard size.
// When it is full the kernel cannot create an entry and drops the packet:
// a UDP sender is not told (the datagram counts as Udp SndbufErrors and
// sendto succeeds), and the limited-broadcast entry that every DHCP reply to
// 255.255.255.255 needs is one of the entries it can no longer create. In a
// boot storm of 2,000 hosts on this project's bench that meant 23 s in
// which no DHCP reply left the server, and 976 hosts gave up.
package neigh

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Files the kernel exposes in the initial network namespace only (inside
// another namespace they are absent, and the table is still the global
// one).
const (
	ThreshDir = "/proc/sys/net/ipv4/neigh/default"
	StatFile  = "/proc/net/stat/arp_cache"
)

// Thresh are the table's garbage-collection thresholds (entries): below
// GC1 nothing is collected, above GC2 for 5 s entries are collected, GC3 is
// the hard maximum.
type Thresh struct {
	GC1, GC2, GC3 int
}

// ReadThresh reads the thresholds from dir (ThreshDir).
func ReadThresh(dir string) (Thresh, error) {
	var t Thresh
	for _, f := range []struct {
		name string
		v    *int
	}{{"gc_thresh1", &t.GC1}, {"gc_thresh2", &t.GC2}, {"gc_thresh3", &t.GC3}} {
		b, err := os.ReadFile(dir + "/" + f.name)
		if err != nil {
			return Thresh{}, err
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return Thresh{}, fmt.Errorf("%s/%s: %w", dir, f.name, err)
		}
		*f.v = n
	}
	return t, nil
}

// WriteThresh sets the thresholds in dir (root only; GC3 first when
// raising, so GC1 <= GC2 <= GC3 holds at every step the kernel checks).
func WriteThresh(dir string, t Thresh) error {
	names := []string{"gc_thresh3", "gc_thresh2", "gc_thresh1"}
	vals := []int{t.GC3, t.GC2, t.GC1}
	cur, err := ReadThresh(dir)
	if err == nil && t.GC3 < cur.GC3 { // lowering: the smallest first
		names = []string{"gc_thresh1", "gc_thresh2", "gc_thresh3"}
		vals = []int{t.GC1, t.GC2, t.GC3}
	}
	for i, n := range names {
		if err := os.WriteFile(dir+"/"+n, []byte(strconv.Itoa(vals[i])), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TableFulls sums the table_fulls column of path (StatFile) over every
// CPU: how often since boot the kernel found the table full.
func TableFulls(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return ParseTableFulls(f)
}

// ParseTableFulls is TableFulls on the file's text: a header line naming
// the columns, then one line of hexadecimal counters per CPU.
func ParseTableFulls(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	col := -1
	var sum uint64
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if col < 0 {
			for i, name := range f {
				if name == "table_fulls" {
					col = i
				}
			}
			if col < 0 {
				return 0, errors.New("neigh: no table_fulls column")
			}
			continue
		}
		if col >= len(f) {
			return 0, fmt.Errorf("neigh: short line %q", sc.Text())
		}
		v, err := strconv.ParseUint(f[col], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("neigh: table_fulls %q: %w", f[col], err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if col < 0 {
		return 0, errors.New("neigh: empty statistics")
	}
	return sum, nil
}

// Headroom is how many entries beyond one per host the table should have:
// routers, the API server, BMCs, and the limited-broadcast entry itself.
const Headroom = 256

// Fits reports whether a table with t holds hosts neighbours, with
// Headroom to spare.
func Fits(hosts int, t Thresh) bool { return hosts+Headroom <= t.GC3 }

// Advice is what an admin should set for hosts: GC3 one per host plus
// Headroom, GC2 at least half of that (entries beyond GC2 are collected
// after 5 s), GC1 unchanged. Values already higher are kept.
func Advice(hosts int, t Thresh) Thresh {
	want := hosts + Headroom
	out := t
	out.GC3 = max(t.GC3, want)
	out.GC2 = max(t.GC2, (want+1)/2)
	out.GC1 = min(out.GC1, out.GC2)
	return out
}
