//go:build !linux

package dhcp

import (
	"errors"
	"net"
	"net/netip"
)

// frameConn needs Linux packet sockets; elsewhere the server runs without
// one and treats every RELEASE as not from the holder (see fromHolder).
type frameConn struct{}

type frame struct {
	n       int
	src     netip.AddrPort
	dst     netip.Addr
	l2src   net.HardwareAddr
	forHost bool
}

func openFrames(string, uint16) (*frameConn, error) {
	return nil, errors.New("packet sockets need Linux")
}

func (c *frameConn) Close() error               { return nil }
func (c *frameConn) read([]byte) (frame, error) { return frame{}, net.ErrClosed }
