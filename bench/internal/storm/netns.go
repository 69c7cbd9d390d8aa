package storm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// inNetns runs fn on an OS thread that has joined network namespace ns, so
// the sockets fn opens belong to it (a socket keeps the namespace it was
// created in, whichever thread uses it later). The thread returns to its
// own namespace afterwards rather than being thrown away: it may be the
// thread that started the anvil processes, whose Pdeathsig would fire if
// it exited.
func inNetns(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open network namespace %s: %w", ns, err)
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("join network namespace %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			// Stay locked: the goroutine's exit ends this thread, which
			// is better than a thread in the wrong namespace.
			errc <- errors.Join(ferr, fmt.Errorf("return from network namespace %s: %w", ns, err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// dialIn dials addr from inside namespace ns.
func dialIn(ctx context.Context, ns, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(ns, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, "tcp", addr)
		return err
	})
	return c, err
}

// forwarder relays TCP connections accepted inside a namespace to a target
// in this process's namespace: the netboot process inside the server
// namespace reaches the API server on the host's loopback through it, at
// the same address, so one kubeconfig serves both anvil processes.
type forwarder struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func newForwarder(ns, listen, target string) (*forwarder, error) {
	f := &forwarder{target: target, conns: map[net.Conn]struct{}{}}
	if err := inNetns(ns, func() (err error) { f.ln, err = net.Listen("tcp4", listen); return err }); err != nil {
		return nil, err
	}
	f.wg.Go(f.serve)
	return f, nil
}

func (f *forwarder) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return // closed
		}
		if !f.track(c, true) {
			c.Close()
			return
		}
		f.wg.Go(func() { f.relay(c) })
	}
}

func (f *forwarder) track(c net.Conn, add bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !add {
		delete(f.conns, c)
		return true
	}
	if f.closed {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *forwarder) relay(in net.Conn) {
	defer f.track(in, false)
	defer in.Close()
	out, err := net.DialTimeout("tcp", f.target, 10*time.Second)
	if err != nil {
		return
	}
	if !f.track(out, true) {
		out.Close()
		return
	}
	defer f.track(out, false)
	defer out.Close()
	var wg sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}
	wg.Go(func() { pipe(out, in) })
	pipe(in, out)
	wg.Wait()
}

// Close stops accepting, closes every relayed connection and waits.
func (f *forwarder) Close() {
	f.mu.Lock()
	f.closed = true
	err := f.ln.Close()
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return
	}
	f.wg.Wait()
}
