// Package proc measures a subject's CPU time and memory from /proc, the same
// way for Anvil and for every peer, including the children a forking server
// (tftpd-hpa) starts per request.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// Usage is one sample of a process tree.
type Usage struct {
	// CPU is user+system time in seconds of the process, its reaped
	// children, and its live descendants.
	CPU float64
	// RSS is the summed resident set of the process and its live
	// descendants, in bytes.
	RSS int64
}

// Sample reads pid's tree now.
func Sample(pid int) (Usage, error) {
	var u Usage
	seen := map[int]bool{}
	var walk func(p int, root bool) error
	walk = func(p int, root bool) error {
		if seen[p] {
			return nil
		}
		seen[p] = true
		cpu, rss, err := readStat(p, root)
		if err != nil {
			if root {
				return err
			}
			return nil // a child that just exited
		}
		u.CPU += cpu
		u.RSS += rss
		for _, c := range children(p) {
			_ = walk(c, false)
		}
		return nil
	}
	if err := walk(pid, true); err != nil {
		return Usage{}, err
	}
	return u, nil
}

// readStat returns CPU seconds (with reaped children for the root) and RSS
// bytes from /proc/<pid>/stat.
func readStat(pid int, withReaped bool) (float64, int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseStat(b, withReaped)
}

func parseStat(b []byte, withReaped bool) (float64, int64, error) {
	// The command name may contain spaces and parentheses: fields start
	// after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("proc: malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14 -> f[11].
	if len(f) < 22 {
		return 0, 0, fmt.Errorf("proc: short stat")
	}
	num := func(k int) int64 { n, _ := strconv.ParseInt(f[k], 10, 64); return n }
	ticks := num(11) + num(12)
	if withReaped {
		ticks += num(13) + num(14)
	}
	rssPages := num(21)
	return float64(ticks) / clockTicks, rssPages * int64(os.Getpagesize()), nil
}

func children(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// Monitor samples a process tree periodically and keeps the peak RSS.
type Monitor struct {
	pid  int
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64
	last Usage
}

// Watch starts sampling pid every interval until Stop.
func Watch(pid int, interval time.Duration) *Monitor {
	m := &Monitor{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	m.sample()
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *Monitor) sample() {
	u, err := Sample(m.pid)
	if err != nil {
		return
	}
	m.mu.Lock()
	m.last = u
	m.peak = max(m.peak, u.RSS)
	m.mu.Unlock()
}

// Now samples immediately and returns the sample (zero if the process is
// gone).
func (m *Monitor) Now() Usage {
	m.sample()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// ResetPeak starts a new peak-RSS window and returns the old peak.
func (m *Monitor) ResetPeak() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peak
	m.peak = m.last.RSS
	return p
}

// Peak is the highest RSS seen since Watch or the last ResetPeak.
func (m *Monitor) Peak() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// Stop ends sampling.
func (m *Monitor) Stop() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}
