package ipmi_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"anvil.dev/anvil/bmc"
	"anvil.dev/anvil/internal/netguard"
	"anvil.dev/anvil/test/need"
)

// An ipmi:// BMC on loopback, written as an address or as a name that
// resolves there, is refused before a single datagram (the RMCP+ login
// carries the user name and an HMAC keyed with the password).
func TestGuardRefusesLoopback(t *testing.T) {
	name, ip := need.LoopbackName(t)
	pc, err := net.ListenPacket("udp4", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	port := strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port)
	creds := bmc.Credentials{Username: "admin", Password: secret}

	_, err = bmc.Open(bmc.Options{Address: "ipmi://127.0.0.1:" + port, Credentials: creds})
	if !errors.Is(err, bmc.ErrInvalidAddress) || !errors.Is(err, netguard.ErrDenied) || !strings.Contains(err.Error(), bmc.AllowFlag) {
		t.Fatalf("loopback literal: err = %v, want the guard's refusal naming %s", err, bmc.AllowFlag)
	}
	_, err = bmc.Open(bmc.Options{Address: "ipmi://169.254.169.254", Credentials: creds})
	if !errors.Is(err, netguard.ErrDenied) {
		t.Fatalf("metadata address: err = %v, want the guard's refusal", err)
	}

	d, err := bmc.Open(bmc.Options{Address: "ipmi://" + name + ":" + port, Credentials: creds, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("Open by name: %v (names are checked when dialled)", err)
	}
	_, err = d.PowerState(context.Background())
	_ = d.Close(context.Background())
	if !errors.Is(err, bmc.ErrInvalidAddress) || !errors.Is(err, netguard.ErrDenied) {
		t.Fatalf("name resolving to loopback: err = %v, want the guard's refusal at dial time", err)
	}
	noSecret(t, err)

	// Anything the driver had sent would be queued before this marker.
	c, err := net.Dial("udp4", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("marker")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	_ = pc.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, _, err := pc.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "marker" {
		t.Fatalf("first datagram at the socket = %q (%v), want only the test's marker", buf[:n], err)
	}
}
