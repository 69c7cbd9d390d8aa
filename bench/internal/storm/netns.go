package storm

import (
	"context"
	"net"

	"anvil.dev/anvil/test/netnstest"
	"anvil.dev/anvil/test/tcprelay"
)

// inNetns runs fn on an OS thread that has joined network namespace ns, so
// the sockets fn opens belong to it (a socket keeps the namespace it was
// created in, whichever thread uses it later). The thread returns to its
// own namespace afterwards rather than being thrown away: it may be the
// thread that started the anvil processes, whose Pdeathsig would fire if
// it exited.
func inNetns(ns string, fn func() error) error {
	return (&netnstest.NS{Name: ns}).Do(fn)
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

// newForwarder relays TCP connections accepted inside a namespace to a
// target in this process's namespace: the netboot process inside the server
// namespace reaches the API server on the host's loopback through it, at
// the same address, so one kubeconfig serves both anvil processes.
func newForwarder(ns, listen, target string) (*tcprelay.Relay, error) {
	var ln net.Listener
	if err := inNetns(ns, func() (err error) { ln, err = net.Listen("tcp4", listen); return err }); err != nil {
		return nil, err
	}
	return tcprelay.Start(ln, target, tcprelay.Options{MaxConns: 4096}), nil
}
