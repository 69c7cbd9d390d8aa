package scale

import (
	"sync"
	"syscall"
)

// wantNoFile is the open-file limit the bench gives the processes it
// starts: every simulated agent holds one HTTP connection to the network
// services (its action long poll), and `anvil serve` caps its HTTP
// connections at half of RLIMIT_NOFILE (a quarter before 2026-12-07, when
// a 5,000-host run under this bench machine's 20,000 stalled at 5,000).
const wantNoFile = 1 << 18

var noFileOnce sync.Once

// raiseNoFile raises this process's RLIMIT_NOFILE, which the processes it
// starts inherit, to wantNoFile where it may (raising the hard limit
// takes CAP_SYS_RESOURCE; anyone may raise the soft limit to the hard one). It reports the
// limit the children get. Setting the limit here also stops os/exec from
// giving children the limit the bench started with.
func raiseNoFile(logf func(string, ...any)) {
	noFileOnce.Do(func() {
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			logf("reading RLIMIT_NOFILE: %v", err)
			return
		}
		if rl.Max < wantNoFile {
			up := syscall.Rlimit{Cur: wantNoFile, Max: wantNoFile}
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up); err == nil {
				logf("RLIMIT_NOFILE of the processes under test: %d (raised from %d/%d)", wantNoFile, rl.Cur, rl.Max)
				return
			}
		}
		was := rl.Cur
		rl.Cur = min(rl.Max, wantNoFile)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			logf("raising RLIMIT_NOFILE: %v", err)
			return
		}
		if rl.Cur < wantNoFile {
			logf("RLIMIT_NOFILE of the processes under test: %d (was %d; the hard limit, which only a process with CAP_SYS_RESOURCE may raise): anvil serve takes at most %d HTTP connections, half of it",
				rl.Cur, was, rl.Cur/2)
			return
		}
		logf("RLIMIT_NOFILE of the processes under test: %d", rl.Cur)
	})
}
