package lab

import (
	"net"

	"github.com/go-logr/logr"

	"anvil.dev/anvil/test/tcprelay"
)

// maxForwardConns bounds the forwarder's concurrent connections (kubelets
// keep one or two each).
const maxForwardConns = 512

// newForwarder listens inside the namespace (network "tcp4" or "tcp6")
// and relays each connection to target, dialled from the host namespace.
func newForwarder(ns *netns, network, listen, target string, log logr.Logger) (*tcprelay.Relay, error) {
	var ln net.Listener
	if err := ns.Do(func() (err error) { ln, err = net.Listen(network, listen); return err }); err != nil {
		return nil, err
	}
	return tcprelay.Start(ln, target, tcprelay.Options{MaxConns: maxForwardConns, Log: log}), nil
}
