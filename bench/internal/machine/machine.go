// Package machine describes the machine a benchmark ran on and the versions
// of every subject and tool, for the report.
package machine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"anvil.dev/anvil/bench/internal/results"
)

// Describe reads /proc and asks each tool for its version.
func Describe() results.Machine {
	m := results.Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), Versions: map[string]string{}}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				m.MemoryMB = kb / 1024
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`)
			}
		}
	}
	m.Netem = HasNetem()
	for name, argv := range map[string][]string{
		"kea-dhcp4": {"kea-dhcp4", "-v"},
		"perfdhcp":  {"perfdhcp", "-v"},
		"dnsmasq":   {"dnsmasq", "--version"},
		"atftpd":    {"atftpd", "--version"},
		"atftp":     {"atftp", "--version"},
		"tftpd-hpa": {TftpdHPA(), "-V"},
		"nginx":     {"nginx", "-v"},
	} {
		m.Versions[name] = version(argv)
	}
	return m
}

// version runs argv and returns the first line that names a version.
func version(argv []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if l != "" {
			return l
		}
	}
	return "not found"
}

// TftpdHPA is the tftpd-hpa server binary. Debian's tftpd-hpa and atftpd
// packages conflict (and atftpd installs /usr/sbin/in.tftpd as a symlink to
// itself), so bench/install-peers.sh unpacks tftpd-hpa under /opt/anvil-bench
// when atftpd is installed. The first candidate that says it is tftp-hpa wins.
func TftpdHPA() string {
	const unpacked = "/opt/anvil-bench/tftpd-hpa/usr/sbin/in.tftpd"
	cands := []string{unpacked}
	if p, err := exec.LookPath("in.tftpd"); err == nil {
		cands = append(cands, p)
	}
	for _, c := range cands {
		if strings.Contains(version([]string{c, "-V"}), "tftp-hpa") {
			return c
		}
	}
	return unpacked
}

// HasNetem reports whether the kernel has the netem qdisc.
func HasNetem() bool {
	if _, err := os.Stat("/sys/module/sch_netem"); err == nil {
		return true
	}
	out, err := exec.Command("sh", "-c", "zcat /proc/config.gz 2>/dev/null | grep -E '^CONFIG_NET_SCH_NETEM=(y|m)'").Output()
	return err == nil && len(out) > 0
}

// LoadAvg returns the 1, 5 and 15 minute load averages.
func LoadAvg() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

// BusyProcesses samples all processes twice, interval apart, and returns
// the ones (other than this one) that used more than 5% of a core, busiest
// first, as "comm (pid): NN% of a core".
func BusyProcesses(interval time.Duration) []string {
	a := cpuTimes()
	time.Sleep(interval)
	b := cpuTimes()
	type busy struct {
		desc string
		frac float64
	}
	var out []busy
	for pid, t1 := range b {
		t0, ok := a[pid]
		if !ok || pid == os.Getpid() {
			continue
		}
		frac := (t1.ticks - t0.ticks) / 100 / interval.Seconds()
		if frac > 0.05 {
			out = append(out, busy{fmt.Sprintf("%s (%d): %.0f%% of a core", t1.comm, pid, frac*100), frac})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].frac > out[j].frac })
	s := make([]string, 0, len(out))
	for _, o := range out {
		s = append(s, o.desc)
	}
	return s
}

type ptime struct {
	comm  string
	ticks float64
}

func cpuTimes() map[int]ptime {
	m := map[int]ptime{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := os.Open("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		i, j := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if i < 0 || j < i {
			continue
		}
		fs := strings.Fields(line[j+1:])
		if len(fs) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(fs[11], 64)
		s, _ := strconv.ParseFloat(fs[12], 64)
		m[pid] = ptime{comm: line[i+1 : j], ticks: u + s}
	}
	return m
}
