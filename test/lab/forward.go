package lab

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// maxForwardConns bounds the forwarder's concurrent connections (kubelets
// keep one or two each).
const maxForwardConns = 512

// forwarder accepts TCP connections inside the namespace and relays each to
// a target dialled from the host namespace: the listener was opened on a
// thread in the namespace, the dials happen on ordinary threads, which are
// in the host's.
type forwarder struct {
	ln     net.Listener
	target string
	log    logr.Logger
	sem    chan struct{}
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func newForwarder(ns *netns, listen, target string, log logr.Logger) (*forwarder, error) {
	f := &forwarder{target: target, log: log, sem: make(chan struct{}, maxForwardConns), conns: map[net.Conn]struct{}{}}
	if err := ns.Do(func() (err error) { f.ln, err = net.Listen("tcp4", listen); return err }); err != nil {
		return nil, err
	}
	f.wg.Go(f.serve)
	return f, nil
}

func (f *forwarder) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		select {
		case f.sem <- struct{}{}:
		default:
			f.log.Info("too many connections; refusing one", "max", maxForwardConns, "from", c.RemoteAddr().String())
			c.Close()
			continue
		}
		if !f.track(c, true) {
			c.Close()
			<-f.sem
			return
		}
		f.wg.Go(func() {
			defer func() { <-f.sem }()
			f.relay(c)
		})
	}
}

// track adds or removes a connection; it refuses to add after Close.
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
		f.log.Info("cannot reach the API server", "target", f.target, "error", err.Error())
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
		// Pass the half-close on; the other direction may still flow.
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
	_ = f.ln.Close()
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
