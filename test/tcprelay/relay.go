// Package tcprelay relays TCP connections accepted on a listener to a target
// dialled from this process's network namespace. The QEMU lab and the boot
// storm open the listener inside a network namespace (on a thread that
// entered it) so that processes there reach the API server on the host's
// loopback; the dials happen on ordinary threads, which are in the host's.
package tcprelay

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Options tune a Relay.
type Options struct {
	// MaxConns bounds the relayed connections at once (default 512);
	// beyond it a connection is closed at once.
	MaxConns int
	// DialTimeout bounds one dial of the target (default 10s).
	DialTimeout time.Duration
	Log         logr.Logger
}

// Relay is a running relay; Close stops it.
type Relay struct {
	ln     net.Listener
	target string
	o      Options
	sem    chan struct{}
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// Start relays every connection ln accepts to target until Close.
func Start(ln net.Listener, target string, o Options) *Relay {
	if o.MaxConns <= 0 {
		o.MaxConns = 512
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	r := &Relay{ln: ln, target: target, o: o, sem: make(chan struct{}, o.MaxConns), conns: map[net.Conn]struct{}{}}
	r.wg.Go(r.serve)
	return r
}

// Addr is the listener's address.
func (r *Relay) Addr() net.Addr { return r.ln.Addr() }

func (r *Relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		select {
		case r.sem <- struct{}{}:
		default:
			r.o.Log.Info("too many connections; refusing one", "max", r.o.MaxConns, "from", c.RemoteAddr().String())
			c.Close()
			continue
		}
		if !r.track(c, true) {
			c.Close()
			<-r.sem
			return
		}
		r.wg.Go(func() {
			defer func() { <-r.sem }()
			r.relay(c)
		})
	}
}

// track adds or removes a connection; it refuses to add after Close.
func (r *Relay) track(c net.Conn, add bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !add {
		delete(r.conns, c)
		return true
	}
	if r.closed {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *Relay) relay(in net.Conn) {
	defer r.track(in, false)
	defer in.Close()
	out, err := net.DialTimeout("tcp", r.target, r.o.DialTimeout)
	if err != nil {
		r.o.Log.Info("cannot reach the target", "target", r.target, "error", err.Error())
		return
	}
	if !r.track(out, true) {
		out.Close()
		return
	}
	defer r.track(out, false)
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

// Close stops accepting, closes every relayed connection and waits for
// their goroutines.
func (r *Relay) Close() {
	r.mu.Lock()
	r.closed = true
	_ = r.ln.Close()
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}
