// Command pause is the sandbox (pause) container of the host image's pods:
// PID 1 of the pod, it holds the namespaces, reaps the zombies that
// processes sharing its PID namespace leave, and exits 0 on SIGTERM or
// SIGINT. Static, no libc, so the image is just this binary.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	// Said once the handlers are in: a SIGTERM from now on exits 0.
	fmt.Fprintln(os.Stderr, "pause: waiting for SIGTERM or SIGINT")
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child; signals coalesce, so one SIGCHLD may
// stand for many.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
