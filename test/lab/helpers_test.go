package lab_test

import (
	"crypto/rand"
	"encoding/hex"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"anvil.dev/anvil/test/need"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		need.OrSkip(t, "the lab needs root (network namespaces, taps)")
	}
	for _, c := range []string{"ip", "flock"} {
		if _, err := exec.LookPath(c); err != nil {
			need.OrSkip(t, "program %q not found (Debian packages iproute2, util-linux)", c)
		}
	}
}

func execLookPath(name string) (string, error) { return exec.LookPath(name) }

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func readPID(t testing.TB, p string) int {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	must(t, err)
	return pid
}

func inode(t testing.TB, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	must(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

// netnsHolders lists the threads (pid/tid) whose network namespace has
// inode ino.
func netnsHolders(ino uint64) []string {
	var out []string
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/ns/net")
	for _, p := range tasks {
		if fi, err := os.Stat(p); err == nil && fi.Sys().(*syscall.Stat_t).Ino == ino {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/ns/net"))
		}
	}
	return out
}

func netipMust(s string) netip.Prefix { return netip.MustParsePrefix(s) }
