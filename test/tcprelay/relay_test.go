package tcprelay

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echo serves one line back per connection, then the rest until EOF.
func echo(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln
}

func TestRelay(t *testing.T) {
	target := echo(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := Start(ln, target.Addr().String(), Options{MaxConns: 1})
	c, err := net.DialTimeout("tcp", r.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("relayed %q, %v; want the echo", line, err)
	}
	// A second connection beyond MaxConns is closed without being relayed.
	c2, err := net.DialTimeout("tcp", r.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c2.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = c2.Write([]byte("x\n"))
	if n, err := c2.Read(make([]byte, 8)); err == nil {
		t.Fatalf("connection over MaxConns got %d bytes back, want it closed", n)
	}
	c2.Close()
	// Close ends the relayed connection too.
	r.Close()
	if _, err := c.Read(make([]byte, 8)); err == nil {
		t.Fatal("relayed connection still open after Close")
	}
	c.Close()
}
