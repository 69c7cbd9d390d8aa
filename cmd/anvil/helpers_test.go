package main

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// freePortRun finds n consecutive free ports and returns the first.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		p := freePort(t)
		ok := true
		for i := 1; i < n && ok; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok {
			return p
		}
	}
	t.Fatal("no run of free ports")
	return 0
}
